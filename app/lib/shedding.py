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
"""

from __future__ import annotations

import msgspec
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


class Shedding:
    """ASGI middleware around the whole app (outermost): counts requests in flight."""

    def __init__(self, app: ASGIApp, limit: int, searches: int) -> None:
        self.app = app
        self.limit = limit
        self.searches = searches
        self.in_flight = 0
        self.searching = 0
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["path"] in ALWAYS:
            await self.app(scope, receive, send)
            return
        search = is_search(scope["path"])
        if self.in_flight >= self.limit or (search and self.searching >= self.searches):
            self.refused += 1
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
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            self.searching -= search
