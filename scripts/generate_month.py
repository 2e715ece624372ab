"""Write a coherent synthetic month in the exact Receita format, for benchmarks and tests.

    python scripts/generate_month.py OUT --establishments 100000 [--seed 7] [--parts 10]

Companies come with one to four establishments, partners and Simples rows; every CNPJ has valid
check digits; names, CNAEs and municipalities are drawn from the real reference tables in
fixtures/ (which are copied into the month too). The same seed gives the same month. Files are
zips like Receita's (`Empresas0.zip` holding `K3241.K03200Y0.D61108.EMPRECSV`...), latin-1,
`;`-separated, every field quoted, and establishments are shuffled within each part, as real
files are not sorted by key.
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


def generate(out: Path, establishments: int, seed: int, parts: int) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    for name, member in REFERENCE_FILES.items():
        with zipfile.ZipFile(out / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(SAMPLE / f"{member}.csv", f"F.K03200$Z.D61108.{member}")
    month = Month(seed)
    counts = {"empresas": 0, "estabelecimentos": 0, "socios": 0, "simples": 0}
    simples = Writer(out / "Simples.zip", "F.K03200$W.SIMPLES.CSV.D61108")
    per_part = -(-establishments // parts)
    root_number = 10_000_000 + month.rng.randint(0, 1_000_000)
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
            root_number += month.rng.randint(1, 40)
            root = f"{root_number:08d}"
            company, trade = month.company(root)
            writers["empresas"].csv.writerow(company)
            counts["empresas"] += 1
            branches = month.rng.choices((1, 2, 3, 4), (0.85, 0.1, 0.03, 0.02))[0]
            for order in range(1, min(branches, target - written) + 1):
                pending.append(month.establishment(root, order, trade))
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
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--establishments", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--parts", type=int, default=10)
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    counts = generate(args.out, args.establishments, args.seed, args.parts)
    print(" ".join(f"{kind}={count}" for kind, count in counts.items()))


if __name__ == "__main__":
    main()
