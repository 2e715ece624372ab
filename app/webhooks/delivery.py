"""Delivery attempts of webhooks over HTTP, with aiohttp.

The client never follows redirects (a 3xx is a failed attempt, not a way around the address
policy), ignores proxies from the environment (which would bypass the connect-time check), and
connects only to allowed addresses (`app.webhooks.addresses.guarded_socket`).

A process delivers through one `Sender`: one pooled session (a connection to an endpoint is
reused by the next delivery there) and, per origin (scheme, host and port), a bound on the
deliveries in flight (half the worker's slots) and a pause after attempts that got no answer.
A delivery waits at most `SLOT_WAIT` for room at its origin, and none while the origin rests;
then it is not attempted but postponed (`OriginBusy`), its slot freed. So a slow or dead
endpoint holds at most half of a worker's slots, for at most the timeout, and the deliveries to
other endpoints go on at once; a fast endpoint with many events keeps its share busy.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import aiohttp
import msgspec

from app.auth.address import Network
from app.settings import Settings
from app.webhooks import signing
from app.webhooks.addresses import RefusedAddressError, guarded_socket, networks_of

MAX_ERROR = 300
MAX_RETRY_AFTER = 24 * 3600
SLOT_WAIT = 1.0
"""Seconds a delivery waits for room at its origin before it is postponed (its worker slot
freed for other endpoints)."""
MAX_PAUSE = 300.0
"""The longest an origin that stopped answering is left alone (seconds)."""


class Resultado(msgspec.Struct, kw_only=True):
    status: int | None
    """The endpoint's HTTP status, or None when no answer came (refused, timeout, network)."""
    duracao_ms: int
    erro: str | None
    retry_after: float | None = None
    """Seconds the endpoint asked to wait (`Retry-After` of a 429 or 503)."""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def gone(self) -> bool:
        return self.status == 410


def client(networks: Sequence[Network], timeout: float) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=200,
        limit_per_host=8,
        socket_factory=guarded_socket(networks),  # type: ignore[arg-type]
        use_dns_cache=False,
    )
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout), trust_env=False
    )


def retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (a number of seconds or an HTTP date), bounded."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


async def send(
    session: aiohttp.ClientSession, url: str, secret: str, message_id: str, body: str
) -> Resultado:
    """POSTs `body` signed for `message_id`; the outcome, whatever happened."""
    started = time.perf_counter()
    headers = signing.headers(secret, message_id, body)

    def elapsed() -> int:
        return int((time.perf_counter() - started) * 1000)

    try:
        async with session.post(
            url, data=body.encode(), headers=headers, allow_redirects=False
        ) as answer:
            await answer.read()
            wait = (
                retry_after(answer.headers.get("Retry-After"))
                if answer.status in (429, 503)
                else None
            )
            error = None if 200 <= answer.status < 300 else f"HTTP {answer.status}"
            return Resultado(
                status=answer.status, duracao_ms=elapsed(), erro=error, retry_after=wait
            )
    except aiohttp.ClientConnectorError as error:
        cause = error.os_error if isinstance(error.os_error, RefusedAddressError) else error
        return Resultado(status=None, duracao_ms=elapsed(), erro=str(cause)[:MAX_ERROR])
    except TimeoutError:
        return Resultado(status=None, duracao_ms=elapsed(), erro="sem resposta no tempo limite")
    except (aiohttp.ClientError, OSError) as error:
        return Resultado(
            status=None, duracao_ms=elapsed(), erro=f"{type(error).__name__}: {error}"[:MAX_ERROR]
        )


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port or ''}"


class OriginBusy(Exception):  # noqa: N818 - a signal, not an error
    """Nothing was sent: the origin has no room for this process now, or stopped answering a
    moment ago; try at `at`."""

    def __init__(self, at: datetime) -> None:
        super().__init__(at.isoformat())
        self.at = at


@dataclass
class _Origin:
    room: asyncio.Semaphore
    failures: int = 0
    """Attempts in a row that got no answer (timeout, refused, unreachable)."""
    paused_until: float = 0.0
    """`time.monotonic()` before which nothing is sent there."""


class Sender:
    """The HTTP side of every delivery of one process (see the module's docstring)."""

    def __init__(self, networks: Sequence[Network], timeout: float, per_origin: int) -> None:
        self._networks = list(networks)
        self._timeout = timeout
        self._per_origin = max(per_origin, 1)
        self._session: aiohttp.ClientSession | None = None
        self._origins: dict[str, _Origin] = {}

    @classmethod
    def of(cls, settings: Settings) -> Sender:
        """Per origin, at most half the worker's slots (the rest stay for other endpoints)."""
        return cls(
            networks_of(settings.webhook_allow_networks),
            settings.webhook_timeout,
            settings.worker_concurrency // 2,
        )

    def _later(self, seconds: float) -> datetime:
        jittered = seconds * (1 + random.random())  # noqa: S311 - spreads postponed jobs
        return datetime.now(UTC) + timedelta(seconds=jittered)

    async def send(
        self, url: str, secret: str, message_id: str, body: str, *, bounded: bool = True
    ) -> Resultado:
        """One attempt. `bounded`: within the origin's share of this process, waiting at most
        `SLOT_WAIT` for room; `OriginBusy` when there is none, or the origin is resting after
        attempts that got no answer. Unbounded (a test event) it goes at once."""
        if self._session is None or self._session.closed:
            self._session = client(self._networks, self._timeout)
        key = origin(url)
        state = self._origins.setdefault(key, _Origin(asyncio.Semaphore(self._per_origin)))
        if not bounded:
            return await send(self._session, url, secret, message_id, body)
        resting = state.paused_until - time.monotonic()
        if resting > 0:
            raise OriginBusy(self._later(resting))
        try:
            async with asyncio.timeout(SLOT_WAIT):
                await state.room.acquire()
        except TimeoutError:
            raise OriginBusy(self._later(min(self._timeout, 2.0))) from None
        try:
            outcome = await send(self._session, url, secret, message_id, body)
        finally:
            state.room.release()
        if outcome.status is None:
            state.failures += 1
            pause = min(self._timeout * 2 ** (state.failures - 1), MAX_PAUSE)
            state.paused_until = time.monotonic() + pause
        else:
            state.failures, state.paused_until = 0, 0.0
        return outcome

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
