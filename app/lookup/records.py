"""Lookups by key from the release's record store (`indexer.records`), without crossing to
Elasticsearch: the indexer writes each release's records by CNPJ into an LMDB file beside its
index and names the live one in `<RECORDS_DIR>/<alias>.current` in the same step as the alias
swap. Each process checks that name at most once a second and opens the file it names
(read-only, memory-mapped: the page cache is shared by every process), so a new release or a
rollback is served within a second, without a restart. A process opens the live store when
it starts and reads it into the page cache in the background (`app.lib.pagecache`), so its
first requests do not fault the file in from the disk page by page. With no store for the
alias here (a replica on another machine without the file), `records` is None and lookups
read Elasticsearch.

A value is the record as a lookup answers it (`Empresa`'s JSON, made by `pack` from the
document the index stores, through the same `expand` an answer from Elasticsearch goes
through), after a line with its content hash and release date, so a lookup with a key sends
the bytes as they are: no decoding, rebuilding or encoding per request. Values are Zstandard
frames made with the store's own dictionary (`indexer.records`). Stores written before either
change hold the indexed document (compressed or not), told apart by its first byte, and are
still read.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import lmdb
import msgspec
import zstandard

from app.domain.record import Empresa, Registro
from app.domain.stored import expand
from app.domain.summary import Fonte
from app.lib.pagecache import Preload
from app.lib.responses import ENCODER

CHECK_EVERY = 1.0
DICTIONARY_KEY = b"~zstd-dictionary"
"""Where a store keeps its compression dictionary (no CNPJ sorts or reads as this key)."""
ROOT = Path(__file__).resolve().parent.parent.parent
_record = msgspec.json.Decoder(Registro)
_company = msgspec.json.Decoder(Empresa)
_summary = msgspec.json.Decoder(Fonte)
_JSON_OBJECT = ord("{")
"""The first byte of a stored document (a Zstandard frame starts with 0x28, a packed record
with its hash)."""
NO_DATE = "-"


class Stored(NamedTuple):
    """One record from the store: its CNPJ, content hash and release date, and its JSON."""

    cnpj: str
    hash: str
    data_referencia: str | None
    body: bytes
    """`Empresa`'s JSON, as the API writes it."""

    def company(self) -> Empresa:
        return _company.decode(self.body)

    @classmethod
    def of(cls, company: Empresa) -> Stored:
        return cls(company.cnpj, company.hash, company.data_referencia, ENCODER.encode(company))


def pack(document: bytes) -> bytes:
    """The stored value of an indexed document (its JSON, `Registro`'s fields and the search
    fields), before compression."""
    company = expand(_record.decode(document))
    head = f"{company.hash} {company.data_referencia or NO_DATE}\n".encode()
    return head + ENCODER.encode(company)


def unpack(number: str, plain: bytes | memoryview) -> Stored:
    """The value of `number` after decompression (or a store's plain document)."""
    if plain[0] == _JSON_OBJECT:
        return Stored.of(expand(_record.decode(plain)))
    data = bytes(plain)
    cut = data.index(b"\n")
    content_hash, _, date = data[:cut].decode().partition(" ")
    return Stored(number, content_hash, None if date == NO_DATE else date, data[cut + 1 :])


class RecordStore:
    def __init__(self, directory: str | Path, alias: str, *, preload: bool = True) -> None:
        """`preload`: read each store this process opens into the page cache, in the background
        (`app.lib.pagecache`), so that its first requests do not wait on the disk."""
        folder = Path(directory)
        self.folder = folder if folder.is_absolute() else ROOT / folder
        self.pointer = self.folder / f"{alias}.current"
        self.index: str | None = None
        self._env: lmdb.Environment | None = None
        self._decompress = zstandard.ZstdDecompressor().decompress
        """Called from the event loop only (the library's objects are not for several threads)."""
        self._checked = float("-inf")
        self.preload = preload
        self.preloading: Preload | None = None

    def _current(self) -> lmdb.Environment | None:
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY:
            return self._env
        self._checked = now
        try:
            index = self.pointer.read_text().strip()
        except OSError:
            index = None
        if index != self.index:
            self._switch(index)
        return self._env

    def _switch(self, index: str | None) -> None:
        old = self._env
        self._env, self.index = None, None
        if self.preloading is not None:
            self.preloading.stop()
            self.preloading = None
        if index:
            path = self.folder / f"{index}.lmdb"
            try:
                env = lmdb.open(
                    str(path), subdir=False, readonly=True, lock=False,
                    max_dbs=0, readahead=False,
                )  # fmt: skip
                with env.begin() as txn:
                    dictionary = txn.get(DICTIONARY_KEY)
                trained = zstandard.ZstdCompressionDict(dictionary) if dictionary else None
                self._decompress = zstandard.ZstdDecompressor(dict_data=trained).decompress
                self._env, self.index = env, index
                if self.preload:
                    self.preloading = Preload.start(path)
            except lmdb.Error:
                self._env = None
        if old is not None:
            old.close()

    def stored(self, numbers: list[str]) -> list[Stored] | None:
        """The records of `numbers` in the live release (a CNPJ it lacks is absent), or None
        when this process has no store for the alias."""
        env = self._current()
        if env is None:
            return None
        found = []
        with env.begin(buffers=True) as txn:
            for number in numbers:
                plain = self._plain(txn, number)
                if plain is not None:
                    found.append(unpack(number, plain))
        return found

    def _plain(self, txn: lmdb.Transaction, number: str) -> bytes | memoryview | None:
        """The value of `number` after decompression (None when the store lacks it)."""
        value = txn.get(number.encode())
        if value is None or value[0] == _JSON_OBJECT:
            return value
        return self._decompress(value)

    def live_index(self) -> str | None:
        """The release this process's store holds (None without a store for the alias)."""
        self._current()
        return self.index

    def summaries(self, index: str, numbers: list[str]) -> list[Fonte] | None:
        """What a list shows of `numbers` (`Fonte`, read from the stored records) in release
        `index`, in order; None unless this process's store is that release's and holds every
        one of them (the caller then reads them from Elasticsearch)."""
        env = self._current()
        if env is None or index != self.index:
            return None
        found = []
        with env.begin(buffers=True) as txn:
            for number in numbers:
                plain = self._plain(txn, number)
                if plain is None:
                    return None
                if plain[0] != _JSON_OBJECT and isinstance(plain, bytes):  # a packed record
                    plain = memoryview(plain)[plain.index(b"\n") + 1 :]  # its JSON, after a line
                found.append(_summary.decode(plain))
        return found

    def records(self, numbers: list[str]) -> list[Empresa] | None:
        """`stored`, decoded."""
        found = self.stored(numbers)
        return None if found is None else [item.company() for item in found]

    def close(self) -> None:
        self._switch(None)
