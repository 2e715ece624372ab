"""Who may call a route, declared on the route itself through `opt`.

`opt={"access": Access.OPEN}` and so on; a route without the key is `PROTECTED`. The OpenAPI
document (`/schema...`) is open too (excluded from the middleware by path).
"""

from __future__ import annotations

from enum import StrEnum

import msgspec
from litestar.openapi.spec import SecurityRequirement, SecurityScheme

ELSEWHERE = (
    "A chave vai só no cabeçalho Authorization: Bearer <API_KEY>, nunca na URL nem em outro "
    "cabeçalho."
)
STRAY_QUERY = frozenset({"api_key", "apikey", "api-key", "key", "token", "access_token"})
"""Query parameters a key is refused in (401, before anything else reads the request)."""

ANONYMOUS_LIMIT = 3
"""Requests per rolling minute per IP address without a token (spec §8)."""


BEARER = "BearerAuth"
BEARER_SCHEME = SecurityScheme(
    type="http",
    scheme="bearer",
    description="`Authorization: Bearer <API_KEY>`; a key anywhere else gets 401.",
)
NO_TOKEN: list[SecurityRequirement] = [{}]
"""OpenAPI `security` of routes that take no token."""
TOKEN_OPTIONAL: list[SecurityRequirement] = [{}, {BEARER: []}]
"""OpenAPI `security` of the anonymous try-out routes."""


class Access(StrEnum):
    OPEN = "open"
    """No token, no limit: status and health."""
    ANONYMOUS = "anonymous"
    """A token is optional: with one, the key's plan applies; without, `ANONYMOUS_LIMIT` per
    IP address, one window shared by every anonymous route."""
    BOOTSTRAP = "bootstrap"
    """The token bootstrap: no token (the caller has none yet); a per-IP window of its own,
    `opt["limit"]` requests per minute in the bucket `opt["bucket"]`."""
    PROTECTED = "protected"
    """A valid Bearer key is required."""
    AGENT = "agent"
    """The agent interface: a key is identified when sent; each tool call is admitted and
    recorded by the agent interface itself (discovery needs no key)."""


class Identity(msgspec.Struct, frozen=True, kw_only=True):
    """The caller of an authenticated request (`request.user`)."""

    key_id: str
    conta_id: int
    papel: str
    plano: str
    limite: int

    @property
    def admin(self) -> bool:
        return self.papel == "admin"
