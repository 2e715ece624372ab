"""The access gate: who is calling (`identify`), whether the call fits its window (`admit`),
and what is kept of it (`record`). The REST middleware and the agent interface both call these,
so a call is limited, metered and audited the same way whatever face it came through.

- `identify`: the Bearer key, checked against its keyed hash, its revocation and the key's IP
  allowlist. A key anywhere but `Authorization: Bearer` is refused.
- `admit`: the plan's window belongs to the account, so every key of an account draws on one
  window; without a key, the window of the caller's address (an IPv6 /64) per group of routes.
  A call may weigh several units (a batch draws one per item).
- `record`: an audit row (key id, operation, IP, user agent, status, time) and the key's usage
  counter for the operation's cost, queued for the background writer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from urllib.parse import parse_qsl, unquote

import msgspec
import psycopg
from litestar.datastructures import Headers
from litestar.types import Scope
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from redis.exceptions import RedisError

from app.accounts import keys
from app.accounts.repository import Credencial, find_credential
from app.audit.repository import Entrada
from app.audit.writer import AuditWriter
from app.auth.access import ANONYMOUS_LIMIT, ELSEWHERE, STRAY_QUERY, Identity
from app.auth.address import Address, Network, client_address, in_any, window_key
from app.auth.credentials import TTL, CredentialCache
from app.errors import (
    AppError,
    ForbiddenError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
)
from app.ratelimit.limiter import Decision, RateLimiter, account_bucket, address_bucket

KEYS_UNAVAILABLE = "O cadastro de chaves está indisponível; tente novamente."
UNREADABLE = 1
"""Seconds keys are not read from PostgreSQL after a read failed (so at most one call a second
per process waits for the pool's timeout while PostgreSQL is away)."""

log = logging.getLogger("app.auth")
MISSING = "Token ausente: envie o cabeçalho Authorization: Bearer <API_KEY>."
INVALID = "Token inválido ou expirado."
STRAY_HEADERS = frozenset(
    {"x-api-key", "api-key", "apikey", "x-api-token", "x-auth-token", "x-access-token", "token"}
)
MAX_USER_AGENT = 512
MAX_PATH = 2048


class Caller(msgspec.Struct, kw_only=True):
    """Who is calling: the address (normalised), its user agent and, with a valid key, the
    key's identity."""

    address: Address | None
    user_agent: str
    identity: Identity | None = None
    cached: bool = False
    """Whether the identity came from the process's credential cache."""

    @property
    def ip(self) -> str | None:
        return str(self.address) if self.address is not None else None


def text(value: str, limit: int) -> str:
    """Caller text as PostgreSQL can store it: no NUL, no lone surrogates, bounded."""
    return value[:limit].replace("\x00", "\ufffd").encode("utf-8", "replace").decode()


def _has_key(text: str) -> bool:
    return "cnpj_" in text and keys.KEY_SHAPE.search(text) is not None


def bearer(scope: Scope) -> str | None:
    """The key of `Authorization: Bearer <key>`, None without that header; 401 for a key sent
    anywhere else (a query parameter of a key's name, a key in the path or the query string,
    another header) or an Authorization header of another shape."""
    raw_query = scope["query_string"].decode("latin-1")
    query = {name.lower() for name, _ in parse_qsl(raw_query)}
    headers = Headers.from_scope(scope)
    if query & STRAY_QUERY or any(name in headers for name in STRAY_HEADERS):
        raise UnauthorizedError(ELSEWHERE)
    if _has_key(scope["path"]) or _has_key(unquote(raw_query)):
        raise UnauthorizedError(ELSEWHERE)
    values = headers.getall("authorization", [])
    if not values:
        return None
    scheme, _, key = values[0].strip().partition(" ")
    if len(values) > 1 or scheme.lower() != "bearer" or not key.strip():
        raise UnauthorizedError(INVALID)
    return key.strip()


class Gate:
    """What every face needs to admit and record calls; built by the lifespan."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        limiter: RateLimiter,
        audit: AuditWriter,
        secret: bytes,
        *,
        refused_limit: int = 10,
        trusted_proxies: tuple[Network, ...] = (),
    ) -> None:
        self.pool = pool
        self.limiter = limiter
        self.audit = audit
        self.secret = secret
        self.refused_limit = refused_limit
        self.trusted_proxies = trusted_proxies
        self.credentials = CredentialCache()
        self._reading: dict[tuple[str, int | None], asyncio.Future[Credencial | None]] = {}
        """The reads of a credential under way, by key id and the epoch they started in
        (`_read_shared`)."""
        self._unreadable_until = 0.0
        """Until when keys are not read from PostgreSQL after a failed read: the calls in
        between are answered from the stale cache, or refused, at once instead of each waiting
        for the pool's timeout."""

    def caller(self, scope: Scope) -> Caller:
        agent = Headers.from_scope(scope).get("user-agent", "")
        return Caller(
            address=client_address(scope, self.trusted_proxies),
            user_agent=text(agent, MAX_USER_AGENT),
        )

    async def identify(self, scope: Scope, caller: Caller) -> Identity | None:
        """The identity of the request's Bearer key (None without one); 401 for a bad,
        revoked or misplaced key, 403 outside the key's allowlist, 503 when keys cannot be
        checked. A known key's identity is set on the caller before the revocation and
        allowlist checks, so those refusals are audited under the key."""
        key = bearer(scope)
        if key is None:
            return None
        credential, cached = await self._credential(key)
        caller.cached = cached
        return self._accept(caller, credential)

    def identify_cached(self, scope: Scope, caller: Caller) -> bool:
        """Identifies the caller from this process's credential cache alone, with no wait and
        no refusal: True when that settles it (a call without a key, or a cached key that is
        valid, not revoked and allowed from the caller's address; its identity is then on the
        caller), False when the full check of `identify` is needed."""
        try:
            key = bearer(scope)
        except UnauthorizedError:
            return False
        if key is None:
            return True
        key_id = keys.key_id(key)
        found = self.credentials.get(key_id) if key_id is not None else None
        if found is None or found.revogada or not keys.matches(self.secret, key, found.hash):
            return False
        if found.allowlist and not in_any(caller.address, found.allowlist):
            return False
        caller.cached = True
        self._accept(caller, found)
        return True

    def _accept(self, caller: Caller, credential: Credencial) -> Identity:
        caller.identity = Identity(
            key_id=credential.id, conta_id=credential.conta_id, papel=credential.papel,
            plano=credential.plano, limite=credential.limite,
        )  # fmt: skip
        if credential.revogada:
            raise UnauthorizedError(INVALID)
        if credential.allowlist and not in_any(caller.address, credential.allowlist):
            raise ForbiddenError("Endereço IP fora da allowlist desta chave.")
        return caller.identity

    async def _credential(self, key: str) -> tuple[Credencial, bool]:
        """The key's credential (from the cache when it holds it) and whether it came from the
        cache; 401 for an unknown key or a wrong secret, 503 when keys cannot be read."""
        key_id = keys.key_id(key)
        if key_id is None:
            raise UnauthorizedError(INVALID)
        found = self.credentials.get(key_id)
        cached = found is not None
        if found is None:
            epoch = self.credentials.epoch
            try:
                found = await self._read_shared(key_id, epoch)
            except UnavailableError:
                found = self.credentials.stale(key_id)
                if found is None:
                    raise
                cached = True
            else:
                if found is not None:
                    self.credentials.put(key_id, found, epoch)
        if found is None or not keys.matches(self.secret, key, found.hash):
            raise UnauthorizedError(INVALID)
        return found, cached

    async def _read_shared(self, key_id: str, epoch: int | None) -> Credencial | None:
        """`_read`, one for all the requests that miss the same key in the same epoch: a new
        process's first burst, or every process's after a change empties the caches, costs one
        PostgreSQL query, not one per request queued for the pool. A read started before a
        change is not shared with a request that saw it (another epoch, another read)."""
        reading = self._reading.get((key_id, epoch))
        if reading is None:
            reading = asyncio.ensure_future(self._read(key_id))
            self._reading[key_id, epoch] = reading
            reading.add_done_callback(lambda _: self._reading.pop((key_id, epoch), None))
        return await asyncio.shield(reading)  # a caller gone does not cancel the others' read

    async def _read(self, key_id: str) -> Credencial | None:
        if time.monotonic() < self._unreadable_until:
            raise UnavailableError(KEYS_UNAVAILABLE, headers={"Retry-After": "5"})
        try:
            return await self._find(key_id)
        except (psycopg.Error, PoolTimeout) as error:
            self._unreadable_until = time.monotonic() + UNREADABLE
            raise UnavailableError(KEYS_UNAVAILABLE, headers={"Retry-After": "5"}) from error

    async def _find(self, key_id: str) -> Credencial | None:
        """The key's credential. A connection broken by a PostgreSQL restart fails once: the
        pool's idle connections are then all checked (the broken ones replaced) and the lookup
        is tried once more, so a restart costs no request once PostgreSQL answers again."""
        try:
            async with self.pool.connection() as conn:
                return await find_credential(conn, key_id)
        except psycopg.OperationalError:
            await self.pool.check()
            async with self.pool.connection() as conn:
                return await find_credential(conn, key_id)

    async def admit(
        self,
        caller: Caller,
        units: int = 1,
        *,
        group: str = "anonimo",
        anonymous_limit: int = ANONYMOUS_LIMIT,
        weight: int | None = None,
    ) -> Decision:
        """Draws `units` from the caller's window: the account's plan with a key, the address's
        window of `group` without one. 403 when the call's whole `weight` (`units` unless the
        call already drew part of it) exceeds the window (retrying could never help), 429 with
        `Retry-After` when the units do not fit now."""
        if caller.identity is not None:
            bucket, limit = account_bucket(caller.identity.conta_id), caller.identity.limite
        else:
            bucket, limit = address_bucket(group, window_key(caller.address)), anonymous_limit
        total = weight if weight is not None else units
        if total > limit:
            raise ForbiddenError(
                f"Esta chamada vale {total} requisições e o limite do plano é {limit} por "
                "minuto: divida-a em partes menores.",
                details={"unidades": total, "limite_por_minuto": limit},
            )
        try:
            decision = await self.limiter.hit(bucket, limit, units=units)
        except UnavailableError:
            self.credentials.forget()
            raise
        if self.credentials.observe(decision.epoch) and caller.cached:
            await self._revalidate(caller)
        if not decision.admitted:
            raise TooManyRequestsError(
                f"Limite de {decision.limit} requisições por minuto atingido.",
                headers=decision.headers(),
            )
        return decision

    async def _revalidate(self, caller: Caller) -> None:
        """Credentials changed since the caller's was cached: read it again (401 when the key
        was revoked, 403 outside a new allowlist)."""
        assert caller.identity is not None
        caller.cached = False
        found = await self._read(caller.identity.key_id)
        if found is None:
            raise UnauthorizedError(INVALID)
        self._accept(caller, found)

    async def credentials_changed(self) -> None:
        """A key was revoked or its allowlist changed: every process checks again."""
        self.credentials.forget()
        try:
            await self.limiter.bump_epoch()
        except (RedisError, OSError):
            log.warning("the credentials' epoch could not be bumped: caches expire in %s s", TTL)

    async def refuse(self, error: UnauthorizedError, caller: Caller) -> AppError:
        """The answer to a refused call: the 401 with the address's window of refusals, or 429
        once that window is full."""
        bucket = address_bucket("recusadas", window_key(caller.address))
        decision = await self.limiter.hit(bucket, self.refused_limit)
        if not decision.admitted:
            return TooManyRequestsError(
                f"Limite de {decision.limit} chamadas recusadas por minuto atingido para este "
                "endereço.",
                headers=decision.headers(),
            )
        error.headers.update(decision.headers())
        return error

    def record(
        self,
        caller: Caller,
        *,
        metodo: str,
        rota: str,
        operacao: str | None,
        caminho: str,
        status: int,
        custo: str | None,
        unidades: int = 1,
    ) -> None:
        """Queues the audit row of a call made with a key (calls without one are not audited):
        `rota` is the face (the REST route's template, or `/mcp`), `operacao` the service
        operation it ran (the tool, for the agent interface)."""
        if caller.identity is None:
            return
        self.audit.record(
            Entrada(
                chave_id=caller.identity.key_id,
                metodo=metodo,
                rota=text(keys.redacted(rota), MAX_PATH),
                operacao=operacao,
                caminho=text(keys.redacted(caminho), MAX_PATH),
                ip=caller.ip,
                user_agent=caller.user_agent,
                status=status,
                em=datetime.now(UTC),
                custo=custo,
                unidades=unidades,
            )
        )
