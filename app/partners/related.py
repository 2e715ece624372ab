"""Companies of a partner found by name, masked document and/or age band, paged by cursor.

Pages use `search_after` over the release index of the first page, with a signed cursor
(`app.lib.listing`), so a listing stays consistent while the alias moves to a new release and
no search context stays open on the cluster.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec

from app.context import Backends
from app.domain import cnpj
from app.domain.record import Socio
from app.domain.summary import Resumo, resumo
from app.domain.text import has_phrase, is_code, normalize_name, partner_key
from app.errors import BadRequestError
from app.lib import paging
from app.lib.listing import Listing, fetch
from app.lib.operations import Custo, Operacao
from app.lib.wording import CONTROL, CONTROL_REASON

BUSCAR_SOCIOS_RELACIONADOS = Operacao("buscar_socios_relacionados", Custo.BUSCA)
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_NAME = 200
MAX_DOC = 32
_MASKED = re.compile(r"\*\*\*[0-9]{6}\*\*")
LISTING = Listing(lista="socios", sort=[{"cnpj": "asc"}], after=tuple[str], fields=("socios",))


class BuscaSocios(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Empresas de um sócio: nome e/ou doc; idade restringe um nome."""

    nome: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=MAX_NAME,
                description=(
                    "Nome do sócio; acentos, caixa e sufixos não importam. Sozinho, casa como "
                    "frase (parte do nome); com doc ou idade, é o nome completo do sócio."
                ),
                examples=["Maria da Silva"],
            ),
        ]
        | None
    ) = None
    doc: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=MAX_DOC,
                description=(
                    "CPF (11 dígitos, os 6 do meio ou ***NNNNNN** como a Receita mostra) ou CNPJ "
                    "do sócio."
                ),
                examples=["***220050**"],
            ),
        ]
        | None
    ) = None
    idade: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=8,
                description="Faixa etária da Receita, 0 a 9 (só com o nome completo).",
                examples=["5"],
                # documented only: `_filters` refuses the rest saying what idade holds
                extra_json_schema={"pattern": "^[0-9]$"},
            ),
        ]
        | None
    ) = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT, description="Itens por página.")] = (
        DEFAULT_LIMIT
    )
    cursor: paging.CursorTexto | None = None


class Filtros(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The partner filters as searched: normalised name, masked document, age band."""

    nome: str | None = None
    doc: str | None = None
    idade: str | None = None


class Vinculo(Resumo, kw_only=True):
    """A company of the partner, with the partners of it that match the filters."""

    socios: list[Socio]


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
    digits = re.sub(r"[.\-/ ]", "", value).upper()  # a tab or another space is no formatting
    if is_code(digits) and len(digits) == 11:
        return f"***{digits[3:9]}**"
    if is_code(digits) and len(digits) == 6:
        return f"***{digits}**"
    if cnpj.check(digits).valid:
        return digits
    raise BadRequestError(
        "doc deve ser um CPF (11 dígitos, os 6 do meio ou ***NNNNNN**) ou um CNPJ válido.",
        details={"campo": "doc", "valor": raw[:64]},
    )


def check_filters(entrada: BuscaSocios) -> Filtros:
    """The filters, checked: lengths first (before any normalisation), then shapes."""
    nome, doc, idade = entrada.nome, entrada.doc, entrada.idade
    if nome is not None and len(nome) > MAX_NAME:
        raise BadRequestError(f"nome: no máximo {MAX_NAME} caracteres.", {"campo": "nome"})
    if doc is not None and len(doc) > MAX_DOC:
        raise BadRequestError(f"doc: no máximo {MAX_DOC} caracteres.", {"campo": "doc"})
    if nome is not None and CONTROL.search(nome):
        raise BadRequestError(f"nome: {CONTROL_REASON}.", {"campo": "nome"})
    name = normalize_name(nome or "") or None
    if nome is not None and name is None:
        raise BadRequestError(
            "nome: sem letras nem algarismos além de sufixos como LTDA ou ME.",
            details={"campo": "nome", "valor": nome[:64]},
        )
    if name is None and doc is None:
        raise BadRequestError("Informe nome e/ou doc do sócio.", {"campo": "nome"})
    if idade is not None:
        if not (len(idade) == 1 and is_code(idade)):
            raise BadRequestError(
                "idade é a faixa etária da Receita, de 0 a 9.", {"campo": "idade", "valor": idade}
            )
        if name is None:
            raise BadRequestError("idade filtra junto com nome.", {"campo": "idade"})
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


def _matching_partners(partners: list[Socio], filters: Filtros) -> list[Socio]:
    """The partners the query matched: the name as a phrase (alone) or whole (with a document
    or an age band, as `query` keys them), the document and the age band."""
    whole = filters.doc is not None or filters.idade is not None
    return [
        partner
        for partner in partners
        if (
            not filters.nome
            or (normalize_name(partner.nome) == filters.nome if whole
                else has_phrase(normalize_name(partner.nome), filters.nome))
        )
        and (not filters.doc or partner.documento == filters.doc)
        and (
            not filters.idade
            or (partner.faixa_etaria is not None and partner.faixa_etaria.codigo == filters.idade)
        )
    ]  # fmt: skip


async def relacionados(backends: Backends, entrada: BuscaSocios) -> Pagina:
    """One page of the companies with a partner matching the filters, by CNPJ."""
    filters = check_filters(entrada)
    page = await fetch(
        backends,
        LISTING,
        query(filters),
        limit=entrada.limit,
        cursor=entrada.cursor,
        request_digest=paging.digest(filters),
    )
    return Pagina(
        data=[
            Vinculo(**resumo(hit.source), socios=_matching_partners(hit.source.socios, filters))
            for hit in page.hits
        ],
        total=page.total,
        next_cursor=page.next_cursor,
        filtros=filters,
    )
