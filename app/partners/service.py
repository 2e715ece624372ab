"""The partners (QSA) of a company and the companies tied to it through the same partners.

Receita masks partners' CPFs (`***NNNNNN**`), so a person is matched on the normalised name
plus the masked document, the pair the indexer writes to `busca.socios_chaves`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch, TransportError

from app.domain.record import Socio
from app.domain.text import partner_key
from app.errors import UnavailableError
from app.lib.elastic import body
from app.lookup.service import INDEX_UNAVAILABLE, get_company

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


class _Hit(msgspec.Struct):
    source: dict[str, Any] = msgspec.field(name="_source")


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
        try:
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
        except TransportError as error:
            raise UnavailableError(INDEX_UNAVAILABLE) from error
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


def _related(source: dict[str, Any], keys: dict[str, str]) -> Relacionada:
    situacao = source.get("situacao_cadastral") or {}
    address = source.get("endereco") or {}
    shared = [
        keys[key] for key in (source.get("busca") or {}).get("socios_chaves", []) if key in keys
    ]
    return Relacionada(
        cnpj=source["cnpj"],
        razao_social=source.get("razao_social"),
        nome_fantasia=source.get("nome_fantasia"),
        situacao_cadastral=situacao.get("descricao"),
        uf=address.get("uf"),
        municipio=(address.get("municipio") or {}).get("nome"),
        socios_em_comum=shared,
    )
