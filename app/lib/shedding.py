"""Load shedding: each process admits at most `MAX_IN_FLIGHT` requests at once and answers the
excess at once with 503 and `Retry-After: 1`, before any work (no key check, no query), so an
overload costs the excess almost nothing and the admitted requests keep their latency, instead
of every request waiting in a growing queue. Health checks (`/health`, `/v1/status`) are always
admitted, so an operator sees the service under load. The count recovers the moment the load
drops: it is the number of requests being answered, nothing more.

Searches (`SEARCHES`: every route whose answer is an Elasticsearch query, not a read by key)
have a tighter limit of their own, `MAX_SEARCHES_IN_FLIGHT`: Elasticsearch answers a few
hundred of them a second on a small machine and queues the rest, so without it an overload of
searches waits in that queue for seconds (measured: p50 1.5 s at 200 offered a second on a
release of many segments) while lookups, which do not need it, keep their own room.

That limit adapts (`SearchLimit`): while the moving average of the searches' latency is above
its target (`SEARCH_LATENCY_TARGET_MS`) the limit is cut by a fifth, at most once per
`COOL_DOWN`, down to a floor; each search answered while the average is within the target raises
it by `1 / limit`, back up to its ceiling (additive increase, multiplicative decrease, as TCP's
congestion window). At the rates the machine sustains, the average stays within the target and
the ceiling holds, whatever a few slow searches take; past them the limit settles where the
admitted searches meet the target, so an overload raises their latency by a bounded amount
instead of by the whole ceiling's queue.
"""

from __future__ import annotations

import time

import msgspec
from litestar.datastructures import State
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from litestar.types.asgi_types import HTTPResponseBodyEvent, HTTPResponseStartEvent

ALWAYS = frozenset({"/health", "/v1/status"})
SEARCHES = (
    "/search", "/seek", "/nome", "/mercado", "/segmentos", "/relacionadas", "/similares",
    "/socios/relacionados", "/leads", "/busca",
)  # fmt: skip
"""Path prefixes (after an optional `/v1`) of the routes that query Elasticsearch."""


def is_search(path: str) -> bool:
    return path.removeprefix("/v1").startswith(SEARCHES)


MESSAGE = "Servidor sobrecarregado neste instante; tente de novo em 1 s."
BODY = msgspec.json.encode({"error": "Service Unavailable", "message": MESSAGE})
PAGES = ("/busca", "/painel")
"""Paths of the web pages: their refusal is an HTML fragment (htmx shows it in place)."""
PAGE_BODY = f'<p class="erro" role="alert">{MESSAGE}</p>'.encode()
PAGE_HEADERS = ((b"cache-control", b"no-store"), (b"referrer-policy", b"same-origin"))
"""A page refused is never cached either, as every page of the dashboard (`app.web.render`)."""
SHEDDING = "carga"
"""Where the app's state holds the process's shedding (the status reports its counts)."""


FLOOR = 4
"""The adaptive search limit never goes below this (nor above its ceiling): enough searches in
flight per process to keep Elasticsearch's cores busy."""
CUT = 0.8
COOL_DOWN = 0.25
"""Seconds between two cuts: the moving average's memory, so one overload is cut once for it."""
WEIGHT = 0.1
"""The weight of each search in the moving average of the latency (the last few dozen count)."""


class SearchLimit:
    """How many searches one process admits at once: AIMD on the moving average of their
    latency (see the module). A `target` of 0 (or less) keeps the limit at its ceiling."""

    def __init__(self, ceiling: int, target: float) -> None:
        self.ceiling = ceiling
        self.floor = min(FLOOR, ceiling)
        self.target = target
        self.value = float(ceiling)
        self.average = 0.0
        self._next_cut = 0.0

    def admits(self, searching: int) -> bool:
        return searching < int(self.value)

    def answered(self, seconds: float, now: float) -> None:
        """Adapt the limit to a search answered in `seconds` (at monotonic time `now`)."""
        if self.target <= 0:
            return
        self.average += WEIGHT * (seconds - self.average)
        if self.average <= self.target:
            self.value = min(self.ceiling, self.value + 1 / self.value)
        elif now >= self._next_cut:
            self.value = max(self.floor, self.value * CUT)
            self._next_cut = now + COOL_DOWN


class Shedding:
    """ASGI middleware around the whole app (outermost): counts requests in flight. With the
    app's `state`, it registers itself there (`SHEDDING`) for the status to report."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        searches: int,
        target: float = 0.0,
        state: State | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.searches = SearchLimit(searches, target)
        self.in_flight = 0
        self.searching = 0
        self.refused = 0
        """Requests refused since the process started."""
        self.refused_searches = 0
        """Of them, searches refused by the search limit while the process had room."""
        if state is not None:
            state[SHEDDING] = self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["path"] in ALWAYS:
            await self.app(scope, receive, send)
            return
        search = is_search(scope["path"])
        crowded = self.in_flight >= self.limit
        if crowded or (search and not self.searches.admits(self.searching)):
            self.refused += 1
            self.refused_searches += not crowded
            page = scope["path"].startswith(PAGES)
            content = PAGE_BODY if page else BODY
            kind = b"text/html; charset=utf-8" if page else b"application/json"
            start: HTTPResponseStartEvent = {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", kind),
                    (b"retry-after", b"1"),
                    (b"content-length", str(len(content)).encode()),
                    *(PAGE_HEADERS if page else ()),
                ],
            }
            await send(start)
            body: HTTPResponseBodyEvent = {
                "type": "http.response.body", "body": content, "more_body": False,
            }  # fmt: skip
            await send(body)
            return
        self.in_flight += 1
        self.searching += search
        started = time.monotonic() if search else 0.0
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            self.searching -= search
            if search:
                now = time.monotonic()
                self.searches.answered(now - started, now)
