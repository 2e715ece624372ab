"""The analyst's search (`/busca`): a search box that tolerates typos and accents, filters,
facet counts and pages over the same search service as `/v1/search`, with the query in the
address (shareable); CNAE and city autocomplete; and a company's page with its full record,
partners, companies related by partner or contact, and similar companies.

Each search, autocomplete and company page that asks the index something draws one unit from
the signed-in account's plan window, as a call of the API would."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import msgspec
from litestar import Request, get
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Response, Template

from app.auth.gate import Gate
from app.catalog.service import BuscaCidade, BuscaCnae, search_cities, search_cnaes
from app.context import Backends
from app.domain import codes
from app.errors import AppError
from app.lib.body import single_values
from app.lookup import service as lookup
from app.lookup.service import ConsultaCnpj
from app.partners.service import quadro
from app.related.service import BuscaRelacionadas, relacionadas
from app.related.similar import BuscaSimilares, similares
from app.search import filters as f
from app.search.service import Modo, search
from app.web.render import ficha, page, redirect
from app.web.visit import Visita, draw, require_account

FORM_FIELDS = (
    "q", "uf", "municipio", "cnae", "cnae_secundario", "porte", "situacao", "matriz", "simples",
    "mei", "com_email", "com_telefone", "capital_min", "capital_max", "abertura_de",
    "abertura_ate", "cursor",
)  # fmt: skip
"""The filters of the page: the names of `/v1/search`'s own, so a page's address is a query."""
FACETS = "uf,cnae,municipio,situacao"
PAGE_SIZE = 20


CITIES = Path(__file__).parents[2] / "fixtures" / "reference" / "municipios-ibge.csv"


@functools.cache
def city_names() -> dict[str, str]:
    """Receita's city code -> `Nome/UF`, to label the city facet."""
    with CITIES.open(encoding="utf-8", newline="") as stream:
        return {
            row["codigo_tom"]: f"{row['nome']}/{row['uf']}"
            for row in csv.DictReader(stream, delimiter=";")
        }


def facet_label(facet: str, value: str) -> str:
    if facet == "municipio":
        return city_names().get(value, value)
    if facet == "situacao":
        return codes.SITUACAO_CADASTRAL.get(value, value)
    if facet == "cnae":
        return f"Divisão {value}"
    return value


def _pair(name: str, value: str) -> str:
    """`name=value` as `urlencode` writes it."""
    return f"{quote_plus(name)}={quote_plus(value)}"


def linker(values: dict[str, str]) -> Callable[..., str]:
    """Addresses of this search with some filters changed (a facet picked, the next page): a
    changed filter starts again at the first page."""

    encoded = {k: _pair(k, v) for k, v in values.items() if k != "cursor" and v}

    def link(**changes: str | None) -> str:
        pairs = dict(encoded)  # each value encoded once per page, not once per link
        for k, v in changes.items():
            if v:
                pairs[k] = _pair(k, v)
            elif v is not None:
                pairs.pop(k, None)
        query = "&".join(pairs.values())
        return f"/busca?{query}" if query else "/busca"

    return link


def _values(request: Request[Any, Any, Any]) -> dict[str, str]:
    """The form's filled fields, whole (the search bounds each as the API does); a field given
    twice (`uf=SP&uf=RJ`) is a 400, as on the API, rather than one of them searched silently."""
    given = single_values(request.query_params.dict())
    return {name: given[name].strip() for name in FORM_FIELDS if given.get(name, "").strip()}


@get("/busca", opt={"query": FORM_FIELDS})
async def search_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template | Response[Any]:
    require_account(request, visita)
    values = _values(request)
    address = linker(values)(cursor=values.get("cursor"))
    partial = bool(request.headers.get("hx-request"))
    if not partial and len(request.query_params) > len(values):  # empty fields of the form
        return redirect(visita, address)
    template = "_resultados.html" if partial else "busca.html"
    headers = {"HX-Push-Url": address} if partial else None
    context: dict[str, Any] = {
        "valores": values, "portes": codes.PORTE, "situacoes": codes.SITUACAO_CADASTRAL,
        "ufs": sorted(codes.ADDRESS_UFS), "resultado": None, "link": linker(values),
        "rotulo": facet_label,
    }  # fmt: skip
    if not values:  # the empty form (a cursor alone is refused by the search, as on the API)
        return page(request, visita, template, headers=headers, **context)
    try:
        await draw(request, gate, visita)
        filtros = f.from_query(
            {
                **values,
                "limit": str(PAGE_SIZE),
                **({} if "cursor" in values else {"facets": FACETS}),
            }
        )
        context["resultado"] = await search(backends, filtros, Modo.SEARCH)
    except AppError as error:
        return page(request, visita, template, status=error.status, headers=headers,
                    failure=error, erro=error.message, **context)  # fmt: skip
    return page(request, visita, template, headers=headers, **context)


@get("/busca/cnaes", opt={"query": ("cnae",)})
async def cnae_options(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template:
    """Autocomplete of activities: the `<option>`s of the CNAE field's list."""
    require_account(request, visita)
    raw = request.query_params.get("cnae", "").strip()[:100]
    itens: list[Any] = []
    if len(raw) >= 2 and not raw.isdigit():
        await draw(request, gate, visita)
        with contextlib.suppress(AppError):  # words the catalog refuses suggest nothing
            itens = (await search_cnaes(backends, BuscaCnae(query=raw, limit=10))).data
    return page(request, visita, "_opcoes_cnae.html", itens=itens)


@get("/busca/cidades", opt={"query": ("municipio", "uf")})
async def city_options(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template:
    """Autocomplete of cities (within the chosen UF): the `<option>`s of the city field."""
    require_account(request, visita)
    raw = request.query_params.get("municipio", "").strip()[:100]
    uf = request.query_params.get("uf", "").strip()[:8] or None
    itens: list[Any] = []
    if len(raw) >= 2 and not raw.isdigit():
        await draw(request, gate, visita)
        uf = uf.upper() if uf and uf.upper() in codes.UFS else None  # one state, not `EX`
        with contextlib.suppress(AppError):  # so does a name it refuses
            itens = (await search_cities(backends, BuscaCidade(query=raw, uf=uf, limit=10))).data
    return page(request, visita, "_opcoes_cidade.html", itens=itens)


@get("/busca/empresa/{cnpj:str}")
async def company_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    cnpj: FromPath[str],
) -> Template:
    require_account(request, visita)
    await draw(request, gate, visita)
    entrada = ConsultaCnpj(cnpj=lookup.parse_cnpj(cnpj))
    empresa = await lookup.consultar(backends, entrada)
    socios, por_telefone, por_email, parecidas = await asyncio.gather(
        quadro(backends, entrada),
        relacionadas(backends, BuscaRelacionadas(kind="telefone", value=empresa.cnpj, limit=10)),
        relacionadas(backends, BuscaRelacionadas(kind="email", value=empresa.cnpj, limit=10)),
        similares(backends, BuscaSimilares(cnpj=empresa.cnpj, limit=10)),
        return_exceptions=True,
    )
    extras: dict[str, Any] = {
        "quadro": socios, "por_telefone": por_telefone, "por_email": por_email,
        "similares": parecidas,
    }  # fmt: skip
    for name, value in list(extras.items()):  # a part without data is shown as absent
        if isinstance(value, AppError):
            extras[name] = None
        elif isinstance(value, BaseException):
            raise value
    dados = msgspec.to_builtins(empresa)
    return page(request, visita, "empresa.html", empresa=dados, registro=ficha(dados), **extras)


ROUTES = [search_page, cnae_options, city_options, company_page]
