"""Autocomplete over the release's reference catalog: CNAE subclasses and municipalities.

Queries go to the catalog alias (`indexer.catalog`), a small index beside the release. Typed
text goes through `app.domain.text` as the indexer did; every word must match, as the prefix of
a word (still being typed) or with a typo. Exact names, then names
starting with the text, rank first; ties go to the entries with more establishments.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from elasticsearch import ApiError, AsyncElasticsearch, TransportError

from app.context import Backends
from app.domain.catalog import CnaeItem, MunicipioItem, catalog_name
from app.domain.text import TYPED_CODE, digits, is_code, normalize, trim
from app.errors import CATALOG_UNAVAILABLE, elastic_failure
from app.lib.elastic import body
from app.lib.operations import Custo, Operacao
from app.search.filters import Estado, bad, estado

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_QUERY = 100
TIMEOUT = "2s"
_SORT: list[Any] = [{"_score": "desc"}, {"empresas": "desc"}, {"codigo": "asc"}]


AUTOCOMPLETAR_CNAE = Operacao("autocompletar_cnae", Custo.BUSCA)
AUTOCOMPLETAR_CIDADE = Operacao("autocompletar_cidade", Custo.BUSCA)
Consulta = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=MAX_QUERY,
        description="Código (prefixo) ou palavras; acentos e caixa não importam.",
    ),
]
Limite = Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT)]


class BuscaCnae(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    query: Consulta
    limit: Limite = DEFAULT_LIMIT


class BuscaCidade(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    query: Consulta
    uf: Estado | None = None
    limit: Limite = DEFAULT_LIMIT


class CnaePage(msgspec.Struct, kw_only=True):
    data: list[CnaeItem]
    total: int
    next_cursor: None = None
    """Always null: autocomplete answers are one page of the best `limit` entries."""


class MunicipioPage(msgspec.Struct, kw_only=True):
    data: list[MunicipioItem]
    total: int
    next_cursor: None = None
    """Always null: autocomplete answers are one page of the best `limit` entries."""


def _check_length(raw: str, field: str = "query") -> None:
    if len(raw) > MAX_QUERY:
        raise bad(field, f"{field}: no máximo {MAX_QUERY} caracteres.", len(raw))


def _words(raw: str, field: str = "query") -> str:
    words = normalize(raw)
    if not words:
        raise bad(field, f"{field}: informe letras ou algarismos.", raw)
    return " ".join(words.split()[:8])


TYPOS = (("AUTO:3,100", 2), ("AUTO:3,8", 1))
"""A typed word's typos and their scores: one edit from 3 letters on, two from 8 on (`AUTO`
allows two from 6 letters, so `curitba` found Curiúva), and fewer edits score more."""


def _word(word: str) -> dict[str, Any]:
    """One typed word: a prefix of an indexed word (scored 3), or the word with typos (scored
    by `TYPOS`), so what was typed right ranks before what a typo reaches."""
    either = [_constant({"prefix": {"busca": word}}, 3)]
    either += [
        _constant({"match": {"busca": {"query": word, "fuzziness": fuzziness,
                                       "prefix_length": 1}}}, score)
        for fuzziness, score in TYPOS
    ]  # fmt: skip
    return {"bool": {"should": either, "minimum_should_match": 1}}


def _constant(query: dict[str, Any], boost: float) -> dict[str, Any]:
    """Scores that do not depend on term statistics: only which clauses matched counts."""
    return {"constant_score": {"filter": query, "boost": boost}}


def _text_query(words: str, kind: str, filters: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "bool": {
            "filter": [{"term": {"tipo": kind}}, *filters],
            "must": [_word(word) for word in words.split()],
            "should": [
                _constant({"term": {"busca.exato": words}}, 20),
                _constant({"prefix": {"busca.exato": words}}, 5),
                _constant({"match_phrase_prefix": {"busca": words}}, 2),
            ],
        }
    }


def cnae_query(raw: str, field: str = "query") -> dict[str, Any]:
    """A code prefix (`47`, `4711`, `4711-3/02`) or words of the description; a 400 names
    `field`, the parameter the caller typed it in."""
    _check_length(raw, field)
    if TYPED_CODE.fullmatch(trim(raw) or "x"):
        code = digits(raw)
        if not 1 <= len(code) <= 7:
            raise bad(field, f"{field}: código CNAE de até 7 dígitos, ou palavras.", raw)
        return {"bool": {"filter": [{"term": {"tipo": "cnae"}}, {"prefix": {"codigo": code}}]}}
    return _text_query(_words(raw, field), "cnae", [])


def city_query(raw: str, uf: str | None) -> dict[str, Any]:
    """A municipality name (prefix while typing), or its Receita (4) or IBGE (7) code."""
    _check_length(raw)
    filters: list[dict[str, Any]] = []
    if (sigla := estado(uf)) is not None:
        filters.append({"term": {"uf": sigla}})
    value = raw.strip()
    if value.isdigit():  # any digits: only a code of 4 or 7 ASCII digits is one
        if len(value) not in (4, 7) or not is_code(value):
            raise bad("query", "query: nome, código da Receita (4) ou do IBGE (7).", raw)
        field = "codigo" if len(value) == 4 else "codigo_ibge"
        terms = [{"term": {"tipo": "municipio"}}, {"term": {field: value}}, *filters]
        return {"bool": {"filter": terms}}
    return _text_query(_words(raw), "municipio", filters)


class _Hit(msgspec.Struct):
    source: msgspec.Raw = msgspec.field(name="_source")


class _Total(msgspec.Struct):
    value: int


class _Hits(msgspec.Struct):
    total: _Total
    hits: list[_Hit]


class _Response(msgspec.Struct):
    hits: _Hits


_decoder = msgspec.json.Decoder(_Response)
_cnae = msgspec.json.Decoder(CnaeItem)
_city = msgspec.json.Decoder(MunicipioItem)


async def _run(
    es: AsyncElasticsearch, alias: str, query: dict[str, Any], limit: int
) -> tuple[list[msgspec.Raw], int]:
    try:
        response = await es.search(
            index=catalog_name(alias),
            query=query,
            sort=_SORT,
            size=limit,
            source_excludes=["busca", "tipo"],
            track_total_hits=True,
            timeout=TIMEOUT,
        )
    except (ApiError, TransportError) as error:
        raise elastic_failure(error, CATALOG_UNAVAILABLE) from error
    found = _decoder.decode(body(response))
    return [hit.source for hit in found.hits.hits], found.hits.total.value


async def search_cnaes(backends: Backends, entrada: BuscaCnae, field: str = "query") -> CnaePage:
    """CNAE subclasses for `entrada.query`; a 400 names `field` (`termo`, `segmento` for the
    services that ask on their parameter's behalf)."""
    sources, total = await _run(
        backends.es, backends.alias, cnae_query(entrada.query, field), entrada.limit
    )
    return CnaePage(data=[_cnae.decode(source) for source in sources], total=total)


async def cnae_descriptions(backends: Backends, codes_: list[str]) -> dict[str, str]:
    """The descriptions of CNAE subclasses by their 7-digit codes, from the release's catalog
    (which holds the subclasses some establishment has; the others are left out)."""
    wanted = sorted({code for code in codes_ if len(code) == 7})
    if not wanted:
        return {}
    query = {"bool": {"filter": [{"term": {"tipo": "cnae"}}, {"terms": {"codigo": wanted}}]}}
    sources, _ = await _run(backends.es, backends.alias, query, len(wanted))
    found = (_cnae.decode(source) for source in sources)
    return {item.codigo: item.descricao for item in found if item.descricao}


async def search_cities(backends: Backends, entrada: BuscaCidade) -> MunicipioPage:
    query = city_query(entrada.query, entrada.uf)
    sources, total = await _run(backends.es, backends.alias, query, entrada.limit)
    return MunicipioPage(data=[_city.decode(source) for source in sources], total=total)
