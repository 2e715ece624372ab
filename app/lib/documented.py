"""The error answers every operation can give, written into the OpenAPI document.

Every error the API answers has the body `ErrorBody` (`{error, message, details?}`), whatever
raised it; without this, the document would show Litestar's default validation body
(`{detail, status_code, extra}`) for 400 and leave out the statuses the access layer, the body
limit and the dependencies give. An operation's own description of a status (a route's
`responses`) is kept; the rest come from the operation's access kind, its path parameters and
its method.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from app.auth.access import Access
from app.errors import ErrorBody

KEYED = (Access.PROTECTED, Access.ANONYMOUS)


def _spec(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=ErrorBody, generate_examples=False, description=description)


BAD_REQUEST = _spec("Invalid parameters or body: `message` says which, `details` names the field")
UNAUTHORIZED = _spec(
    "Key missing, malformed, unknown or revoked, or sent outside `Authorization: Bearer`"
)
FORBIDDEN = _spec("Address outside the key's allowlist, or a resource of administrators")
NOT_FOUND = _spec("No such resource")
TOO_LARGE = _spec("Body larger than the limit (`MAX_BODY_SIZE`), refused before any work")
TOO_MANY = _spec("The window of the key's plan or of the address is full; see `Retry-After`")
CONFLICT = _spec("The state of the resource does not allow it now; `message` says why")
GONE = _spec("The resource existed and is no longer available")
UNAVAILABLE = _spec(
    "A dependency is unavailable or the server is at capacity; retry after `Retry-After`"
)


def errors_of(handler: HTTPRouteHandler) -> dict[int, ResponseSpec]:
    kind = Access(handler.opt.get("access", Access.PROTECTED))
    found = {400: BAD_REQUEST, 503: UNAVAILABLE}
    if kind in KEYED:
        found.update({401: UNAUTHORIZED, 403: FORBIDDEN, 429: TOO_MANY})
    if kind is Access.BOOTSTRAP:
        found[429] = TOO_MANY
    if any("{" in path for path in handler.paths):
        found[404] = NOT_FOUND
    if handler.http_methods & {"POST", "PUT", "PATCH"}:
        found[413] = TOO_LARGE
    return found


def document_errors(app: Litestar) -> None:
    """Adds the error answers each operation of the document can give (before the document
    is first generated)."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if not isinstance(handler, HTTPRouteHandler) or not handler.include_in_schema:
                continue
            if Access(handler.opt.get("access", Access.PROTECTED)) is Access.AGENT:
                continue  # JSON-RPC: errors are JSON-RPC answers (`docs/mcp.md`)
            handler.responses = {**errors_of(handler), **(handler.responses or {})}
