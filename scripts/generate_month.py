"""Write a coherent synthetic month in the exact Receita format, for benchmarks and tests.

    python scripts/generate_month.py OUT --establishments 100000 [--seed 7] [--parts 10]
        [--regimes 0.15] [--alfanumericos 0.0]

Companies come with one to four establishments, partners and Simples rows; every CNPJ has valid
check digits; names, CNAEs and municipalities are drawn from the real reference tables in
fixtures/ (which are copied into the month too). The same seed gives the same month. Files are
zips like Receita's (`Empresas0.zip` holding `K3241.K03200Y0.D61108.EMPRECSV`...), latin-1,
`;`-separated, every field quoted, and establishments are shuffled within each part, as real
files are not sorted by key.

A share of companies (`--regimes`) has one to three years of tax regime in the four yearly
tax-regime files (`Lucro Real.zip`, `Lucro Presumido.zip`, `Lucro Arbitrado.zip`,
`Imunes e Isentas.zip`: a header, `,`-separated, formatted CNPJs of the matriz). A share of
companies (`--alfanumericos`) gets alphanumeric CNPJs, as Receita issues from July 2026: letters
and digits in the root and the order, valid check digits. Both are drawn from a random stream
of their own, so the rest of a month is the same with or without them.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.cnpj import check_digits  # noqa: E402

SAMPLE = ROOT / "fixtures" / "sample"
IBGE = ROOT / "fixtures" / "reference" / "municipios-ibge.csv"
REFERENCE_FILES = {
    "Cnaes": "CNAECSV",
    "Motivos": "MOTICSV",
    "Municipios": "MUNICCSV",
    "Naturezas": "NATJUCSV",
    "Paises": "PAISCSV",
    "Qualificacoes": "QUALSCSV",
}

FIRST = [
    "JOSE",
    "JOAO",
    "ANTONIO",
    "FRANCISCO",
    "CARLOS",
    "PAULO",
    "PEDRO",
    "LUCAS",
    "LUIZ",
    "MARCOS",
    "GABRIEL",
    "RAFAEL",
    "DANIEL",
    "MARCELO",
    "BRUNO",
    "EDUARDO",
    "FELIPE",
    "RODRIGO",
    "MANOEL",
    "MARIA",
    "ANA",
    "FRANCISCA",
    "ANTONIA",
    "ADRIANA",
    "JULIANA",
    "MARCIA",
    "FERNANDA",
    "PATRICIA",
    "ALINE",
    "SANDRA",
    "CAMILA",
    "AMANDA",
    "BRUNA",
    "JESSICA",
    "LETICIA",
    "JULIA",
    "LUCIANA",
    "VANESSA",
    "MARIANA",
    "GABRIELA",
    "VERA",
    "CONCEIÇÃO",
    "JOÃO",
    "SEBASTIÃO",
    "ESTÊVÃO",
    "LÚCIA",
]
LAST = [
    "SILVA",
    "SANTOS",
    "OLIVEIRA",
    "SOUZA",
    "RODRIGUES",
    "FERREIRA",
    "ALVES",
    "PEREIRA",
    "LIMA",
    "GOMES",
    "COSTA",
    "RIBEIRO",
    "MARTINS",
    "CARVALHO",
    "ALMEIDA",
    "LOPES",
    "SOARES",
    "FERNANDES",
    "VIEIRA",
    "BARBOSA",
    "ROCHA",
    "DIAS",
    "NASCIMENTO",
    "ANDRADE",
    "MOREIRA",
    "NUNES",
    "MARQUES",
    "MACHADO",
    "MENDES",
    "FREITAS",
    "CARDOSO",
    "RAMOS",
    "GONCALVES",
    "SANTANA",
    "TEIXEIRA",
    "ARAÚJO",
    "CONCEIÇÃO",
    "MAGALHÃES",
    "GUIMARÃES",
    "BRANDÃO",
]
TRADE = [
    "COMERCIO",
    "DISTRIBUIDORA",
    "TRANSPORTES",
    "CONSTRUTORA",
    "PADARIA",
    "MERCADO",
    "AUTO-PECAS",
    "CONFECCOES",
    "SERVICOS",
    "TECNOLOGIA",
    "ALIMENTOS",
    "ENGENHARIA",
    "CONSULTORIA",
    "FARMACIA",
    "RESTAURANTE",
    "OFICINA",
    "MATERIAIS-DE-CONSTRUCAO",
    "INDUSTRIA",
    "EMPREENDIMENTOS",
    "PARTICIPACOES",
    "INFORMATICA",
    "CALCADOS",
    "MOVEIS",
    "LOGISTICA",
    "AGROPECUARIA",
    "CLINICA",
    "ODONTOLOGIA",
    "EDUCACAO",
    "IMOBILIARIA",
    "SUPERMERCADO",
    "AÇOUGUE",
    "CONFEITARIA",
    "PAPELARIA",
    "ÓTICA",
]
FLAVOUR = [
    "ESTRELA",
    "BOA-VISTA",
    "SAO-JORGE",
    "PRIMAVERA",
    "NOVA-ERA",
    "SOL-NASCENTE",
    "AGUIA",
    "UNIAO",
    "PROGRESSO",
    "SANTA-LUZIA",
    "PLANALTO",
    "LITORAL",
    "CENTRAL",
    "IDEAL",
    "REAL",
    "BRASIL",
    "IMPERIAL",
    "PAULISTA",
    "MINEIRA",
    "GAUCHA",
    "NORDESTE",
    "HORIZONTE",
    "PIONEIRA",
    "ALIANCA",
    "VITORIA",
    "ATLANTICO",
    "AMAZONIA",
    "SERRA-AZUL",
    "BELA-VISTA",
    "SÃO-JOSÉ",
    "PARAÍSO",
]
STREETS = ["RUA", "AVENIDA", "TRAVESSA", "ALAMEDA", "ESTRADA", "RODOVIA", "PRACA"]
SUFFIXES = ((" LTDA", "2062", 0.55), (" EIRELI", "2305", 0.1), (" S.A.", "2054", 0.05))
SITUACOES = (("02", 0.62), ("08", 0.25), ("04", 0.09), ("03", 0.02), ("01", 0.02))


def _references() -> tuple[list[str], list[tuple[str, str]]]:
    with (SAMPLE / "CNAECSV.csv").open(encoding="latin-1", newline="") as stream:
        cnaes = [row[0] for row in csv.reader(stream, delimiter=";")]
    with IBGE.open(encoding="utf-8", newline="") as stream:
        cities = [(row["codigo_tom"], row["uf"]) for row in csv.DictReader(stream, delimiter=";")]
    return cnaes, cities


class Writer:
    """A Receita-style zip with one CSV member, written as a stream."""

    def __init__(self, path: Path, member: str) -> None:
        self.archive = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1)
        self.stream: IO[Any] = io.TextIOWrapper(
            self.archive.open(member, "w", force_zip64=True), encoding="latin-1", newline=""
        )
        self.csv = csv.writer(
            self.stream, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n"
        )

    def close(self) -> None:
        self.stream.close()
        self.archive.close()


class Month:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cnaes, self.cities = _references()

    def date(self, start: int = 1970, end: int = 2026) -> str:
        rng = self.rng
        return f"{rng.randint(start, end)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"

    def person(self) -> str:
        rng = self.rng
        return f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.choice(LAST)}"

    def company(self, root: str) -> tuple[list[str], str]:
        """An Empresas row and a trade name for its establishments."""
        rng = self.rng
        if rng.random() < 0.3:
            cpf = "".join(rng.choices("0123456789", k=11))
            return [root, f"{self.person()} {cpf}", "2135", "50", "5000,00", "01", ""], ""
        words = [rng.choice(FLAVOUR).replace("-", " "), rng.choice(TRADE).replace("-", " ")]
        if rng.random() < 0.3:
            words.append(rng.choice(TRADE).replace("-", " "))
        name = " ".join(words)
        suffix, nature = "", "2062"
        roll = rng.random()
        for text, code, share in SUFFIXES:
            if roll < share:
                suffix, nature = text, code
                break
            roll -= share
        capital = f"{rng.randint(1, 5_000_000)},{rng.randint(0, 99):02d}"
        porte = rng.choice(("01", "03", "05"))
        return [root, name + suffix, nature, "49", capital, porte, ""], name

    def establishment(self, root: str, order: int, trade: str) -> list[str]:
        rng = self.rng
        body = f"{root}{order:04d}"
        dv = check_digits(body)
        situacao = rng.choices([s for s, _ in SITUACOES], [w for _, w in SITUACOES])[0]
        city, uf = rng.choice(self.cities)
        secondary = ",".join(rng.sample(self.cnaes, rng.randint(0, 4)))
        domain = trade.split(" ")[0].lower().encode("ascii", "ignore").decode() or "mail"
        email = f"contato{rng.randint(1, 9999)}@{domain}.com.br"
        ddd = str(rng.randint(11, 99))
        return [
            root, f"{order:04d}", dv, "1" if order == 1 else "2",
            trade if rng.random() < 0.8 else "", situacao, self.date(2000),
            "00" if situacao == "02" else "01", "", "", self.date(),
            rng.choice(self.cnaes), secondary, rng.choice(STREETS),
            f"{rng.choice(FLAVOUR).replace('-', ' ')} {rng.choice(LAST)}",
            str(rng.randint(1, 3000)) if rng.random() < 0.9 else "S/N",
            "SALA " + str(rng.randint(1, 999)) if rng.random() < 0.3 else "",
            rng.choice(FLAVOUR).replace("-", " "), f"{rng.randint(1000000, 99999999):08d}",
            uf, city, ddd, str(rng.randint(20000000, 99999999)),
            ddd if rng.random() < 0.3 else "", str(rng.randint(20000000, 99999999)),
            "", "", email if rng.random() < 0.4 else "", "", "",
        ]  # fmt: skip

    def partners(self, root: str) -> Iterator[list[str]]:
        rng = self.rng
        for _ in range(rng.choices((0, 1, 2, 3), (0.3, 0.35, 0.25, 0.1))[0]):
            cpf = f"***{rng.randint(0, 999999):06d}**"
            yield [
                root, "2", self.person(), cpf, rng.choice(("49", "22", "05", "16")),
                self.date(1990), "", "***000000**", "", "00", str(rng.randint(2, 9)),
            ]  # fmt: skip

    def simples(self, root: str) -> list[str] | None:
        rng = self.rng
        if rng.random() > 0.5:
            return None
        start = self.date(2007)
        excluded = self.date(2015) if rng.random() < 0.3 else "00000000"
        mei = "S" if rng.random() < 0.3 else "N"
        return [root, "S", start, excluded, mei, start if mei == "S" else "00000000", "00000000"]


REGIME_FILES = {
    "Lucro Real": ("LUCRO REAL",),
    "Lucro Presumido": ("LUCRO PRESUMIDO", "LUCRO PRESUMIDO/LUCRO ARBITRADO"),
    "Lucro Arbitrado": ("LUCRO ARBITRADO",),
    "Imunes e Isentas": ("IMUNE DO IRPJ", "ISENTA DO IRPJ"),
}
REGIME_YEARS = (2021, 2022, 2023, 2024)
ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def formatted(number: str) -> str:
    return f"{number[:2]}.{number[2:5]}.{number[5:8]}/{number[8:12]}-{number[12:]}"


class Extras:
    """Tax regimes and alphanumeric CNPJs, from a random stream of their own."""

    def __init__(self, out: Path, seed: int, regimes: float, alphanumeric: float) -> None:
        self.rng = random.Random(seed * 7919 + 1)
        self.regimes, self.alphanumeric = regimes, alphanumeric
        self.files: dict[str, Any] = {}
        self.out = out
        self.rows = 0

    def root(self, numeric: str) -> tuple[str, bool]:
        """The company's root: `numeric`, or (for the alphanumeric share) letters and digits
        with at least one letter."""
        if self.rng.random() >= self.alphanumeric:
            return numeric, False
        while True:
            root = "".join(self.rng.choices(ALPHANUMERIC, k=8))
            if not root.isdigit():
                return root, True

    def order(self, order: int, alphanumeric: bool) -> str:
        if alphanumeric and order > 1 and self.rng.random() < 0.5:
            return f"{self.rng.choice(ALPHANUMERIC[:26])}{order:03d}"
        return f"{order:04d}"

    def regime(self, matriz: str) -> None:
        """One to three consecutive years of one regime for the company, in its file."""
        rng = self.rng
        if rng.random() >= self.regimes:
            return
        name = rng.choices(list(REGIME_FILES), (0.15, 0.6, 0.05, 0.2))[0]
        form = rng.choice(REGIME_FILES[name])
        years = rng.randint(1, 3)
        start = rng.randint(0, len(REGIME_YEARS) - years)
        writer = self.files.get(name)
        if writer is None:
            archive = zipfile.ZipFile(self.out / f"{name}.zip", "w", zipfile.ZIP_DEFLATED)
            stream = io.TextIOWrapper(archive.open(f"{name}.csv", "w"), encoding="latin-1")
            stream.write("ano,cnpj,cnpj_da_scp,forma_de_tributacao,quantidade_de_escrituracoes\r\n")
            writer = self.files[name] = (archive, stream)
        for year in REGIME_YEARS[start : start + years]:
            writer[1].write(f"{year},{formatted(matriz)},0,{form},1\r\n")
            self.rows += 1

    def close(self) -> None:
        for archive, stream in self.files.values():
            stream.close()
            archive.close()


def generate(
    out: Path,
    establishments: int,
    seed: int,
    parts: int,
    regimes: float = 0.15,
    alphanumeric: float = 0.0,
) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    for name, member in REFERENCE_FILES.items():
        with zipfile.ZipFile(out / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(SAMPLE / f"{member}.csv", f"F.K03200$Z.D61108.{member}")
    month = Month(seed)
    extras = Extras(out, seed, regimes, alphanumeric)
    counts = {"empresas": 0, "estabelecimentos": 0, "socios": 0, "simples": 0}
    simples = Writer(out / "Simples.zip", "F.K03200$W.SIMPLES.CSV.D61108")
    per_part = -(-establishments // parts)
    root_number = 10_000_000 + month.rng.randint(0, 1_000_000)
    # Roots are 8 digits: the gaps between them shrink for months so large (over 4M
    # establishments) that gaps of up to 40 would run past 99,999,999; smaller months are as
    # before.
    gap = min(40, 2 * 88_000_000 // establishments - 1)
    for part in range(parts):
        writers = {
            "empresas": Writer(out / f"Empresas{part}.zip", f"K3241.K03200Y{part}.D61108.EMPRECSV"),
            "estabelecimentos": Writer(
                out / f"Estabelecimentos{part}.zip", f"K3241.K03200Y{part}.D61108.ESTABELE"
            ),
            "socios": Writer(out / f"Socios{part}.zip", f"K3241.K03200Y{part}.D61108.SOCIOCSV"),
        }
        target = min(per_part, establishments - counts["estabelecimentos"])
        written = 0
        pending: list[list[str]] = []
        while written < target:
            root_number += month.rng.randint(1, gap)
            root, alphanumeric_root = extras.root(f"{root_number:08d}")
            company, trade = month.company(root)
            writers["empresas"].csv.writerow(company)
            counts["empresas"] += 1
            branches = month.rng.choices((1, 2, 3, 4), (0.85, 0.1, 0.03, 0.02))[0]
            for order in range(1, min(branches, target - written) + 1):
                row = month.establishment(root, order, trade)
                if alphanumeric_root:
                    row[1] = extras.order(order, True)
                    row[2] = check_digits(root + row[1])
                if order == 1:
                    extras.regime("".join(row[:3]))
                pending.append(row)
                written += 1
            for partner in month.partners(root):
                writers["socios"].csv.writerow(partner)
                counts["socios"] += 1
            option = month.simples(root)
            if option:
                simples.csv.writerow(option)
                counts["simples"] += 1
            if len(pending) >= 10_000 or written >= target:
                month.rng.shuffle(pending)
                writers["estabelecimentos"].csv.writerows(pending)
                pending.clear()
        counts["estabelecimentos"] += written
        for writer in writers.values():
            writer.close()
    simples.close()
    extras.close()
    counts["regimes"] = extras.rows
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--establishments", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--parts", type=int, default=10)
    parser.add_argument("--regimes", type=float, default=0.15, help="share with a tax regime")
    parser.add_argument(
        "--alfanumericos", type=float, default=0.0, help="share with alphanumeric CNPJs"
    )
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    counts = generate(
        args.out, args.establishments, args.seed, args.parts, args.regimes, args.alfanumericos
    )
    print(" ".join(f"{kind}={count}" for kind, count in counts.items()))


if __name__ == "__main__":
    main()
