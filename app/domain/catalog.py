"""The reference catalog of a release: its CNAE subclasses and its municipalities.

The indexer writes one document per entry into the release's catalog index (with the
normalised `busca` text of `app.domain.text`); the autocomplete endpoints read them back as
these Structs. `empresas` counts the release's establishments with that primary activity or
in that municipality, so the common entries come first.
"""

from __future__ import annotations

import msgspec

from app.domain.record import HierarquiaCnae


class CnaeItem(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    """Subclass, 7 digits."""
    codigo_formatado: str
    """`4711-3/02`, as IBGE writes it."""
    descricao: str | None
    hierarquia: HierarquiaCnae
    empresas: int


class MunicipioItem(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    """Receita's own (TOM/SIAFI) code, 4 digits."""
    codigo_ibge: str | None
    nome: str
    """IBGE's name with accents when the code is known there, else Receita's."""
    uf: str | None
    empresas: int


class CnaeDoc(CnaeItem, frozen=True, kw_only=True, tag_field="tipo", tag="cnae"):
    busca: list[str]


class MunicipioDoc(MunicipioItem, frozen=True, kw_only=True, tag_field="tipo", tag="municipio"):
    busca: list[str]


class ReferenciaItem(msgspec.Struct, frozen=True, kw_only=True):
    """An entry of one of Receita's smaller code tables (naturezas jurídicas, qualificações de
    sócios, países, motivos de situação), as the release published it."""

    codigo: str
    descricao: str | None


REFERENCE_KINDS = ("natureza", "qualificacao", "pais", "motivo")
"""The `tipo` of those entries in the catalog."""


class ReferenciaDoc(ReferenciaItem, frozen=True, kw_only=True):
    tipo: str
    busca: list[str]


def catalog_name(name: str) -> str:
    """The catalog index of release index `name`, or the catalog alias of read alias `name`."""
    return name + "-ref"


def format_cnae(code: str) -> str:
    """`4711302` -> `4711-3/02`; other lengths are returned as they are."""
    return f"{code[:4]}-{code[4]}/{code[5:]}" if len(code) == 7 and code.isdigit() else code
