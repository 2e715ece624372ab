"""Companies of a partner found by name, masked document and/or age band, paged by cursor.

Pages use `search_after` over the release index of the first page, with a signed cursor
(`app.lib.paging`), so a listing stays consistent while the alias moves to a new release and no
search context stays open on the cluster.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from elasticsearch import AsyncElasticsearch
from elasticsearch import NotFoundError as MissingError

from app.domain import cnpj
from app.domain.record import Socio
from app.domain.text import normalize_name, partner_key
from app.errors import BadRequestError
from app.lib import paging
from app.lib.elastic import body

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
_MASKED = re.compile(r"\*\*\*\d{6}\*\*")
_FIELDS = [
    "cnpj", "razao_social", "nome_fantasia", "situacao_cadastral.descricao", "endereco.uf",
    "endereco.municipio.nome", "socios",
]  # fmt: skip


class Filtros(msgspec.Struct, kw_only=True, omit_defaults=True):
    nome: str | None = None
    doc: str | None = None
    idade: str | None = None


class Vinculo(msgspec.Struct, kw_only=True):
    cnpj: str
    razao_social: str | None
    nome_fantasia: str | None
    situacao_cadastral: str | None
    uf: str | None
    municipio: str | None
    socios: list[Socio]
    """The partners of this company that match the filters."""


class Pagina(msgspec.Struct, kw_only=True):
    data: list[Vinculo]
    total: int
    next_cursor: str | None
    filtros: Filtros


def masked_document(raw: str) -> str:
    """A partner document as Receita shows it: `***NNNNNN**` for CPFs (from a full CPF, the
    six middle digits, or the masked form), the 14 characters for a CNPJ."""
    value = raw.strip()
    if _MASKED.fullmatch(value):
        return value
    digits = re.sub(r"[.\-/\s]", "", value).upper()
    if digits.isdigit() and len(digits) == 11:
        return f"***{digits[3:9]}**"
    if digits.isdigit() and len(digits) == 6:
        return f"***{digits}**"
    if cnpj.check(digits).valid:
        return digits
    raise BadRequestError(
        "doc deve ser um CPF (11 dígitos, os 6 do meio ou ***NNNNNN**) ou um CNPJ válido.",
        details={"doc": raw[:64]},
    )


MAX_NAME = 200
MAX_DOC = 32


def check_filters(nome: str | None, doc: str | None, idade: str | None) -> Filtros:
    """The filters, checked: lengths first (before any normalisation), then shapes."""
    if nome is not None and len(nome) > MAX_NAME:
        raise BadRequestError(f"nome: no máximo {MAX_NAME} caracteres.", {"nome": len(nome)})
    if doc is not None and len(doc) > MAX_DOC:
        raise BadRequestError(f"doc: no máximo {MAX_DOC} caracteres.", {"doc": len(doc)})
    name = normalize_name(nome or "") or None
    if nome is not None and name is None:
        raise BadRequestError("nome não tem letras nem algarismos.", details={"nome": nome[:64]})
    if name is None and doc is None:
        raise BadRequestError("Informe nome e/ou doc do sócio.")
    if idade is not None:
        if not (len(idade) == 1 and idade.isdigit()):
            raise BadRequestError("idade é a faixa etária da Receita, de 0 a 9.", {"idade": idade})
        if name is None:
            raise BadRequestError("idade filtra junto com nome.")
    return Filtros(nome=name, doc=masked_document(doc) if doc is not None else None, idade=idade)


def query(filters: Filtros) -> dict[str, Any]:
    clauses: list[dict[str, Any]] = []
    if filters.nome and filters.doc:
        clauses.append({"term": {"busca.socios_chaves": partner_key(filters.nome, filters.doc)}})
    elif filters.nome:
        clauses.append({"match_phrase": {"busca.socios": filters.nome}})
    elif filters.doc:
        clauses.append({"term": {"busca.socios_documentos": filters.doc}})
    if filters.nome and filters.idade:
        key = partner_key(filters.nome, filters.idade)
        clauses.append({"term": {"busca.socios_faixas": key}})
    return {"bool": {"filter": clauses}}


AFTER = tuple[str]
"""Sort values of a hit: its CNPJ."""


class _Label(msgspec.Struct):
    descricao: str | None = None


class _Municipio(msgspec.Struct):
    nome: str | None = None


class _Endereco(msgspec.Struct):
    uf: str | None = None
    municipio: _Municipio | None = None


class _Source(msgspec.Struct):
    cnpj: str
    razao_social: str | None = None
    nome_fantasia: str | None = None
    situacao_cadastral: _Label | None = None
    endereco: _Endereco | None = None
    socios: list[Socio] = msgspec.field(default_factory=list)


class _Hit(msgspec.Struct):
    source: _Source = msgspec.field(name="_source")
    index: str = msgspec.field(name="_index")
    sort: list[str] = msgspec.field(default_factory=list)


class _Total(msgspec.Struct):
    value: int


class _Hits(msgspec.Struct):
    total: _Total
    hits: list[_Hit]


class _Response(msgspec.Struct):
    hits: _Hits


_decoder = msgspec.json.Decoder(_Response)


def _matching_partners(partners: list[Socio], filters: Filtros) -> list[Socio]:
    return [
        partner
        for partner in partners
        if (not filters.nome or normalize_name(partner.nome) == filters.nome)
        and (not filters.doc or partner.documento == filters.doc)
    ]


async def related(
    es: AsyncElasticsearch,
    alias: str,
    cursors: paging.Cursors,
    filters: Filtros,
    limit: int,
    cursor: str | None,
) -> Pagina:
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequestError(f"limit vai de 1 a {MAX_LIMIT}.", details={"limit": limit})
    request_digest = paging.digest(filters)
    position: paging.Cursor[AFTER] | None = None
    if cursor:
        position = cursors.open(cursor, "socios", AFTER, request_digest)
    if position is not None and not position.indice.startswith(f"{alias}-"):
        raise paging.invalid_cursor(cursor or "")
    try:
        response = await es.search(
            index=position.indice if position else alias,
            query=query(filters),
            sort=[{"cnpj": "asc"}],
            search_after=list(position.depois) if position else None,
            size=limit + 1,
            source_includes=_FIELDS,
            track_total_hits=True,
        )
    except MissingError as error:
        if position is not None:
            raise paging.invalid_cursor(cursor or "") from error
        raise
    found = _decoder.decode(body(response))
    hits = found.hits.hits[:limit]
    next_cursor = None
    if len(found.hits.hits) > limit:
        last = hits[-1]
        next_cursor = cursors.seal(
            paging.Cursor("socios", last.index, (str(last.sort[0]),), request_digest)
        )
    return Pagina(
        data=[_vinculo(hit.source, filters) for hit in hits],
        total=found.hits.total.value,
        next_cursor=next_cursor,
        filtros=filters,
    )


def _vinculo(source: _Source, filters: Filtros) -> Vinculo:
    address = source.endereco or _Endereco()
    return Vinculo(
        cnpj=source.cnpj,
        razao_social=source.razao_social,
        nome_fantasia=source.nome_fantasia,
        situacao_cadastral=source.situacao_cadastral.descricao
        if source.situacao_cadastral
        else None,
        uf=address.uf,
        municipio=address.municipio.nome if address.municipio else None,
        socios=_matching_partners(source.socios, filters),
    )
