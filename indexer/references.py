"""Reference tables: Receita's six code tables from the release, plus shipped IBGE data.

They are small (thousands of rows) and held in memory. A code the main files use but the table
lacks keeps its code with an empty label, and is counted so the report can say so.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from app.domain.codes import code_key
from app.domain.record import Rotulo
from indexer.sources import Kind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reference"


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

    def add(self, kind: Kind, code: str, description: str) -> None:
        key = code.strip().zfill(7) if kind is Kind.CNAES else code_key(code)
        self.tables.setdefault(kind, {})[key] = " ".join(description.split())

    def label(self, kind: Kind, code: str) -> str | None:
        """The description of `code`, or None when the table lacks it."""
        key = code.zfill(7) if kind is Kind.CNAES else code_key(code)
        return self.tables.get(kind, {}).get(key)

    def rotulo(self, kind: Kind, code: str) -> Rotulo:
        """The code with its label, built once per distinct code (records share it); a code
        the table lacks is counted as missing each time it is used."""
        found = self._rotulos.get((kind, code))
        if found is None:
            found = Rotulo(codigo=code, descricao=self.label(kind, code))
            self._rotulos[(kind, code)] = found
        if found.descricao is None:
            self.missing[(kind.value, code)] += 1
        return found


def load_fixtures(references: References) -> References:
    """Add the shipped TOM -> IBGE municipality table."""
    with (FIXTURES / "municipios-ibge.csv").open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter=";"):
            references.ibge[code_key(row["codigo_tom"])] = Cidade(
                row["codigo_ibge"], row["nome"], row["uf"]
            )
    return references
