"""The partners (QSA) of a company and the companies tied to it through the same partners.

Receita masks partners' CPFs (`***NNNNNN**`), so a person is matched on the normalised name
plus the masked document, the pair the indexer writes to `busca.socios_chaves`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch

from app.domain.record import Socio
from app.domain.text import partner_key
from app.lib.elastic import body
from app.lookup.service import get_company

MAX_RELATED = 50
"""Related companies listed with the QSA; one establishment per company (the lowest order
number, usually the matriz)."""

_FIELDS = [
    "cnpj", "cnpj_basico", "razao_social", "nome_fantasia", "situacao_cadastral.codigo",
    "situacao_cadastral.descricao", "endereco.uf", "endereco.municipio.nome",
    "busca.socios_chaves",
]  # fmt: skip


class Relacionada(msgspec.Struct, kw_only=True):
    cnpj: str
    razao_social: str | None
    nome_fantasia: str | None
    situacao_cadastral: str | None
    uf: str | None
    municipio: str | None
    socios_em_comum: list[str]


class Quadro(msgspec.Struct, kw_only=True):
    cnpj: str
    razao_social: str | None
    socios: list[Socio]
    relacionadas: list[Relacionada]
    total_relacionadas: int
    """Companies sharing a partner; `relacionadas` lists the first 50."""


class _Label(msgspec.Struct):
    descricao: str | None = None


class _Municipio(msgspec.Struct):
    nome: str | None = None


class _Endereco(msgspec.Struct):
    uf: str | None = None
    municipio: _Municipio | None = None


class _Busca(msgspec.Struct):
    socios_chaves: list[str] = msgspec.field(default_factory=list)


class _Source(msgspec.Struct):
    cnpj: str
    razao_social: str | None = None
    nome_fantasia: str | None = None
    situacao_cadastral: _Label | None = None
    endereco: _Endereco | None = None
    busca: _Busca | None = None


class _Hit(msgspec.Struct):
    source: _Source = msgspec.field(name="_source")


class _Total(msgspec.Struct):
    value: int


class _Hits(msgspec.Struct):
    hits: list[_Hit]
    total: _Total


class _Aggregations(msgspec.Struct):
    empresas: _Total


class _Search(msgspec.Struct):
    hits: _Hits
    aggregations: _Aggregations | None = None


_search = msgspec.json.Decoder(_Search)


def related_query(keys: list[str], own_root: str) -> dict[str, Any]:
    return {
        "bool": {
            "filter": [{"terms": {"busca.socios_chaves": keys}}],
            "must_not": [{"term": {"cnpj_basico": own_root}}],
        }
    }


async def partners(es: AsyncElasticsearch, alias: str, number: str) -> Quadro:
    company = await get_company(es, alias, number)
    keys = {partner_key(socio.nome, socio.documento): socio.nome for socio in company.socios}
    related: list[Relacionada] = []
    total = 0
    if keys:
        response = await es.search(
            index=alias,
            query=related_query(list(keys), company.cnpj_basico),
            collapse={"field": "cnpj_basico"},
            sort=[{"cnpj": "asc"}],
            size=MAX_RELATED,
            source_includes=_FIELDS,
            aggregations={"empresas": {"cardinality": {"field": "cnpj_basico"}}},
            track_total_hits=True,
        )
        found = _search.decode(body(response))
        total = found.aggregations.empresas.value if found.aggregations else 0
        for hit in found.hits.hits:
            related.append(_related(hit.source, keys))
    return Quadro(
        cnpj=company.cnpj,
        razao_social=company.razao_social,
        socios=company.socios,
        relacionadas=related,
        total_relacionadas=total,
    )


def _related(source: _Source, keys: dict[str, str]) -> Relacionada:
    address = source.endereco or _Endereco()
    chaves = source.busca.socios_chaves if source.busca else []
    return Relacionada(
        cnpj=source.cnpj,
        razao_social=source.razao_social,
        nome_fantasia=source.nome_fantasia,
        situacao_cadastral=source.situacao_cadastral.descricao
        if source.situacao_cadastral
        else None,
        uf=address.uf,
        municipio=address.municipio.nome if address.municipio else None,
        socios_em_comum=[keys[key] for key in chaves if key in keys],
    )
