"""Delivery attempts of webhooks over HTTP, with aiohttp.

The client never follows redirects (a 3xx is a failed attempt, not a way around the address
policy), ignores proxies from the environment (which would bypass the connect-time check), and
connects only to allowed addresses (`app.webhooks.addresses.guarded_socket`).

A process delivers through one `Sender`: one pooled session (a connection to an endpoint is
reused by the next delivery there) and, per origin (scheme, host and port), a bound on the
deliveries in flight (half the worker's slots) and a pause after attempts that got no answer.
When its origin is full, a delivery waits for room only while the origin looks fast (its
attempts end within `FAST` seconds), at most `FAST`; otherwise, and while the origin rests, it
is not attempted but postponed (`OriginBusy`), its slot freed, to the origin's next turn: turns
are spaced by the origin's own pace (its mean attempt time over its share), so a backlog for a
slow endpoint is spread over the time that endpoint needs, each job coming back about once.
So a slow or dead endpoint holds at most half of a worker's slots, for at most the timeout, the
deliveries to other endpoints go on at once, and a fast endpoint with many events keeps its
share busy.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import aiohttp
import msgspec

from app.auth.address import Network
from app.settings import Settings
from app.webhooks import signing
from app.webhooks.addresses import RefusedAddressError, guarded_socket, networks_of

log = logging.getLogger(__name__)

MAX_ERROR = 300
MAX_RETRY_AFTER = 24 * 3600
FAST = 0.5
"""Seconds: an origin whose attempts end within this is fast; a delivery waits this long at
most for room there before it is postponed."""
MAX_PAUSE = 300.0
"""The longest an origin that stopped answering is left alone (seconds)."""
MAX_ANSWER = 64 * 1024
"""Bytes of an endpoint's answer read, so its connection can serve the next delivery; past
this the connection is closed and the rest never read (an answer of gigabytes costs nothing)."""
DRAIN = 2.0
"""Seconds the body of an answer is read at most once its status came: an endpoint that stalls
there has answered (its status counts), and its connection is closed."""
MAX_ORIGINS = 10_000
"""Origins whose state (pace, failures, room) a process keeps: past it, the idle ones (nothing
in flight, not resting) are forgotten, so memory does not grow with every endpoint ever seen."""
MAX_DOUBLINGS = 30
"""Failures in a row past which an origin's pause stops doubling (it is `MAX_PAUSE` long before
that; the bound keeps `2 ** n` a number a float holds)."""


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
        # c-ares: a slow name server holds no thread (`addresses.addresses_of`)
        resolver=aiohttp.AsyncResolver(),
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
            try:
                async with asyncio.timeout(DRAIN):
                    await _drain(answer)
            except (TimeoutError, aiohttp.ClientError, OSError):
                answer.close()  # the status came: what follows it does not change the outcome
            wait = (
                retry_after(answer.headers.get("Retry-After"))
                if answer.status in (429, 503)
                else None
            )
            error = None if 200 <= answer.status < 300 else f"HTTP {answer.status}"
            return Resultado(
                status=answer.status, duracao_ms=elapsed(), erro=error, retry_after=wait
            )
    except TimeoutError:
        return Resultado(status=None, duracao_ms=elapsed(), erro="sem resposta no tempo limite")
    except (aiohttp.ClientError, OSError) as error:
        return Resultado(status=None, duracao_ms=elapsed(), erro=failure(error)[:MAX_ERROR])


async def _drain(answer: aiohttp.ClientResponse) -> None:
    """Reads the answer's body up to `MAX_ANSWER` bytes; a longer one closes the connection."""
    read = 0
    async for chunk in answer.content.iter_chunked(16 * 1024):
        read += len(chunk)
        if read > MAX_ANSWER:
            answer.close()
            return


def failure(error: BaseException) -> str:
    """What went wrong with an attempt that got no answer, in the subscribers' words (the
    delivery log and a paused monitor's reason show it): never a library's own text."""
    cause = error.os_error if isinstance(error, aiohttp.ClientConnectorError) else error
    if isinstance(cause, RefusedAddressError):
        return cause.said()
    if isinstance(error, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return "falha no TLS: o certificado do endpoint não foi aceito"
    if isinstance(error, aiohttp.ClientConnectorDNSError) or isinstance(cause, socket.gaierror):
        return "o nome do endpoint não foi encontrado (DNS)"
    if isinstance(cause, ConnectionRefusedError):
        return "conexão recusada pelo endpoint"
    if isinstance(error, aiohttp.ServerDisconnectedError | ConnectionResetError):
        return "o endpoint fechou a conexão sem responder"
    if isinstance(error, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return "resposta HTTP inválida do endpoint"
    if isinstance(error, aiohttp.ClientConnectorError):
        return "endpoint inalcançável"
    if isinstance(error, aiohttp.InvalidURL):
        return "endereço do endpoint inválido"
    log.warning("webhook delivery failed: %s", type(error).__name__)
    return "falha de rede ao falar com o endpoint"


def pause_after(failures: int, timeout: float) -> float:
    """Seconds an origin rests after `failures` attempts in a row got no answer: the attempts'
    timeout, doubled at each failure, up to `MAX_PAUSE`."""
    return min(timeout * 2.0 ** min(failures - 1, MAX_DOUBLINGS), MAX_PAUSE)


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
    started: list[float] = field(default_factory=list)
    """`time.monotonic()` of each attempt in flight."""
    pace: float = 0.0
    """Mean seconds of its recent attempts (exponentially weighted; timeouts count whole)."""
    failures: int = 0
    """Attempts in a row that got no answer (timeout, refused, unreachable)."""
    paused_until: float = 0.0
    """`time.monotonic()` before which nothing is sent there."""
    next_turn: float = 0.0
    """`time.monotonic()` of the last turn given to a postponed delivery."""

    def slow(self, now: float) -> bool:
        oldest = min(self.started, default=now)
        return self.pace > FAST or now - oldest > FAST


class Sender:
    """The HTTP side of every delivery of one process (see the module's docstring)."""

    def __init__(
        self,
        networks: Sequence[Network],
        timeout: float,
        per_origin: int,
        max_origins: int = MAX_ORIGINS,
    ) -> None:
        self._networks = list(networks)
        self._timeout = timeout
        self._per_origin = max(per_origin, 1)
        self._max_origins = max_origins
        self._session: aiohttp.ClientSession | None = None
        self._origins: dict[str, _Origin] = {}

    def __len__(self) -> int:
        """Origins whose state is kept."""
        return len(self._origins)

    def _state(self, url: str) -> _Origin:
        key = origin(url)
        state = self._origins.get(key)
        if state is None:
            if len(self._origins) >= self._max_origins:
                now = time.monotonic()
                for idle, kept in list(self._origins.items()):
                    if not kept.started and kept.paused_until <= now and not kept.room.locked():
                        del self._origins[idle]
            state = self._origins[key] = _Origin(asyncio.Semaphore(self._per_origin))
        return state

    @classmethod
    def of(cls, settings: Settings) -> Sender:
        """Per origin, at most half the worker's slots (the rest stay for other endpoints)."""
        return cls(
            networks_of(settings.webhook_allow_networks),
            settings.webhook_timeout,
            settings.worker_concurrency // 2,
        )

    def _turn(self, state: _Origin, now: float) -> OriginBusy:
        """The next turn at a full or resting origin, one share of its pace after the last."""
        in_flight = [now - started for started in state.started]
        pace = max(state.pace, *in_flight, 0.05)
        state.next_turn = max(state.next_turn, state.paused_until, now) + pace / self._per_origin
        at = datetime.now(UTC) + timedelta(seconds=state.next_turn - now)
        return OriginBusy(at)

    async def send(
        self, url: str, secret: str, message_id: str, body: str, *, bounded: bool = True
    ) -> Resultado:
        """One attempt. `bounded`: within the origin's share of this process (see the
        module's docstring), else `OriginBusy` with the origin's next turn. Unbounded (a test
        event) it goes at once."""
        if self._session is None or self._session.closed:
            self._session = client(self._networks, self._timeout)
        if not bounded:
            return await send(self._session, url, secret, message_id, body)
        state = self._state(url)
        now = time.monotonic()
        if state.paused_until > now:
            raise self._turn(state, now)
        if state.room.locked() and state.slow(now):
            raise self._turn(state, now)
        try:
            async with asyncio.timeout(FAST):
                await state.room.acquire()
        except TimeoutError:
            raise self._turn(state, time.monotonic()) from None
        started = time.monotonic()
        state.started.append(started)
        try:
            outcome = await send(self._session, url, secret, message_id, body)
        finally:
            state.started.remove(started)
            state.room.release()
        took = time.monotonic() - started
        state.pace = took if not state.pace else 0.8 * state.pace + 0.2 * took
        if outcome.status is None:
            state.failures += 1
            state.paused_until = time.monotonic() + pause_after(state.failures, self._timeout)
        else:
            state.failures, state.paused_until = 0, 0.0
        return outcome

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
