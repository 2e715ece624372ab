"""Build and bulk-load the documents of one staging bucket, in a worker process.

Building documents is CPU-bound Python; a pool of worker processes builds them bucket by bucket
(each opens the staging database read-only) and sends its own bulk requests, so building,
encoding and Elasticsearch's indexing overlap on every core. Each worker returns counts only.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from indexer import elastic, records
from indexer.documents import Builder, encode
from indexer.references import References
from indexer.runtime import collect_between_units, end_of_unit
from indexer.staging import Joined, join_bucket

MAX_ERRORS = 1000
"""Item errors a worker reports back per bucket; the rest are only counted."""


@dataclass(frozen=True, slots=True)
class Setup:
    database: Path
    memory_limit: str
    url: str
    index: str
    previous: str | None
    batch_size: int
    parallel: int
    refs: References
    records: Path | None = None
    """The record store's folder (`indexer.records`), None for none."""
    data_referencia: str | None = None
    """The release's reference date (`YYYY-MM-DD`), written into every record."""
    dictionary: bytes | None = None
    """The record store's compression dictionary (`indexer.records.train`)."""
    memory_share: str | None = None
    """A roomier DuckDB memory limit (the builder's whole share of `--memory-limit`) for a
    bucket whose join does not fit `memory_limit`, None for none (`join_within`)."""


@dataclass(slots=True)
class BucketResult:
    outcome: elastic.BulkOutcome
    errors: int = 0
    missing: Counter[tuple[str, str]] = field(default_factory=Counter)
    more_memory: bool = False
    """Whether the bucket's join ran again under `Setup.memory_share`."""


def _staging(setup: Setup) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the staging database, on one thread and its memory share."""
    con = duckdb.connect(str(setup.database), read_only=True)
    con.execute(f"SET memory_limit = '{setup.memory_limit}'")
    con.execute("SET threads = 1")
    spill = setup.database.parent / f"spill-{os.getpid()}"
    con.execute("SET temp_directory = ?", [str(spill)])
    con.execute("SET enable_progress_bar = false")
    return con


def join_within(
    con: duckdb.DuckDBPyConnection, setup: Setup, bucket: int
) -> tuple[Iterator[list[Joined]], bool]:
    """The bucket's joined rows, and whether they took `setup.memory_share`: a join that runs
    out of `setup.memory_limit` does so before its first rows (its hash tables and partner
    lists are built then), and runs again once under the share, which the caller gives back
    after the bucket. A bucket is bigger than `--bucket-rows` when one company has more
    establishments, and a real month's companies and partners may need more than the
    generated months `BUCKET_MEMORY` was measured on."""
    try:
        return _started(join_bucket(con, bucket, setup.batch_size)), False
    except duckdb.OutOfMemoryException:
        if setup.memory_share is None:
            raise
    con.execute(f"SET memory_limit = '{setup.memory_share}'")
    return _started(join_bucket(con, bucket, setup.batch_size)), True


def _started(rows: Iterator[list[Joined]]) -> Iterator[list[Joined]]:
    """`rows` with its first batch fetched already (the join runs before it)."""
    first = next(rows, None)
    return itertools.chain([] if first is None else [first], rows)


def training_sample(setup: Setup, buckets: int, size: int) -> list[bytes]:
    """Up to `size` documents of the first buckets, built as the workers build them: what the
    record store's compression dictionary is trained on."""
    con = _staging(setup)
    builder = Builder(copy.deepcopy(setup.refs), setup.data_referencia)
    sample: list[bytes] = []
    try:
        for bucket in range(buckets):
            joined, _ = join_within(con, setup, bucket)
            for rows in joined:
                sample.extend(encode(builder.build(row))[0] for row in rows)
                if len(sample) >= size:
                    return sample[:size]
    finally:
        con.close()
    return sample


class _Worker:
    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.con = _staging(setup)
        self.es = elastic.connect(setup.url)
        self.refs = copy.deepcopy(setup.refs)
        """A copy of its own, so the missing-code counts it reports are only this worker's."""
        self.builder = Builder(self.refs, setup.data_referencia)
        self.store = (
            records.Writer(setup.records, setup.index, setup.dictionary)
            if setup.records is not None
            else None
        )

    def batches(self, bucket: int, result: BucketResult) -> Iterator[elastic.Batch]:
        """The bucket's documents in bulk batches. A CNPJ met again (every row of a CNPJ falls
        in the same bucket) is counted in `result` as a duplicate and not sent: one row of
        each CNPJ is kept."""
        seen: set[str] = set()
        outcome = result.outcome
        joined, result.more_memory = join_within(self.con, self.setup, bucket)
        for rows in joined:
            ids: list[str] = []
            bodies: list[bytes] = []
            hashes: list[str] = []
            for row in rows:
                fields = row.estabelecimento
                number = f"{fields[0]}{fields[1]}{fields[2]}"
                if number in seen:
                    outcome.duplicates += 1
                    continue
                seen.add(number)
                body, digest = encode(self.builder.build(row))
                ids.append(number)
                bodies.append(body)
                hashes.append(digest)
            if ids:
                if self.store is not None:
                    self.store.write(zip(ids, bodies, strict=True))
                yield elastic.Batch(ids, bodies, hashes)

    def run(self, bucket: int) -> BucketResult:
        self.refs.missing.clear()
        result = BucketResult(elastic.BulkOutcome())
        setup = self.setup
        batches = self.batches(bucket, result)
        try:
            for _, outcome in elastic.bulk_load(
                self.es, setup.index, batches, setup.previous, setup.parallel
            ):
                result.errors += len(outcome.errors)
                room = MAX_ERRORS - len(result.outcome.errors)
                result.outcome.merge(outcome, room)
        finally:
            if result.more_memory:  # the share was this bucket's only
                self.con.execute(f"SET memory_limit = '{setup.memory_limit}'")
        result.missing = Counter(self.refs.missing)
        if self.store is not None:
            self.store.release()
        return result

    def close(self) -> None:
        self.con.close()
        self.es.close()
        if self.store is not None:
            self.store.close()


_worker: dict[str, Any] = {}


def start(setup: Setup) -> None:
    """Pool initializer: one staging connection, one Elasticsearch client per process."""
    _worker["current"] = _Worker(setup)


def start_process(setup: Setup) -> None:
    """Initializer of a builder process: `start`, then garbage collection between buckets."""
    start(setup)
    collect_between_units()


def index_bucket(bucket: int) -> BucketResult:
    worker: _Worker = _worker["current"]
    try:
        return worker.run(bucket)
    finally:
        end_of_unit()


def stop() -> None:
    worker: _Worker | None = _worker.pop("current", None)
    if worker is not None:
        worker.close()
