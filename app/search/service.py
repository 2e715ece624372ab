"""Run a company search: one bool query, sorted by relevance, paged by signed cursors."""

from __future__ import annotations

from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch, NotFoundError

from app.lib import paging
from app.lib.elastic import body
from app.search.filters import FACETS

SORT: list[dict[str, Any]] = [{"_score": "desc"}, {"cnpj": "asc"}]
TIMEOUT = "3s"
FACET_SIZE = 30
_SOURCE = [
    "cnpj", "razao_social", "nome_fantasia", "matriz_filial.descricao",
    "situacao_cadastral.descricao", "abertura", "porte.descricao", "capital_social",
    "cnae_principal.codigo", "cnae_principal.descricao", "endereco.municipio.nome",
    "endereco.municipio.codigo_ibge", "endereco.uf", "endereco.cep",
]  # fmt: skip


class _Label(msgspec.Struct):
    descricao: str | None = None


class _Cnae(msgspec.Struct):
    codigo: str
    descricao: str | None = None


class _Municipio(msgspec.Struct):
    nome: str | None = None
    codigo_ibge: str | None = None


class _Endereco(msgspec.Struct):
    municipio: _Municipio | None = None
    uf: str | None = None
    cep: str | None = None


class _Source(msgspec.Struct):
    cnpj: str
    razao_social: str | None = None
    nome_fantasia: str | None = None
    matriz_filial: _Label | None = None
    situacao_cadastral: _Label | None = None
    abertura: str | None = None
    porte: _Label | None = None
    capital_social: float | None = None
    cnae_principal: _Cnae | None = None
    endereco: _Endereco | None = None


class Resultado(msgspec.Struct, kw_only=True):
    """One establishment in a result list; the full record is at `/v1/cnpj/{cnpj}`."""

    cnpj: str
    razao_social: str | None
    nome_fantasia: str | None
    matriz_filial: str | None
    situacao_cadastral: str | None
    abertura: str | None
    porte: str | None
    capital_social: float | None
    cnae_principal: str | None
    cnae_descricao: str | None
    municipio: str | None
    codigo_ibge: str | None
    uf: str | None
    cep: str | None
    score: float | None


class Contagem(msgspec.Struct):
    valor: str
    total: int


class Pagina(msgspec.Struct, kw_only=True, omit_defaults=True):
    data: list[Resultado]
    total: int
    next_cursor: str | None
    facets: dict[str, list[Contagem]] | None = None
    filtros: dict[str, Any] = msgspec.field(default_factory=dict)
    """The filters as understood (normalised text, codes), to show what was applied."""


class _Hit(msgspec.Struct):
    source: _Source = msgspec.field(name="_source")
    index: str = msgspec.field(name="_index", default="")
    score: float | None = msgspec.field(name="_score", default=None)
    sort: list[Any] = msgspec.field(default_factory=list)


class _Total(msgspec.Struct):
    value: int


class _Hits(msgspec.Struct):
    total: _Total
    hits: list[_Hit]


class _Bucket(msgspec.Struct):
    key: str
    doc_count: int


class _Agg(msgspec.Struct):
    buckets: list[_Bucket]


class _Response(msgspec.Struct):
    hits: _Hits
    aggregations: dict[str, _Agg] | None = None


_decoder = msgspec.json.Decoder(_Response)


def _label(value: _Label | None) -> str | None:
    return value.descricao if value else None


def _resultado(hit: _Hit) -> Resultado:
    source = hit.source
    address = source.endereco or _Endereco()
    municipio = address.municipio or _Municipio()
    cnae = source.cnae_principal
    return Resultado(
        cnpj=source.cnpj,
        razao_social=source.razao_social,
        nome_fantasia=source.nome_fantasia,
        matriz_filial=_label(source.matriz_filial),
        situacao_cadastral=_label(source.situacao_cadastral),
        abertura=source.abertura,
        porte=_label(source.porte),
        capital_social=source.capital_social,
        cnae_principal=cnae.codigo if cnae else None,
        cnae_descricao=cnae.descricao if cnae else None,
        municipio=municipio.nome,
        codigo_ibge=municipio.codigo_ibge,
        uf=address.uf,
        cep=address.cep,
        score=round(hit.score, 4) if hit.score is not None else None,
    )


AFTER = tuple[float, str]
"""Sort values of a hit: its score and its CNPJ."""


async def search(
    es: AsyncElasticsearch,
    alias: str,
    cursors: paging.Cursors,
    query: dict[str, Any],
    *,
    limit: int,
    cursor: str | None,
    request_digest: str,
    facets: list[str],
) -> Pagina:
    """One page of `query`'s hits; `cursor` continues a previous page of the same request.

    The first page reads the alias; the pages after it read the release index that served the
    first (`app.lib.paging`), so a release swap never mixes two releases in one listing. One
    hit beyond `limit` is asked for, so a cursor is made only when there is a next page."""
    position: paging.Cursor[AFTER] | None = None
    if cursor:
        position = cursors.open(cursor, "busca", AFTER, request_digest)
    if position is not None and not position.indice.startswith(f"{alias}-"):
        raise paging.invalid_cursor(cursor or "")
    aggregations = {name: {"terms": {"field": FACETS[name], "size": FACET_SIZE}} for name in facets}
    try:
        response = await es.search(
            index=position.indice if position else alias,
            query=query,
            sort=SORT,
            search_after=list(position.depois) if position else None,
            size=limit + 1,
            source_includes=_SOURCE,
            track_total_hits=True,
            timeout=TIMEOUT,
            aggregations=aggregations or None,
        )
    except NotFoundError as error:
        if position is not None and cursor:
            raise paging.invalid_cursor(cursor) from error
        raise
    found = _decoder.decode(body(response))
    hits = found.hits.hits[:limit]
    next_cursor = None
    if len(found.hits.hits) > limit:
        last = hits[-1]
        after = (float(last.sort[0]), str(last.sort[1]))
        next_cursor = cursors.seal(paging.Cursor("busca", last.index, after, request_digest))
    counted = None
    if found.aggregations:
        counted = {
            name: [Contagem(valor=b.key, total=b.doc_count) for b in agg.buckets]
            for name, agg in found.aggregations.items()
        }
    return Pagina(
        data=[_resultado(hit) for hit in hits],
        total=found.hits.total.value,
        next_cursor=next_cursor,
        facets=counted,
    )
