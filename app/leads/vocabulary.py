"""The lead vocabulary: segments people name (with the words that name them) and business
objectives (what is sold, mapped to the segments that buy it), each down to CNAE codes.

The vocabulary is data, `fixtures/reference/segmentos-leads.json`, read once per process and
checked when read: every code is a CNAE prefix of 2 to 7 digits, every objective names
segments that exist. Edit the file; no code change is needed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import msgspec

from app.domain.text import tokens

REFERENCE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "reference"
FILE = REFERENCE / "segmentos-leads.json"
CODE_LENGTHS = (2, 3, 4, 5, 7)
PLURALS = (("oes", "ao"), ("aes", "ao"), ("eis", "el"), ("ais", "al"), ("ns", "m"))


class Segmento(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    nome: str
    termos: list[str]
    """Words or phrases that name the segment (accents and case do not matter)."""
    cnaes: list[str]
    """CNAE codes of its companies' activity: divisions (2), groups (3), classes (4-5) or
    subclasses (7)."""


class Objetivo(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    termos: list[str]
    """Words or phrases of what is sold or offered."""
    segmentos: list[str]
    """The segments that buy it (slugs of `segmentos`)."""


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    about: str
    segmentos: dict[str, Segmento]
    objetivos: list[Objetivo]


class Vocabulario(msgspec.Struct, frozen=True, kw_only=True):
    segmentos: dict[str, Segmento]
    objetivos: list[Objetivo]
    termos_segmento: dict[tuple[str, ...], str]
    """Stemmed token sequence of a term -> segment slug."""
    termos_objetivo: dict[tuple[str, ...], int]
    """Stemmed token sequence of a term -> index of its objective."""
    maior_termo: int


def stem(token: str) -> str:
    """A light Portuguese plural stemmer, so that a term matches its plural: `restaurantes` ->
    `restaurante`, `hoteis` -> `hotel`, `lojas` -> `loja`, `confeccoes` -> `confeccao`."""
    if len(token) <= 3:
        return token
    for plural, singular in PLURALS:
        if token.endswith(plural):
            return token[: -len(plural)] + singular
    if token.endswith(("res", "zes", "ses")):
        return token[:-2]
    if token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def key(text: str) -> tuple[str, ...]:
    """The matching key of a phrase: its folded tokens, each stemmed."""
    return tuple(stem(token) for token in tokens(text))


def _check(found: _File) -> None:
    for slug, item in found.segmentos.items():
        bad = [c for c in item.cnaes if not (c.isdigit() and len(c) in CODE_LENGTHS)]
        if not item.cnaes or bad or not item.termos:
            raise ValueError(f"{FILE.name}: segment {slug} needs terms and CNAE codes: {bad}")
    for index, objective in enumerate(found.objetivos):
        unknown = [s for s in objective.segmentos if s not in found.segmentos]
        if unknown or not objective.termos or not objective.segmentos:
            raise ValueError(f"{FILE.name}: objective {index} names unknown segments {unknown}")


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulario:
    found = msgspec.json.decode(FILE.read_bytes(), type=_File)
    _check(found)
    by_segment: dict[tuple[str, ...], str] = {}
    for slug, item in found.segmentos.items():
        for term in [slug.replace("-", " "), *item.termos]:
            by_segment.setdefault(key(term), slug)
    by_objective: dict[tuple[str, ...], int] = {}
    for index, objective in enumerate(found.objetivos):
        for term in objective.termos:
            by_objective.setdefault(key(term), index)
    longest = max(len(k) for k in [*by_segment, *by_objective])
    return Vocabulario(
        segmentos=found.segmentos,
        objetivos=found.objetivos,
        termos_segmento={k: v for k, v in by_segment.items() if k},
        termos_objetivo={k: v for k, v in by_objective.items() if k},
        maior_termo=longest,
    )
