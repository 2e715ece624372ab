"""A file download from a handle opened before the answer starts.

A file that another process may delete (an expired lot's, by the expiry job) is opened once,
while the request is still checked: from then on the open handle reads it to the end whatever
happens to its name, so the answer is the whole file or, if it was already gone, a clean
error. Serving it by path instead would look the name up again after the checks, and a
deletion in between would break the answer half-way.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import BinaryIO

import anyio.to_thread
from litestar.background_tasks import BackgroundTask
from litestar.openapi.datastructures import ResponseSpec
from litestar.response import Stream

CHUNK = 64 * 1024


async def _chunks(handle: BinaryIO) -> AsyncIterator[bytes]:
    try:
        while chunk := await anyio.to_thread.run_sync(handle.read, CHUNK):
            yield chunk
    finally:
        handle.close()


def download(
    handle: BinaryIO, filename: str, media_type: str, headers: dict[str, str] | None = None
) -> Stream:
    """The answer that sends the open file as an attachment named `filename` (a plain ASCII
    name of ours), with its length; the handle is closed once sent, or once the client left."""
    size = os.fstat(handle.fileno()).st_size
    return Stream(
        _chunks(handle),
        media_type=media_type,
        # Also when the client goes away mid-file: the stream's generator is then left
        # suspended, and its own `finally` would wait for the garbage collector.
        background=BackgroundTask(handle.close),
        headers={
            **(headers or {}),
            "Content-Length": str(size),
            "Content-Disposition": f'attachment; filename="{filename}"',
        },
    )


FILE_RESPONSE = ResponseSpec(
    data_container=bytes,
    media_type="application/octet-stream",
    generate_examples=False,
    description=(
        "The file as an attachment (`Content-Disposition` names it), with its `Content-Length`; "
        "its `Content-Type` is that of the lot's format: `text/csv`, the XLSX type or "
        "`application/pdf`"
    ),
)
"""The OpenAPI description of a `download` answer (the schema of a stream says nothing)."""
