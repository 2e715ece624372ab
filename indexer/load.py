"""One monthly load: read and validate, stage and join, build documents, bulk-load, go live."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import datetime as dt
import fcntl
import multiprocessing
import re
import resource
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import msgspec
import psycopg
from elasticsearch import Elasticsearch

from app.monitoring import releases
from app.settings import get_settings
from indexer import catalog, elastic, produce, records
from indexer.reader import BadRow, read_rows
from indexer.readjob import SAMPLE_SIZE, ReadJob, ReadResult, read_file
from indexer.references import References, load_fixtures
from indexer.runtime import deaf_to_ctrl_c, relax_gc
from indexer.sources import (
    REFERENCE_KINDS,
    Ignored,
    Kind,
    Recognised,
    Source,
    kind_from_name,
    scan,
)
from indexer.staging import (
    BUCKET_ROWS,
    MIN_MEMORY,
    PREFIX,
    Staging,
    megabytes,
    remove_abandoned,
)


class FileReport(msgspec.Struct, frozen=True):
    file: str
    kind: str
    rows: int
    bad_rows: int


class IgnoredFile(msgspec.Struct, frozen=True):
    file: str
    reason: str


class LoadReport(msgspec.Struct, kw_only=True):
    """What a load did, printed at the end and written as JSON on request."""

    index: str
    alias: str
    previous_index: str | None
    live: bool
    files: list[FileReport]
    release_recorded: bool = False
    """Whether the release was recorded in PostgreSQL for the monitors (after the swap)."""
    release_note: str | None = None
    """Why it was not, when it went live but could not be recorded."""
    ignored_files: list[IgnoredFile]
    establishments: int = 0
    documents_written: int = 0
    rejected: int = 0
    """Documents Elasticsearch refused (its reasons are among the bad rows): any fails the load
    before the swap, since the release would serve fewer companies than the month has."""
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    duplicates: int = 0
    bad_rows: int = 0
    bad_rows_by_reason: dict[str, int] = msgspec.field(default_factory=dict)
    bad_rows_sample: list[BadRow] = msgspec.field(default_factory=list)
    bad_rows_file: str | None = None
    """The CSV listing every bad row and every value set aside."""
    values_set_aside: int = 0
    """Values not loaded because they are not what their column holds (an impossible date,
    letters in a code, a state that does not exist): their rows are loaded without them
    (`indexer.values`)."""
    values_set_aside_by_reason: dict[str, int] = msgspec.field(default_factory=dict)
    values_set_aside_sample: list[BadRow] = msgspec.field(default_factory=list)
    missing_reference_codes: dict[str, int] = msgspec.field(default_factory=dict)
    municipalities_without_ibge: int = 0
    registrations_without_establishment: int = 0
    """State-registration rows whose CNPJ is not an establishment of the release (not loaded)."""
    regimes_without_company: int = 0
    """Tax-regime rows whose company has no establishment in the release (not loaded)."""
    rows_without_establishment: dict[str, int] = msgspec.field(default_factory=dict)
    """Rows of the companies, partners and Simples files (by kind) whose company has no
    establishment in the release: not loaded, as every record is an establishment's."""
    records_file: str | None = None
    """The release's record store (`indexer.records`), when one was written."""
    records_bytes: int = 0
    data_referencia: str | None = None
    """The release's reference date (`YYYY-MM-DD`): the first day of its month when the month
    is known (`--month`, or a `YYYY-MM` folder), else the latest situação date in its
    establishment files. Every record carries it; the index's `_meta` keeps it."""
    carregada_em: str | None = None
    """When the release was published (UTC, ISO 8601)."""
    buckets_given_more_memory: int = 0
    """Buckets whose join did not fit a builder's memory for one bucket (`builder_memory`) and
    ran again under its whole share of `--memory-limit`: many of them say `--bucket-rows` is
    too big for the month."""
    cleaned_up: list[str] = msgspec.field(default_factory=list)
    """Indices of earlier loads of the alias that were killed before their end, deleted."""
    staging_removed: list[str] = msgspec.field(default_factory=list)
    """Staging folders of killed loads (of any alias) removed before this one staged its own."""
    seconds: float = 0.0
    phases: dict[str, float] = msgspec.field(default_factory=dict)
    """Wall seconds per phase: read (parse and validate), stage (DuckDB tables), index (join,
    build and bulk-load), publish (settings, refresh, count check, alias swap)."""
    phases_cpu: dict[str, float] = msgspec.field(default_factory=dict)
    """CPU seconds per phase of the indexer's processes (its own, its readers' and builders')."""


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # worker pools, once shut down
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class _Clock:
    """Wall and CPU seconds of each phase of a load."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._last = (time.perf_counter(), _cpu_seconds())

    def lap(self, phase: str) -> None:
        now = (time.perf_counter(), _cpu_seconds())
        self.wall[phase] = round(now[0] - self._last[0], 3)
        self.cpu[phase] = round(now[1] - self._last[1], 3)
        self._last = now


@dataclass(frozen=True, slots=True)
class Options:
    url: str = "http://127.0.0.1:9200"
    alias: str = "empresas"
    batch_size: int = 2000
    parallel: int = 2
    memory_limit: str = "384MB"
    threads: int = 2
    readers: int = 2
    """Processes reading the main files in parallel."""
    workers: int = 2
    """Processes building documents and sending bulk requests."""
    bucket_rows: int = BUCKET_ROWS
    """Establishments per join bucket: the unit of work (and of memory) of a builder."""
    shards: int | None = None
    """Primary shards of the new index (None: the mapping's)."""
    replicas: int | None = None
    """Replicas of each shard once the release is merged (None: the mapping's, 0)."""
    swap: bool = True
    workdir: Path | None = None
    bad_rows_file: Path | None = None
    database_url: str | None = None
    """Where the release is recorded for the monitors (None: the `DATABASE_URL` setting)."""
    records_dir: Path | None = None
    """Where the release's record store is written (`indexer.records`); None for none."""
    pointer_dir: Path | None = None
    """Where the app looks for the alias's store pointer when no store is written: the swap
    removes it there, so lookups read Elasticsearch rather than last month's store."""
    month: str | None = None
    """The release's month (`YYYY-MM`), kept in the index's `_meta` (`indexer update` compares
    it with the source's newest)."""
    lock_dir: Path | None = None
    """Where the alias's load lock lives (None: the system's temporary folder). The commands
    keep it in the records folder, the alias's state on this machine, not in a temporary folder
    that two sessions may see apart (a service's private /tmp, another TMPDIR): a second load
    there would take the first one's index for one left by a killed load and delete it."""


class Progress:
    """Callbacks a front end (the CLI's progress bar) can follow; the default does nothing."""

    def reading(self, files: int) -> None: ...
    def read(self, rows: int, bad: int) -> None: ...
    def indexing(self, total: int) -> None: ...
    def indexed(self, count: int, bad: int) -> None: ...


class _BadRows:
    """Every bad row goes to a CSV file; counts and a small sample stay in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.by_reason: Counter[str] = Counter()
        self.sample: list[BadRow] = []
        self.set_aside: Counter[str] = Counter()
        """Values set aside by the readers (their rows loaded without them), by reason."""
        self.set_aside_sample: list[BadRow] = []
        self._stream: IO[str] | None = None
        self._writer: Any = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._stream = path.open("w", encoding="utf-8", newline="")
            self._writer = csv.writer(self._stream)
            self._writer.writerow(("file", "line", "reason", "detail"))

    def add(self, bad: BadRow) -> None:
        self.by_reason[bad.reason] += 1
        if len(self.sample) < SAMPLE_SIZE:
            self.sample.append(bad)
        if self._writer is not None:
            self._writer.writerow((bad.file, bad.line, bad.reason, bad.detail))

    def merge(self, result: ReadResult) -> None:
        """Take in the bad rows a reader process found (its CSV part, counts and sample)."""
        self.by_reason.update(result.by_reason)
        self.sample.extend(result.sample[: max(SAMPLE_SIZE - len(self.sample), 0)])
        self.set_aside.update(result.set_aside)
        room = max(SAMPLE_SIZE - len(self.set_aside_sample), 0)
        self.set_aside_sample.extend(result.set_aside_sample[:room])
        if self._stream is not None and (result.bad or result.set_aside):
            with result.job.bad_rows.open(encoding="utf-8", newline="") as part:
                shutil.copyfileobj(part, self._stream)

    @property
    def total(self) -> int:
        return sum(self.by_reason.values())

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


MAX_REFERENCE_ROWS = 100_000
"""Rows of a reference table read at most: each is kept in memory and in the catalog."""


def _read_reference(
    item: Recognised, refs: References, bad_rows: _BadRows, progress: Progress
) -> FileReport:
    name = item.source.name
    rows = bad = 0
    with item.source.open() as stream:
        for row in read_rows(stream, name, item.kind):
            if isinstance(row, BadRow):
                bad += 1
                bad_rows.add(row)
            else:
                rows += 1
                if rows > MAX_REFERENCE_ROWS:
                    raise elastic.LoadError(
                        f"{name}: more than {MAX_REFERENCE_ROWS:,} rows, not one of Receita's "
                        "reference tables (the largest has about 5,600); the live release is "
                        "left as it was"
                    )
                had = refs.add(item.kind, row.fields[0], row.fields[1])
                if had is not None:  # a bad row, not a row read
                    rows, bad = rows - 1, bad + 1
                    detail = f"{row.fields[0]!r} was {had[:60]!r}; that description is kept"
                    bad_rows.add(BadRow(name, row.line, "code named again, otherwise", detail))
    progress.read(rows, bad)
    return FileReport(file=name, kind=item.kind.value, rows=rows, bad_rows=bad)


def _read_main(
    items: list[Recognised],
    staging: Staging,
    bad_rows: _BadRows,
    progress: Progress,
    readers: int,
) -> tuple[list[FileReport], str]:
    """Read the main files in `readers` processes; results are taken in release order. Also
    the latest situação date (`YYYYMMDD`, "" for none) of the establishments read."""
    jobs = [
        ReadJob(item.source, item.kind, index, staging.workdir) for index, item in enumerate(items)
    ]
    reports = []
    latest = ""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=readers, mp_context=context, initializer=relax_gc) as pool:
        with deaf_to_ctrl_c():  # `map` starts the readers
            results = pool.map(read_file, jobs)
        for result in results:
            latest = max(latest, result.latest)
            job = result.job
            staging.add(job.kind, job.staged, result.rows)
            bad_rows.merge(result)
            job.bad_rows.unlink()
            progress.read(result.rows, result.bad)
            reports.append(
                FileReport(
                    file=job.source.name, kind=job.kind.value, rows=result.rows, bad_rows=result.bad
                )
            )
    return reports, latest


def _index(staging: Staging, setup: produce.Setup, workers: int) -> Iterator[produce.BucketResult]:
    """Results of every bucket, built and loaded by `workers` processes (inline for one)."""
    staging.release()
    if setup.records is not None:
        sample = produce.training_sample(setup, staging.buckets, records.SAMPLES)
        dictionary = records.train(sample)
        records.save_dictionary(setup.records, setup.index, dictionary)
        setup = replace(setup, dictionary=dictionary)
    buckets = range(staging.buckets)
    if workers == 1 or staging.buckets == 1:
        produce.start(setup)
        try:
            yield from map(produce.index_bucket, buckets)
        finally:
            produce.stop()
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=produce.start_process,
        initargs=(setup,),
    ) as pool:
        with deaf_to_ctrl_c():  # `map` starts the builders
            results = pool.map(produce.index_bucket, buckets)
        yield from results


def _tally(
    report: LoadReport, result: produce.BucketResult, bad_rows: _BadRows, refs: References
) -> None:
    """Add one bucket's outcome to the report."""
    outcome = result.outcome
    report.documents_written += outcome.created
    report.rejected += result.errors
    report.duplicates += outcome.duplicates
    report.new += outcome.new
    report.changed += outcome.changed
    report.unchanged += outcome.unchanged
    report.buckets_given_more_memory += int(result.more_memory)
    for (table, code), times in result.missing.items():
        refs.count_missing(table, code, times)
    for error in outcome.errors:
        detail = f"{error.id}: {error.reason}"
        bad_rows.add(BadRow("elasticsearch", 0, "rejected by Elasticsearch", detail))
    unlisted = result.errors - len(outcome.errors)
    if unlisted:
        bad_rows.by_reason["rejected by Elasticsearch"] += unlisted


def _publish(
    es: Elasticsearch,
    report: LoadReport,
    mapping: dict[str, Any],
    refs: References,
    options: Options,
) -> None:
    """Serving settings, the count check, the reference catalog, then the atomic alias swap."""
    index = report.index
    elastic.restore_settings(es, index, mapping, options.replicas)
    stored = elastic.count(es, index)
    if report.establishments and not report.documents_written:
        raise elastic.LoadError(
            f"Elasticsearch accepted none of the {report.establishments} documents of "
            f"{index}: the live release is left as it was (see the bad rows)"
        )
    if report.rejected:
        raise elastic.LoadError(
            f"Elasticsearch rejected {report.rejected} of the documents of {index} (their "
            "reasons are among the bad rows): the live release is left as it was"
        )
    if stored != report.documents_written:
        raise elastic.LoadError(
            f"index {index} holds {stored} documents, {report.documents_written} were written"
        )
    if report.previous_index:
        previous_count = elastic.count(es, report.previous_index)
        report.removed = max(previous_count - report.changed - report.unchanged, 0)
    catalog.build(es, index, refs)
    report.carregada_em = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    elastic.add_meta(es, index, {"carregada_em": report.carregada_em})
    if options.swap:
        elastic.swap_alias(es, report.alias, index)
        report.live = True
        pointers = options.records_dir or options.pointer_dir
        if pointers is not None:  # without a store written here, the pointer is removed
            records.publish(pointers, report.alias, index)
        database = options.database_url or get_settings().database_url
        report.release_note = record_release(database, report.alias, index)
        report.release_recorded = report.release_note is None


RELEASE_RECORDED = "release recorded: the monitors will be checked against it"


def record_release(database_url: str, alias: str, index: str) -> str | None:
    """Records the release that just went live in PostgreSQL (with the job that checks the
    monitors against it); None when done, else why not. The release stays live either way: a
    worker records it within seconds when it sees the alias (`conciliar_releases`)."""
    try:
        asyncio.run(releases.publish(database_url, alias, index))
    except (OSError, psycopg.Error) as error:
        return f"release not recorded for the monitors ({type(error).__name__}: {error})"
    return None


_MONTH = re.compile(r"(?<![0-9])([0-9]{4})-(0[1-9]|1[0-2])(?![0-9])")


def data_referencia(path: Path, month: str | None, latest: str) -> str | None:
    """The release's reference date: the first day of `month`, or of a `YYYY-MM` in the
    release's folder name (as Receita names its monthly folders), else the latest situação
    date found in its establishments (`YYYYMMDD`), else None."""
    folder = path if path.is_dir() else path.parent
    for name in ([month] if month else []) + [folder.resolve().name]:
        found = _MONTH.search(name)
        if found:
            return f"{found.group(1)}-{found.group(2)}-01"
    if latest:
        return f"{latest[:4]}-{latest[4:6]}-{latest[6:]}"
    return None


BUCKET_MEMORY = 64
"""Megabytes a builder's DuckDB needs for the join of `BUCKET_ROWS` establishments (a default
bucket; one of a generated 1M or 10M month runs in 48 and fails in 40). More only caches blocks
of the staging database it has read already, which later buckets read little of: with the 192
MB share of the default limit, a builder held 134-140 MB of such blocks by the end of a 1M or
10M month; with 64 MB its joins of half a 10M month took 56-58 s instead of 52 s, seconds of a
load of half an hour (`docs/indexer.md`, "The builders' DuckDB memory")."""


def builder_memory(memory_limit: str, workers: int, bucket_rows: int) -> int:
    """Each builder's DuckDB memory limit in megabytes: what a bucket of `bucket_rows`
    establishments needs, within the builder's share of `memory_limit` (never under DuckDB's 64
    MB)."""
    need = -(-BUCKET_MEMORY * bucket_rows // BUCKET_ROWS)
    return max(min(builder_share(memory_limit, workers), need), MIN_MEMORY)


def builder_share(memory_limit: str, workers: int) -> int:
    """Megabytes of `memory_limit` each of `workers` builders may take: what a bucket whose
    join does not fit `builder_memory` is given (`indexer.produce.join_within`)."""
    return max(megabytes(memory_limit) // max(workers, 1), MIN_MEMORY)


@contextlib.contextmanager
def alias_lock(alias: str, directory: Path | None) -> Iterator[None]:
    """One load of `alias` at a time on this machine; `LoadError` when another holds it."""
    folder = directory or Path(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"cnpj-indexer-{alias}.lock"
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise elastic.LoadError(f"another load of {alias} is running ({path})") from error
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def clean_up(es: Elasticsearch, options: Options) -> list[str]:
    """Deletes what loads of the alias killed before their end left behind (their indices and
    record stores); the live release is never touched. Runs under the alias's lock."""
    leftovers = elastic.unfinished(es, options.alias)
    for index in leftovers:
        elastic.delete_release(es, index)
        if options.records_dir is not None:
            records.delete(options.records_dir, index)
    return leftovers


def run(path: Path, es: Elasticsearch, options: Options, progress: Progress) -> LoadReport:
    """Load the release at `path` into a new index; swap the alias when the count checks out.
    One load per alias at a time; it first deletes what killed loads of the alias left."""
    with alias_lock(options.alias, options.lock_dir):
        cleaned = clean_up(es, options)
        report = _run(path, es, options, progress)
    report.cleaned_up = cleaned
    return report


def _month_folder(path: Path, item: Recognised) -> str | None:
    """The `YYYY-MM` folder under `path` that holds a file of a month's own parts, if any (a
    load pointed at a folder of months would otherwise mix them)."""
    if item.kind in REFERENCE_KINDS or item.kind is Kind.REGIMES:  # the same from month to month
        return None
    inside = item.source.path.parent.relative_to(path) if path.is_dir() else Path()
    return next((part for part in inside.parts if _MONTH.fullmatch(part)), None)


MAIN_KINDS = (Kind.EMPRESAS, Kind.ESTABELECIMENTOS, Kind.SOCIOS, Kind.SIMPLES)


def _check_named_parts(path: Path, recognised: list[Recognised], ignored: list[Ignored]) -> None:
    """Every zip named as a main part of the month (`Socios0.zip`) must give rows of it: one
    with no member, with only a note, or with its part in another format (tab separated) would
    leave that part out of a release that goes live. (A plain file named like a part may be a
    note about it, such as a checksum `Socios0.zip.md5`, or a member extracted beside its zip:
    those are ignored, as before.)"""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    files = [file for file in files if file.suffix.lower() == ".zip"]
    served = {item.source.path for item in recognised}
    said = {item.source.path: item.reason for item in ignored}
    empty = [
        (file, kind)
        for file in files
        if (kind := kind_from_name(Source(file, None))) in MAIN_KINDS and file not in served
    ]
    if empty:
        names = ", ".join(
            f"{file.name} (named like {kind.value}: {said.get(file, 'no file inside')})"
            for file, kind in empty[:3]
        )
        raise elastic.LoadError(
            f"{path}: {len(empty)} file(s) named as a part of the month give none of its rows: "
            f"{names}; fix or remove them (the live release is left as it was)"
        )


def _check_release(path: Path, recognised: list[Recognised], ignored: list[Ignored]) -> None:
    """A release goes live whole or not at all: a file that cannot be read (a damaged or
    truncated zip: it may hold any part of the month), a file named as a part of the month whose
    rows do not fit it, or a folder without establishments or without one of `REQUIRED_PARTS`
    fails the load before any work, and the live release stays as it was. (A single file given
    alone is loaded as it is.)"""
    unreadable = [item for item in ignored if item.reason.startswith("unreadable")]
    if unreadable:
        names = ", ".join(f"{item.source.name} ({item.reason})" for item in unreadable[:3])
        raise elastic.LoadError(
            f"{path}: {len(unreadable)} file(s) cannot be read: {names}; download them again "
            "(the live release is left as it was)"
        )
    misfits = [item for item in ignored if item.reason.startswith("named like")]
    if misfits:
        names = ", ".join(f"{item.source.name} ({item.reason})" for item in misfits[:3])
        raise elastic.LoadError(
            f"{path}: {len(misfits)} file(s) named as part of the month do not read as it: "
            f"{names}; fix or remove them (the live release is left as it was)"
        )
    _check_named_parts(path, recognised, ignored)
    months = sorted({month for item in recognised if (month := _month_folder(path, item))})
    if len(months) > 1:
        raise elastic.LoadError(
            f"{path}: it holds {len(months)} months ({', '.join(months[:3])}): a load reads one "
            "month, point it at that month's folder (the live release is left as it was)"
        )
    if not any(item.kind is Kind.ESTABELECIMENTOS for item in recognised):
        raise elastic.LoadError(
            f"{path}: no establishments file (Estabelecimentos*.zip) among "
            f"{len(recognised) + len(ignored)} file(s); the live release is left as it was"
        )
    found = {item.kind for item in recognised}
    lacking = [part for kind, part in REQUIRED_PARTS.items() if kind not in found]
    if path.is_dir() and lacking:
        names = ", ".join(f"no {named} file ({pattern})" for named, pattern, _ in lacking)
        lost = "; ".join(lost for _, _, lost in lacking)
        raise elastic.LoadError(
            f"{path}: {names}: every record would lack {lost}, and every monitor would report "
            "it changed; the live release is left as it was"
        )


REQUIRED_PARTS = {
    Kind.EMPRESAS: ("companies", "Empresas*.zip", "its company (razão social, capital, porte)"),
    Kind.SOCIOS: ("partners", "Socios*.zip", "its partners"),
    Kind.SIMPLES: ("Simples", "Simples.zip", "its Simples and MEI options"),
    Kind.CNAES: ("CNAE table", "Cnaes.zip", "the names of its activities"),
    Kind.MOTIVOS: ("reasons table", "Motivos.zip", "the name of its status's reason"),
    Kind.MUNICIPIOS: ("municipalities table", "Municipios.zip", "the name of its city"),
    Kind.NATUREZAS: ("legal natures table", "Naturezas.zip", "the name of its legal nature"),
    Kind.PAISES: ("countries table", "Paises.zip", "the names of its countries"),
    Kind.QUALIFICACOES: (
        "qualifications table",
        "Qualificacoes.zip",
        "the names of its partners' qualifications",
    ),
}
"""The parts of the month a folder must hold beside the establishments, and what each record of
a release without one would lack (every monitor would then report it changed)."""


def _run(path: Path, es: Elasticsearch, options: Options, progress: Progress) -> LoadReport:
    started = time.perf_counter()
    clock = _Clock()
    megabytes(options.memory_limit)  # fail on a bad setting before anything is opened
    recognised, ignored = scan(path)
    _check_release(path, recognised, ignored)
    mapping = elastic.load_mapping()
    refs = load_fixtures(References())
    files: list[FileReport] = []
    previous_targets = elastic.alias_targets(es, options.alias)
    if not previous_targets and es.indices.exists(index=options.alias):
        raise elastic.LoadError(
            f"{options.alias!r} is the name of an index, not of an alias: no alias can take its "
            "name; choose another --alias"
        )
    previous = previous_targets[-1] if previous_targets else None
    bad_rows = _BadRows(options.bad_rows_file)  # before the staging folder: may fail to open
    parent = options.workdir or Path(tempfile.gettempdir())
    abandoned = remove_abandoned(parent)
    workdir = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    staging = Staging(workdir, options.memory_limit, options.threads, options.bucket_rows)
    index = ""
    report: LoadReport | None = None
    try:
        progress.reading(len(recognised))
        references = [item for item in recognised if item.kind in REFERENCE_KINDS]
        for item in references:
            files.append(_read_reference(item, refs, bad_rows, progress))
        main_files = [item for item in recognised if item.kind not in REFERENCE_KINDS]
        read, latest = _read_main(main_files, staging, bad_rows, progress, options.readers)
        files.extend(read)
        reference_date = data_referencia(path, options.month, latest)
        clock.lap("read")
        establishments = staging.build()
        if not establishments:
            raise elastic.LoadError(
                f"{path}: no establishment row could be read (see the bad rows); the live "
                "release is left as it was"
            )
        unmatched = staging.unmatched_registrations()
        unmatched_rows = staging.unmatched_rows()
        repeated = staging.repeated_roots()
        over_caps = staging.over_caps()
        clock.lap("stage")
        meta: dict[str, str] = {"release_month": options.month} if options.month else {}
        if reference_date:
            meta["data_referencia"] = reference_date
        # Named before it is created: an interruption while the request is on its way still
        # knows which index to delete.
        index = elastic.new_index_name(options.alias)
        elastic.create_index(es, index, mapping, options.shards, meta)
        report = LoadReport(
            index=index,
            alias=options.alias,
            previous_index=previous,
            live=False,
            files=files,
            ignored_files=[IgnoredFile(file=i.source.name, reason=i.reason) for i in ignored],
            establishments=establishments,
            registrations_without_establishment=unmatched,
            regimes_without_company=unmatched_rows.pop(Kind.REGIMES),
            rows_without_establishment={kind.value: n for kind, n in unmatched_rows.items() if n},
            data_referencia=reference_date,
        )
        progress.indexing(establishments)
        memory = builder_memory(options.memory_limit, options.workers, options.bucket_rows)
        share = builder_share(options.memory_limit, options.workers)
        setup = produce.Setup(
            database=staging.database,
            memory_limit=f"{memory}MB",
            memory_share=f"{share}MB" if share > memory else None,
            url=options.url,
            index=index,
            previous=previous,
            batch_size=options.batch_size,
            parallel=options.parallel,
            refs=refs,
            records=options.records_dir,
            data_referencia=reference_date,
        )
        for result in _index(staging, setup, options.workers):
            _tally(report, result, bad_rows, refs)
            outcome = result.outcome
            progress.indexed(outcome.created + outcome.duplicates + result.errors, result.errors)
        clock.lap("index")
        if options.records_dir is not None:
            report.records_bytes = records.finish(options.records_dir, index)
            report.records_file = str(records.store_path(options.records_dir, index))
        _publish(es, report, mapping, refs, options)
        clock.lap("publish")
        report.phases, report.phases_cpu = clock.wall, clock.cpu
    except BaseException:
        # Once the alias points at it, the release is live: stopped after that (recording it
        # for the monitors), it stays, and the alias with it.
        if index and not (report is not None and report.live):
            elastic.delete_release(es, index)
            if options.records_dir is not None:
                records.delete(options.records_dir, index)
        raise
    finally:
        staging.close()
        bad_rows.close()
    assert report is not None  # made before any step that can end the try without raising
    if report.duplicates:
        bad_rows.by_reason["duplicate CNPJ (one of the rows was kept)"] += report.duplicates
    if repeated:
        bad_rows.by_reason["repeated company root (one of the rows was kept)"] += repeated
    bad_rows.by_reason.update(over_caps)
    report.bad_rows = bad_rows.total
    report.staging_removed = [str(folder) for folder in abandoned]
    report.bad_rows_by_reason = dict(bad_rows.by_reason)
    report.bad_rows_sample = bad_rows.sample
    report.values_set_aside = sum(bad_rows.set_aside.values())
    report.values_set_aside_by_reason = dict(bad_rows.set_aside)
    report.values_set_aside_sample = bad_rows.set_aside_sample
    report.bad_rows_file = str(options.bad_rows_file) if options.bad_rows_file else None
    report.missing_reference_codes = {
        f"{table}:{code}": n for (table, code), n in refs.missing.most_common(50)
    }
    report.municipalities_without_ibge = sum(
        1 for code in refs.tables.get(Kind.MUNICIPIOS, {}) if code not in refs.ibge
    )
    report.seconds = round(time.perf_counter() - started, 3)
    return report
