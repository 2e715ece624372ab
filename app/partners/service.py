"""The partners (QSA) of a company and the companies tied to it through the same partners.

Receita masks partners' CPFs (`***NNNNNN**`), so a person is matched on the normalised name
plus the masked document, the pair the indexer writes to `busca.socios_chaves`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from app.context import Backends
from app.domain.record import Socio
from app.domain.summary import SOURCE_FIELDS, Fonte, Resumo, resumo
from app.domain.text import partner_key
from app.lib.elastic import body, decoder
from app.lib.operations import Custo, Operacao
from app.lookup.service import ConsultaCnpj, consultar

CONSULTAR_SOCIOS = Operacao("consultar_socios", Custo.CONSULTA)
MAX_RELATED = 50
"""Related companies listed with the QSA; one establishment per company (the lowest order
number, usually the matriz)."""


class Relacionada(Resumo, kw_only=True):
    """A company sharing a partner, with the names of the partners in common."""

    socios_em_comum: list[str]


class Quadro(msgspec.Struct, kw_only=True):
    cnpj: str
    razao_social: str | None
    socios: list[Socio]
    relacionadas: list[Relacionada]
    total_relacionadas: int
    """Companies sharing a partner; `relacionadas` lists the first 50."""


class _Cardinality(msgspec.Struct):
    value: int


_decoder = decoder(Fonte)
_cardinality = msgspec.json.Decoder(_Cardinality)


def related_query(keys: list[str], own_root: str) -> dict[str, Any]:
    return {
        "bool": {
            "filter": [{"terms": {"busca.socios_chaves": keys}}],
            "must_not": [{"term": {"cnpj_basico": own_root}}],
        }
    }


async def quadro(backends: Backends, entrada: ConsultaCnpj) -> Quadro:
    """The QSA of the establishment's company and the companies sharing its partners."""
    company = await consultar(backends, entrada)
    keys = {partner_key(socio.nome, socio.documento): socio.nome for socio in company.socios}
    related: list[Relacionada] = []
    total = 0
    if keys:
        response = await backends.es.search(
            index=backends.alias,
            query=related_query(list(keys), company.cnpj_basico),
            collapse={"field": "cnpj_basico"},
            sort=[{"cnpj": "asc"}],
            size=MAX_RELATED,
            source_includes=[*SOURCE_FIELDS, "busca.socios_chaves"],
            aggregations={"empresas": {"cardinality": {"field": "cnpj_basico"}}},
            track_total_hits=True,
        )
        found = _decoder.decode(body(response))
        counted = (found.aggregations or {}).get("empresas")
        total = _cardinality.decode(counted).value if counted is not None else 0
        for hit in found.hits.hits:
            chaves = hit.source.busca.socios_chaves if hit.source.busca else []
            related.append(
                Relacionada(
                    **resumo(hit.source),
                    socios_em_comum=[keys[key] for key in chaves if key in keys],
                )
            )
    return Quadro(
        cnpj=company.cnpj,
        razao_social=company.razao_social,
        socios=company.socios,
        relacionadas=related,
        total_relacionadas=total,
    )
