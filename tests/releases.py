"""Builders of small releases in Receita's format, for tests that need rows the sample lacks."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.domain.cnpj import check_digits

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "sample"
REFERENCE_TABLES = ("CNAECSV.csv", "MOTICSV.csv", "MUNICCSV.csv", "NATJUCSV.csv", "PAISCSV.csv",
                    "QUALSCSV.csv")  # fmt: skip
"""The bundled sample's six code tables: a folder load requires them (`indexer.load`)."""


def copy_sample(folder: Path, *names: str) -> None:
    """The bundled sample's files `names` into `folder`: the parts of the month a made-up
    release does not write itself, which a folder load requires (their rows name the sample's
    companies, absent from the release: they join nothing)."""
    for name in names:
        shutil.copy(SAMPLE / name, folder / name)


def rows(*items: list[str]) -> bytes:
    """Rows as Receita writes them: every field quoted, `;`, Latin-1."""
    return "".join(";".join(f'"{v}"' for v in row) + "\n" for row in items).encode("latin-1")


def cnpj_of(root: str, order: str = "0001") -> str:
    return root + order + check_digits(root + order)


def establishment(
    root: str,
    number: str,
    trade: str,
    *,
    cnae: str = "5611201",
    address: tuple[str, str] = ("80010000", "100"),
    phone: tuple[str, str] = ("41", "33334444"),
    email: str = "contato@agente.example",
) -> list[str]:
    """An active matriz in Curitiba (Receita code 7535) with the given activity and contacts."""
    cep, street_number = address
    ddd, telephone = phone
    return [root, "0001", number[-2:], "1", trade, "02", "20200101", "00", "", "",
            "20200101", cnae, "", "RUA", "XV DE NOVEMBRO", street_number, "", "CENTRO",
            cep, "PR", "7535", ddd, telephone, "", "", "", "", email, "", ""]  # fmt: skip


def partner(name: str, document: str, age_band: str = "5") -> list[str]:
    """A person partner (the 10 columns after `cnpj_basico`)."""
    return ["2", name, document, "49", "20200101", "", "***000000**", "", "00", age_band]
