"""Read Receita CSV streams row by row: latin-1 (or UTF-8), `;`, quoted fields, dirt reported,
never fatal.

A row that cannot be used is yielded as a `BadRow` (file, line, reason) instead of raising, so
one bad row never stops a load and none is dropped without a trace.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

import msgspec

from app.domain import cnpj, state_registration
from app.domain.text import is_code
from indexer.sources import COLUMNS, MAX_LINE, Kind, is_regime_header, text_of, without_mark
from indexer.values import VALUE_CHECKS, is_date


class BadRow(msgspec.Struct, frozen=True):
    """A row that was not loaded: where it is, a short reason to count by, and the detail."""

    file: str
    line: int
    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    fields: list[str]
    set_aside: list[tuple[str, str]] | None = None
    """(reason, detail) of each value of the row that was not loaded: the row is, with that
    field left empty (`check_values`)."""


def _each_line(file: str, start: int, end: int, reason: str, detail: str) -> Iterator[BadRow]:
    """A bad row for each line from `start + 1` to `end`: a quote left open makes the parser
    read several lines as one row, and each of them is lost, so each is counted."""
    for line in range(start + 1, max(end, start + 1) + 1):
        yield BadRow(file, line, reason, detail)


LONG_LINE = f"more than {MAX_LINE:,} characters; the rest of the line is skipped"


def _clean_lines(text: IO[str], over_long: set[int]) -> Iterator[str]:
    """The lines of `text` without NUL bytes (nor a byte-order mark before the first), each
    read up to `MAX_LINE` characters: a longer one is skipped in pieces (memory stays bounded),
    its number added to `over_long` and an empty line given in its place."""
    readline = text.readline
    number = 0
    while line := readline(MAX_LINE):
        number += 1
        if number == 1:  # a byte-order mark a copy saved as UTF-8 may start with
            line = without_mark(line)
        if len(line) == MAX_LINE and not line.endswith("\n"):
            while (rest := readline(MAX_LINE)) and not rest.endswith("\n"):
                pass
            over_long.add(number)
            yield "\n"
            continue
        yield line.replace("\x00", "") if "\x00" in line else line


def read_rows(stream: IO[bytes], file: str, kind: Kind) -> Iterator[Row | BadRow]:
    """Parsed rows of one file; blank lines are skipped, malformed rows come back as BadRow
    (one for each line a malformed row spans)."""
    expected = COLUMNS[kind]
    validate = _VALIDATORS.get(kind)
    check = VALUE_CHECKS.get(kind)
    delimiter = "," if kind is Kind.REGIMES else ";"
    with text_of(stream) as text:
        over_long: set[int] = set()
        lines = _clean_lines(text, over_long)
        reader = csv.reader(lines, delimiter=delimiter, quotechar='"', strict=False)
        while True:
            start = reader.line_num
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                yield from _each_line(file, start, reader.line_num, "unparseable CSV", str(error))
                continue
            if over_long and reader.line_num in over_long:
                over_long.discard(reader.line_num)
                yield BadRow(file, reader.line_num, "line too long", LONG_LINE)
                continue
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if kind is Kind.REGIMES and is_regime_header(",".join(fields)):
                continue
            if len(fields) != expected and reader.line_num - start > 1:
                detail = f"lines {start + 1}-{reader.line_num} read as one row of {len(fields)}"
                yield from _each_line(file, start, reader.line_num, "unbalanced quote", detail)
                continue
            if len(fields) != expected:
                yield BadRow(
                    file,
                    reader.line_num,
                    "wrong number of columns",
                    f"{len(fields)} columns where {expected} are expected",
                )
                continue
            problem = validate(fields) if validate else None
            if problem:
                yield BadRow(file, reader.line_num, *problem)
                continue
            yield Row(reader.line_num, fields, check(fields) if check else None)


Problem = tuple[str, str] | None
"""(reason, detail) of a row that cannot be loaded."""


def _root_problem(root: str) -> Problem:
    if len(root) != 8 or not root.isascii() or not root.isalnum():
        return "invalid cnpj_basico", repr(root)
    return None


def _establishment_problem(fields: list[str]) -> Problem:
    problem = _root_problem(fields[0])
    if problem:
        return problem
    value = fields[0] + fields[1] + fields[2]
    check = cnpj.check(value)
    if check.problem is not None:
        return "invalid CNPJ", f"{value!r}: {cnpj.MESSAGES[check.problem]}"
    return None


def _company_problem(fields: list[str]) -> Problem:
    """A company's root as Receita writes it: a lower-case letter would never join its
    establishments (staged in upper case), so the row is reported rather than kept unjoined."""
    root = fields[0]
    if root != root.upper():
        return "invalid cnpj_basico", f"{root!r}: letters of a root are upper case"
    return _root_problem(root)


def _date_problem(name: str, value: str) -> Problem:
    value = value.strip()
    if not value or is_date(value):
        return None
    return f"invalid {name}", f"{value!r}: use YYYYMMDD"


def _registration_problem(fields: list[str]) -> Problem:
    """A state-registration row: valid CNPJ, one of the 27 UFs, an inscrição estadual whose
    check digits hold for that UF, a known situação and tipo, `YYYYMMDD` dates."""
    check = cnpj.check(fields[0])
    if check.problem is not None:
        return "invalid CNPJ", f"{fields[0]!r}: {cnpj.MESSAGES[check.problem]}"
    problem = state_registration.check(fields[1], fields[2])
    if problem is state_registration.Problem.UF:
        return "invalid UF", repr(fields[1])
    if problem is not None:
        return (
            "invalid inscrição estadual",
            f"{fields[2]!r} ({fields[1].strip().upper()}): {state_registration.MESSAGES[problem]}",
        )
    if fields[3].strip() and state_registration.tipo(fields[3]) is None:
        return "invalid tipo", repr(fields[3])
    if state_registration.situacao(fields[4]) is None:
        return "invalid situação", repr(fields[4])
    return _date_problem("data_situacao", fields[5]) or _date_problem("data_inicio", fields[6])


def _stage_registration(fields: list[str]) -> list[str]:
    """Canonical spellings, with the company root first (the staging bucket key)."""
    number = cnpj.clean(fields[0])
    return [
        number[:8],
        number,
        fields[1].strip().upper(),
        state_registration.clean(fields[2]),
        state_registration.tipo(fields[3]) or "",
        state_registration.situacao(fields[4]) or "",
        fields[5].strip(),
        fields[6].strip(),
        " ".join(fields[7].split()).upper()[:60],
    ]


def _regime_problem(fields: list[str]) -> Problem:
    """A tax-regime row: a year, a valid CNPJ, the SCP's CNPJ or `0`, a form of taxation and a
    count of bookkeepings."""
    year = fields[0].strip()
    latest = dt.date.today().year + 1
    if not (len(year) == 4 and year.isascii() and year.isdigit() and 1990 <= int(year) <= latest):
        return "invalid ano", f"{fields[0]!r}: a year from 1990 to {latest}"
    check = cnpj.check(fields[1])
    if check.problem is not None:
        return "invalid CNPJ", f"{fields[1]!r}: {cnpj.MESSAGES[check.problem]}"
    scp = fields[2].strip()
    if scp not in {"", "0"} and cnpj.check(scp).problem is not None:
        return "invalid cnpj_da_scp", repr(fields[2])
    forma = fields[3].strip()
    if not forma or len(forma) > 80:
        return "invalid forma_de_tributacao", repr(fields[3][:100])
    count = fields[4].strip()
    if count and not (count.isascii() and count.isdigit() and len(count) <= 6):
        return "invalid quantidade_de_escrituracoes", repr(fields[4][:20])
    return None


def _stage_regime(fields: list[str]) -> list[str]:
    """The company root first (the staging key), then the year, the SCP's CNPJ (empty for
    none), the form of taxation in upper case and single spaces, and the count."""
    scp = fields[2].strip()
    return [
        cnpj.clean(fields[1])[:8],
        fields[0].strip(),
        "" if scp in {"", "0"} else cnpj.clean(scp),
        " ".join(fields[3].split()).upper(),
        fields[4].strip() or "0",
    ]


def _stage_establishment(fields: list[str]) -> list[str]:
    """The CNPJ's three parts as `cnpj.clean` spells them (a valid row may carry punctuation,
    spaces or lower-case letters in them)."""
    number = fields[0] + fields[1] + fields[2]
    clean = len(number) == 14 and number.isascii() and number.isalnum()
    if clean and (number.isdigit() or number.isupper()):
        return fields
    number = cnpj.clean(number)
    fields[0:3] = number[:8], number[8:12], number[12:]
    return fields


def stage(kind: Kind, fields: list[str]) -> list[str]:
    """The fields of a valid row as the staging table stores them."""
    stager = _STAGERS.get(kind)
    return stager(fields) if stager else fields


def _reference_problem(fields: list[str]) -> Problem:
    """A reference code is 1 to 8 digits (Receita's are 2 to 7)."""
    code = fields[0].strip()
    if not code:
        return ("empty code", "")
    if not (len(code) <= 8 and is_code(code)):
        return ("code not 1 to 8 digits", code[:20])
    return None


_VALIDATORS: dict[Kind, Callable[[list[str]], Problem]] = {
    Kind.ESTABELECIMENTOS: _establishment_problem,
    Kind.EMPRESAS: _company_problem,
    Kind.SOCIOS: _company_problem,
    Kind.SIMPLES: _company_problem,
    Kind.CNAES: _reference_problem,
    Kind.MOTIVOS: _reference_problem,
    Kind.MUNICIPIOS: _reference_problem,
    Kind.NATUREZAS: _reference_problem,
    Kind.PAISES: _reference_problem,
    Kind.QUALIFICACOES: _reference_problem,
    Kind.INSCRICOES: _registration_problem,
    Kind.REGIMES: _regime_problem,
}

_STAGERS: dict[Kind, Callable[[list[str]], list[str]]] = {
    Kind.ESTABELECIMENTOS: _stage_establishment,
    Kind.INSCRICOES: _stage_registration,
    Kind.REGIMES: _stage_regime,
}
