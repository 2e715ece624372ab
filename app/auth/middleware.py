"""The access middleware: Bearer check, IP allowlist, rate limit, limit headers and audit.

Order for a route that is not open: a key anywhere but `Authorization: Bearer` → 401; no key
on a protected route → 401; an unknown, malformed or revoked key → 401; an address outside
the key's allowlist → 403; then the window of the key's plan (or of the IP address for an
anonymous call) → 429 with `Retry-After`, or the handler. Every answer after the window check
carries `X-RateLimit-*`. Refused calls have a window of their own per IP address
(`refused_limit` a minute): each 401 carries its `X-RateLimit-*`, and once it is full the
address gets 429 with `Retry-After` instead of 401, so keys cannot be tried in bulk; a valid
key from that address is not affected. Every call made with a known key is queued for the
audit log, whatever its status. Redis down → 503 with `Retry-After` (the limiter fails
closed); PostgreSQL down → 503 for calls that carry a key.
"""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import psycopg
from litestar.datastructures import Headers, MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from app.accounts import keys
from app.accounts.repository import Credencial, find_credential
from app.audit.repository import Entrada
from app.audit.writer import AuditWriter
from app.auth.access import ANONYMOUS_LIMIT, Access, Identity
from app.errors import (
    AppError,
    ForbiddenError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
)
from app.ratelimit.limiter import Decision, RateLimiter, address_bucket, key_bucket

MISSING = "Token ausente: envie o cabeçalho Authorization: Bearer <API_KEY>."
INVALID = "Token inválido ou expirado."
ELSEWHERE = "A chave vai só no cabeçalho Authorization: Bearer <API_KEY>, nunca na URL."
STRAY_QUERY = frozenset({"api_key", "apikey", "api-key", "key", "token", "access_token"})
STRAY_HEADERS = frozenset(
    {"x-api-key", "api-key", "apikey", "x-api-token", "x-auth-token", "x-access-token", "token"}
)
MAX_USER_AGENT = 512
MAX_PATH = 2048


class Gate:
    """What the middleware needs, built by the lifespan and kept in the app state."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        limiter: RateLimiter,
        audit: AuditWriter,
        secret: bytes,
        refused_limit: int = 10,
    ) -> None:
        self.pool = pool
        self.limiter = limiter
        self.audit = audit
        self.secret = secret
        self.refused_limit = refused_limit

    async def refuse(self, error: UnauthorizedError, address: str) -> AppError:
        """The answer to a refused call: the 401 with the address's window of refusals, or 429
        once that window is full."""
        decision = await self.limiter.hit(address_bucket("recusadas", address), self.refused_limit)
        if not decision.admitted:
            return TooManyRequestsError(
                f"Limite de {decision.limit} chamadas recusadas por minuto atingido para este "
                "endereço.",
                headers=decision.headers(),
            )
        error.headers.update(decision.headers())
        return error

    async def credential(self, key: str) -> Credencial:
        key_id = keys.key_id(key)
        if key_id is None:
            raise UnauthorizedError(INVALID)
        try:
            async with self.pool.connection() as conn:
                found = await find_credential(conn, key_id)
        except (psycopg.Error, PoolTimeout) as error:
            raise UnavailableError(
                "O cadastro de chaves está indisponível; tente novamente.",
                headers={"Retry-After": "5"},
            ) from error
        if found is None or not keys.matches(self.secret, key, found.hash):
            raise UnauthorizedError(INVALID)
        return found


def bearer(scope: Scope) -> str | None:
    """The key of `Authorization: Bearer <key>`, None without that header; 401 for a key sent
    anywhere else or an Authorization header of another shape."""
    query = {name.lower() for name, _ in parse_qsl(scope["query_string"].decode("latin-1"))}
    headers = Headers.from_scope(scope)
    if query & STRAY_QUERY or any(name in headers for name in STRAY_HEADERS):
        raise UnauthorizedError(ELSEWHERE)
    values = headers.getall("authorization", [])
    if not values:
        return None
    scheme, _, key = values[0].strip().partition(" ")
    if len(values) > 1 or scheme.lower() != "bearer" or not key.strip():
        raise UnauthorizedError(INVALID)
    return key.strip()


def _text(value: str, limit: int) -> str:
    """Caller text as PostgreSQL can store it: no NUL, no lone surrogates, bounded."""
    return value[:limit].replace("\x00", "\ufffd").encode("utf-8", "replace").decode()


def _address(scope: Scope) -> str | None:
    """The caller's IP address as the server saw it (behind a proxy, run uvicorn with
    `--proxy-headers --forwarded-allow-ips` so this is the client's, not the proxy's)."""
    client = scope.get("client")
    if not client:
        return None
    try:
        return str(ipaddress.ip_address(client[0]))
    except ValueError:
        return None


def _allowed(credential: Credencial, address: str) -> bool:
    if not credential.allowlist:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in credential.allowlist)


class AccessMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    exclude_path_pattern = ("^/schema",)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        opt = scope["route_handler"].opt
        access = Access(opt.get("access", Access.PROTECTED))
        if access is Access.OPEN:
            await next_app(scope, receive, send)
            return
        gate: Gate = scope["litestar_app"].state.gate
        address = _address(scope) or ""
        credential: Credencial | None = None
        try:
            key = None if access is Access.BOOTSTRAP else bearer(scope)
            if key is None and access is Access.PROTECTED:
                raise UnauthorizedError(MISSING)
            if key is None:
                bucket = address_bucket(opt.get("bucket", "anonimo"), address)
                decision = await gate.limiter.hit(bucket, int(opt.get("limit", ANONYMOUS_LIMIT)))
            else:
                credential = await gate.credential(key)
                decision = await self._admit(gate, credential, address)
                scope["user"] = scope["auth"] = Identity(
                    key_id=credential.id, conta_id=credential.conta_id, papel=credential.papel,
                    plano=credential.plano, limite=credential.limite,
                )  # fmt: skip
            if not decision.admitted:
                raise TooManyRequestsError(
                    f"Limite de {decision.limit} requisições por minuto atingido.",
                    headers=decision.headers(),
                )
        except UnauthorizedError as error:
            refusal = await gate.refuse(error, address)
            if credential is not None:
                self._audit(gate, scope, credential, refusal.status)
            raise refusal from None
        except AppError as error:
            if credential is not None:
                self._audit(gate, scope, credential, error.status)
            raise
        status = await self._call(scope, receive, send, next_app, decision)
        if credential is not None:
            self._audit(gate, scope, credential, status)

    @staticmethod
    async def _admit(gate: Gate, credential: Credencial, address: str) -> Decision:
        if credential.revogada:
            raise UnauthorizedError(INVALID)
        if not _allowed(credential, address):
            raise ForbiddenError("Endereço IP fora da allowlist desta chave.")
        return await gate.limiter.hit(key_bucket(credential.id), credential.limite)

    @staticmethod
    async def _call(
        scope: Scope, receive: Receive, send: Send, next_app: ASGIApp, decision: Decision
    ) -> int:
        """Runs the handler with the limit headers added to its answer; returns its status."""
        status = 500
        extra = decision.headers()

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = MutableScopeHeaders.from_message(message)
                for name, value in extra.items():
                    headers[name] = value
            await send(message)

        await next_app(scope, receive, send_with_headers)
        return status

    @staticmethod
    def _audit(gate: Gate, scope: Scope, credential: Credencial, status: int) -> None:
        headers = Headers.from_scope(scope)
        handler: Any = scope["route_handler"]
        gate.audit.record(
            Entrada(
                chave_id=credential.id,
                metodo=str(scope.get("method", "")),
                rota=_text(scope.get("path_template") or scope["path"], MAX_PATH),
                caminho=_text(scope["path"], MAX_PATH),
                ip=_address(scope),
                user_agent=_text(headers.get("user-agent", ""), MAX_USER_AGENT),
                status=status,
                em=datetime.now(UTC),
                custo=handler.opt.get("cost"),
            )
        )
