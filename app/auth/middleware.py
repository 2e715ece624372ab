"""The access middleware: the REST face of the gate (`app.auth.gate`).

Order for a route that is not open: a key anywhere but `Authorization: Bearer` → 401; no key
on a protected route → 401; an unknown, malformed or revoked key → 401; an address outside
the key's allowlist → 403; then one unit from the account's window (or the address's window of
an anonymous call) → 429 with `Retry-After`, or the handler. A handler whose call weighs more
(a batch: one unit per item) draws the rest through `access(request).charge(units)`. Every
answer after the window check carries `X-RateLimit-*`. Refused calls have a window of their own
per address (`refused_limit` a minute): each 401 carries its `X-RateLimit-*`, and once it is
full the address gets 429 instead of 401, so keys cannot be tried in bulk; a valid key from
that address is not affected. Every call made with a known key is queued for the audit log,
whatever its status. Redis down → 503 with `Retry-After` (the limiter fails closed);
PostgreSQL down → 503 for calls that carry a key.

Routes of `Access.AGENT` (the agent interface) are only identified here: the agent interface
admits and records each tool call itself, through the same gate.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.access import ANONYMOUS_LIMIT, Access
from app.auth.gate import MISSING, Caller, Gate
from app.errors import AppError, UnauthorizedError
from app.ratelimit.limiter import Decision

STATE_KEY = "acesso"


class RequestAccess:
    """The access state of one request: its caller, the window's decision, the units drawn,
    and what the audit row will name."""

    def __init__(self, gate: Gate, caller: Caller, rota: str) -> None:
        self.gate = gate
        self.caller = caller
        self.decision: Decision | None = None
        self.units = 0
        self.rota = rota
        self.operacao: str | None = None
        """The service operation the request ran (`consultar_cnpj`...), once named."""
        self.custo: str | None = None
        self.audited = False
        """Whether the call is audited: always on REST routes; on the agent interface, once a
        tool call names its operation (discovery calls are not)."""
        self.status: int | None = None
        """The status the audit records when it differs from the HTTP one (a tool's error is
        an HTTP 200 carrying `isError`)."""
        self.refusal: AppError | None = None
        """On the agent interface, why the key was refused (answered in JSON-RPC there)."""
        self._window: dict[str, Any] = {}

    def fork(self) -> RequestAccess:
        """A state of its own for one message of a batch: the same caller, route and key
        refusal, its own units, operation and status, so the message is admitted, charged and
        audited as if it had come alone."""
        twin = RequestAccess(self.gate, self.caller, self.rota)
        twin.audited = False
        twin.refusal = self.refusal
        return twin

    async def admit(self, units: int = 1, **window: Any) -> Decision:
        """Draws `units` more; `window` (group and anonymous limit) is kept for later draws."""
        self._window = window or self._window
        decision = await self.gate.admit(
            self.caller, units, weight=self.units + units, **self._window
        )
        self.units += units
        self.decision = msgspec.structs.replace(decision, units=self.units)
        return self.decision

    async def charge(self, units: int) -> None:
        """Makes the call weigh `units` in all: a REST call was admitted for one unit and draws
        the rest; an agent tool call, admitted by nothing yet, draws them all."""
        extra = units - self.units
        if extra > 0:
            await self.admit(extra)


def _allowing(scope: Scope, send: Send) -> Send:
    """`send` with the `Allow` of an OPTIONS answer listing every method of the path: Litestar
    builds it from the route as it stood when its first handler was added, so a path with GET
    and POST in two handlers would list only one of them (`Litestar.state.allow`)."""
    allowed: str | None = (
        scope["litestar_app"].state.get("allow", {}).get(scope.get("path_template"))
    )
    if allowed is None:
        return send

    async def send_with_allow(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableScopeHeaders.from_message(message)
            headers["allow"] = allowed
        await send(message)

    return send_with_allow


def access(request: Request[Any, Any, Any]) -> RequestAccess | None:
    """The request's access state; None in an app built without the access layer."""
    found: RequestAccess | None = request.scope.get("state", {}).get(STATE_KEY)
    return found


class AccessMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    exclude_path_pattern = ("^/schema",)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        opt = scope["route_handler"].opt
        kind = Access(opt.get("access", Access.PROTECTED))
        if scope.get("method") == "OPTIONS":  # the methods allowed, no data: no key needed
            await next_app(scope, receive, _allowing(scope, send))
            return
        if kind is Access.OPEN:
            await next_app(scope, receive, send)
            return
        gate: Gate = scope["litestar_app"].state.gate
        caller = gate.caller(scope)
        state = RequestAccess(gate, caller, scope.get("path_template") or scope["path"])
        state.audited = kind is not Access.AGENT
        scope.setdefault("state", {})[STATE_KEY] = state
        if kind is Access.AGENT:
            await self._identify_agent(scope, gate, state)
            status = await self._call(scope, receive, send, next_app, state)
            record_call(scope, state, status)
            return
        await admit_call(scope, state, kind, opt, identify=kind is not Access.BOOTSTRAP)
        status = await self._call(scope, receive, send, next_app, state)
        record_call(scope, state, status)

    @staticmethod
    async def _identify_agent(scope: Scope, gate: Gate, state: RequestAccess) -> None:
        """Identifies the key of an agent-interface request without answering: a refusal is
        kept for the agent interface to answer in JSON-RPC, where discovery needs no key. A
        refused key the gate knew (revoked, outside its allowlist) is audited under it, as on
        REST."""
        try:
            if await gate.identify(scope, state.caller):
                scope["user"] = scope["auth"] = state.caller.identity
        except UnauthorizedError as error:
            state.refusal = await gate.refuse(error, state.caller)
        except AppError as error:
            state.refusal = error
        if state.refusal is not None and state.caller.identity is not None:
            state.audited = True

    @staticmethod
    async def _call(
        scope: Scope, receive: Receive, send: Send, next_app: ASGIApp, state: RequestAccess
    ) -> int:
        """Runs the handler with the window's headers added to its answer (as the window stands
        when the answer starts, after any extra units the handler drew); returns its status."""
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if state.decision is not None:
                    headers = MutableScopeHeaders.from_message(message)
                    for name, value in state.decision.headers().items():
                        headers.setdefault(name, value)
            await send(message)

        await next_app(scope, receive, send_with_headers)
        return status


async def admit_call(
    scope: Scope, state: RequestAccess, kind: Access, opt: dict[str, Any], *, identify: bool
) -> None:
    """Admits a REST call: its key checked (unless `identify` is False: a bootstrap route, or a
    caller the credential cache already identified), a key required on a protected route, and
    one unit drawn from the window the route's `opt` names. A refusal is recorded and raised:
    401 (or 429 once the address's window of refusals is full), 403, 429, 503."""
    gate, caller = state.gate, state.caller
    try:
        if identify and await gate.identify(scope, caller):
            scope["user"] = scope["auth"] = caller.identity
        if caller.identity is None and kind is Access.PROTECTED:
            raise UnauthorizedError(MISSING)
        limit = int(opt.get("limit", ANONYMOUS_LIMIT))
        await state.admit(group=opt.get("bucket", "anonimo"), anonymous_limit=limit)
    except UnauthorizedError as error:
        refusal = await gate.refuse(error, caller)
        record_call(scope, state, refusal.status)
        raise refusal from None
    except AppError as error:
        record_call(scope, state, error.status)
        raise


def record_call(scope: Scope, state: RequestAccess, status: int) -> None:
    """Queues the audit row of an audited call (`Gate.record`)."""
    if not state.audited:
        return
    state.gate.record(
        state.caller,
        metodo=str(scope.get("method", "")),
        rota=state.rota,
        operacao=state.operacao,
        caminho=scope["path"],
        status=state.status or status,
        custo=state.custo,
        unidades=max(state.units, 1),
    )
