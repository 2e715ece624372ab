"""Write a state-registration (Sintegra) file for a Receita release, in the format of
docs/indexer.md "State registrations".

    python scripts/registrations.py RELEASE OUT.csv [--share 0.6] [--seed 7]

A share of the release's establishments (those in a UF) gets one registration in its own UF, a
few get a second one in another UF (a branch selling there as substitute taxpayer). Numbers have
valid check digits for their UF: random digits with the state's length and prefix, then the
check positions are searched until the state's rule (`app.domain.state_registration`) holds.
The situation follows the establishment's: active ones are HABILITADO, closed ones BAIXADO on
the same date, the others SUSPENSO or INAPTO. The same seed gives the same file.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import random
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain import state_registration  # noqa: E402
from app.domain.codes import UFS  # noqa: E402
from indexer.reader import Row, read_rows  # noqa: E402
from indexer.sources import Kind, scan  # noqa: E402

# Length, allowed prefixes and the (0-based) positions of the check digits of each UF.
SHAPES: dict[str, tuple[int, tuple[str, ...], tuple[int, ...]]] = {
    "AC": (13, ("01",), (11, 12)),
    "AL": (9, ("240", "243", "245", "247", "248"), (8,)),
    "AM": (9, ("04", "05", "06", "07"), (8,)),
    "AP": (9, ("03",), (8,)),
    "BA": (9, ("0", "1", "2", "3", "4", "5", "8"), (7, 8)),
    "CE": (9, ("06",), (8,)),
    "DF": (13, ("07",), (11, 12)),
    "ES": (9, ("08",), (8,)),
    "GO": (9, ("10", "11", "15"), (8,)),
    "MA": (9, ("12",), (8,)),
    "MG": (13, ("0", "1", "2", "3", "4", "5", "6", "7"), (11, 12)),
    "MS": (9, ("28", "50"), (8,)),
    "MT": (11, ("00", "13"), (10,)),
    "PA": (9, ("15",), (8,)),
    "PB": (9, ("16",), (8,)),
    "PE": (9, ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"), (7, 8)),
    "PI": (9, ("19",), (8,)),
    "PR": (10, ("1", "2", "3", "4", "5", "6", "7", "8", "9"), (8, 9)),
    "RJ": (8, ("7", "8", "9"), (7,)),
    "RN": (9, ("20",), (8,)),
    "RO": (14, ("0000000",), (13,)),
    "RR": (9, ("24",), (8,)),
    "RS": (10, ("0", "1", "2", "3", "4"), (9,)),
    "SC": (9, ("25",), (8,)),
    "SE": (9, ("27",), (8,)),
    "SP": (12, ("1", "2", "3", "4", "5", "6", "7", "8", "9"), (8, 11)),
    "TO": (9, ("29",), (8,)),
}

TIPOS = ("NORMAL", "SUBSTITUTO TRIBUTARIO", "PRODUTOR RURAL")
REGIMES = ("NORMAL", "SIMPLES NACIONAL", "MEI", "ESTIMATIVA")


def valid_registration(uf: str, rng: random.Random) -> str:
    """A random inscrição estadual of `uf` whose check digits hold."""
    length, prefixes, checks = SHAPES[uf]
    for _ in range(200):
        prefix = rng.choice(prefixes)
        digits = list(prefix + "".join(rng.choice("0123456789") for _ in range(length)))[:length]
        for candidate in itertools.product("0123456789", repeat=len(checks)):
            for position, digit in zip(checks, candidate, strict=True):
                digits[position] = digit
            value = "".join(digits)
            if state_registration.check(uf, value) is None:
                return value
    raise RuntimeError(f"no valid registration found for {uf}")


def _establishments(release: Path) -> Iterator[list[str]]:
    recognised, _ = scan(release)
    for item in recognised:
        if item.kind is Kind.ESTABELECIMENTOS:
            with item.source.open() as stream:
                for row in read_rows(stream, item.source.name, item.kind):
                    if isinstance(row, Row):
                        yield row.fields


def registrations(release: Path, share: float, seed: int) -> Iterator[list[str]]:
    """Rows of the registration file for the establishments of `release`."""
    rng = random.Random(seed)
    for fields in _establishments(release):
        uf = fields[19].strip().upper()
        if uf not in UFS or rng.random() >= share:
            continue
        cnpj = fields[0] + fields[1] + fields[2]
        situacao, since = _situation(fields[5], fields[6], fields[10], rng)
        regime = rng.choice(REGIMES)
        opened = _date(fields[10])
        yield [cnpj, uf, valid_registration(uf, rng), "NORMAL", situacao, since, opened, regime]
        if rng.random() < 0.05:
            other = rng.choice([state for state in UFS if state != uf])
            tipo = rng.choice(TIPOS[1:])
            yield [cnpj, other, valid_registration(other, rng), tipo, situacao, since, "", regime]


def _date(value: str) -> str:
    """Receita's date, or empty for its "no date" spellings (`0`, `00000000`)."""
    value = value.strip()
    return value if len(value) == 8 and value.isdigit() and value != "00000000" else ""


def _situation(code: str, date: str, opened: str, rng: random.Random) -> tuple[str, str]:
    code = code.strip().lstrip("0")
    date, opened = _date(date), _date(opened)
    if code == "2":
        return ("HABILITADO", opened) if rng.random() < 0.9 else ("NAO HABILITADO", date)
    if code == "8":
        return "BAIXADO", date
    return rng.choice(("SUSPENSO", "INAPTO")), date


def write(rows: Iterator[list[str]], stream: io.TextIOBase) -> int:
    writer = csv.writer(stream, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n")
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--share", type=float, default=0.6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with args.out.open("w", encoding="latin-1", newline="") as out:
        count = write(registrations(args.release, args.share, args.seed), out)
    print(f"{count} registrations written to {args.out}")


if __name__ == "__main__":
    main()
