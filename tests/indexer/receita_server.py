"""A web folder in the layout of Receita's releases, served on loopback by aiohttp, with the
failures the real server shows: connections dropped mid-file, 503 answers, a corrupt zip. It
honours `Range` (206 with `Content-Range`), answers HEAD, and counts what it served. And an HTTP
forward proxy on loopback, for the downloads that go through one. Self-contained: the download
benchmark (`scripts/bench_download.py`) serves its files with it too."""

from __future__ import annotations

import asyncio
import io
import threading
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from tests.loopback import LoopbackApp, free_port

ROOT = Path(__file__).resolve().parent.parent.parent
BASE_PATH = "/dados/cnpj/dados_abertos_cnpj/"
SAMPLE = ROOT / "fixtures" / "sample"
MEMBERS = {
    "Empresas0.zip": "EMPRECSV.csv", "Estabelecimentos0.zip": "ESTABELE.csv",
    "Socios0.zip": "SOCIOCSV.csv", "Simples.zip": "SIMPLESCSV.csv", "Cnaes.zip": "CNAECSV.csv",
    "Motivos.zip": "MOTICSV.csv", "Municipios.zip": "MUNICCSV.csv",
    "Naturezas.zip": "NATJUCSV.csv", "Paises.zip": "PAISCSV.csv",
    "Qualificacoes.zip": "QUALSCSV.csv",
}  # fmt: skip


def sample_month(folder: Path = SAMPLE) -> dict[str, bytes]:
    """The bundled sample as Receita's zips, by file name."""
    found = {}
    for name, member in MEMBERS.items():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(folder / member, f"K3241.K03200Y0.D61108.{member.split('.')[0]}")
        found[name] = buffer.getvalue()
    return found


def corrupted(data: bytes) -> bytes:
    """The same bytes with one flipped in the middle of the compressed data."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


@dataclass
class Faults:
    drop_at: dict[str, list[int]] = field(default_factory=dict)
    """File -> byte offsets: each GET of the file (in turn) is cut after that many bytes."""
    unavailable: dict[str, int] = field(default_factory=dict)
    """File -> how many GETs answer 503 (with `Retry-After: 0`) before it is served."""
    corrupt: set[str] = field(default_factory=set)


REGIMES_PATH = "/dados/cnpj/regime_tributario/"
PEER = ROOT.parent / "shared" / "data" / "minha-receita-testdata"


def regime_files(folder: Path = PEER) -> dict[str, bytes]:
    """The tax-regime zips of the peer's test data, as Receita publishes them, by file name."""
    names = ("Imunes e Isentas.zip", "Lucro Arbitrado.zip", "Lucro Presumido.zip", "Lucro Real.zip")
    return {name: (folder / name).read_bytes() for name in names}


class ReceitaServer(LoopbackApp):
    def __init__(
        self,
        months: dict[str, dict[str, bytes]],
        faults: Faults | None = None,
        regimes: dict[str, bytes] | None = None,
    ) -> None:
        super().__init__()
        self.months = months
        self.regimes = regimes
        self.faults = faults or Faults()
        self.served: Counter[str] = Counter()
        self.ranges: list[tuple[str, str]] = []
        self.url = f"http://127.0.0.1:{self.port}{BASE_PATH}"
        self.start()

    def _listing(self, names: list[str]) -> web.Response:
        rows = "".join(
            f'<tr><td><a href="{name}">{name}</a></td><td>2026-11-12 10:00</td></tr>\n'
            for name in names
        )
        page = (
            "<html><head><title>Index of</title></head><body><table>"
            '<tr><td><a href="../">Parent Directory</a></td></tr>\n'
            + rows
            + "</table></body></html>"
        )
        return web.Response(text=page, content_type="text/html")

    async def _root(self, request: web.Request) -> web.Response:
        return self._listing(
            [f"{month}/" for month in sorted(self.months)] + ["regime_tributario/"]
        )

    async def _month(self, request: web.Request) -> web.Response:
        month = request.match_info["month"]
        if month not in self.months:
            raise web.HTTPNotFound()
        return self._listing(sorted(self.months[month]))

    async def _regime_listing(self, request: web.Request) -> web.Response:
        if self.regimes is None:
            raise web.HTTPNotFound()
        return self._listing(sorted(self.regimes))

    async def _file(self, request: web.Request) -> web.StreamResponse:
        month, name = request.match_info.get("month", ""), request.match_info["name"]
        data = self.months.get(month, {}).get(name)
        if data is None and request.path.startswith(REGIMES_PATH):
            data = (self.regimes or {}).get(name)
        if data is None:
            raise web.HTTPNotFound()
        if name in self.faults.corrupt:
            data = corrupted(data)
        if request.method == "HEAD":
            return web.Response(headers={"Content-Length": str(len(data)),
                                         "Accept-Ranges": "bytes"})  # fmt: skip
        if self.faults.unavailable.get(name, 0) > 0:
            self.faults.unavailable[name] -= 1
            return web.Response(status=503, headers={"Retry-After": "0"}, text="busy")
        start = 0
        header = request.headers.get("Range")
        if header:
            self.ranges.append((name, header))
            start = int(header.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                return web.Response(status=416, headers={"Content-Range": f"bytes */{len(data)}"})
        body = data[start:]
        response = web.StreamResponse(status=206 if header else 200)
        response.content_length = len(body)
        if header:
            response.headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        response.headers["Accept-Ranges"] = "bytes"
        await response.prepare(request)
        cuts = self.faults.drop_at.get(name)
        if cuts:
            cut = cuts.pop(0)
            await response.write(body[:cut])
            self.served[name] += len(body[:cut])
            assert request.transport is not None
            request.transport.close()
            return response
        await response.write(body)
        self.served[name] += len(body)
        await response.write_eof()
        return response

    def routes(self, app: web.Application) -> None:
        app.router.add_get(REGIMES_PATH, self._regime_listing)
        app.router.add_route("*", REGIMES_PATH + "{name}", self._file)
        app.router.add_get(BASE_PATH, self._root)
        app.router.add_get(BASE_PATH + "{month}/", self._month)
        app.router.add_route("*", BASE_PATH + "{month}/{name}", self._file)


class Proxy:
    """An HTTP forward proxy (absolute-form requests, one per connection) that sends every
    request for `host` to the loopback `upstream` port, and remembers what it forwarded."""

    def __init__(self, host: str, upstream: int) -> None:
        self.host = host
        self.upstream = upstream
        self.forwarded: list[str] = []
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1").strip()
            method, target, _ = line.split(" ", 2)
            headers = []
            while (header := (await reader.readline()).decode("latin-1")) not in ("\r\n", ""):
                name = header.split(":", 1)[0].lower()
                if name not in ("proxy-connection", "connection", "keep-alive"):
                    headers.append(header)
            parts = urlsplit(target)
            if parts.hostname != self.host:
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            self.forwarded.append(f"{method} {target}")
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            up_writer.write(f"{method} {path} HTTP/1.1\r\n".encode() + "".join(headers).encode()
                            + b"Connection: close\r\n\r\n")  # fmt: skip
            await up_writer.drain()
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
            up_writer.close()
        finally:
            writer.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port)
        )
        self._ready.set()
        self._loop.run_forever()
        server.close()
        self._loop.close()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
