"""`indexer update`: the newest release from Receita's site to a live, verified alias in one
command an operator's scheduler can run: nothing happens when the live release is already the
newest; otherwise the month is downloaded (resumable, verified), loaded into a new index, made
live by the alias swap (after the load's own checks), and releases beyond the newest `keep` are
dropped.

Exit status: 0 when the newest release is live (loaded now, or already), 1 when a file was
rejected, the load failed or Elasticsearch cannot be reached (the live release is untouched),
2 when the source cannot be reached or its layout changed.
"""

from __future__ import annotations

import asyncio
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


@dataclass
class UpdateReport:
    estado: str
    newest: str
    live_before: str | None
    download: dict[str, Any] | None = None
    index: str | None = None
    documents: int | None = None
    dropped: list[str] = field(default_factory=list)

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
    if options.records_dir is not None:
        for name in report.dropped:
            records.delete(options.records_dir, name)
    return report
