"""CNPJ identifiers: cleaning, check digits and formatting, numeric and alphanumeric.

Since July 2026 the first twelve characters may be `0-9A-Z`. Each character is worth its ASCII
code minus 48; the two check digits use the classic modulo-11 weights.
"""

from __future__ import annotations

import re
from enum import StrEnum
from operator import mul
from typing import NamedTuple

LENGTH = 14
MAX_INPUT = 64
"""Characters of the longest input read as a CNPJ (formatting and spaces included)."""
_BODY = re.compile(r"[0-9A-Z]{12}")
_DIGITS = re.compile(r"[0-9]{2}")
_PUNCTUATION = re.compile(r"[\s./\-]")
_TYPED = re.compile(r"[0-9A-Za-z ./\-]+")
"""What a CNPJ typed or sent to the API may hold: its characters, the formatting's dots, slash and
dash, and plain spaces. A tab, a line break, a control character or another kind of space is
refused rather than dropped (files read by the indexer are cleaned more loosely)."""
_ZERO_BODY = "0" * 12
_FIRST_WEIGHTS = (5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)
_SECOND_WEIGHTS = (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)
_OFFSET = {len(w): 48 * sum(w) for w in (_FIRST_WEIGHTS, _SECOND_WEIGHTS)}
"""Σ 48·weight: the sum of (code − 48)·weight is the sum of code·weight minus this."""


class Problem(StrEnum):
    """Why a CNPJ is not valid, in the order the checks run."""

    EMPTY = "vazio"
    LENGTH = "tamanho"
    CHARACTERS = "caracteres"
    ZEROS = "zerado"
    """Root and order all zeros: its check digits compute (`00`), but no such CNPJ exists."""
    FIRST_DIGIT = "primeiro_digito"
    SECOND_DIGIT = "segundo_digito"


MESSAGES = {
    Problem.EMPTY: "CNPJ vazio.",
    Problem.LENGTH: (
        "O CNPJ deve ter 14 caracteres (8 da raiz, 4 da ordem, 2 dígitos verificadores)."
    ),
    Problem.CHARACTERS: (
        "Os 12 primeiros caracteres do CNPJ devem ser letras A-Z ou algarismos e os dois "
        "últimos, algarismos; além deles, só pontos, barra, hífen e espaços."
    ),
    Problem.ZEROS: "Não existe CNPJ com raiz e ordem zeradas.",
    Problem.FIRST_DIGIT: "O primeiro dígito verificador não confere.",
    Problem.SECOND_DIGIT: "O segundo dígito verificador não confere.",
}


class Check(NamedTuple):
    """The outcome of validating one input: the cleaned value and the problem, if any."""

    cnpj: str
    problem: Problem | None

    @property
    def valid(self) -> bool:
        return self.problem is None


def clean(raw: str) -> str:
    """Strip formatting (dots, slash, dash, spaces) and upper-case letters (ASCII ones only:
    `ſ` and `ı` upper-case to `S` and `I`, and a CNPJ has neither)."""
    stripped = _PUNCTUATION.sub("", raw)
    return stripped.upper() if stripped.isascii() else stripped


def check_digit(body: str) -> str:
    """The check digit for `body` (12 or 13 characters of 0-9A-Z)."""
    weights = _FIRST_WEIGHTS if len(body) == 12 else _SECOND_WEIGHTS
    if len(body) != len(weights) or not body.isascii():
        raise ValueError(f"not a CNPJ body: {body!r}")
    return _digit(sum(map(mul, body.encode(), weights)) - _OFFSET[len(weights)])


def check_digits(body: str) -> str:
    """Both check digits for a 12-character body."""
    first = check_digit(body)
    return first + check_digit(body + first)


def _digit(total: int) -> str:
    remainder = total % 11
    return "0" if remainder < 2 else str(11 - remainder)


def check(raw: str) -> Check:
    """Validate a CNPJ typed by a person or read from a file; over `MAX_INPUT` characters,
    formatted or not, is the wrong length (nothing is cut off to make it fit)."""
    if len(raw) == LENGTH and raw.isascii() and raw.isdigit():
        value = raw  # the common case, already clean
    elif len(raw) > MAX_INPUT:
        return Check("", Problem.LENGTH)
    else:
        value = clean(raw)
        if not value:
            return Check(value, Problem.EMPTY)
        if not _TYPED.fullmatch(raw):  # a character no CNPJ has, whatever the length
            return Check(value, Problem.CHARACTERS)
        if len(value) != LENGTH:
            return Check(value, Problem.LENGTH)
        if not (_BODY.fullmatch(value[:12]) and _DIGITS.fullmatch(value[12:])):
            return Check(value, Problem.CHARACTERS)
    if value.startswith(_ZERO_BODY):
        return Check(value, Problem.ZEROS)
    codes = value.encode()
    first = _digit(sum(map(mul, codes, _FIRST_WEIGHTS)) - _OFFSET[12])
    if value[12] != first:
        return Check(value, Problem.FIRST_DIGIT)
    if value[13] != _digit(sum(map(mul, codes, _SECOND_WEIGHTS)) - _OFFSET[13]):
        return Check(value, Problem.SECOND_DIGIT)
    return Check(value, None)


def is_valid(raw: str) -> bool:
    return check(raw).valid


def format_cnpj(cnpj: str) -> str:
    """`33683111000280` -> `33.683.111/0002-80`."""
    return f"{cnpj[:2]}.{cnpj[2:5]}.{cnpj[5:8]}/{cnpj[8:12]}-{cnpj[12:]}"
