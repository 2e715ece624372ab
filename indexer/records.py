"""The record store: each release's records by CNPJ in an LMDB file beside its index, so a
lookup by key need not cross to Elasticsearch (`app.lookup.records` reads it).

Why LMDB (the `lmdb` package): a memory-mapped B+tree that readers share through the page
cache with no copy and no server, one writer at a time across processes (the document builders
write their batches in turn), and a file that is complete once its writers close it. A release
is written into `<dir>/<index>.lmdb` while it loads; the alias swap then names it in
`<dir>/<alias>.current` (written to a temporary name and renamed), which is what the app
processes watch; a rollback names the older file again; dropping a release deletes its file.
The values are the records as lookups answer them (`app.lookup.records.pack`), keyed by the
14-character CNPJ, each compressed with Zstandard (the `zstandard` package) against a
dictionary trained on a sample of the release's own records (`train`) and kept in the store
under `DICTIONARY_KEY`. Uncompressed, records of about 2.8 KB overflowed into a 4 KiB page
each (3.9 GiB per million); with the dictionary they average 376 bytes and share pages (597 MiB
per million), at about 6 µs to compress and 3 µs to decompress one (zlib's fastest level,
without a dictionary, took 35 µs for 1.3 KB). A store without a dictionary (too few records to
train one) holds plain Zstandard frames.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import lmdb
import zstandard

from app.lookup.records import DICTIONARY_KEY, pack

MAP_SIZE = 1 << 40
"""The map's upper bound (address space, not disk: the file grows with what is written)."""
DICTIONARY_BYTES = 64 * 1024
SAMPLES = 4000
"""Records the dictionary is trained on (its training takes under a second)."""
MIN_SAMPLES = 200
LEVEL = 3


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


def train(documents: list[bytes]) -> bytes | None:
    """A compression dictionary for the stored values of indexed `documents`; None when they
    are too few or too alike to train one (the store then compresses without a dictionary)."""
    if len(documents) < MIN_SAMPLES:
        return None
    try:
        values: list[bytes | bytearray | memoryview] = [pack(body) for body in documents]
        return zstandard.train_dictionary(DICTIONARY_BYTES, values).as_bytes()
    except zstandard.ZstdError:
        return None


def save_dictionary(directory: Path, index: str, dictionary: bytes | None) -> None:
    """Creates the release's store holding its dictionary, before any record is written."""
    env = open_writer(directory, index)
    try:
        if dictionary is not None:
            with env.begin(write=True) as txn:
                txn.put(DICTIONARY_KEY, dictionary)
    finally:
        env.close()


class Writer:
    """A builder process's handle on the release's store: compresses and writes its batches.

    The store is mapped while a bucket is written and unmapped after it (`release`): the pages
    a writer reads to find where its keys go would otherwise stay in its resident memory, and
    they grow with the store (`docs/indexer.md`, "Figures")."""

    def __init__(self, directory: Path, index: str, dictionary: bytes | None) -> None:
        self.directory = directory
        self.index = index
        self.env: lmdb.Environment | None = None
        trained = zstandard.ZstdCompressionDict(dictionary) if dictionary is not None else None
        self.compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=trained)

    def write(self, items: Iterable[tuple[str, bytes]]) -> None:
        """One transaction of indexed documents by CNPJ, in key order (fewer page splits)."""
        compress = self.compressor.compress
        rows = sorted((key.encode(), compress(pack(body))) for key, body in items)
        if self.env is None:
            self.env = open_writer(self.directory, self.index)
        with self.env.begin(write=True) as txn:
            txn.cursor().putmulti(rows)

    def release(self) -> None:
        """Unmaps the store (the next write maps it again); its pages stay in the page cache."""
        if self.env is not None:
            self.env.close()
            self.env = None

    def close(self) -> None:
        self.release()


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
