"""One delivery attempt of a webhook over HTTP, with aiohttp.

The client never follows redirects (a 3xx is a failed attempt, not a way around the address
policy), ignores proxies from the environment (which would bypass the connect-time check), and
connects only to allowed addresses (`app.webhooks.addresses.guarded_socket`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import aiohttp
import msgspec

from app.auth.address import Network
from app.webhooks import signing
from app.webhooks.addresses import RefusedAddressError, guarded_socket

MAX_ERROR = 300
MAX_RETRY_AFTER = 24 * 3600


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
