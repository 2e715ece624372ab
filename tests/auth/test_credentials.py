"""The per-process credential cache (`app.auth.credentials`): what it keeps, when it lets go,
and a revocation announced while Redis is away."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.asyncio import Redis

from app.accounts.repository import Credencial
from app.auth.credentials import CredentialCache
from app.auth.gate import Gate
from app.ratelimit.limiter import RateLimiter
from tests.loopback import free_port


def _credential(key_id: str = "abcd1234") -> Credencial:
    return Credencial(
        id=key_id, hash=b"h", conta_id=1, papel="usuario", plano="basic", limite=20,
        allowlist=[], revogada=False,
    )  # fmt: skip


def test_cache_keeps_only_what_was_read_under_the_current_epoch() -> None:
    cache = CredentialCache(ttl=60)
    cache.put("abcd1234", _credential(), None)
    assert cache.get("abcd1234") is None, "nothing is kept before an epoch was seen"
    assert cache.observe(7) is False, "the first epoch is no change"
    cache.put("abcd1234", _credential(), 7)
    assert cache.get("abcd1234") == _credential()
    cache.put("ffff0000", _credential("ffff0000"), 6)
    assert cache.get("ffff0000") is None, "read before a change: maybe stale, not kept"
    assert cache.observe(8) is True
    assert cache.get("abcd1234") is None, "a change empties the cache"
    cache.put("abcd1234", _credential(), 8)
    cache.forget()
    assert cache.get("abcd1234") is None


def test_cache_entries_expire_and_size_is_bounded() -> None:
    cache = CredentialCache(ttl=0.05, size=2)
    cache.observe(1)
    for key_id in ("a0000001", "a0000002", "a0000003"):
        cache.put(key_id, _credential(key_id), 1)
    assert cache.get("a0000001") is None, "the oldest left to keep the bound"
    assert cache.get("a0000003") is not None
    asyncio.run(asyncio.sleep(0.06))
    assert cache.get("a0000003") is None, "expired"


def test_revocation_with_redis_away_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        redis = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
        gate = Gate(None, RateLimiter(redis, "t:"), None, b"s" * 32)  # type: ignore[arg-type]
        gate.credentials.observe(1)
        gate.credentials.put("abcd1234", _credential(), 1)
        try:
            await gate.credentials_changed()
        finally:
            await redis.aclose()
        assert gate.credentials.get("abcd1234") is None, "this process forgets at once"

    with caplog.at_level(logging.WARNING, logger="app.auth"):
        asyncio.run(scenario())
    assert "could not be bumped" in caplog.text
