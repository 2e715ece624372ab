"""A sliding-log rate limiter: one Redis sorted set per bucket, checked by one Lua script.

Why a Lua script rather than the `limits` library or Litestar's middleware: Litestar's
`RateLimitMiddleware` counts per process (and races between processes); `limits`' moving
window needs several round trips and its async Redis storage drags in another client. The
script below prunes the set, counts, admits and reads the oldest entry in one atomic step on
the Redis server, with the Redis server's clock, so the count is exact whatever the number of
app processes, and a request costs one round trip (`EVALSHA`, loaded once by redis-py).
"""

from __future__ import annotations

import math
import uuid

import msgspec
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.errors import UnavailableError

WINDOW = 60
"""Seconds of the rolling window of every plan and of anonymous callers."""
REDIS_RETRY_AFTER = 5

# KEYS[1]: the bucket. ARGV: limit, window in microseconds, a unique member.
# Returns {admitted (0/1), count in window, now (µs), oldest entry (µs)}.
SLIDING_LOG = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local admitted = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  count = count + 1
  admitted = 1
end
redis.call('PEXPIRE', key, math.ceil(window / 1000))
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local first = now
if oldest[2] then first = tonumber(oldest[2]) end
return {admitted, count, now, first}
"""


def key_bucket(key_id: str) -> str:
    """The one window of an API key, drawn on by REST and the agent interface alike."""
    return f"chave:{key_id}"


def address_bucket(group: str, address: str) -> str:
    """The window of an IP address without a token, per group of routes."""
    return f"ip:{group}:{address}"


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    admitted: bool
    limit: int
    remaining: int
    reset: int
    """Unix seconds when the oldest request in the window leaves it (a slot frees)."""
    retry_after: int
    """Seconds to wait before a new request can be admitted (0 when admitted)."""

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if not self.admitted:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimiter:
    """Admits or refuses one request against a bucket (`key:<id>`, `ip:<group>:<address>`...)."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self._script = redis.register_script(SLIDING_LOG)
        self._prefix = f"{prefix}rl:"

    async def hit(self, bucket: str, limit: int, window: int = WINDOW) -> Decision:
        """Counts the request if the window has room.

        Raises `UnavailableError` (503 with `Retry-After`) when Redis does not answer: the
        limiter fails closed, since admitting unmetered traffic would defeat the plans.
        """
        window_us = window * 1_000_000
        try:
            admitted, count, now, first = await self._script(
                keys=[self._prefix + bucket], args=[limit, window_us, uuid.uuid4().hex]
            )
        except (RedisError, OSError) as error:
            raise UnavailableError(
                "O controle de limite de requisições está indisponível; tente novamente.",
                headers={"Retry-After": str(REDIS_RETRY_AFTER)},
            ) from error
        frees_at = int(first) + window_us
        return Decision(
            admitted=bool(admitted),
            limit=limit,
            remaining=max(limit - int(count), 0),
            reset=math.ceil(frees_at / 1_000_000),
            retry_after=0 if admitted else max(math.ceil((frees_at - int(now)) / 1_000_000), 1),
        )
