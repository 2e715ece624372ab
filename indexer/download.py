"""Receita's monthly release, from its web folder to a local folder, safe to schedule.

The source is a plain web directory (`RECEITA_URL`): one folder per month (`YYYY-MM/`), each
with the month's zips. The server is slow and drops connections, so every file is fetched with
ranged requests into a `.part` file that later attempts resume from where it stopped; failures
that can pass (dropped connections, timeouts, 429 and 5xx answers) are retried with exponential
backoff and jitter (tenacity: a maintained retry library, rather than a hand-written loop), and
`Retry-After` is honoured. A finished file is verified (its size against the server's, every
zip member's CRC) before it takes its name; a file that fails the check is fetched once more
and then rejected in the report. Files already complete (in the manifest, with the server's
size) are skipped, so a run can be repeated until it completes. Proxies come from the
environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`).

The yearly tax-regime files (`Lucro Real.zip`, `Lucro Presumido.zip`, `Lucro Arbitrado.zip`,
`Imunes e Isentas.zip`) live in a folder of their own beside the months
(`.../dados/cnpj/regime_tributario/`, or `RECEITA_REGIMES_URL`); they are fetched into the
month's folder with the month's files, the same way, so a load of the folder carries them. A
source without that folder still gives its month (the report says the regimes were not had).

The manifest, `<dir>/<month>.manifest.json`, lists each file with its URL, size, SHA-256 and
when it was fetched.
"""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import json
import re
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import aiohttp
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from app.domain.text import is_code

SOURCE = "https://arquivos.receitafederal.gov.br/dados/cnpj/dados_abertos_cnpj/"
MONTH = re.compile(r"^([0-9]{4})-(0[1-9]|1[0-2])$")
CHUNK = 1 << 20
MAX_PAGE = 8 << 20
"""Bytes of a folder listing read at most (Receita's are a few KB)."""
MIN_RATE = 10_000
"""Bytes a second a file must arrive at, on average over `PACE_WINDOW` seconds."""
PACE_WINDOW = 60.0
PAGE_SECONDS = 60.0
"""Seconds a folder listing may take to arrive, whole (a server trickling bytes is cut off),
or `--timeout` when longer."""
ATTEMPTS = 8
ROUNDS = 2
"""Whole fetches of a file whose content fails the check before it is rejected."""


class LayoutError(Exception):
    """The source does not look like Receita's folders (or could not be reached)."""


class TransientError(Exception):
    """A failure worth another attempt (after `retry_after` seconds when the server said)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RejectedError(Exception):
    """A file that cannot be had: gone from the server, or corrupt twice."""


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


def links(page: str, base: str) -> list[str]:
    """The absolute URLs a directory listing links to."""
    parser = _Links()
    parser.feed(page)
    return [urljoin(base, href) for href in parser.hrefs]


def _last(url: str) -> str:
    return unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])


def plain_name(name: str) -> bool:
    """Whether `name` (decoded from a link) is a file name only: no folder, no way up, not
    hidden, nothing a file system reads as a path."""
    return (
        bool(name) and len(name.encode()) <= 255 and name == Path(name).name
        and not name.startswith(".")
        and not any(char in name for char in "\\/\x00")
    )  # fmt: skip


_USERINFO = re.compile(r"//[^/\s]*@")
"""From `//` to the last `@` before the path: a password may hold an `@` itself."""


def shown(text: str) -> str:
    """`text` (a URL, or a message naming one) as it may be printed or kept: without the user
    and password a URL may carry."""
    return _USERINFO.sub("//***@", text)


@dataclass
class Stats:
    """What a run moved: bytes received (including bytes fetched again), files done."""

    fetched: int = 0
    done: int = 0
    on_bytes: Callable[[int], None] = field(default=lambda _: None)

    def add(self, count: int) -> None:
        self.fetched += count
        self.on_bytes(count)


@dataclass
class Entry:
    file: str
    url: str
    size: int
    sha256: str
    downloaded_at: str


@dataclass
class Report:
    month: str
    source: str
    folder: str
    files: int = 0
    downloaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the operator should know that did not stop the month (tax regimes not listed)."""
    bytes_total: int = 0
    bytes_fetched: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.rejected

    def as_dict(self) -> dict[str, Any]:
        rate = self.bytes_fetched / self.seconds if self.seconds else 0.0
        return {**self.__dict__, "ok": self.ok, "bytes_per_second": round(rate)}


_BACKOFF = wait_exponential_jitter(multiplier=0.5, max=30)


def _retry_wait(state: Any) -> float:
    """Exponential backoff with jitter, or the server's `Retry-After` when longer."""
    base: float = _BACKOFF(state)
    error = state.outcome.exception() if state.outcome else None
    asked = error.retry_after if isinstance(error, TransientError) and error.retry_after else 0.0
    return max(base, min(asked, 300.0))


def _retrying(attempts: int = ATTEMPTS) -> AsyncRetrying:
    return AsyncRetrying(
        stop=stop_after_attempt(attempts),
        wait=_retry_wait,
        retry=retry_if_exception_type(TransientError),
        reraise=True,
    )


def _transient_status(response: aiohttp.ClientResponse) -> TransientError | None:
    if response.status == 429 or response.status >= 500:
        raw = response.headers.get("Retry-After", "")
        seconds = float(raw) if is_code(raw) else None
        return TransientError(f"HTTP {response.status}", seconds)
    return None


async def _listing(response: aiohttp.ClientResponse, url: str) -> str:
    """A folder listing's text, read up to `MAX_PAGE` bytes (`LayoutError` past it)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(CHUNK):
        size += len(chunk)
        if size > MAX_PAGE:
            raise LayoutError(f"{shown(url)}: a listing of more than {MAX_PAGE >> 20} MiB")
        chunks.append(chunk)
    try:
        encoding = codecs.lookup(response.charset or "utf-8").name
    except LookupError:  # a charset Python does not know: the listing is read as UTF-8
        encoding = "utf-8"
    return b"".join(chunks).decode(encoding, errors="replace")


class Source:
    """The web folders of Receita's releases, read through one HTTP session."""

    def __init__(
        self, session: aiohttp.ClientSession, base: str = SOURCE, page_seconds: float = PAGE_SECONDS
    ) -> None:
        self.page_seconds = page_seconds
        self.session = session
        self.base = base if base.endswith("/") else base + "/"

    async def _page(self, url: str) -> str:
        async for attempt in _retrying(4):
            with attempt:
                try:
                    async with (
                        asyncio.timeout(self.page_seconds),
                        self.session.get(url) as response,
                    ):
                        if (failure := _transient_status(response)) is not None:
                            raise failure
                        if response.status != 200:
                            raise LayoutError(f"{shown(url)} answered HTTP {response.status}")
                        return await _listing(response, url)
                except (TimeoutError, aiohttp.ClientError) as error:
                    raise TransientError(f"{type(error).__name__}: {error}") from error
        raise AssertionError("unreachable")  # pragma: no cover

    async def months(self) -> list[str]:
        """The months the source lists, oldest first."""
        found = sorted(
            {_last(url) for url in links(await self._page(self.base), self.base)
             if url.endswith("/") and MONTH.match(_last(url))}
        )  # fmt: skip
        if not found:
            raise LayoutError(f"no YYYY-MM/ folder in the listing at {shown(self.base)}")
        return found

    async def files(self, month: str) -> list[str]:
        """The URLs of the month's zips."""
        return await self.zips(urljoin(self.base, f"{month}/"))

    async def zips(self, folder: str) -> list[str]:
        """The URLs of the zips a folder lists (`LayoutError` for none)."""
        found = sorted(
            {url for url in links(await self._page(folder), folder)
             if url.lower().endswith(".zip") and url.startswith(folder)}
        )  # fmt: skip
        if not found:
            raise LayoutError(f"no .zip file in the listing at {shown(folder)}")
        return found

    async def size(self, url: str) -> int | None:
        """The file's size as the server states it (HEAD), None when it does not say."""
        async for attempt in _retrying(4):
            with attempt:
                try:
                    async with self.session.head(url, allow_redirects=True) as response:
                        if (failure := _transient_status(response)) is not None:
                            raise failure
                        if response.status == 404:
                            raise RejectedError("not found on the server (HTTP 404)")
                        length = response.headers.get("Content-Length")
                        return int(length) if length and length.isdigit() else None
                except (TimeoutError, aiohttp.ClientError) as error:
                    raise TransientError(f"{type(error).__name__}: {error}") from error
        raise AssertionError("unreachable")  # pragma: no cover

    async def fetch(self, url: str, part: Path, stats: Stats) -> int:
        """The file into `part`, resuming from what `part` holds; its total size."""
        async for attempt in _retrying():
            with attempt:
                try:
                    return await self._fetch_once(url, part, stats)
                except (TimeoutError, aiohttp.ClientError) as error:
                    raise TransientError(f"{type(error).__name__}: {error}") from error
        raise AssertionError("unreachable")  # pragma: no cover

    async def _fetch_once(self, url: str, part: Path, stats: Stats) -> int:
        have = _size(part)
        headers = {"Range": f"bytes={have}-"} if have else {}
        async with self.session.get(url, headers=headers) as response:
            if (failure := _transient_status(response)) is not None:
                raise failure
            if response.status == 404:
                raise RejectedError("not found on the server (HTTP 404)")
            if response.status == 416:  # nothing past what we have: complete, or changed
                total = _total(response.headers.get("Content-Range", ""))
                if total == have:
                    return have
                _remove(part)
                raise TransientError("the server's file changed size; starting over")
            if response.status == 206:
                start, total = _range(response.headers.get("Content-Range", ""))
                if start != have:
                    _remove(part)
                    raise TransientError(f"the server resumed at {start}, not {have}")
                mode = "ab"
            elif response.status == 200:
                total = response.content_length
                have, mode = 0, "wb"
            else:
                raise RejectedError(f"HTTP {response.status}")
            pace = _Pace()
            with part.open(mode) as out:
                async for chunk in response.content.iter_chunked(CHUNK):
                    out.write(chunk)
                    stats.add(len(chunk))
                    pace.check(len(chunk))
        size = _size(part)
        if total is not None and size < total:
            raise TransientError(f"connection dropped at {size} of {total} bytes")
        if total is not None and size > total:
            _remove(part)
            raise TransientError(f"got {size} bytes for a file of {total}; starting over")
        return size


class _Pace:
    """Refuses a transfer slower than `MIN_RATE` over a `PACE_WINDOW`: a server trickling bytes
    would otherwise hold a file forever (each byte resets the read timeout). The attempt ends
    as transient, so the next one resumes where it stopped, and a source that stays that slow
    runs out of attempts and the file is rejected."""

    def __init__(self) -> None:
        self.since = time.monotonic()
        self.received = 0

    def check(self, count: int) -> None:
        self.received += count
        elapsed = time.monotonic() - self.since
        if elapsed < PACE_WINDOW:
            return
        if self.received < MIN_RATE * elapsed:
            raise TransientError(f"slower than {MIN_RATE // 1000} KB/s for {elapsed:.0f} s")
        self.since, self.received = time.monotonic(), 0


def _size(path: Path) -> int:
    """Bytes in `path` (0 when it does not exist): a local metadata call, not worth a thread."""
    return path.stat().st_size if path.exists() else 0


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _range(header: str) -> tuple[int, int | None]:
    match = re.fullmatch(r"bytes (\d+)-\d+/(\d+|\*)", header.strip())
    if not match:
        raise TransientError(f"unreadable Content-Range {header!r}")
    return int(match[1]), int(match[2]) if match[2] != "*" else None


def _total(header: str) -> int | None:
    match = re.fullmatch(r"bytes \*/(\d+)", header.strip())
    return int(match[1]) if match else None


def check(path: Path) -> str:
    """The file's SHA-256 after checking it is a whole zip (every member's CRC); raises
    `RejectedError` naming the problem."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:
        raise RejectedError(f"not a valid zip: {error}") from error
    if bad is not None:
        raise RejectedError(f"corrupt zip: member {bad} fails its CRC check")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def manifest_path(directory: Path, month: str) -> Path:
    return directory / f"{month}.manifest.json"


def read_manifest(directory: Path, month: str) -> dict[str, Entry]:
    """The files a manifest says were fetched whole; ValueError for one that cannot be read."""
    path = manifest_path(directory, month)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return {item["file"]: Entry(**item) for item in data.get("files", [])}
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"{path} cannot be read ({type(error).__name__})") from error


def write_manifest(directory: Path, month: str, source: str, entries: dict[str, Entry]) -> None:
    path = manifest_path(directory, month)
    body = {
        "source": source,
        "month": month,
        "files": [entry.__dict__ for entry in sorted(entries.values(), key=lambda e: e.file)],
    }
    staged = path.with_name(path.name + ".part")
    staged.write_text(json.dumps(body, indent=2) + "\n")
    staged.replace(path)


async def _one(
    source: Source,
    url: str,
    folder: Path,
    entries: dict[str, Entry],
    stats: Stats,
    report: Report,
    remote: int | None,
) -> None:
    name = _last(url)
    if not plain_name(name):
        raise RejectedError("the listing names it with a path, not a file name: not fetched")
    final = folder / name
    known = entries.get(name)
    if known and final.exists() and final.stat().st_size == known.size == (remote or known.size):
        report.skipped.append(name)
        stats.done += 1
        return
    part = folder / f"{name}.part"
    for round_ in range(ROUNDS):
        size = await source.fetch(url, part, stats)
        if remote is not None and size != remote:
            part.unlink(missing_ok=True)
            raise RejectedError(f"{size} bytes, the server says {remote}")
        try:
            digest = await asyncio.to_thread(check, part)
        except RejectedError:
            part.unlink(missing_ok=True)
            if round_ == ROUNDS - 1:
                raise
            continue
        part.replace(final)
        entries[name] = Entry(
            file=name, url=shown(url), size=size, sha256=digest,
            downloaded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )  # fmt: skip
        report.downloaded.append(name)
        stats.done += 1
        return


def regime_source(base: str) -> str:
    """Where the tax-regime files are, beside the month folders of `base`."""
    return urljoin(base if base.endswith("/") else base + "/", "../regime_tributario/")


async def download(
    directory: Path,
    *,
    month: str | None = None,
    base: str = SOURCE,
    regimes: str | None = None,
    parallel: int = 4,
    timeout: float = 60.0,
    progress: Callable[[Report, Stats, int], None] | None = None,
) -> Report:
    """Downloads the month (the newest when None) and the tax-regime files (from `regimes`,
    by default beside the months; "" for none) into `directory/<month>/`; the report says what
    was fetched, skipped and rejected. Raises `LayoutError` when the source cannot be read or
    does not look like Receita's."""
    started = time.perf_counter()
    client_timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=timeout)
    async with aiohttp.ClientSession(timeout=client_timeout, trust_env=True) as session:
        source = Source(session, base, page_seconds=max(PAGE_SECONDS, timeout))
        try:
            months = await source.months()
            if month is not None and month not in months:
                raise LayoutError(f"month {month} is not listed at {source.base}")
            chosen = month or months[-1]
            urls = await source.files(chosen)
        except TransientError as error:
            raise LayoutError(
                shown(f"the source at {source.base} cannot be reached: {error}")
            ) from error
        folder = directory / chosen
        folder.mkdir(parents=True, exist_ok=True)
        report = Report(month=chosen, source=shown(source.base), folder=str(folder))
        try:
            entries = read_manifest(directory, chosen)
        except ValueError as error:
            entries = {}
            report.notes.append(f"{error}: every file is fetched again")
        regime_folder = regime_source(source.base) if regimes is None else regimes
        if regime_folder:
            try:
                urls += await source.zips(regime_folder)
            except (LayoutError, TransientError) as error:
                report.notes.append(
                    shown(f"tax-regime files not fetched ({regime_folder}): {error}")
                )
        report.files = len(urls)
        stats = Stats()
        sizes: dict[str, int | None] = {}
        for url in urls:
            try:
                sizes[url] = await source.size(url)
            except (RejectedError, TransientError):
                sizes[url] = None
        report.bytes_total = sum(size or 0 for size in sizes.values())
        if progress is not None:
            progress(report, stats, report.bytes_total)
        gate = asyncio.Semaphore(parallel)

        async def one(url: str) -> None:
            async with gate:
                try:
                    await _one(source, url, folder, entries, stats, report, sizes[url])
                except (RejectedError, TransientError) as error:
                    report.rejected[_last(url)] = shown(str(error))
                write_manifest(directory, chosen, shown(source.base), entries)

        await asyncio.gather(*(one(url) for url in urls))
    report.bytes_fetched = stats.fetched
    report.seconds = round(time.perf_counter() - started, 3)
    return report


async def newest_month(base: str = SOURCE, timeout: float = 60.0) -> str:
    """The newest month the source lists (`LayoutError` when it cannot be read)."""
    client_timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=timeout)
    async with aiohttp.ClientSession(timeout=client_timeout, trust_env=True) as session:
        try:
            return (await Source(session, base).months())[-1]
        except TransientError as error:
            raise LayoutError(f"the source at {base} cannot be reached: {error}") from error
