"""Lot files: published whole by one rename, and a download opened before the expiry job
deletes the file still sends all of it."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from litestar import Litestar, get
from litestar.response import Stream

from app.leads.storage import Directory
from app.lib.download import CHUNK, download


def _publish(store: Directory, name: str, content: bytes) -> None:
    store.staging(name, 1).write_bytes(content)
    assert store.publish(name, 1) == len(content)


async def _body(response: Stream) -> bytes:
    chunks = cast(AsyncIterator[bytes], response.iterator)
    return b"".join([chunk async for chunk in chunks])


def test_download_opened_before_a_deletion_sends_the_whole_file(tmp_path: Path) -> None:
    store = Directory(tmp_path / "lotes")
    content = bytes(range(256)) * (3 * CHUNK // 256 + 7)  # several chunks, the last one short
    _publish(store, "lote-1.csv", content)
    handle = store.open("lote-1.csv")
    assert handle is not None
    store.delete("lote-1.csv")  # the expiry job's round, between the checks and the send
    assert store.open("lote-1.csv") is None
    response = download(handle, "lote-1.csv", "text/csv", headers={"Cache-Control": "no-store"})
    assert response.headers["Content-Length"] == str(len(content))
    assert response.headers["Content-Disposition"] == 'attachment; filename="lote-1.csv"'
    assert response.headers["Cache-Control"] == "no-store"
    assert asyncio.run(_body(response)) == content
    assert handle.closed


def test_a_missing_or_odd_name_opens_nothing(tmp_path: Path) -> None:
    store = Directory(tmp_path)
    assert store.open("lote-2.csv") is None
    (tmp_path / "lote-3.csv").mkdir()
    assert store.open("lote-3.csv") is None


def test_a_client_leaving_mid_file_closes_the_handle_at_once(tmp_path: Path) -> None:
    """The stream's generator is left suspended when the client goes away; the handle is
    closed when the answer ends all the same, not whenever the garbage collector runs."""
    store = Directory(tmp_path)
    _publish(store, "lote-4.csv", b"x" * (CHUNK * 20))
    opened: list[BinaryIO] = []

    @get("/arquivo")
    async def arquivo() -> Stream:
        handle = store.open("lote-4.csv")
        assert handle is not None
        opened.append(handle)
        return download(handle, "lote-4.csv", "text/csv")

    app = Litestar([arquivo])
    bodies: list[bytes] = []
    incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive() -> dict[str, Any]:
        return await incoming.get()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            bodies.append(message["body"])
            if len(bodies) == 1:  # the client leaves after the first chunk
                await incoming.put({"type": "http.disconnect"})
                await asyncio.sleep(0.05)

    async def run() -> None:
        await incoming.put({"type": "http.request", "body": b"", "more_body": False})
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": "/arquivo", "raw_path": b"/arquivo",
                 "root_path": "", "query_string": b"", "headers": [], "client": ("127.0.0.1", 1),
                 "server": ("127.0.0.1", 80), "state": {}}  # fmt: skip
        gc.disable()
        try:
            await app(scope, receive, send)  # type: ignore[arg-type]
            assert opened[0].closed
        finally:
            gc.enable()

    asyncio.run(run())
    assert 0 < len(bodies) < 20
