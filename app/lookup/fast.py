"""The fast lane of `GET /v1/cnpj/{cnpj}` (alias `/cnpj/{cnpj}`), the call every integration
makes all day: an ASGI layer in front of the app that answers the common case itself, without the
framework's routing, dependency injection and response objects, through the same functions as
the route (`app.lookup.answer`, the gate, the audit).

The common case is a GET with no query string, for a bare 14-character CNPJ with valid check
digits, in a process that has the live release's record store (which holds every record of the
release, so a CNPJ it lacks is a 404), by a caller the credential cache settles (no key, or a
cached valid key). Everything else goes to the app untouched and nothing is drawn before it
does: formatted or malformed CNPJs, keys not yet cached, revoked or refused keys, and processes
without a store. From the window check on, the call is the route's: the same
units, the same refusals (429, 403, 503 and their headers), the same audit row and usage counter.
`FAST_LOOKUPS=false` turns the lane off.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.enums import ScopeType
from litestar.types import Receive, Scope, Send

from app.auth.access import Access
from app.auth.gate import Gate
from app.auth.middleware import RequestAccess, admit_call, record_call
from app.context import Backends
from app.domain import cnpj
from app.errors import AppError, error_body
from app.lib.operations import charge
from app.lookup.answer import Answer, stored_answer
from app.lookup.routes import lookup_cnpj
from app.lookup.service import CONSULTAR_CNPJ, not_found
from app.ratelimit.limiter import Decision

PREFIXES = (("/v1/cnpj/", "/v1/cnpj/{cnpj}"), ("/cnpj/", "/cnpj/{cnpj}"))
"""The paths of the route and the template its audit rows name."""
JSON = (b"content-type", b"application/json")
FAST_LANE = "via_rapida"
"""Where the app's state holds the lane (the status reports how many lookups it answered)."""


def _number(path: str) -> tuple[str, str] | None:
    """The CNPJ and the route template of a lookup path in canonical form, else None."""
    for prefix, template in PREFIXES:
        if path.startswith(prefix):
            raw = path[len(prefix) :]
            if len(raw) != 14 or not raw.isalnum() or (not raw.isupper() and not raw.isdigit()):
                return None
            checked = cnpj.check(raw)
            return (checked.cnpj, template) if checked.problem is None else None
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _error(error: AppError) -> Answer:
    """The error's JSON body and headers, as the app's handler (`app.errors`) writes them."""
    body = error_body(int(error.status), error.message, error.details)
    return Answer(int(error.status), msgspec.json.encode(body), dict(error.headers))


class FastLookups:
    """ASGI layer around the app (inside the load shedding)."""

    def __init__(self, app: Litestar) -> None:
        self.app = app
        self.opt: dict[str, Any] = lookup_cnpj.opt
        self.kind = Access(self.opt["access"])
        self.answered = 0
        """Lookups answered here since the process started."""
        app.state[FAST_LANE] = self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == ScopeType.HTTP
            and scope["method"] == "GET"
            and not scope["query_string"]
            and await self._answer(scope, send)
        ):
            return
        await self.app(scope, receive, send)

    async def _answer(self, scope: Scope, send: Send) -> bool:
        """Answers the call when it is the common case; False (nothing sent, nothing drawn)
        when the app must."""
        found = _number(scope["path"])
        state = self.app.state
        gate: Gate | None = state.get("gate")
        backends: Backends | None = state.get("backends")
        if found is None or gate is None or backends is None or backends.records is None:
            return False
        number, template = found
        records = backends.records.stored([number])
        if records is None:
            return False
        caller = gate.caller(scope)
        if not gate.identify_cached(scope, caller):
            return False
        access = RequestAccess(gate, caller, template)
        access.audited = True
        try:
            await admit_call(scope, access, self.kind, self.opt, identify=False)
        except AppError as error:  # recorded by `admit_call`
            await _send(send, _error(error), None)
            return True
        await charge(access, CONSULTAR_CNPJ)
        if records:
            answer = stored_answer(
                records[0],
                anonymous=caller.identity is None,
                if_none_match=_header(scope, b"if-none-match"),
            )
        else:  # the store holds every record of its release
            answer = _error(not_found(number))
        await _send(send, answer, access.decision)
        record_call(scope, access, answer.status)
        self.answered += 1
        return True


async def _send(send: Send, answer: Answer, decision: Decision | None) -> None:
    """The answer as the app writes it: its headers, the body's type and length (none for a
    304), then the window's headers."""
    headers = [(name.lower().encode(), value.encode()) for name, value in answer.headers.items()]
    if answer.status != 304:
        headers += [JSON, (b"content-length", str(len(answer.body)).encode())]
    if decision is not None:
        headers += [
            (name.lower().encode(), value.encode()) for name, value in decision.headers().items()
        ]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body, "more_body": False})
