"""Market views of the index for agents and analysts: which CNAE segments a term means (with
how many active companies each has), and the map of one segment (counts by UF, município,
porte, situação and opening year, with the top cities)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from app.catalog.service import BuscaCnae, cnae_descriptions, search_cnaes
from app.context import Backends
from app.domain import codes
from app.domain.catalog import CnaeItem, MunicipioItem, catalog_name
from app.domain.text import TYPED_CODE, digits, trim
from app.errors import BadRequestError
from app.lib.elastic import body, decoder
from app.lib.operations import Custo, Operacao
from app.lib.wording import free_text
from app.search import filters as f
from app.search.categories import categories, category_clause

DESCOBRIR_SEGMENTOS = Operacao("descobrir_segmentos_cnae", Custo.BUSCA)
MAPEAR_MERCADO = Operacao("mapear_mercado_empresas", Custo.ANALISE)
MAX_SEGMENTS = 50
TERM_CODES = 5
"""Subclasses a segment given in words stands for (the best matches of the catalog)."""
TIMEOUT = "5s"
ATIVA = "02"

Termo = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=free_text(required=True),
        description="Palavras da atividade (acentos e caixa não importam) ou um código CNAE.",
        examples=["padaria", "desenvolvimento de software", "4721"],
    ),
]


class BuscaSegmentos(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Subclasses CNAE de uma atividade descrita em palavras."""

    termo: Termo
    uf: Annotated[f.Estado, msgspec.Meta(description="Contar só as empresas desta UF.")] | None = (
        None
    )
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_SEGMENTS, description="Quantas subclasses.")
    ] = 10


class Segmento(CnaeItem, frozen=True, kw_only=True):
    """A CNAE subclass: `empresas` counts every establishment of the release with it as the
    primary activity; `ativas`, the active ones (in `uf` when given)."""

    ativas: int


class Segmentos(msgspec.Struct, kw_only=True):
    termo: str
    uf: str | None
    data: list[Segmento]
    total: int
    """CNAE subclasses matching the term (`data` holds the best `limit`)."""


class MapaMercado(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """O mapa de um segmento: onde estão as empresas, de que porte, desde quando."""

    segmento: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=100,
            pattern=free_text(required=True),
            description=(
                "O segmento: código CNAE (2 a 7 dígitos: divisão, grupo, classe, subclasse), "
                "uma categoria de /v1/seek/cidades/categorias, ou palavras da atividade."
            ),
            examples=["5611", "restaurantes", "padaria"],
        ),
    ]
    uf: Annotated[f.Estado, msgspec.Meta(description="Só esta UF.")] | None = None
    com_email: Annotated[bool, msgspec.Meta(description="Só com e-mail válido.")] | None = None
    com_telefone: Annotated[bool, msgspec.Meta(description="Só com telefone válido.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=50, description="Quantos municípios no topo.")] = 10


class Cnae(msgspec.Struct, frozen=True, kw_only=True):
    codigo: str
    descricao: str | None


class SegmentoResolvido(msgspec.Struct, kw_only=True):
    entrada: str
    tipo: str
    """`codigo`, `categoria` or `termo`: how `entrada` was read."""
    cnaes: list[Cnae]
    """The CNAE codes the segment stands for (a code prefix stands for itself)."""


class Contagem(msgspec.Struct, kw_only=True):
    codigo: str
    descricao: str | None
    total: int


class Cidade(msgspec.Struct, kw_only=True):
    codigo: str
    codigo_ibge: str | None
    nome: str | None
    uf: str | None
    total: int


class Ano(msgspec.Struct, kw_only=True):
    ano: int
    total: int


class Mercado(msgspec.Struct, kw_only=True):
    segmento: SegmentoResolvido
    filtros: dict[str, Any]
    total: int
    ativas: int
    por_uf: list[Contagem]
    por_municipio: list[Cidade]
    """The `limit` municipalities with most establishments."""
    por_porte: list[Contagem]
    por_situacao: list[Contagem]
    por_ano_abertura: list[Ano]


class _Count(msgspec.Struct):
    doc_count: int


_counts = decoder(msgspec.Raw)
_count = msgspec.json.Decoder(_Count)


class _Doc(msgspec.Struct):
    found: bool = False
    source: MunicipioItem | None = msgspec.field(name="_source", default=None)


class _Docs(msgspec.Struct):
    docs: list[_Doc]


_docs = msgspec.json.Decoder(_Docs)


async def _active_by_code(backends: Backends, codes_: list[str], uf: str | None) -> dict[str, int]:
    if not codes_:  # no activity matched the term: nothing to count (a terms size of 0 is an error)
        return {}
    filters: list[dict[str, Any]] = [
        {"terms": {"cnae_principal.codigo": codes_}},
        {"term": {"situacao_cadastral.codigo": ATIVA}},
    ]
    if uf:
        filters.append({"term": {"endereco.uf": uf}})
    response = await backends.es.search(
        index=backends.alias,
        size=0,
        query={"bool": {"filter": filters}},
        aggregations={"n": {"terms": {"field": "cnae_principal.codigo", "size": len(codes_)}}},
        timeout=TIMEOUT,
    )
    return {str(b.key): b.doc_count for b in _counts.decode(body(response)).buckets("n")}


async def segmentos(backends: Backends, entrada: BuscaSegmentos) -> Segmentos:
    """CNAE subclasses for a term, with their hierarchy and how many active establishments
    have each as primary activity (in a UF when given), best matches first."""
    uf = f.estado(entrada.uf)
    page = await search_cnaes(
        backends, BuscaCnae(query=entrada.termo, limit=entrada.limit), field="termo"
    )
    active = await _active_by_code(backends, [item.codigo for item in page.data], uf)
    return Segmentos(
        termo=entrada.termo,
        uf=uf,
        data=[
            Segmento(**msgspec.structs.asdict(item), ativas=active.get(item.codigo, 0))
            for item in page.data
        ],
        total=page.total,
    )


async def _resolve(backends: Backends, raw: str) -> tuple[SegmentoResolvido, dict[str, Any]]:
    """The segment as a filter clause: a CNAE code prefix, a category, or words."""
    text = trim(raw)
    if TYPED_CODE.fullmatch(text):
        clause = f.cnae_clause(text, secondary=False, field="segmento")
        code = digits(text)
        named = await cnae_descriptions(backends, [code])
        only = Cnae(codigo=code, descricao=named.get(code))
        return SegmentoResolvido(entrada=raw, tipo="codigo", cnaes=[only]), clause
    slug = text.lower()
    if slug in categories():
        listed = categories()[slug].cnaes
        named = await cnae_descriptions(backends, listed)
        cnaes = [Cnae(codigo=code, descricao=named.get(code)) for code in listed]
        return SegmentoResolvido(entrada=raw, tipo="categoria", cnaes=cnaes), category_clause(slug)
    found = await search_cnaes(backends, BuscaCnae(query=text, limit=TERM_CODES), "segmento")
    if not found.data:
        raise BadRequestError(
            f"segmento: nenhuma atividade CNAE encontrada para {text[:40]!r}; use "
            "descobrir_segmentos_cnae (ou /v1/segmentos) para achar os códigos.",
            details={"campo": "segmento"},
        )
    cnaes = [Cnae(codigo=item.codigo, descricao=item.descricao) for item in found.data]
    clause = {"terms": {"cnae_principal.codigo": [c.codigo for c in cnaes]}}
    return SegmentoResolvido(entrada=raw, tipo="termo", cnaes=cnaes), clause


async def _cities(backends: Backends, keys: list[str]) -> dict[str, MunicipioItem]:
    if not keys:
        return {}
    response = await backends.es.mget(
        index=catalog_name(backends.alias), ids=[f"municipio:{key}" for key in keys]
    )
    found = _docs.decode(body(response)).docs
    return {doc.source.codigo: doc.source for doc in found if doc.found and doc.source}


def labelled(buckets: Any, labels: dict[str, str]) -> list[Contagem]:
    return [
        Contagem(codigo=str(b.key), descricao=labels.get(str(b.key)), total=b.doc_count)
        for b in buckets
    ]


async def mapa(backends: Backends, entrada: MapaMercado) -> Mercado:
    """The map of one segment: how many establishments, and where, how big, in what state and
    since when, with the top municipalities."""
    entrada = msgspec.structs.replace(entrada, uf=f.estado(entrada.uf))  # echoed as read
    resolved, clause = await _resolve(backends, entrada.segmento)
    filters: list[dict[str, Any]] = [clause]
    if entrada.uf is not None:
        filters.append({"term": {"endereco.uf": entrada.uf}})
    for name, field in (
        ("com_email", "contato.disponibilidade.email"),
        ("com_telefone", "contato.disponibilidade.telefone"),
    ):
        value = getattr(entrada, name)
        if value is True:
            filters.append({"term": {field: True}})
        elif value is False:
            filters.append({"bool": {"must_not": {"term": {field: True}}}})
    response = await backends.es.search(
        index=backends.alias,
        size=0,
        track_total_hits=True,
        query={"bool": {"filter": filters}},
        aggregations={
            "uf": {"terms": {"field": "endereco.uf", "size": 30}},
            "municipio": {"terms": {"field": "endereco.municipio.codigo", "size": entrada.limit}},
            "porte": {"terms": {"field": "porte.codigo", "size": 10}},
            "situacao": {"terms": {"field": "situacao_cadastral.codigo", "size": 10}},
            "ano": {
                "date_histogram": {
                    "field": "abertura",
                    "calendar_interval": "year",
                    "format": "yyyy",
                    "min_doc_count": 1,
                }
            },
            "ativas": {"filter": {"term": {"situacao_cadastral.codigo": ATIVA}}},
        },
        timeout=TIMEOUT,
    )
    found = _counts.decode(body(response))
    cities = [(str(b.key), b.doc_count) for b in found.buckets("municipio")]
    named = await _cities(backends, [key for key, _ in cities])
    active = (found.aggregations or {}).get("ativas")
    return Mercado(
        segmento=resolved,
        filtros=msgspec.to_builtins(entrada),
        total=found.hits.total.value,
        ativas=_count.decode(active).doc_count if active is not None else 0,
        por_uf=labelled(found.buckets("uf"), codes.ADDRESS_UF_NOMES),
        por_municipio=[
            Cidade(
                codigo=key,
                codigo_ibge=named[key].codigo_ibge if key in named else None,
                nome=named[key].nome if key in named else None,
                uf=named[key].uf if key in named else None,
                total=total,
            )
            for key, total in cities
        ],
        por_porte=labelled(found.buckets("porte"), codes.PORTE),
        por_situacao=labelled(found.buckets("situacao"), codes.SITUACAO_CADASTRAL),
        por_ano_abertura=[
            Ano(ano=int(b.key_as_string or 0), total=b.doc_count) for b in found.buckets("ano")
        ],
    )
