"""A release made for the lead tests, with its own oracle: every establishment is built here
from plain attributes, so the expected counts, scores and order are computed from those
attributes by an implementation of the documented score table that shares no code with the
service.

`LEADS` companies are restaurants, bakeries and shops in Curitiba, São Paulo and Rio, with
names full of accents, contacts present or missing, every porte and capital band, matrizes
and filiais, MEIs, ages in every band, and some inactive; a few names start with formula
characters."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from tests.releases import REFERENCE_TABLES, cnpj_of, copy_sample, rows

CITIES = (("PR", "7535"), ("SP", "7107"), ("RJ", "6001"))
RESTAURANT, SNACK_BAR, GROCERY = "5611201", "5611203", "4721102"
PORTES = ("01", "03", "05", "00")
CAPITALS = (500, 5_000, 50_000, 250_000, 0)
NAMES = ("RESTAURANTE SÃO JOÃO", "CANTINA DA VOVÓ CONCEIÇÃO", "AÇAÍ & CIA", "CAFÉ DO ZÉ",
         "PADARIA PÃO DE AÇÚCAR", "LANCHONETE CORAÇÃO")  # fmt: skip
FORMULAS = ("=1+2", "+5511999999999", "-2+3", "@SUM(A1)")
TODAY = dt.date.today()


def _years_ago(years: float) -> dt.date:
    return TODAY - dt.timedelta(days=int(years * 365.25))


@dataclass(frozen=True)
class Lead:
    root: str
    name: str
    trade: str
    cnae: str
    secondary: str
    uf: str
    city: str
    porte: str
    capital: int
    email: str
    phone: tuple[str, str]
    matriz: bool
    opened: dt.date
    mei: bool
    simples: bool
    active: bool

    @property
    def cnpj(self) -> str:
        return cnpj_of(self.root, "0001" if self.matriz else "0002")

    @property
    def has_email(self) -> bool:
        return "@" in self.email and "." in self.email.split("@")[-1]

    @property
    def has_phone(self) -> bool:
        return bool(self.phone[0]) and len(self.phone[1]) == 8


def _lead(i: int) -> Lead:
    cnae = (RESTAURANT, RESTAURANT, SNACK_BAR, GROCERY)[i % 4]
    ages = (10, 3, 1.5, 0.3, 7)
    name = FORMULAS[i // 7 % 4] if i % 7 == 0 else f"{NAMES[i % len(NAMES)]} {i} LTDA"
    uf, city = CITIES[i % 3 if i % 5 else 0]
    return Lead(
        root=f"97{i:06d}",
        name=name,
        trade=f"FILIAL ÇÃÉÔ {i}" if i % 6 == 5 else f"{NAMES[(i + 1) % len(NAMES)]}",
        cnae=cnae,
        secondary=RESTAURANT if cnae == GROCERY and i % 8 == 3 else "",
        uf=uf,
        city=city,
        porte=PORTES[i % 4],
        capital=CAPITALS[i % 5],
        email="" if i % 3 == 0 else ("sem-arroba" if i % 11 == 0 else f"contato{i}@lead.example"),
        phone=("", "") if i % 4 == 1 else ("41", f"3{i:07d}"),
        matriz=i % 6 != 5,
        opened=_years_ago(ages[i % 5]),
        mei=i % 9 == 4,
        simples=i % 2 == 0,
        active=i % 10 != 9,
    )


COUNT = 1500
LEADS = [_lead(i) for i in range(COUNT)]


def score(lead: Lead, *, activity: str | None, regime_asked: bool = False) -> int:
    """The documented score table (docs/leads.md), computed from the attributes."""
    points = 25 if lead.active else 0
    points += 15 if lead.has_email else 0
    points += 15 if lead.has_phone else 0
    if activity is None or lead.cnae.startswith(activity):
        points += 15
    elif lead.secondary.startswith(activity) and lead.secondary:
        points += 5
    points += {"03": 5, "05": 5, "01": 3}.get(lead.porte, 0)
    points += 5 if lead.capital >= 100_000 else 3 if lead.capital >= 10_000 else (
        1 if lead.capital >= 1_000 else 0)  # fmt: skip
    if lead.opened <= _years_ago(5):
        points += 10
    elif lead.opened <= _years_ago(2):
        points += 6
    elif lead.opened <= _years_ago(1):
        points += 3
    points += 5 if lead.matriz else 0
    points += 5 if regime_asked or not lead.mei else 0
    return points


def ranked(found: list[Lead], **options: object) -> list[tuple[int, str]]:
    """(score, CNPJ) in the service's order: score down, then CNPJ up."""
    scored = [(score(lead, **options), lead.cnpj) for lead in found]  # type: ignore[arg-type]
    return sorted(scored, key=lambda item: (-item[0], item[1]))


def write(folder: Path) -> Path:
    """The release's files in Receita's format under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    copy_sample(folder, *REFERENCE_TABLES, "SOCIOCSV.csv")
    (folder / "EMPRECSV.csv").write_bytes(
        rows(*([lead.root, lead.name, "2062", "49", f"{lead.capital},00", lead.porte, ""]
               for lead in LEADS))
    )  # fmt: skip
    (folder / "SIMPLESCSV.csv").write_bytes(
        rows(*([lead.root, "S" if lead.simples else "N", "20200101", "", "S" if lead.mei else "N",
                "20200101", ""] for lead in LEADS))
    )  # fmt: skip
    establishments = []
    for lead in LEADS:
        number = lead.cnpj
        ddd, phone = lead.phone
        establishments.append(
            [lead.root, number[8:12], number[-2:], "1" if lead.matriz else "2", lead.trade,
             "02" if lead.active else "08", "20200101", "00", "", "",
             lead.opened.strftime("%Y%m%d"), lead.cnae, lead.secondary, "RUA", "DAS ACÁCIAS",
             "10", "", "CENTRO", "80010000", lead.uf, lead.city, ddd, phone, "", "", "", "",
             lead.email, "", ""]
        )  # fmt: skip
    (folder / "ESTABELE.csv").write_bytes(rows(*establishments))
    return folder
