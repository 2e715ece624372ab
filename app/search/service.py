"""Company search: the typed filters of `app.search.filters` turned into one bool query, run
and paged with signed cursors. `/search`, `/seek`, `/nome`, `/seek/cidades` and the agent
tools that search companies all call `search` with a mode.

Modes differ in the text they search and the filters they take:
- `search`: `q` over legal name, trade name and partner names;
- `seek`: `nome` over legal and trade name (optional), structured filters;
- `nome`: `nome` (required), the trade name weighted first, and `uf`;
- `cidades`: `municipio` and `categoria` (both required), `uf`, `situacao`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec

from app.context import Backends
from app.domain.summary import Fonte, Resumo, resumo
from app.errors import BadRequestError
from app.lib import paging
from app.lib.elastic import Hit
from app.lib.listing import Listing, fetch
from app.lib.wording import CONTROL, CONTROL_REASON
from app.search import filters as f
from app.search.names import RELAX_BELOW, name_query, ranking_boosts, relaxed_query, words

SORT: list[dict[str, Any]] = [{"_score": "desc"}, {"cnpj": "asc"}]
TIMEOUT = "3s"
FACET_SIZE = 30
AFTER = tuple[float, str]
"""Sort values of a hit: its score and its CNPJ."""
PAGING = ("limit", "cursor", "facets")
"""The fields that page a search rather than filter it."""


class Modo(StrEnum):
    SEARCH = "search"
    SEEK = "seek"
    NOME = "nome"
    CIDADES = "cidades"


ACCEPTED: dict[Modo, tuple[str, ...]] = {
    Modo.SEARCH: tuple(name for name in f.FIELDS if name != "nome"),
    Modo.SEEK: tuple(name for name in f.FIELDS if name != "q"),
    Modo.NOME: ("nome", "uf", "limit", "cursor"),
    Modo.CIDADES: ("uf", "municipio", "categoria", "situacao", "limit", "cursor", "facets"),
}
"""The fields each mode takes (the query-string routes refuse the others by name)."""
HINTS = {"q": "use nome", "nome": "use q"}
"""What a refusal of the other mode's text field says to use instead."""
REQUIRED: dict[Modo, tuple[str, ...]] = {
    Modo.NOME: ("nome",),
    Modo.CIDADES: ("municipio", "categoria"),
}


class ResultadoBusca(Resumo, kw_only=True):
    """One establishment in a result list, with its relevance score."""

    score: float | None


class Contagem(msgspec.Struct):
    valor: str
    total: int


class Pagina(msgspec.Struct, kw_only=True, omit_defaults=True):
    data: list[ResultadoBusca]
    total: int
    next_cursor: str | None
    facets: dict[str, list[Contagem]] | None = None
    filtros: dict[str, Any] = msgspec.field(default_factory=dict)
    """The filters as understood (normalised text, codes), to show what was applied."""
    data_referencia: str | None = None
    """The reference date of the release that answered (`YYYY-MM-DD`)."""


def _check_mode(filters: f.Filtros, mode: Modo) -> None:
    accepted = ACCEPTED[mode]
    for name in f.FIELDS:
        if name not in accepted and getattr(filters, name) is not None and name != "limit":
            hint = HINTS.get(name, f"aceitos: {', '.join(accepted)}")
            raise BadRequestError(
                f"{name} não é aceito aqui: {hint}.", details={"campo": name, "aceitos": accepted}
            )
    for name in REQUIRED.get(mode, ()):
        if getattr(filters, name) is None:
            raise f.bad(name, f"Informe {name}.")


class Etapa(StrEnum):
    """The passes of a name search, in order: the words as typed, then with a typo per word,
    then the relaxed query (`app.search.names`); each runs only when the one before found no
    company."""

    EXATA = "exata"
    TOLERANTE = "tolerante"
    AMPLIADA = "ampliada"


def build_query(
    filters: f.Filtros, mode: Modo, etapa: Etapa = Etapa.TOLERANTE
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bool query of `filters` in `mode` and the filters as it applies them, for the
    answer's `filtros` (with `termos`, the normalised words it searches); 400 for filters the
    mode does not take, bad values (naming the field), or nothing to search. `etapa`: how
    loosely the name is matched."""
    _check_mode(filters, mode)
    f.check_common(filters)
    name = "q" if mode is Modo.SEARCH else "nome"
    text = filters.q if mode is Modo.SEARCH else filters.nome
    if text is not None and CONTROL.search(text):  # as every free text, and the tools' nome
        raise f.bad(name, f"{name}: {CONTROL_REASON}.", text)
    terms = words(text) if text is not None else []
    if text is not None and not terms:
        raise f.bad(name, f"{name}: sem letras nem algarismos para buscar.", text)
    clauses, shown = f.applied(filters)
    if not terms and not clauses:
        raise BadRequestError(
            f"Informe {name} ou ao menos um filtro.", details={"aceitos": ACCEPTED[mode]}
        )
    weight, partners = 1.5 if mode is Modo.NOME else 1.0, mode is Modo.SEARCH
    query: dict[str, Any] = {"bool": {"filter": clauses}}  # filters alone: `listing_for`
    if text:
        tolerant = etapa is Etapa.TOLERANTE
        matched = (
            relaxed_query(text, trade_weight=weight, partners=partners)
            if etapa is Etapa.AMPLIADA
            else name_query(text, trade_weight=weight, partners=partners, tolerant=tolerant)
        )
        query["bool"].update(must=[matched], should=ranking_boosts())
    for paged in PAGING:
        shown.pop(paged, None)
    if terms:
        shown["termos"] = terms
    return query, shown


async def search(backends: Backends, filters: f.Filtros, mode: Modo) -> Pagina:
    """One page of the companies matching `filters` in `mode`. A name is searched by the
    passes of `Etapa` in turn until one finds a company; `filtros.busca_ampliada` says the
    relaxed one answered. A cursor pages the pass that made it."""
    first = Etapa.TOLERANTE if mode is Modo.CIDADES else Etapa.EXATA
    query, shown = build_query(filters, mode, first)
    if "termos" not in shown or mode is Modo.CIDADES:
        return await _page(backends, query, filters, mode, shown, Etapa.TOLERANTE)
    passes = list(Etapa)
    if filters.cursor:  # an empty cursor is a first page, as `listing.fetch` reads it
        made = [e for e in passes if _made_by(backends, filters.cursor, mode, shown, e)]
        passes = made[:1] or passes[:1]
    for etapa in passes:  # one pass only when a cursor names it
        if etapa is not Etapa.EXATA:
            query, _ = build_query(filters, mode, etapa)
        page = await _page(backends, query, filters, mode, shown, etapa)
        if page.total >= RELAX_BELOW:
            break
    return page


def _shown(shown: dict[str, Any], etapa: Etapa) -> dict[str, Any]:
    """What the answer's `filtros` say of the pass."""
    return {**shown, "busca_ampliada": True} if etapa is Etapa.AMPLIADA else shown


def _digest(mode: Modo, shown: dict[str, Any], etapa: Etapa) -> str:
    """The request a cursor is bound to: the route, the filters (in any case and spacing, as
    they are read: `uf=sp` pages `uf=SP`) and the pass."""
    filters = {
        name: " ".join(value.split()).casefold() if isinstance(value, str) else value
        for name, value in _shown(shown, etapa).items()
    }
    return paging.digest({"route": mode.value, **filters, "etapa": etapa.value})


def _made_by(
    backends: Backends, cursor: str, mode: Modo, shown: dict[str, Any], etapa: Etapa
) -> bool:
    """Whether `cursor` pages the pass `etapa` of the request `shown` describes."""
    try:
        backends.cursors.open(cursor, LISTING.lista, LISTING.after, _digest(mode, shown, etapa))
    except BadRequestError:
        return False
    return True


async def _page(
    backends: Backends,
    query: dict[str, Any],
    filters: f.Filtros,
    mode: Modo,
    shown: dict[str, Any],
    etapa: Etapa,
) -> Pagina:
    """One page of `query`, its cursors bound to the request `shown` describes and the pass."""
    page = await run_query(
        backends,
        query,
        limit=filters.limit,
        cursor=filters.cursor,
        request_digest=_digest(mode, shown, etapa),
        facets=[] if filters.cursor else f.facet_names(filters),
    )
    page.filtros = _shown(shown, etapa)
    return page


LISTING = Listing(lista="busca", sort=SORT, after=AFTER)
BY_STANDING = Listing(
    lista="busca",
    sort=[
        {"busca.ordem": {"order": "desc", "unmapped_type": "float", "missing": 1.0}},
        {"cnpj": "asc"},
    ],
    after=AFTER,
)
"""A search of filters alone scores nothing: it sorts on the score its matches would have had
(`busca.ordem`, `app.search.names.standing`: active, then matriz, then CNPJ), which costs
Elasticsearch less than scoring every match. Its sort values and cursors are those of the
scored sort (a cursor made by either pages the other). A release loaded before the field
existed sorts its matches by CNPJ alone (`missing`)."""


def listing_for(query: dict[str, Any]) -> Listing:
    """How `build_query`'s `query` sorts: by relevance when it searches a name, else
    `BY_STANDING`."""
    return LISTING if "must" in query["bool"] else BY_STANDING


def facet_aggregations(facets: list[str]) -> dict[str, Any]:
    """The terms aggregations counting the values of each facet in `facets`."""
    return {name: {"terms": {"field": f.FACETS[name], "size": FACET_SIZE}} for name in facets}


async def run_query(
    backends: Backends,
    query: dict[str, Any],
    *,
    limit: int,
    cursor: str | None,
    request_digest: str,
    facets: list[str],
) -> Pagina:
    """One page of `query`'s hits, sorted by relevance then CNPJ, with facet counts."""
    listing = listing_for(query)
    page = await fetch(
        backends,
        listing,
        query,
        limit=limit,
        cursor=cursor,
        request_digest=request_digest,
        aggregations=facet_aggregations(facets),
        timeout=TIMEOUT,
    )
    counted = {
        name: [Contagem(valor=str(b.key), total=b.doc_count) for b in page.response.buckets(name)]
        for name in facets
    }
    reference = page.hits[0].source.data_referencia if page.hits else None
    if reference is None:
        live = await backends.live.get(backends.es, backends.alias)
        reference = live.data_referencia if live else None
    return Pagina(
        data=[
            ResultadoBusca(**resumo(hit.source), score=_score(hit, listing)) for hit in page.hits
        ],
        total=page.total,
        next_cursor=page.next_cursor,
        facets=counted or None,
        data_referencia=reference,
    )


def _score(hit: Hit[Fonte], listing: Listing) -> float | None:
    """The hit's relevance score, or for a search of filters alone its standing (the score
    it would have had)."""
    score = hit.sort[0] if listing is BY_STANDING and hit.sort else hit.score
    return round(float(score), 4) if isinstance(score, int | float) else None
