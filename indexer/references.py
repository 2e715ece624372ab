"""Reference tables: Receita's six code tables from the release, plus shipped IBGE data.

They are small (thousands of rows) and held in memory. A code the main files use but the table
lacks keeps its code with an empty label, and is counted so the report can say so.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from app.domain.codes import code_key
from app.domain.record import Rotulo
from indexer.sources import Kind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reference"
MAX_CACHED = 100_000
"""Distinct codes of one kind whose built value is kept for reuse. A release uses a few
thousand of each (the reference tables hold at most 100,000 rows); a file with millions of
distinct made-up codes gets the rest built each time, so memory stays bounded."""
MAX_MISSING = 10_000
"""Distinct missing codes counted one by one; the rest are counted together under
`OTHER_CODES` of their table, so the totals stay exact and memory bounded."""
OTHER_CODES = "(outros)"


K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], key: K, value: V) -> V:
    """`value`, kept in `cache` under `key` while the cache holds fewer than `MAX_CACHED`."""
    if len(cache) < MAX_CACHED:
        cache[key] = value
    return value


@dataclass(frozen=True, slots=True)
class Cidade:
    codigo_ibge: str
    nome: str
    uf: str


@dataclass(slots=True)
class References:
    tables: dict[Kind, dict[str, str]] = field(default_factory=dict)
    ibge: dict[str, Cidade] = field(default_factory=dict)
    missing: Counter[tuple[str, str]] = field(default_factory=Counter)
    _rotulos: dict[tuple[Kind, str], Rotulo] = field(default_factory=dict)

    def add(self, kind: Kind, code: str, description: str) -> str | None:
        """Name `code` in its table; the description it already had, when another (the first
        one a release gives is kept: two files disagreeing is no reason to pick the last)."""
        key = code.strip().zfill(7) if kind is Kind.CNAES else code_key(code)
        table = self.tables.setdefault(kind, {})
        label = " ".join(description.split())
        had = table.setdefault(key, label)
        return had if had != label else None

    def label(self, kind: Kind, code: str) -> str | None:
        """The description of `code`, or None when the table lacks it."""
        key = code.zfill(7) if kind is Kind.CNAES else code_key(code)
        return self.tables.get(kind, {}).get(key)

    def rotulo(self, kind: Kind, code: str) -> Rotulo:
        """The code with its label, built once per distinct code (records share it); a code
        the table lacks is counted as missing each time it is used."""
        found = self._rotulos.get((kind, code))
        if found is None:
            found = remember(
                self._rotulos, (kind, code), Rotulo(codigo=code, descricao=self.label(kind, code))
            )
        if found.descricao is None:
            self.count_missing(kind.value, code)
        return found

    def count_missing(self, table: str, code: str, times: int = 1) -> None:
        key = (table, code)
        if key not in self.missing and len(self.missing) >= MAX_MISSING:
            key = (table, OTHER_CODES)
        self.missing[key] += times


def load_fixtures(references: References) -> References:
    """Add the shipped TOM -> IBGE municipality table."""
    with (FIXTURES / "municipios-ibge.csv").open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter=";"):
            references.ibge[code_key(row["codigo_tom"])] = Cidade(
                row["codigo_ibge"], row["nome"], row["uf"]
            )
    return references
