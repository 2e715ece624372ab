"""HEAD answered as the GET of the same URL without its body (RFC 9110 §9.3.2: a server
must support HEAD wherever it supports GET), so every GET route, the fast lane included,
answers HEAD with the headers a GET gets (`Content-Length`, `ETag`, the rate-limit headers;
the call is counted and audited as the GET)."""

from __future__ import annotations

from typing import cast

from litestar.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """The outermost ASGI layer: a HEAD request reaches the app as a GET, and only the
    answer's head leaves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "HEAD":  # HTTP only: a WebSocket scope has no method
            await self.app(scope, receive, send)
            return

        async def head_only(message: Message) -> None:
            if message["type"] != "http.response.body":
                await send(message)
            elif not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        as_get = dict(scope)
        as_get["method"] = "GET"
        await self.app(cast(Scope, as_get), receive, head_only)
