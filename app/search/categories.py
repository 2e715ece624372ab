"""CNAE categories of `/seek/cidades`: slugs people type, mapped to primary activities.

The mapping is data, `fixtures/reference/categorias-cnae.json`, read once per process; each
category lists CNAE subclasses (7 digits) or classes (5 digits).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from app.errors import BadRequestError

CATEGORIES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "reference"
FILE = CATEGORIES / "categorias-cnae.json"


class Categoria(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    nome: str
    cnaes: list[str]


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    about: str
    categorias: dict[str, Categoria]


class Listed(msgspec.Struct, frozen=True, kw_only=True):
    slug: str
    nome: str
    cnaes: list[str]


@lru_cache(maxsize=1)
def categories() -> dict[str, Categoria]:
    found = msgspec.json.decode(FILE.read_bytes(), type=_File).categorias
    for slug, item in found.items():
        if not item.cnaes or any(not (c.isdigit() and len(c) in (5, 7)) for c in item.cnaes):
            raise ValueError(f"{FILE.name}: {slug} needs CNAE codes of 5 or 7 digits")
    return found


class Categorias(msgspec.Struct, kw_only=True):
    """Every category, in one page like every list of the API."""

    data: list[Listed]
    total: int
    next_cursor: None = None
    """Always null: the categories fit in one page."""


def listed() -> Categorias:
    found = [Listed(slug=slug, nome=c.nome, cnaes=c.cnaes) for slug, c in categories().items()]
    return Categorias(data=found, total=len(found))


def category_clause(slug: str) -> dict[str, Any]:
    """The filter of category `slug` (an establishment's primary activity is one of its codes),
    or a 400 listing the slugs."""
    found = categories().get(slug.strip().lower())
    if found is None:
        raise BadRequestError(
            f"categoria desconhecida: {slug[:40]!r}.",
            details={"campo": "categoria", "aceitos": sorted(categories())},
        )
    subclasses = [code for code in found.cnaes if len(code) == 7]
    classes = [code for code in found.cnaes if len(code) == 5]
    should: list[dict[str, Any]] = []
    if subclasses:
        should.append({"terms": {"cnae_principal.codigo": subclasses}})
    if classes:
        should.append({"terms": {"cnae_principal.grupo.classe": classes}})
    return {"bool": {"should": should, "minimum_should_match": 1}}
