"""What the `indexer` CLI prints: progress bars of loads and downloads, the load's report, and
failures as one line (`failing`) instead of a traceback."""

from __future__ import annotations

import contextlib
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import lmdb
import typer
from elasticsearch import ApiError, TransportError
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.progress import Progress as Bar
from rich.table import Table
from rich.text import Text

from indexer import download as fetching
from indexer import elastic
from indexer.load import RELEASE_RECORDED, LoadReport, Progress
from indexer.reader import BadRow

console = Console(stderr=True)


def say(message: str) -> None:
    """One line on standard error, as typed (no markup), URLs without their passwords."""
    console.print(fetching.shown(message), markup=False)


@contextlib.contextmanager
def failing(what: str) -> Iterator[None]:
    """Runs a command's work; Elasticsearch's refusals and absence, a load that must not go
    live, a bad value, a file-system error, a damaged zip, a failure of the staging database
    (a full disk, too little memory) and one of the record store end it with one line and exit
    status 1, URLs shown without their passwords."""
    try:
        yield
    except (elastic.LoadError, ValueError, ApiError, TransportError, OSError) as error:
        say(f"{what} failed: {error}")
        raise typer.Exit(1) from error
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        console.print(f"{what} failed: a damaged zip ({error}); download it again", markup=False)
        raise typer.Exit(1) from error
    except duckdb.Error as error:
        console.print(f"{what} failed: staging ({type(error).__name__}): {error}", markup=False)
        raise typer.Exit(1) from error
    except lmdb.Error as error:
        console.print(f"{what} failed: the record store: {error}", markup=False)
        raise typer.Exit(1) from error


def writable(report: Path | None, option: str = "--report") -> None:
    """Checks, before any work, that a report can be written where asked (its folder is made):
    a load must not go live and then fail on its report. Exit 2 otherwise."""
    if report is None:
        return
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        console.print(f"{option}: cannot write {report}: {error}", markup=False)
        raise typer.Exit(2) from error
    if report.is_dir():
        console.print(f"{option}: {report} is a folder, not a file", markup=False)
        raise typer.Exit(2)
    existed = report.exists()
    try:  # opened for appending, so a file already there is left as it is until the end
        with report.open("ab"):
            pass
        if not existed:
            report.unlink()
    except OSError as error:
        console.print(f"{option}: cannot write {report}: {error}", markup=False)
        raise typer.Exit(2) from error


def writable_folder(folder: Path, option: str) -> None:
    """Checks, before any work, that files can be written in `folder` (made if missing). Exit 2
    otherwise."""
    if folder.exists() and not folder.is_dir():
        console.print(f"{option}: {folder} is a file, not a folder", markup=False)
        raise typer.Exit(2)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        console.print(f"{option}: cannot write in {folder}: {error}", markup=False)
        raise typer.Exit(2) from error


class BarProgress(Progress):
    """Rows per second and bad rows while reading, documents per second while indexing."""

    def __init__(self, bar: Bar) -> None:
        self.bar = bar
        self.task: TaskID | None = None

    def _start(self, label: str, total: int | None) -> None:
        if self.task is not None:
            self.bar.stop_task(self.task)
        self.task = self.bar.add_task(label, total=total, bad=0)

    def reading(self, files: int) -> None:
        self._start(f"read {files} files", None)

    def read(self, rows: int, bad: int) -> None:
        if self.task is not None:
            total_bad = self.bar.tasks[self.task].fields["bad"] + bad
            self.bar.update(self.task, advance=rows + bad, bad=total_bad)

    def indexing(self, total: int) -> None:
        self._start("index documents", total)

    def indexed(self, count: int, bad: int) -> None:
        if self.task is not None:
            total_bad = self.bar.tasks[self.task].fields["bad"] + bad
            self.bar.update(self.task, advance=count, bad=total_bad)


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed or 0:>9,.0f} rows/s")


def bar() -> Bar:
    return Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("[red]{task.fields[bad]} bad"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _by_reason(title: str, counted: str, counts: dict[str, int], sample: list[BadRow]) -> None:
    """A table of counts by reason, then a sample of the rows, one a line."""
    reasons = Table(title=title, title_justify="left")
    reasons.add_column("reason")
    reasons.add_column(counted, justify="right")
    for reason, count in sorted(counts.items()):
        reasons.add_row(reason, f"{count:,}")
    console.print(reasons)
    for row in sample:
        console.print(f"  {row.file}:{row.line} {row.reason} {row.detail}", markup=False)


def print_report(report: LoadReport) -> None:
    for index in report.cleaned_up:
        console.print(f"deleted {index}, left by a load killed before its end", markup=False)
    for folder in report.staging_removed:
        console.print(f"removed {folder}, left by a load killed before its end", markup=False)
    files = Table(title="Files read", title_justify="left")
    for column in ("file", "kind", "rows", "bad rows"):
        files.add_column(column, justify="right" if column in {"rows", "bad rows"} else "left")
    for item in report.files:
        files.add_row(item.file, item.kind, f"{item.rows:,}", f"{item.bad_rows:,}")
    console.print(files)
    for ignored in report.ignored_files:
        console.print(f"ignored {ignored.file}: {ignored.reason}")
    if report.bad_rows:
        _by_reason("Bad rows by reason", "rows", report.bad_rows_by_reason, report.bad_rows_sample)
        if report.bad_rows_file:
            console.print(f"every bad row is listed in {report.bad_rows_file}")
    if report.values_set_aside:
        title = "Values set aside (their rows loaded without them)"
        counts, sample = report.values_set_aside_by_reason, report.values_set_aside_sample
        _by_reason(title, "values", counts, sample)
        if report.bad_rows_file:
            console.print(f"every value set aside is listed in {report.bad_rows_file}")
    rate = report.documents_written / report.seconds if report.seconds else 0.0
    console.print(
        f"{report.documents_written:,} documents written to {report.index} "
        f"({report.new:,} new, {report.changed:,} changed, {report.unchanged:,} unchanged, "
        f"{report.removed:,} removed) in {report.seconds:.1f} s ({rate:,.0f} docs/s); "
        f"{report.bad_rows:,} bad rows, {report.values_set_aside:,} values set aside",
        markup=False,
    )
    phases = ", ".join(
        f"{name} {seconds:.1f} s (CPU {report.phases_cpu.get(name, 0.0):.1f} s)"
        for name, seconds in report.phases.items()
    )
    console.print(f"phases: {phases}", markup=False)
    if report.missing_reference_codes:  # codes the reference tables lack: their names are null
        by_table: dict[str, int] = {}
        for key, times in report.missing_reference_codes.items():
            table = key.split(":", 1)[0]
            by_table[table] = by_table.get(table, 0) + times
        said = ", ".join(f"{table} {times:,}" for table, times in sorted(by_table.items()))
        console.print(
            f"rows whose codes their tables lack (names left empty; the 50 commonest "
            f"codes counted): {said}; "
            "the codes are in the JSON report (--report)",
            markup=False,
        )
    if report.buckets_given_more_memory:
        console.print(
            f"{report.buckets_given_more_memory:,} buckets did not fit a builder's memory for "
            "one bucket and were joined again within its share of --memory-limit; a smaller "
            "--bucket-rows keeps them within it"
        )
    if report.municipalities_without_ibge:
        console.print(f"{report.municipalities_without_ibge} municipalities have no IBGE code")
    if report.registrations_without_establishment:
        console.print(
            f"{report.registrations_without_establishment:,} state registrations name a CNPJ "
            "that is not an establishment of this release (not loaded)"
        )
    if report.regimes_without_company:
        console.print(
            f"{report.regimes_without_company:,} tax-regime rows name a company with no "
            "establishment in this release (not loaded)"
        )
    if report.rows_without_establishment:
        unmatched = report.rows_without_establishment
        said = ", ".join(f"{n:,} of {kind}" for kind, n in unmatched.items())
        console.print(
            f"rows whose company has no establishment in this release (not loaded): {said}",
            markup=False,
        )
    if report.records_file:
        console.print(
            f"record store {report.records_file}: {report.records_bytes / 2**20:,.1f} MiB",
            markup=False,
        )
    state = f"alias {report.alias} -> {report.index}" if report.live else "alias not changed"
    console.print(state, markup=False)
    console.print(f"reference date {report.data_referencia or 'unknown'}", markup=False)
    if report.live:
        note = report.release_note or RELEASE_RECORDED
        console.print(note, markup=False)


class Transfer:
    """A progress bar of bytes and files for a download (plain lines when not a terminal)."""

    def __init__(self, bar: Bar) -> None:
        self.bar = bar
        self.task: TaskID | None = None

    def __call__(self, report: fetching.Report, stats: fetching.Stats, total: int) -> None:
        self.task = self.bar.add_task(f"{report.month}: {report.files} files", total=total or None)

        def moved(count: int) -> None:
            if self.task is not None:
                self.bar.update(
                    self.task, advance=count,
                    description=f"{report.month}: {stats.done}/{report.files} files",
                )  # fmt: skip

        stats.on_bytes = moved


def transfer_bar() -> Bar:
    return Bar(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        TimeElapsedColumn(), console=console, transient=False,
    )  # fmt: skip


def print_download(report: fetching.Report) -> None:
    done = report.as_dict()
    console.print(
        f"{report.month}: {len(report.downloaded)} fetched, {len(report.skipped)} already "
        f"complete, {len(report.rejected)} rejected; {report.bytes_fetched:,} bytes in "
        f"{report.seconds:.1f} s ({done['bytes_per_second'] / 2**20:.1f} MiB/s) into "
        f"{report.folder}",
        markup=False,
    )
    for name, reason in sorted(report.rejected.items()):
        console.print(f"rejected {name}: {reason}", markup=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
