"""`indexer`: load a Receita release into Elasticsearch and manage the release indices."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import multiprocessing
import re
import signal
import threading
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import duckdb
import msgspec
import typer
from elastic_transport.client_utils import url_to_node_config
from elasticsearch import ApiError, TransportError
from rich.console import Console
from rich.table import Table

from app.domain.catalog import catalog_name
from app.lib.elastic import nodes
from app.settings import get_settings
from indexer import download as fetching
from indexer import elastic, records, runtime
from indexer import update as updating
from indexer import warm as warming
from indexer.cli_output import (
    BarProgress,
    Transfer,
    bar,
    console,
    failing,
    print_download,
    print_report,
    say,
    transfer_bar,
    writable,
    writable_folder,
)
from indexer.load import RELEASE_RECORDED, Options, record_release, run
from indexer.staging import BUCKET_ROWS, megabytes

app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False)


def _url(value: str) -> str:
    """The option as given, once each address in it parses (not shown back: it may hold a
    password)."""
    try:
        for node in nodes(value):
            url_to_node_config(node)
    except ValueError:
        raise typer.BadParameter(
            "an address with scheme, host and port (http://127.0.0.1:9200), or several "
            "separated by commas"
        ) from None
    return value


ElasticsearchUrl = Annotated[
    str,
    typer.Option(
        envvar="ELASTICSEARCH_URL",
        help="Elasticsearch address (a cluster: its nodes' addresses, comma-separated).",
        callback=_url,
    ),
]
ALIAS_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
"""What Elasticsearch takes as an alias and its indices' prefix: lower case, no spaces."""


def _alias(value: str) -> str:
    if not ALIAS_NAME.fullmatch(value):
        raise typer.BadParameter(
            f"{value!r}: lower-case letters, digits, '.', '_' and '-', starting with a letter "
            "or digit, at most 100"
        )
    if value.endswith(catalog_name("")):
        raise typer.BadParameter(
            f"{value!r}: an alias ending in {catalog_name('')!r} names the catalog of another alias"
        )
    return value


def _memory(value: str) -> str:
    try:
        megabytes(value)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    return value


Alias = Annotated[
    str,
    typer.Option(envvar="INDEX_ALIAS", callback=_alias, help="Read alias the API serves from."),
]
Shards = Annotated[
    int | None, typer.Option(min=1, envvar="INDEX_SHARDS", help="Primary shards (default 1).")
]
Replicas = Annotated[
    int | None,
    typer.Option(min=0, envvar="INDEX_REPLICAS", help="Replicas of each shard (default 0)."),
]
STATE = Path(__file__).resolve().parent.parent / ".state"
RecordsDir = Annotated[
    Path,
    typer.Option(
        envvar="RECORDS_DIR",
        help="Folder of the record stores (one per release) the API reads lookups from.",
    ),
]


_stopped_by: list[int] = []
"""The signal that stopped the load, once one did: an error raised while the load unwinds
(DuckDB turns the interruption of a query into its own `Query interrupted`) is that signal's
exit, not a failure of its own."""


def _stopped(signum: int, frame: object) -> None:
    """SIGTERM or Ctrl-C (SIGINT): the load's reader and builder processes stop at once (none
    writes again into the index and record store about to be deleted; they never receive
    SIGINT themselves, see `indexer.runtime.deaf_to_ctrl_c`), then the load unwinds, deletes
    what it wrote and exits with 128 + the signal's number. They are killed, not sent SIGTERM
    in turn: a handler a library installed in them (a coverage tool saving its data) could
    block them, and what they were writing belongs to the release the load deletes. Their
    pool's manager thread is let finish first: it fails their pending work, which it cannot do
    once the unwinding has cancelled it (a traceback of its own). While workers are starting
    the signal is held, and comes again once they have (`indexer.runtime.hold`)."""
    if runtime.hold(signum) or _stopped_by:  # a second one must not cut the clean-up short
        return
    _stopped_by.append(signum)
    for child in multiprocessing.active_children():
        child.kill()
        child.join(5)
    for thread in threading.enumerate():
        if type(thread).__name__ == "_ExecutorManagerThread":
            thread.join(5)
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _stoppable(what: str) -> Iterator[None]:
    """Ctrl-C and SIGTERM (a service manager) end the command at once (`_stopped`): an
    unfinished index and its record store are deleted, the alias keeps the last release that
    went live, and one line says so."""
    _stopped_by.clear()
    runtime.forget_held()
    handlers = {kind: signal.signal(kind, _stopped) for kind in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            yield
        except Exception:
            if _stopped_by:
                raise SystemExit(128 + _stopped_by[0]) from None
            raise
    except SystemExit:
        if _stopped_by:
            name = signal.Signals(_stopped_by[0]).name
            say(f"{what} stopped ({name}); nothing unfinished was made live: the alias serves "
                "the last release that went live")  # fmt: skip
        raise
    finally:
        for kind, handler in handlers.items():  # as they were (a caller's own, in tests)
            signal.signal(kind, signal.SIG_DFL if handler is None else handler)


@app.command()
def load(
    path: Annotated[Path, typer.Argument(exists=True, help="Release folder, zip or CSV.")],
    url: ElasticsearchUrl = "http://127.0.0.1:9200",
    alias: Alias = "empresas",
    batch_size: Annotated[
        int,
        typer.Option(
            min=1,
            max=10000,
            help="Documents per bulk request (at most Elasticsearch's result window, 10,000: a "
            "batch's stored versions are fetched in one search).",
        ),
    ] = 2000,
    parallel: Annotated[int, typer.Option(min=1, max=16, help="Bulk requests in flight.")] = 2,
    memory_limit: Annotated[
        str,
        typer.Option(
            help="DuckDB memory limit of staging; each builder takes what its bucket needs "
            "(64 MB a 25,000 rows) within its share of it.",
            callback=_memory,
        ),
    ] = "384MB",
    threads: Annotated[int, typer.Option(min=1, max=64, help="DuckDB threads.")] = 2,
    readers: Annotated[int, typer.Option(min=1, max=64, help="Reader processes.")] = 2,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Document builders.")] = 2,
    bucket_rows: Annotated[
        int, typer.Option(min=100, help="Establishments per join bucket (a builder's unit).")
    ] = BUCKET_ROWS,
    shards: Shards = None,
    replicas: Replicas = None,
    swap: Annotated[bool, typer.Option(help="Point the alias at the new index.")] = True,
    report: Annotated[Path | None, typer.Option(help="Write the report as JSON here.")] = None,
    bad_rows: Annotated[Path | None, typer.Option(help="CSV of every bad row.")] = None,
    workdir: Annotated[Path | None, typer.Option(help="Staging folder (disk).")] = None,
    month: Annotated[
        str | None, typer.Option(help="The release's month, YYYY-MM (kept in the index).")
    ] = None,
    records_dir: RecordsDir = STATE / "registros",
    records: Annotated[
        bool, typer.Option(help="Write the release's record store beside the index.")
    ] = True,
) -> None:
    """Load a monthly release into a new index and make it live."""
    if month is not None and not fetching.MONTH.match(month):
        console.print(f"--month: YYYY-MM, not {month!r}", markup=False)
        raise typer.Exit(2)
    writable(report)
    writable(bad_rows, "--bad-rows")
    if records:
        writable_folder(records_dir, "--records-dir")
    if workdir is not None:
        writable_folder(workdir, "--workdir")
    with failing("load"):  # the settings, read before any work: not failed after the swap
        database_url = get_settings().database_url
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
    options = Options(
        url=url,
        alias=alias,
        batch_size=batch_size,
        parallel=parallel,
        memory_limit=memory_limit,
        threads=threads,
        readers=readers,
        workers=workers,
        bucket_rows=bucket_rows,
        shards=shards,
        replicas=replicas,
        swap=swap,
        workdir=workdir,
        bad_rows_file=bad_rows or STATE / "reports" / f"{alias}-{stamp}-bad-rows.csv",
        month=month,
        records_dir=records_dir if records else None,
        pointer_dir=records_dir,
        database_url=database_url,
        lock_dir=records_dir,
    )
    es = elastic.connect(url)
    try:
        with failing("load"), bar() as progress_bar, _stoppable("load"):
            if workdir is not None:
                workdir.mkdir(parents=True, exist_ok=True)
            result = run(path, es, options, BarProgress(progress_bar))
    finally:
        es.close()
    print_report(result)
    if report:
        report.write_bytes(msgspec.json.format(msgspec.json.encode(result)))


@app.command()
def indices(url: ElasticsearchUrl = "http://127.0.0.1:9200", alias: Alias = "empresas") -> None:
    """List the release indices of the alias, newest first, and which one the alias serves (a
    table on a terminal; tab-separated lines, names whole, when piped)."""
    es = elastic.connect(url)
    with failing("indices"):
        live = ", ".join(elastic.alias_targets(es, alias)) or "-"
        found = elastic.list_indices(es, alias)
    rows = [
        (info.name, f"{info.docs:,}", info.size, info.created, alias if info.live else "")
        for info in found
    ]
    out = Console()
    if not out.is_terminal:
        print(f"# alias {alias} -> {live}")
        for row in rows:
            print("\t".join(row))
        return
    table = Table(title=f"alias {alias} -> {live}")
    for column in ("index", "documents", "size", "created", "aliases"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    out.print(table)


@app.command()
def rollback(
    url: ElasticsearchUrl = "http://127.0.0.1:9200",
    alias: Alias = "empresas",
    records_dir: RecordsDir = STATE / "registros",
) -> None:
    """Point the alias back at the release before the live one (and its record store); the
    monitors are checked against it, as against a new release."""
    writable_folder(records_dir, "--records-dir")
    with failing("rollback"):  # the settings, read before the alias moves
        database_url = get_settings().database_url
    es = elastic.connect(url)
    with failing("rollback"):
        left, now = elastic.rollback(es, alias)
        stored = records.publish(records_dir, alias, now)
    console.print(
        f"alias {alias}: {left} -> {now}"
        + ("" if stored else " (no record store here: lookups read Elasticsearch)"),
        markup=False,
    )
    note = record_release(database_url, alias, now)
    console.print(note or RELEASE_RECORDED, markup=False)


@app.command()
def drop(
    keep: Annotated[int, typer.Option(min=1, help="Newest releases to keep.")] = 2,
    url: ElasticsearchUrl = "http://127.0.0.1:9200",
    alias: Alias = "empresas",
    records_dir: RecordsDir = STATE / "registros",
) -> None:
    """Delete old release indices (and their record stores), keeping the newest ones and the
    live one."""
    es = elastic.connect(url)
    with failing("drop"):
        dropped = elastic.drop_old(es, alias, keep)
        for name in dropped:
            records.delete(records_dir, name)
            console.print(f"deleted {name}", markup=False)
    if not dropped:
        console.print(f"alias {alias}: nothing to delete (keeping the newest {keep})", markup=False)


@app.command()
def warm(
    seconds: Annotated[
        float, typer.Option(min=1, max=3600, help="How long to search, in seconds.")
    ] = 60,
    threads: Annotated[int, typer.Option(min=1, max=10, help="Searches sent at once.")] = 4,
    url: ElasticsearchUrl = "http://127.0.0.1:9200",
    alias: Alias = "empresas",
) -> None:
    """Send the API's own searches for companies of the alias to Elasticsearch for a while, so
    that a node just started answers its first users at full speed; prints the rate and took
    of each 10 seconds. Run it after Elasticsearch starts, before the API takes traffic."""
    es = elastic.connect(url, timeout=30.0)
    try:
        done = warming.warm(es, alias, seconds=seconds, threads=threads, report=_say)
    except (warming.WarmError, ApiError, TransportError) as error:
        say(f"warm-up failed: {error}")
        raise typer.Exit(1) from error
    finally:
        es.close()
    console.print(f"{done:,} searches on {alias}", markup=False)


def _say(line: str) -> None:
    console.print(line, markup=False)


SourceUrl = Annotated[
    str, typer.Option("--source", envvar="RECEITA_URL", help="Receita's folder of releases.")
]
RegimesUrl = Annotated[
    str | None,
    typer.Option(
        "--regimes-source",
        envvar="RECEITA_REGIMES_URL",
        help="Folder of the tax-regime files (default: regime_tributario/ beside the months; "
        "'' for none).",
    ),
]
Folder = Annotated[Path, typer.Argument(help="Where months are kept (one folder each).")]
Parallel = Annotated[int, typer.Option(min=1, max=16, help="Files fetched at once.")]


@app.command()
def download(
    directory: Folder,
    month: Annotated[str | None, typer.Option(help="YYYY-MM (default: the newest).")] = None,
    source: SourceUrl = fetching.SOURCE,
    regimes: RegimesUrl = None,
    parallel: Parallel = 4,
    report: Annotated[Path | None, typer.Option(help="Write the report as JSON here.")] = None,
) -> None:
    """Download a month of Receita's release (the newest by default), resumable and verified;
    exit 1 when a file was rejected, 2 when the source cannot be read."""
    if month is not None and not fetching.MONTH.match(month):
        console.print(f"--month: YYYY-MM, not {month!r}", markup=False)
        raise typer.Exit(2)
    writable(report)
    try:
        with transfer_bar() as progress_bar:
            result = asyncio.run(
                fetching.download(directory, month=month, base=source, regimes=regimes,
                                  parallel=parallel, progress=Transfer(progress_bar))
            )  # fmt: skip
    except fetching.LayoutError as error:
        say(f"download failed: {error}")
        raise typer.Exit(2) from error
    except OSError as error:
        say(f"download failed: cannot write to {directory}: {error}")
        raise typer.Exit(1) from error
    print_download(result)
    if report:
        report.write_text(json.dumps(result.as_dict(), indent=2) + "\n")
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def update(
    directory: Folder = STATE / "receita",
    source: SourceUrl = fetching.SOURCE,
    regimes: RegimesUrl = None,
    url: ElasticsearchUrl = "http://127.0.0.1:9200",
    alias: Alias = "empresas",
    keep: Annotated[int, typer.Option(min=1, help="Newest releases to keep.")] = 2,
    parallel: Parallel = 4,
    report: Annotated[Path | None, typer.Option(help="Write the report as JSON here.")] = None,
    records_dir: RecordsDir = STATE / "registros",
    shards: Shards = None,
    replicas: Replicas = None,
) -> None:
    """Download the newest month if it is newer than the live release, load it, make it live
    and drop old releases. Exit 0: the newest is live (now or already); 1: a file was rejected
    or the load failed (the live release is untouched); 2: the source cannot be read."""
    writable(report)
    es = elastic.connect(url)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
    options = Options(
        url=url, alias=alias,
        bad_rows_file=STATE / "reports" / f"{alias}-{stamp}-bad-rows.csv",
        records_dir=records_dir, shards=shards, replicas=replicas, lock_dir=records_dir,
    )  # fmt: skip
    try:
        with transfer_bar() as progress_bar, _stoppable("update"):
            result = updating.update(
                es, directory, options, base=source, regimes=regimes, keep=keep,
                parallel=parallel, on_download=Transfer(progress_bar),
            )  # fmt: skip
    except fetching.LayoutError as error:
        say(f"update failed: {error}")
        raise typer.Exit(2) from error
    except updating.BusyError as error:
        console.print(f"update not started: {error}", markup=False)
        raise typer.Exit(1) from error
    except (ApiError, TransportError) as error:
        say(f"update failed: Elasticsearch at {url}: {error}")
        raise typer.Exit(1) from error
    except (elastic.LoadError, ValueError) as error:
        say(f"update failed: the load failed: {error}")
        raise typer.Exit(1) from error
    except OSError as error:
        say(f"update failed: {error}")
        raise typer.Exit(1) from error
    except (zipfile.BadZipFile, zlib.error, EOFError, duckdb.Error) as error:
        say(f"update failed: the load failed ({type(error).__name__}): {error}")
        raise typer.Exit(1) from error
    finally:
        es.close()
    if result.estado == updating.NOTHING_NEW:
        console.print(
            f"nothing new: the live release of {alias} is {result.live_before}, the newest at "
            "the source", markup=False,
        )  # fmt: skip
    elif result.estado == updating.REJECTED:
        console.print(f"update stopped: {result.newest} could not be downloaded whole",
                      markup=False)  # fmt: skip
        for name, reason in sorted((result.download or {}).get("rejected", {}).items()):
            console.print(f"rejected {name}: {reason}", markup=False)
    else:
        console.print(
            f"{result.newest} -> {result.index} ({result.documents:,} documents), "
            f"{'live' if result.estado == updating.LOADED else 'NOT live: see the load report'}"
            f"; dropped {', '.join(result.dropped) or 'nothing'}"
            f"; downloads removed {', '.join(result.downloads_removed) or 'none'}",
            markup=False,
        )
    if report:
        report.write_text(json.dumps(result.__dict__, indent=2, default=str) + "\n")
    raise typer.Exit(result.exit_code)


if __name__ == "__main__":
    app()
