"""The values of a row that can be loaded: a value that is not what its column holds (an
impossible date, letters in a CNAE code, a state that does not exist) is set aside, and the row
loaded without it, so one garbled field neither drops a company nor reaches the index as if it
were data. Each value set aside is counted by reason in the load report and listed with the bad
rows (file, line, what was set aside).

Codes are checked for their form only (ASCII digits, as many as Receita writes): a code the
tables do not name is kept, as Receita's own files hold a few (`docs/receita-format.md`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from functools import lru_cache
from operator import itemgetter

from app.domain.codes import ADDRESS_UFS
from app.domain.text import TYPED_CODE, digits, is_code
from indexer.documents import capital
from indexer.sources import Kind

SetAside = list[tuple[str, str]]
"""(reason, detail) of each value set aside."""
NO_DATE = frozenset({"", "0", "00000000"})
"""What Receita writes for "no date"."""
_UFS = frozenset(ADDRESS_UFS)
_FLAGS = frozenset({"", "S", "N"})


def is_date(value: str) -> bool:
    """Whether `value` is a real `YYYYMMDD` date."""
    return len(value) == 8 and _is_date(value)  # no long value is kept in the cache


@lru_cache(maxsize=1 << 16)
def _is_date(value: str) -> bool:
    if not value.isascii() or not value.isdigit():
        return False
    try:
        dt.date(int(value[:4]), int(value[4:6]), int(value[6:]))
    except ValueError:
        return False
    return True


def _aside(found: SetAside | None, fields: list[str], at: int, name: str, why: str) -> SetAside:
    """Set the value at `at` aside: noted in `found` (made on the first), the field emptied."""
    noted = found if found is not None else []
    noted.append((f"invalid {name}", f"{fields[at][:40]!r}: {why}; the row is loaded without it"))
    fields[at] = ""
    return noted


def _dates(fields: list[str], found: SetAside | None, columns: dict[int, str]) -> SetAside | None:
    for at, name in columns.items():
        value = fields[at].strip()
        if value not in NO_DATE and not is_date(value):
            found = _aside(found, fields, at, name, "no such date (YYYYMMDD)")
        elif value != fields[at]:
            fields[at] = value  # ` 20240101`: the dates are read unspaced
    return found


def _codes(fields: list[str], found: SetAside | None, columns: dict[int, str]) -> SetAside | None:
    """Codes of Receita's tables: 1 to 8 ASCII digits (its own have 1 to 7)."""
    for at, name in columns.items():
        value = fields[at].strip()
        if value and not (len(value) <= 8 and is_code(value)):
            found = _aside(found, fields, at, name, "a code is 1 to 8 digits")
    return found


_ESTABLISHMENT_DATES = {6: "data_situacao_cadastral", 10: "data_inicio_atividade",
                        29: "data_situacao_especial"}  # fmt: skip
_ESTABLISHMENT_CODES = {3: "identificador_matriz_filial", 5: "situacao_cadastral",
                        7: "motivo_situacao_cadastral", 9: "pais", 20: "municipio"}  # fmt: skip


def _establishment(fields: list[str]) -> SetAside | None:
    found = _dates(fields, None, _ESTABLISHMENT_DATES)
    found = _codes(fields, found, _ESTABLISHMENT_CODES)
    principal = fields[11].strip()
    if principal and not (len(principal) <= 7 and is_code(principal)):
        found = _aside(found, fields, 11, "cnae_fiscal_principal", "a CNAE code is 7 digits")
    secondary = fields[12]
    if secondary:
        parts = [part.strip() for part in secondary.split(",")]
        kept = [part for part in parts if part and len(part) <= 7 and is_code(part)]
        if len(kept) != sum(1 for part in parts if part):
            found = _aside(found, fields, 12, "cnae_fiscal_secundaria", "CNAE codes are 7 digits")
            fields[12] = ",".join(kept)  # the valid codes stay
    cep = fields[18].strip()
    if cep and not is_code(cep):
        number = digits(cep)
        if TYPED_CODE.fullmatch(cep) and 1 <= len(number) <= 8:
            fields[18] = number  # `80010-000`: the same CEP
        else:
            found = _aside(found, fields, 18, "cep", "a CEP is 8 digits")
    elif len(cep) > 8:
        found = _aside(found, fields, 18, "cep", "a CEP is 8 digits")
    uf = fields[19].strip()
    if uf and uf not in _UFS:
        if uf.upper() in _UFS:
            fields[19] = uf.upper()
        else:
            found = _aside(found, fields, 19, "uf", "one of the 27 states or EX")
    return found


def _company(fields: list[str]) -> SetAside | None:
    found = _codes(fields, None, {2: "natureza_juridica", 3: "qualificacao_responsavel",
                                  5: "porte"})  # fmt: skip
    if fields[4].strip() and capital(fields[4]) is None:
        found = _aside(found, fields, 4, "capital_social", "not an amount below 10^15")
    return found


_PARTNER_DATES = {5: "data_entrada_sociedade"}


def _partner(fields: list[str]) -> SetAside | None:
    found = _dates(fields, None, _PARTNER_DATES)
    return _codes(fields, found, {1: "identificador_socio", 4: "qualificacao_socio", 6: "pais",
                                  9: "qualificacao_representante_legal",
                                  10: "faixa_etaria"})  # fmt: skip


_SIMPLES_DATES = {2: "data_opcao_simples", 3: "data_exclusao_simples", 5: "data_opcao_mei",
                  6: "data_exclusao_mei"}  # fmt: skip


def _simples(fields: list[str]) -> SetAside | None:
    found = None
    for at, name in ((1, "opcao_simples"), (4, "opcao_mei")):
        flag = fields[at].strip()
        if flag not in _FLAGS:
            if flag.upper() in _FLAGS:
                fields[at] = flag.upper()
            else:
                found = _aside(found, fields, at, name, "S, N or empty")
    return _dates(fields, found, _SIMPLES_DATES)


# The fast path: a clean row costs one match of its code-like fields, joined, against an
# expression of what Receita writes, and a set lookup per date (and state): about a quarter of the
# checks field by field. A row it does not take goes through the checks above, which decide.
# It is narrower than they are, never wider: a value it takes, they take as it is.
_FIRST_DAY = dt.date(1900, 1, 1)
_DAYS = frozenset(
    (_FIRST_DAY + dt.timedelta(days=n)).strftime("%Y%m%d")
    for n in range((dt.date(2100, 1, 1) - _FIRST_DAY).days)
) | {"", "0", "00000000"}
"""Every date of 1900 to 2099 as Receita writes it, and its "no date" values (others go the
slow way)."""
_KNOWN_UFS = _UFS | {""}
_CODE = "[0-9]{0,8}"
_SIMPLE: dict[Kind, tuple[tuple[int, str], ...]] = {
    Kind.ESTABELECIMENTOS: (
        (3, _CODE), (5, _CODE), (7, _CODE), (9, _CODE), (11, "[0-9]{0,7}"),
        (12, "(?:[0-9]{1,7}(?:,[0-9]{1,7})*)?"), (18, "[0-9]{0,8}"), (20, _CODE),
    ),
    Kind.EMPRESAS: ((2, _CODE), (3, _CODE), (4, "(?:[0-9]{1,15}(?:,[0-9]*)?)?"), (5, _CODE)),
    Kind.SOCIOS: ((1, _CODE), (4, _CODE), (6, _CODE), (9, _CODE), (10, _CODE)),
    Kind.SIMPLES: ((1, "[SN]?"), (4, "[SN]?")),
}  # fmt: skip
_SEPARATOR = "\x1f"
"""Joins the fields matched (a unit separator: no pattern above takes it, so a field holding one
fails the match)."""


def _simple(kind: Kind) -> Callable[[list[str]], bool]:
    """Whether the code-like fields of a row of `kind` (two or more) are as Receita writes
    them."""
    fields_of = itemgetter(*(at for at, _ in _SIMPLE[kind]))
    clean = re.compile(_SEPARATOR.join(pattern for _, pattern in _SIMPLE[kind])).fullmatch
    return lambda fields: clean(_SEPARATOR.join(fields_of(fields))) is not None


_ESTABLISHMENT_SIMPLE = _simple(Kind.ESTABELECIMENTOS)
_COMPANY_SIMPLE = _simple(Kind.EMPRESAS)
_PARTNER_SIMPLE = _simple(Kind.SOCIOS)
_SIMPLES_SIMPLE = _simple(Kind.SIMPLES)


# The date columns, from the tables above (unpacked: a column added there fails here at import,
# so the two never disagree; local names cost less than a call per row).
_SITUATION_DAY, _OPENING_DAY, _SPECIAL_DAY = _ESTABLISHMENT_DATES
_SIMPLES_IN, _SIMPLES_OUT, _MEI_IN, _MEI_OUT = _SIMPLES_DATES
(_PARTNER_DAY,) = _PARTNER_DATES


def _checked_establishment(f: list[str]) -> SetAside | None:
    if (
        _ESTABLISHMENT_SIMPLE(f)
        and f[_SITUATION_DAY] in _DAYS
        and f[_OPENING_DAY] in _DAYS
        and f[_SPECIAL_DAY] in _DAYS
        and f[19] in _KNOWN_UFS
    ):
        return None
    return _establishment(f)


def _checked_company(f: list[str]) -> SetAside | None:
    return None if _COMPANY_SIMPLE(f) else _company(f)


def _checked_partner(f: list[str]) -> SetAside | None:
    return None if _PARTNER_SIMPLE(f) and f[_PARTNER_DAY] in _DAYS else _partner(f)


def _checked_simples(f: list[str]) -> SetAside | None:
    if (
        _SIMPLES_SIMPLE(f)
        and f[_SIMPLES_IN] in _DAYS
        and f[_SIMPLES_OUT] in _DAYS
        and f[_MEI_IN] in _DAYS
        and f[_MEI_OUT] in _DAYS
    ):
        return None
    return _simples(f)


VALUE_CHECKS: dict[Kind, Callable[[list[str]], SetAside | None]] = {
    Kind.ESTABELECIMENTOS: _checked_establishment,
    Kind.EMPRESAS: _checked_company,
    Kind.SOCIOS: _checked_partner,
    Kind.SIMPLES: _checked_simples,
}
"""The values checked in each kind of main file (the fields are changed in place: a value set
aside is emptied, a value in another spelling of the same thing is written as Receita does)."""
