"""State registrations (inscrições estaduais): cleaning, check digits per UF, labels.

Each of the 27 federative units has its own length, prefix and check-digit rule. They come from
`erpbrasil.base` (maintained by the Odoo Brazil community, MIT), which covers all 27 and keeps
up with state changes (the 2025 `50` prefix of Mato Grosso do Sul, for one); this module only
cleans the input and turns the library's answer into a reason the caller can show. One
exception: Goiás, where the library accepts only the prefixes 10, 11 and 20 while SINTEGRA's
published rule allows 10, 11 and 20 to 29; Goiás is checked by that rule here (`_goias`).
"""

from __future__ import annotations

import re
from enum import StrEnum

from erpbrasil.base.fiscal import ie as _ie

from app.domain.codes import UFS
from app.domain.text import normalize

MAX_LENGTH = 14
_PUNCTUATION = re.compile(r"[\s./\-]")
_SHAPE = re.compile(r"P?[0-9]{1,14}")


class Problem(StrEnum):
    """Why an inscrição estadual is not valid, in the order the checks run."""

    UF = "uf"
    EMPTY = "vazia"
    CHARACTERS = "caracteres"
    CHECK_DIGIT = "digito_verificador"


MESSAGES = {
    Problem.UF: "UF desconhecida: use uma das 27 siglas (AC ... TO).",
    Problem.EMPTY: "Inscrição estadual vazia.",
    Problem.CHARACTERS: (
        "A inscrição estadual tem até 14 algarismos (em SP, produtor rural: P seguido de 12)."
    ),
    Problem.CHECK_DIGIT: (
        "O tamanho, o prefixo ou os dígitos verificadores não conferem com a regra da UF."
    ),
}

SITUACOES: dict[str, str] = {
    "habilitado": "HABILITADO",
    "nao habilitado": "NÃO HABILITADO",
    "suspenso": "SUSPENSO",
    "inapto": "INAPTO",
    "baixado": "BAIXADO",
    "cancelado": "CANCELADO",
    "nulo": "NULO",
}
"""Situations a registration can be in, by normalised spelling, and their label."""

TIPOS: dict[str, str] = {
    "normal": "NORMAL",
    "produtor rural": "PRODUTOR RURAL",
    "substituto tributario": "SUBSTITUTO TRIBUTÁRIO",
}
"""Kinds of registration, by normalised spelling, and their label."""


def clean(raw: str) -> str:
    """Strip formatting (dots, slash, dash, spaces) and upper-case the SP rural `P`."""
    return _PUNCTUATION.sub("", raw).upper()


def check(uf: str, raw: str) -> Problem | None:
    """The problem with `raw` as an inscrição estadual of `uf`, or None when it is valid."""
    state = uf.strip().upper()
    if state not in UFS:
        return Problem.UF
    value = clean(raw)
    if not value:
        return Problem.EMPTY
    if not value.isascii() or not _SHAPE.fullmatch(value):
        return Problem.CHARACTERS
    if value.startswith("P") and state != "SP":
        return Problem.CHARACTERS
    if state == "GO":
        return None if _goias(value) else Problem.CHECK_DIGIT
    try:
        valid = bool(_ie.validar(state.lower(), value))
    except (IndexError, ValueError):
        valid = False
    return None if valid else Problem.CHECK_DIGIT


_GO_PREFIXES = frozenset({"10", "11", *(str(n) for n in range(20, 30))})
_GO_WEIGHTS = (9, 8, 7, 6, 5, 4, 3, 2)


def _goias(value: str) -> bool:
    """SINTEGRA's rule for Goiás (http://www.sintegra.gov.br/Cad_Estados/cad_GO.html): nine
    digits, prefix 10, 11 or 20 to 29, one check digit over the first eight with weights 9..2;
    a remainder of 1 gives 1 for the numbers 10103105 to 10119997 and 0 for the others (as
    erpbrasil.base and Caelum Stella read the rule)."""
    if len(value) != 9 or not value.isdigit() or value[:2] not in _GO_PREFIXES:
        return False
    remainder = sum(int(d) * w for d, w in zip(value[:8], _GO_WEIGHTS, strict=True)) % 11
    if remainder == 0:
        digit = 0
    elif remainder == 1:
        digit = 1 if 10103105 <= int(value[:8]) <= 10119997 else 0
    else:
        digit = 11 - remainder
    return int(value[8]) == digit


def _mask_pr(value: str) -> str:
    return f"{value[:3]}.{value[3:8]}-{value[8:]}" if len(value) == 10 else value


# States whose mask in the library loses digits (Paraná's drops the last check digit).
_MASKS = {"PR": _mask_pr}


def formatted(uf: str, value: str) -> str:
    """`value` punctuated the way its state prints it; unchanged when the state has no mask.

    A mask may pad with left zeros, never drop or change a character: anything else is
    discarded in favour of the plain value.
    """
    state = uf.strip().upper()
    mask = _MASKS.get(state)
    if mask is not None:
        return mask(value)
    try:
        result = _ie.formata(state.lower(), value)
    except (IndexError, KeyError, ValueError, TypeError):
        return value
    if not isinstance(result, str) or clean(result).lstrip("0") != value.lstrip("0"):
        return value
    return result


def situacao(raw: str) -> str | None:
    """The label of a situation however it is spelled (case, accents), or None if unknown."""
    return SITUACOES.get(normalize(raw))


def tipo(raw: str) -> str | None:
    """The label of a registration kind however it is spelled, or None if unknown."""
    return TIPOS.get(normalize(raw))
