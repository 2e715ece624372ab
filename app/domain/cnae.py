"""The CNAE hierarchy of a subclass code: seção, divisão, grupo, classe, subclasse.

Everything but the seção is a prefix of the seven-digit code; the seção (a letter grouping
divisões) comes from the shipped IBGE table `fixtures/reference/cnae-secoes.csv`. The indexer
writes the hierarchy of the principal activity (its codes are searched) and the read side
rebuilds it for the secondary activities, which the index stores as code and label only.
"""

from __future__ import annotations

import csv
from functools import cache, lru_cache
from pathlib import Path

from app.domain.record import Cnae, HierarquiaCnae, Secao

SECOES_CSV = (
    Path(__file__).resolve().parent.parent.parent / "fixtures" / "reference" / "cnae-secoes.csv"
)


@cache
def secoes() -> dict[str, Secao]:
    """The seção of each two-digit divisão."""
    found: dict[str, Secao] = {}
    with SECOES_CSV.open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter=";"):
            secao = Secao(codigo=row["secao"], descricao=row["descricao"])
            for divisao in range(int(row["divisao_inicial"]), int(row["divisao_final"]) + 1):
                found[f"{divisao:02d}"] = secao
    return found


@lru_cache(maxsize=4096)
def hierarchy(code: str) -> HierarquiaCnae:
    """Where the seven-digit subclass `code` sits (seção null for an unknown divisão)."""
    return HierarquiaCnae(
        secao=secoes().get(code[:2]),
        divisao=code[:2],
        grupo=code[:3],
        classe=code[:5],
        subclasse=code,
    )


@lru_cache(maxsize=8192)
def activity(code: str, description: str | None, principal: bool) -> Cnae:
    """The full CNAE object of an establishment's activity (shared: Structs are frozen)."""
    return Cnae(
        codigo=code,
        descricao=description,
        principal=principal,
        secundario=not principal,
        grupo=hierarchy(code),
    )
