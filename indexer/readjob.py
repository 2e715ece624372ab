"""Read one main file in a worker process: validate its rows into a staging part.

The main files are read by a pool of processes (one file each at a time), so parsing and
validation use every core while Elasticsearch has nothing to do yet. A worker writes its valid
rows and its bad rows to files of its own and returns only counts and a small sample.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.reader import BadRow, read_rows, stage
from indexer.sources import Kind, Source
from indexer.staging import staged_line
from indexer.values import is_date

SAMPLE_SIZE = 20


@dataclass(frozen=True, slots=True)
class ReadJob:
    source: Source
    kind: Kind
    index: int
    """Position of the file in the release; orders partners and bad rows deterministically."""
    workdir: Path

    @property
    def staged(self) -> Path:
        return self.workdir / f"{self.kind.value}-{self.index:05d}.tsv"

    @property
    def bad_rows(self) -> Path:
        return self.workdir / f"bad-{self.index:05d}.csv"


@dataclass(slots=True)
class ReadResult:
    job: ReadJob
    rows: int = 0
    bad: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    sample: list[BadRow] = field(default_factory=list)
    set_aside: Counter[str] = field(default_factory=Counter)
    """Values set aside (their rows loaded without them), by reason."""
    set_aside_sample: list[BadRow] = field(default_factory=list)
    latest: str = ""
    """The latest `data_situacao_cadastral` (`YYYYMMDD`, none after today) of an establishment
    file's valid rows: how recent the release's data is when its folder does not name its
    month."""


MAX_LISTED = 100_000
"""Bad rows and values set aside of one file written to the bad-rows CSV (all are counted): a
small file of junk lines would otherwise write a CSV fifty thousand times its size."""
UNLISTED = "more bad rows or values set aside, not listed"
NOT_LISTED = (
    f"the first {MAX_LISTED:,} bad rows and values set aside of a file are listed; all are counted"
)


class _Listing:
    """The bad-rows CSV part of one file, up to `MAX_LISTED` lines."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.count = 0

    def add(self, row: BadRow) -> None:
        self.count += 1
        if self.count <= MAX_LISTED:
            self.writer.writerow((row.file, row.line, row.reason, row.detail))
        elif self.count == MAX_LISTED + 1:
            self.writer.writerow((row.file, row.line, UNLISTED, NOT_LISTED))


def read_file(job: ReadJob) -> ReadResult:
    """Stage the valid rows of one file; partner rows get a sequence number that keeps the
    order of the release (file, then line)."""
    result = ReadResult(job)
    name = job.source.name
    sequence = job.kind is Kind.SOCIOS
    dated = job.kind is Kind.ESTABELECIMENTOS
    today = dt.date.today().strftime("%Y%m%d")
    with (
        job.source.open() as stream,
        job.staged.open("wb") as staged,
        job.bad_rows.open("w", encoding="utf-8", newline="") as bad_file,
    ):
        listing = _Listing(csv.writer(bad_file, lineterminator="\n"))
        for row in read_rows(stream, name, job.kind):
            if isinstance(row, BadRow):
                result.bad += 1
                result.by_reason[row.reason] += 1
                if len(result.sample) < SAMPLE_SIZE:
                    result.sample.append(row)
                listing.add(row)
                continue
            result.rows += 1
            for reason, detail in row.set_aside or ():
                aside = BadRow(name, row.line, reason, detail)
                result.set_aside[reason] += 1
                if len(result.set_aside_sample) < SAMPLE_SIZE:
                    result.set_aside_sample.append(aside)
                listing.add(aside)
            if dated and result.latest < row.fields[6] <= today and is_date(row.fields[6]):
                result.latest = row.fields[6]
            if sequence:
                line = staged_line(job.kind, row.fields, f"{job.index:05d}{row.line:012d}")
            else:
                line = staged_line(job.kind, stage(job.kind, row.fields))
            staged.write(line)
    return result
