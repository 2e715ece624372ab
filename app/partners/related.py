"""Companies of a partner found by name, masked document and/or age band, paged by cursor.

Pages use `search_after` inside a point in time, so a listing stays consistent while the alias
moves to a new release. The cursor is opaque to callers: base64url JSON of the point in time,
the last sort value and a digest of the filters, so it cannot be replayed with other filters.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

import msgspec
from elasticsearch import ApiError, AsyncElasticsearch, TransportError

from app.domain import cnpj
from app.domain.text import normalize_name, partner_key
from app.errors import BadRequestError, UnavailableError
from app.lib.elastic import body
from app.lookup.service import INDEX_UNAVAILABLE

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
KEEP_ALIVE = "2m"
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
    socios: list[dict[str, Any]]
    """The partners of this company that match the filters."""


class Pagina(msgspec.Struct, kw_only=True):
    data: list[Vinculo]
    total: int
    next_cursor: str | None
    filtros: Filtros


class _Cursor(msgspec.Struct, frozen=True):
    pit: str
    after: list[Any]
    filters: str


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


def check_filters(nome: str | None, doc: str | None, idade: str | None) -> Filtros:
    name = normalize_name(nome or "")[:200] or None
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


def _digest(filters: Filtros) -> str:
    return hashlib.sha256(msgspec.json.encode(filters)).hexdigest()[:16]


def encode_cursor(cursor: _Cursor) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(cursor)).decode().rstrip("=")


def decode_cursor(raw: str, filters: Filtros) -> _Cursor:
    invalid = BadRequestError("cursor inválido ou expirado.", details={"cursor": raw[:64]})
    try:
        padded = raw + "=" * (-len(raw) % 4)
        cursor = msgspec.json.decode(base64.urlsafe_b64decode(padded), type=_Cursor)
    except (binascii.Error, ValueError, msgspec.DecodeError) as error:
        raise invalid from error
    if cursor.filters != _digest(filters) or not 1 <= len(cursor.after) <= 2:
        raise invalid
    return cursor


def _matching_partners(source: dict[str, Any], filters: Filtros) -> list[dict[str, Any]]:
    matched = []
    for partner in source.get("socios") or []:
        if filters.nome and normalize_name(partner.get("nome") or "") != filters.nome:
            continue
        if filters.doc and partner.get("documento") != filters.doc:
            continue
        matched.append(partner)
    return matched


async def related(
    es: AsyncElasticsearch, alias: str, filters: Filtros, limit: int, cursor: str | None
) -> Pagina:
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequestError(f"limit vai de 1 a {MAX_LIMIT}.", details={"limit": limit})
    position = decode_cursor(cursor, filters) if cursor else None
    try:
        pit = position.pit if position else body(await es.open_point_in_time(
            index=alias, keep_alive=KEEP_ALIVE
        ))  # fmt: skip
        pit_id = pit if position else msgspec.json.decode(pit)["id"]
        response = await es.search(
            pit={"id": pit_id, "keep_alive": KEEP_ALIVE},
            query=query(filters),
            sort=[{"cnpj": "asc"}],
            search_after=position.after if position else None,
            size=limit,
            source_includes=_FIELDS,
            track_total_hits=True,
        )
    except ApiError as error:
        if position is not None and error.meta.status in (400, 404):
            raise BadRequestError("cursor inválido ou expirado.") from error
        raise UnavailableError(INDEX_UNAVAILABLE) from error
    except TransportError as error:
        raise UnavailableError(INDEX_UNAVAILABLE) from error
    found = msgspec.json.decode(body(response))
    hits = found["hits"]["hits"]
    data = [_vinculo(hit["_source"], filters) for hit in hits]
    next_cursor = None
    if len(hits) == limit:
        next_pit = found.get("pit_id", pit_id)
        next_cursor = encode_cursor(_Cursor(next_pit, hits[-1]["sort"], _digest(filters)))
    return Pagina(
        data=data, total=found["hits"]["total"]["value"], next_cursor=next_cursor, filtros=filters
    )


def _vinculo(source: dict[str, Any], filters: Filtros) -> Vinculo:
    situacao = source.get("situacao_cadastral") or {}
    address = source.get("endereco") or {}
    return Vinculo(
        cnpj=source["cnpj"],
        razao_social=source.get("razao_social"),
        nome_fantasia=source.get("nome_fantasia"),
        situacao_cadastral=situacao.get("descricao"),
        uf=address.get("uf"),
        municipio=(address.get("municipio") or {}).get("nome"),
        socios=_matching_partners(source, filters),
    )
