"""A sliding-log rate limiter: one Redis sorted set per bucket, checked by one Lua script.

Why a Lua script rather than the `limits` library or Litestar's middleware: Litestar's
`RateLimitMiddleware` counts per process (and races between processes); `limits`' moving
window needs several round trips and its async Redis storage drags in another client. The
script below prunes the set, counts, admits and reads the oldest entry in one atomic step on
the Redis server, with the Redis server's clock, so the count is exact whatever the number of
app processes, and a request costs one script call (`EVALSHA`), sent to Redis together with
the calls of the requests that arrive with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import uuid
from typing import Any

import msgspec
from redis.asyncio import Redis
from redis.exceptions import NoScriptError, RedisError

from app.errors import UnavailableError

WINDOW = 60
"""Seconds of the rolling window of every plan and of anonymous callers."""
REDIS_RETRY_AFTER = 5

# KEYS[1]: the bucket; KEYS[2]: the credentials' epoch. ARGV: limit, window in microseconds,
# a unique member prefix, units. Admits the request only if all its units fit (a batch of n
# items is n units); returns {admitted (0/1), count in window, now (µs), when enough entries
# will have left (µs), the credentials' epoch (`app.auth.credentials`)}.
SLIDING_LOG = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local units = tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local admitted = 0
if count + units <= limit then
  for i = 1, units do
    redis.call('ZADD', key, now, ARGV[3] .. ':' .. i)
  end
  count = count + units
  admitted = 1
end
redis.call('PEXPIRE', key, math.ceil(window / 1000))
local frees = now + window
if admitted == 1 then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if oldest[2] then frees = tonumber(oldest[2]) + window end
else
  local needed = count + units - limit
  local entry = redis.call('ZRANGE', key, needed - 1, needed - 1, 'WITHSCORES')
  if entry[2] then frees = tonumber(entry[2]) + window end
end
return {admitted, count, now, frees, tonumber(redis.call('GET', KEYS[2]) or '0')}
"""


_running: set[asyncio.Future[None]] = set()
"""Batches on their way to Redis (a task must be referenced until it ends)."""


def epoch_key(prefix: str) -> str:
    """The Redis key of the credentials' epoch (`app.auth.credentials`)."""
    return f"{prefix}credenciais:epoca"


def account_bucket(conta_id: int) -> str:
    """The one window of an account's plan: every key of the account, REST and the agent
    interface alike, draws on it, so more keys never mean more requests."""
    return f"conta:{conta_id}"


def address_bucket(group: str, address: str) -> str:
    """The window of an IP address (an IPv6 /64) without a token, per group of routes."""
    return f"ip:{group}:{address}"


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    admitted: bool
    limit: int
    remaining: int
    reset: int
    """Unix seconds when the oldest request in the window leaves it (a slot frees)."""
    retry_after: int
    """Seconds to wait before the request's units can be admitted (0 when admitted)."""
    units: int = 1
    """What the request draws from the window: 1, or one per item of a batch."""
    epoch: int = 0
    """The credentials' epoch, read in the same round trip (`app.auth.credentials`)."""

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
            "X-RateLimit-Cost": str(self.units),
        }
        if not self.admitted:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimiter:
    """Admits or refuses one request against a bucket (`key:<id>`, `ip:<group>:<address>`...).

    The checks of requests that arrive together are sent together: each `hit` joins the batch
    of its turn of the event loop, and the batch goes to Redis as one pipeline (one write and
    one read on one connection, each script still atomic on its own). Under load that is one
    round trip for many requests instead of one each; a lone request waits for nothing."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self._redis = redis
        self._sha = hashlib.sha1(SLIDING_LOG.encode()).hexdigest()  # noqa: S324 - Redis's name
        self._prefix = f"{prefix}rl:"
        self.epoch_key = epoch_key(prefix)
        self._batch: list[tuple[tuple[str | int, ...], asyncio.Future[list[int]]]] = []

    async def hit(self, bucket: str, limit: int, window: int = WINDOW, units: int = 1) -> Decision:
        """Counts the request's `units` if they all fit in the window.

        Raises `UnavailableError` (503 with `Retry-After`) when Redis does not answer: the
        limiter fails closed, since admitting unmetered traffic would defeat the plans.
        """
        window_us = window * 1_000_000
        args = (self._prefix + bucket, self.epoch_key, limit, window_us, uuid.uuid4().hex, units)
        try:
            admitted, count, now, frees_at, epoch = await self._run(args)
        except (RedisError, OSError) as error:
            raise UnavailableError(
                "O controle de limite de requisições está indisponível; tente novamente.",
                headers={"Retry-After": str(REDIS_RETRY_AFTER)},
            ) from error
        return Decision(
            admitted=bool(admitted),
            limit=limit,
            remaining=max(limit - int(count), 0),
            reset=math.ceil(int(frees_at) / 1_000_000),
            retry_after=0 if admitted else max(math.ceil((int(frees_at) - int(now)) / 1e6), 1),
            units=units,
            epoch=int(epoch),
        )

    def _run(self, args: tuple[str | int, ...]) -> asyncio.Future[list[int]]:
        """The script's answer for `args` (its two keys, then its arguments), from the batch
        of this turn of the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[int]] = loop.create_future()
        self._batch.append((args, future))
        if len(self._batch) == 1:
            loop.call_soon(self._send)
        return future

    def _send(self) -> None:
        batch, self._batch = self._batch, []
        task = asyncio.ensure_future(self._flush(batch))
        _running.add(task)
        task.add_done_callback(_running.discard)

    async def _flush(
        self, batch: list[tuple[tuple[str | int, ...], asyncio.Future[list[int]]]]
    ) -> None:
        try:
            answers = await self._pipeline([args for args, _ in batch], "EVALSHA", self._sha)
            if any(isinstance(answer, NoScriptError) for answer in answers):
                # Redis restarted or flushed its scripts: the whole text, once per batch.
                again = [i for i, answer in enumerate(answers) if isinstance(answer, NoScriptError)]
                texts = await self._pipeline([batch[i][0] for i in again], "EVAL", SLIDING_LOG)
                for i, answer in zip(again, texts, strict=True):
                    answers[i] = answer
        except BaseException as error:
            for _, future in batch:
                if not future.done():
                    future.set_exception(
                        error if isinstance(error, Exception) else RedisError("cancelled")
                    )
            if not isinstance(error, Exception):
                raise
            return
        for (_, future), answer in zip(batch, answers, strict=True):
            if future.done():
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)

    async def _pipeline(
        self, calls: list[tuple[str | int, ...]], command: str, script: str
    ) -> list[Any]:
        pipe = self._redis.pipeline(transaction=False)
        for args in calls:
            pipe.execute_command(command, script, 2, *args)
        answers: list[Any] = await pipe.execute(raise_on_error=False)
        return answers

    async def bump_epoch(self) -> None:
        """Tells every process that credentials changed (`app.auth.credentials`)."""
        await self._redis.incr(self.epoch_key)
