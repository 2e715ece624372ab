"""Dashboard sessions and their CSRF tokens.

A session is a random token in an HttpOnly cookie; Redis keeps the session under the token's
SHA-256 (a copy of Redis holds no usable token) for `TTL` seconds. Signing in always opens a new
session (a token planted before sign-in is never promoted), signing out deletes it.

Every form carries a CSRF token: an HMAC of the cookie it travels with (the session's, or a
pre-session cookie before sign-in), so a token is worth nothing without the cookie, and the
cookie nothing to a page of another site (SameSite=Lax, and POSTs from another origin are
refused). Litestar's own session middleware keeps the ID a request arrives with and its CSRF is a
second cookie; neither gives this, so the few lines are ours.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Awaitable
from typing import TypeVar

import msgspec
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.errors import UnavailableError

SESSION_COOKIE = "painel_sessao"
PRE_COOKIE = "painel_pre"
"""The cookie a visitor's forms are bound to before sign-in."""
TTL = 8 * 3600
"""Seconds a session lives from sign-in."""
T = TypeVar("T")
UNAVAILABLE = "Sessões indisponíveis no momento (Redis fora do ar); tente de novo em instantes."


class Sessao(msgspec.Struct, kw_only=True):
    conta_id: int
    aberta_em: float


def new_token() -> str:
    return secrets.token_urlsafe(32)


def csrf_token(secret: bytes, cookie: str) -> str:
    return hmac.new(secret, b"csrf:" + cookie.encode(), hashlib.sha256).hexdigest()


def csrf_matches(secret: bytes, cookie: str | None, sent: str | None) -> bool:
    if not cookie or not sent or not sent.isascii():  # a token is ASCII; compare_digest needs it
        return False
    return hmac.compare_digest(csrf_token(secret, cookie), sent)


class Sessions:
    def __init__(self, redis: Redis, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix + "painel:sessao:"

    def _key(self, token: str) -> str:
        return self._prefix + hashlib.sha256(token.encode()).hexdigest()

    @staticmethod
    async def _run(command: Awaitable[T]) -> T:
        """A Redis command; 503 with `Retry-After` when Redis does not answer."""
        try:
            return await command
        except RedisError as error:
            raise UnavailableError(UNAVAILABLE, headers={"Retry-After": "5"}) from error

    async def open(self, conta_id: int) -> str:
        """A new session for the account; its token (the cookie's value)."""
        token = new_token()
        session = msgspec.json.encode(Sessao(conta_id=conta_id, aberta_em=time.time()))
        await self._run(self._redis.set(self._key(token), session, ex=TTL))
        return token

    async def find(self, token: str | None) -> Sessao | None:
        if not token or len(token) > 100:
            return None
        raw = await self._run(self._redis.get(self._key(token)))
        return None if raw is None else msgspec.json.decode(raw, type=Sessao)

    async def close(self, token: str | None) -> None:
        if token and len(token) <= 100:
            await self._run(self._redis.delete(self._key(token)))
