"""uvicorn's HTTP protocol with what one turn of the event loop writes to a connection sent in
one piece.

uvicorn writes an answer's status line and headers when the app sends `http.response.start`,
and its body when the app sends `http.response.body`: two `send` calls and two TCP segments
for every small answer. Here the connection's transport gathers what one turn of the event loop
writes and sends it together at the end of that turn. Nothing waits longer than the turn, and
writes past `FLUSH_BYTES` go out at once, so a long streamed answer still meets the transport's
flow control.

A request the HTTP parser refuses (a raw byte outside ASCII in the target, a malformed header,
a body longer than its `Content-Length`) is answered before any app runs; uvicorn answers it in
plain text, this protocol with the API's JSON error body, as every other 400.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

FLUSH_BYTES = 64 * 1024
MALFORMED = msgspec.json.encode(
    {
        "error": "Bad Request",
        "message": "Requisição HTTP malformada: confira a linha do pedido (o endereço "
        "percent-encoded), os cabeçalhos e o Content-Length.",
    }
)


class GatheringTransport:
    """A connection's transport that sends the writes of one event-loop turn together."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._gathered: list[bytes] = []
        self._size = 0

    @property
    def gathered(self) -> int:
        """Bytes written in this turn and not yet sent."""
        return self._size

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._gathered:
            self._loop.call_soon(self.flush)
        self._gathered.append(bytes(data))
        self._size += len(data)
        if self._size >= FLUSH_BYTES:
            self.flush()

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Sends what was gathered (dropped if the connection is already closing)."""
        if not self._gathered:
            return
        data = self._gathered[0] if len(self._gathered) == 1 else b"".join(self._gathered)
        self._gathered.clear()
        self._size = 0
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._size

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GatheringHttpTools(HttpToolsProtocol):
    """`HttpToolsProtocol` writing through a `GatheringTransport`, refusing what its parser
    cannot read with a JSON body."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(GatheringTransport(transport))  # type: ignore[arg-type]

    def send_400_response(self, msg: str) -> None:
        head = [STATUS_LINE[400]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: ", str(len(MALFORMED)).encode(), b"\r\n",
            b"connection: close\r\n\r\n", MALFORMED,
        ]  # fmt: skip
        self.transport.write(b"".join(head))
        self.transport.close()
