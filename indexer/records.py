"""The record store: each release's records by CNPJ in an LMDB file beside its index, so a
lookup by key need not cross to Elasticsearch (`app.lookup.records` reads it).

Why LMDB (the `lmdb` package): a memory-mapped B+tree that readers share through the page
cache with no copy and no server, one writer at a time across processes (the document builders
write their batches in turn), and a file that is complete once its writers close it. A release
is written into `<dir>/<index>.lmdb` while it loads; the alias swap then names it in
`<dir>/<alias>.current` (written to a temporary name and renamed), which is what the app
processes watch; a rollback names the older file again; dropping a release deletes its file.
The values are the documents as sent to Elasticsearch (the stored record and its search
fields), keyed by the 14-character CNPJ. Compressing them (zlib's fastest level) was measured:
the 1M store went from 3.8 to 2.0 GiB but the load took 16 % longer, so values are stored as
they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import lmdb

MAP_SIZE = 1 << 40
"""The map's upper bound (address space, not disk: the file grows with what is written)."""


def store_path(directory: Path, index: str) -> Path:
    return directory / f"{index}.lmdb"


def pointer_path(directory: Path, alias: str) -> Path:
    return directory / f"{alias}.current"


def open_writer(directory: Path, index: str) -> lmdb.Environment:
    """The release's store, for writing (several processes may hold it; writes take turns)."""
    directory.mkdir(parents=True, exist_ok=True)
    return lmdb.open(
        str(store_path(directory, index)), subdir=False, map_size=MAP_SIZE, sync=False,
        metasync=False, max_dbs=0, readahead=False,
    )  # fmt: skip


def write(env: lmdb.Environment, items: Iterable[tuple[str, bytes]]) -> None:
    """One transaction of records, in key order (fewer page splits)."""
    rows = sorted((key.encode(), value) for key, value in items)
    with env.begin(write=True) as txn:
        txn.cursor().putmulti(rows)


def finish(directory: Path, index: str) -> int:
    """Flushes the release's store to disk; its size in bytes."""
    path = store_path(directory, index)
    env = lmdb.open(str(path), subdir=False, map_size=MAP_SIZE, max_dbs=0)
    try:
        env.sync(True)
    finally:
        env.close()
    return path.stat().st_size


def publish(directory: Path, alias: str, index: str) -> bool:
    """Names `index`'s store as the alias's live one; False (and no pointer) when that release
    has no store here, so the app reads Elasticsearch instead."""
    pointer = pointer_path(directory, alias)
    if not store_path(directory, index).exists():
        pointer.unlink(missing_ok=True)
        return False
    staged = pointer.with_name(pointer.name + ".tmp")
    staged.write_text(index)
    with staged.open("rb") as handle:
        os.fsync(handle.fileno())
    staged.replace(pointer)
    return True


def delete(directory: Path, index: str) -> None:
    path = store_path(directory, index)
    path.unlink(missing_ok=True)
    path.with_name(path.name + "-lock").unlink(missing_ok=True)
