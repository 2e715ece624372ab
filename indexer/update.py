"""`indexer update`: the newest release from Receita's site to a live, verified alias in one
command an operator's scheduler can run: nothing happens when the live release is already the
newest; otherwise the month is downloaded (resumable, verified), loaded into a new index, made
live by the alias swap (after the load's own checks), and releases beyond the newest `keep` are
dropped.

One run at a time: a run holds an exclusive lock on `<dir>/.update.lock` (released by the
system when the process ends, however it ends), and a run that finds it held does nothing. After
a load goes live, the downloaded months beyond the newest `keep` are deleted with their
manifests, so the folder does not grow by a month's zips every month.

Exit status: 0 when the newest release is live (loaded now, or already), 1 when a file was
rejected, the load failed, Elasticsearch cannot be reached or another run holds the lock (the
live release is untouched), 2 when the source cannot be reached or its layout changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from indexer import download, elastic, records
from indexer.load import LoadReport, Options, Progress, run

NOTHING_NEW = "sem_novidade"
LOADED = "carregado"
REJECTED = "download_recusado"
NOT_LIVE = "carga_nao_publicada"


class BusyError(Exception):
    """Another update holds the folder's lock."""


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """The folder's update lock for the block; `BusyError` when another run holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".update.lock"
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise BusyError(f"another update is running (it holds {path})") from error
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_MONTH_FOLDER = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def prune_downloads(directory: Path, keep: int) -> list[str]:
    """Deletes the month folders (and their manifests) beyond the newest `keep`; their names."""
    months = sorted(
        path.name
        for path in directory.iterdir()
        if path.is_dir() and _MONTH_FOLDER.fullmatch(path.name)
    )
    removed = months[: max(len(months) - keep, 0)]
    for month in removed:
        shutil.rmtree(directory / month)
        download.manifest_path(directory, month).unlink(missing_ok=True)
    return removed


@dataclass
class UpdateReport:
    estado: str
    newest: str
    live_before: str | None
    download: dict[str, Any] | None = None
    index: str | None = None
    documents: int | None = None
    dropped: list[str] = field(default_factory=list)
    downloads_removed: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.estado in (REJECTED, NOT_LIVE) else 0


def update(
    es: Elasticsearch,
    directory: Path,
    options: Options,
    *,
    base: str = download.SOURCE,
    regimes: str | None = None,
    keep: int = 2,
    parallel: int = 4,
    progress: Progress | None = None,
    on_download: Any = None,
) -> UpdateReport:
    """One update run (see the module). `LayoutError` propagates for the caller to report;
    the load's own errors too (`LoadError`, Elasticsearch's)."""
    with locked(directory):
        newest = asyncio.run(download.newest_month(base))
        live = elastic.release_month(es, options.alias)
        if live is not None and newest <= live:
            return UpdateReport(estado=NOTHING_NEW, newest=newest, live_before=live)
        fetched = asyncio.run(
            download.download(directory, month=newest, base=base, regimes=regimes,
                              parallel=parallel, progress=on_download)
        )  # fmt: skip
        report = UpdateReport(
            estado=REJECTED, newest=newest, live_before=live, download=fetched.as_dict()
        )
        if not fetched.ok:
            return report
        loaded: LoadReport = run(
            Path(fetched.folder), es, replace(options, month=newest), progress or Progress()
        )
        report.estado = LOADED if loaded.live else NOT_LIVE
        report.index = loaded.index
        report.documents = loaded.documents_written
        report.dropped = elastic.drop_old(es, options.alias, keep)
        if loaded.live:
            report.downloads_removed = prune_downloads(directory, keep)
        if options.records_dir is not None:
            for name in report.dropped:
                records.delete(options.records_dir, name)
        return report
