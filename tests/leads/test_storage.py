"""Lot files: published whole by one rename, and a download opened before the expiry job
deletes the file still sends all of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

from litestar.response import Stream

from app.leads.storage import Directory
from app.lib.download import CHUNK, download


def _publish(store: Directory, name: str, content: bytes) -> None:
    store.staging(name).write_bytes(content)
    assert store.publish(name) == len(content)


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
