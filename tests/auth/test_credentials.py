"""The per-process credential cache (`app.auth.credentials`): what it keeps, when it lets go,
and a revocation announced while Redis is away."""

from __future__ import annotations

import asyncio
import logging

import msgspec
import pytest
from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from app.accounts import keys
from app.accounts.keys import check_secret
from app.accounts.repository import Credencial
from app.auth.credentials import CredentialCache
from app.auth.gate import UNREADABLE, Gate
from app.errors import UnavailableError
from app.ratelimit.limiter import RateLimiter
from app.settings import get_settings
from tests.conftest import MakeKey, migrated
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


def test_stale_entries_answer_past_their_ttl_until_a_change() -> None:
    cache = CredentialCache(ttl=0.05, stale_ttl=60)
    cache.observe(1)
    cache.put("abcd1234", _credential(), 1)
    asyncio.run(asyncio.sleep(0.06))
    assert cache.get("abcd1234") is None, "past its TTL: read again"
    assert cache.stale("abcd1234") == _credential(), "while it cannot be read"
    cache.observe(2)
    assert cache.stale("abcd1234") is None, "a change empties stale entries too"


def test_keys_known_before_a_database_outage_keep_working_new_ones_refused_at_once() -> None:
    """PostgreSQL unreachable (a pool on a closed port): a key whose cache entry is past its TTL
    is answered from it; an unknown key gets 503 with `Retry-After`, and once one read failed
    the next calls do not wait for the pool's timeout again."""
    secret = b"s" * 32
    known_id, known = keys.new_key()
    _, unknown = keys.new_key()

    async def scenario() -> tuple[Credencial, float, float]:
        closed = f"postgresql://registry:registry@127.0.0.1:{free_port()}/registry"
        pool = AsyncConnectionPool(closed, open=False, timeout=1)
        await pool.open(wait=False)
        gate = Gate(pool, None, None, secret)  # type: ignore[arg-type]
        gate.credentials = CredentialCache(ttl=0.01)
        gate.credentials.observe(1)
        stored = msgspec.structs.replace(_credential(known_id), hash=keys.digest(secret, known))
        gate.credentials.put(known_id, stored, 1)
        await asyncio.sleep(0.02)
        try:
            found, cached = await gate._credential(known)
            assert cached
            started = asyncio.get_running_loop().time()
            with pytest.raises(UnavailableError) as refused:
                await gate._credential(unknown)
            fast = asyncio.get_running_loop().time() - started
            assert refused.value.headers == {"Retry-After": "5"}
            await asyncio.sleep(UNREADABLE + 0.1)
            started = asyncio.get_running_loop().time()
            with pytest.raises(UnavailableError):
                await gate._credential(unknown)
            waited = asyncio.get_running_loop().time() - started
        finally:
            await pool.close()
        return found, fast, waited

    found, fast, waited = asyncio.run(scenario())
    assert found.id == known_id
    assert fast < 0.5, "refused without waiting for the pool"
    assert waited >= 0.5, "after the pause, PostgreSQL is tried again (and waited for)"


def test_requests_missing_one_key_at_once_read_it_once_per_epoch(make_key: MakeKey) -> None:
    """A new process's first burst (or every process's after a change empties the caches): 50
    requests with one key, none of them cached, make one PostgreSQL query and all get the
    credential; a request that saw a change does not take a read started before it."""
    issued = make_key()
    secret = check_secret(get_settings().api_key_secret)

    async def scenario() -> tuple[list[tuple[Credencial, bool]], list[str]]:
        pool = AsyncConnectionPool(migrated(), open=False, min_size=1, max_size=2)
        await pool.open()
        gate = Gate(pool, None, None, secret)  # type: ignore[arg-type]
        reads: list[str] = []
        find = gate._find

        async def counted(key_id: str) -> Credencial | None:
            reads.append(key_id)
            return await find(key_id)

        gate._find = counted  # type: ignore[method-assign]
        try:
            burst = await asyncio.gather(*(gate._credential(issued.key) for _ in range(50)))
            gate.credentials.observe(1)
            before = asyncio.ensure_future(gate._credential(issued.key))
            await asyncio.sleep(0)  # its read is under way
            gate.credentials.observe(2)  # a change: the caches emptied
            await asyncio.gather(before, gate._credential(issued.key))
        finally:
            await pool.close()
        return burst, reads

    burst, reads = asyncio.run(scenario())
    assert {(found.id, cached) for found, cached in burst} == {(issued.key_id, False)}
    assert reads == [issued.key_id] * 3, "one for the burst, one an epoch after"
