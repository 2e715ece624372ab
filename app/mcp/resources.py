"""The agent resources: the live release's reference tables (from its catalog index, so they
always describe the release being served) and two texts (docs, examples).

Rendered documents are kept per release in each process (a few hundred KB in all), so
`resources/list` can give every resource's size without reading the catalog each time. The
texts and the UFs depend on no release: they are read, and listed with their size, while
Elasticsearch is down."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from elasticsearch import ApiError, TransportError

from app.context import Backends
from app.domain import codes
from app.domain.catalog import CnaeItem, MunicipioItem, ReferenciaItem, catalog_name
from app.domain.text import is_code, normalize
from app.errors import CATALOG_UNAVAILABLE, elastic_failure
from app.lib.elastic import body, decoder
from app.mcp.protocol import RESOURCE_NOT_FOUND, RpcError

TEXTS = Path(__file__).resolve().parent / "texts"
JSON = "application/json"
MARKDOWN = "text/markdown"
CATALOG_SIZE = 10_000
"""Entries of one kind read from the catalog (municipalities, the largest, are about 5,600)."""


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    render: Callable[[Backends], Awaitable[bytes]]
    fixed: bool = False
    """Whether the document is the same for every release (no catalog read)."""


Catalog = Callable[[str, Any], Awaitable[list[Any]]]
"""The live release's catalog entries of one kind (`tipo`, decoded as the Struct given)."""


@dataclass(frozen=True, slots=True)
class Template:
    uri_template: str
    name: str
    title: str
    description: str
    pattern: re.Pattern[str]
    render: Callable[[Catalog, str], Awaitable[bytes]]


_cnaes = decoder(CnaeItem)
_cities = decoder(MunicipioItem)
_refs = decoder(ReferenciaItem)
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {
    CnaeItem: _cnaes,
    MunicipioItem: _cities,
    ReferenciaItem: _refs,
}
_ENCODER = msgspec.json.Encoder()


async def _catalog(backends: Backends, tipo: str, kind: Any) -> list[Any]:
    response = await backends.es.search(
        index=catalog_name(backends.alias),
        query={"bool": {"filter": [{"term": {"tipo": tipo}}]}},
        sort=[{"codigo": "asc"}],
        size=CATALOG_SIZE,
        source_excludes=["busca", "tipo"],
    )
    found = _DECODERS[kind]
    return [hit.source for hit in found.decode(body(response)).hits.hits]


def _tree(items: list[CnaeItem]) -> dict[str, Any]:
    """Subclasses nested under their section, division, group and class."""
    sections: dict[str, dict[str, Any]] = {}
    for item in items:
        h = item.hierarquia
        code = h.secao.codigo if h.secao else "?"
        section = sections.setdefault(
            code,
            {"codigo": code, "descricao": h.secao.descricao if h.secao else None, "divisoes": {}},
        )
        division = section["divisoes"].setdefault(h.divisao, {"codigo": h.divisao, "grupos": {}})
        group = division["grupos"].setdefault(h.grupo, {"codigo": h.grupo, "classes": {}})
        klass = group["classes"].setdefault(h.classe, {"codigo": h.classe, "subclasses": []})
        klass["subclasses"].append(
            {"codigo": item.codigo, "codigo_formatado": item.codigo_formatado,
             "descricao": item.descricao, "empresas": item.empresas}
        )  # fmt: skip

    def listed(node: dict[str, Any]) -> dict[str, Any]:
        return {
            key: [listed(child) for child in value.values()] if isinstance(value, dict) else value
            for key, value in node.items()
        }

    return {
        "nota": (
            "Seção > divisão (2 dígitos) > grupo (3) > classe (5) > subclasse (7). A Receita "
            "publica a descrição das subclasses; as seções levam a do IBGE; `empresas` conta os "
            "estabelecimentos da base com a subclasse como atividade principal."
        ),
        "secoes": [listed(section) for section in sections.values()],
    }


async def _render_cnaes(backends: Backends) -> bytes:
    return _ENCODER.encode(_tree(await _catalog(backends, "cnae", CnaeItem)))


async def _render_cities(backends: Backends) -> bytes:
    return _ENCODER.encode({"data": await _catalog(backends, "municipio", MunicipioItem)})


def _reference(tipo: str, about: str) -> Callable[[Backends], Awaitable[bytes]]:
    async def render(backends: Backends) -> bytes:
        items = await _catalog(backends, tipo, ReferenciaItem)
        return _ENCODER.encode({"sobre": about, "data": items})

    return render


async def _render_ufs(backends: Backends) -> bytes:
    ufs = [
        {"sigla": uf, "nome": codes.UF_NOMES[uf], "nome_normalizado": normalize(codes.UF_NOMES[uf]),
         "codigo_ibge": codes.UF_IBGE[uf]}
        for uf in codes.UFS
    ]  # fmt: skip
    return _ENCODER.encode({"data": ufs, "exterior": "EX: endereços no exterior"})


def _text(name: str) -> Callable[[Backends], Awaitable[bytes]]:
    content = (TEXTS / name).read_bytes()

    async def render(backends: Backends) -> bytes:
        return content

    return render


async def _render_cities_of(catalog: Catalog, uf: str) -> bytes:
    state = uf.upper()
    if state not in codes.UFS:
        raise RpcError(RESOURCE_NOT_FOUND, f"UF desconhecida: {uf[:8]}.", data={"uf": uf[:8]})
    items = [c for c in await catalog("municipio", MunicipioItem) if c.uf == state]
    return _ENCODER.encode({"uf": state, "data": items})


async def _render_cnae(catalog: Catalog, code: str) -> bytes:
    wanted = code.upper().replace("-", "").replace("/", "").replace(".", "")
    items = await catalog("cnae", CnaeItem)
    if wanted.isalpha() and len(wanted) == 1:
        found = [i for i in items if i.hierarquia.secao and i.hierarquia.secao.codigo == wanted]
    elif is_code(wanted) and 2 <= len(wanted) <= 7:  # a division (2 digits) to a subclass (7)
        found = [i for i in items if i.codigo.startswith(wanted)]
    else:
        found = []
    if not found:
        raise RpcError(
            RESOURCE_NOT_FOUND, f"CNAE desconhecido: {code[:16]}.", data={"codigo": code[:16]}
        )
    return _ENCODER.encode({"codigo": wanted, "data": found})


RESOURCES = (
    Resource("service://cnaes", "cnaes", "Atividades CNAE",
             "Subclasses CNAE da base atual, aninhadas em seção, divisão, grupo e classe, com "
             "quantos estabelecimentos têm cada uma como atividade principal.",
             JSON, _render_cnaes),
    Resource("service://ufs", "ufs", "Unidades federativas",
             "As 27 UFs: sigla, nome, nome normalizado (sem acentos, minúsculo) e código IBGE.",
             JSON, _render_ufs, fixed=True),
    Resource("service://municipios", "municipios", "Municípios",
             "Municípios usados nos filtros de cidade, UF e CEP: código da Receita (4 dígitos), "
             "código IBGE (7), nome e UF, com quantos estabelecimentos cada um tem.",
             JSON, _render_cities),
    Resource("service://naturezas-juridicas", "naturezas-juridicas", "Naturezas jurídicas",
             "Tabela de naturezas jurídicas da Receita (código de 4 dígitos e descrição).",
             JSON, _reference("natureza", "Naturezas jurídicas da publicação atual da Receita.")),
    Resource("service://qualificacoes-socios", "qualificacoes-socios", "Qualificações de sócios",
             "Tabela de qualificações de sócios e responsáveis da Receita (código e descrição).",
             JSON, _reference("qualificacao", "Qualificações da publicação atual da Receita.")),
    Resource("service://paises", "paises", "Países",
             "Tabela de países da Receita, usada em endereços no exterior e na origem de sócios.",
             JSON, _reference("pais", "Países da publicação atual da Receita.")),
    Resource("service://docs", "docs", "Documentação para agentes",
             "Autenticação, limites, custos, esquemas e a sequência recomendada de ferramentas.",
             MARKDOWN, _text("docs.md"), fixed=True),
    Resource("service://exemplos", "exemplos", "Exemplos",
             "Chamadas de ferramentas, chamadas REST, filtros de empresas, leads e validação.",
             MARKDOWN, _text("exemplos.md"), fixed=True),
)  # fmt: skip
BY_URI = {resource.uri: resource for resource in RESOURCES}

TEMPLATES = (
    Template("service://municipios/{uf}", "municipios-da-uf", "Municípios de uma UF",
             "Os municípios de uma UF (sigla), com os dois códigos e o nome.",
             re.compile(r"service://municipios/([A-Za-z]{2})"), _render_cities_of),
    Template("service://cnaes/{codigo}", "cnae", "Uma atividade CNAE",
             "As subclasses sob um código CNAE (2 a 7 dígitos, pontuação opcional) ou uma seção "
             "(letra), com hierarquia e contagem.",
             re.compile(r"service://cnaes/([A-Za-z0-9./\-]{1,12})"), _render_cnae),
)  # fmt: skip


class Rendered:
    """Rendered resources of the release being served, and the catalog lists the templates
    filter (so reading `service://municipios/SP` costs no search), per process."""

    def __init__(self) -> None:
        self._release: str | None = None
        self._bodies: dict[str, bytes] = {}
        self._catalogs: dict[str, list[Any]] = {}
        self._fixed: dict[str, bytes] = {}

    async def _current(self, backends: Backends) -> None:
        names = msgspec.json.decode(
            body(await backends.es.indices.get_alias(name=catalog_name(backends.alias)))
        )
        release = ",".join(sorted(names))
        if release != self._release:
            self._release, self._bodies, self._catalogs = release, {}, {}

    async def get(self, backends: Backends, resource: Resource) -> bytes:
        """The document of `resource`; 503 naming the catalog when it cannot be read."""
        if resource.fixed:
            found = self._fixed.get(resource.uri)
            if found is None:
                found = self._fixed[resource.uri] = await resource.render(backends)
            return found
        try:
            await self._current(backends)
            found = self._bodies.get(resource.uri)
            if found is None:
                found = self._bodies[resource.uri] = await resource.render(backends)
        except (ApiError, TransportError) as error:
            raise elastic_failure(error, CATALOG_UNAVAILABLE) from error
        return found

    async def read(self, backends: Backends, template: Template, value: str) -> bytes:
        """The document of `template` for `value`, from the release's cached catalog."""

        async def catalog(tipo: str, kind: Any) -> list[Any]:
            found = self._catalogs.get(tipo)
            if found is None:
                found = self._catalogs[tipo] = await _catalog(backends, tipo, kind)
            return found

        try:
            await self._current(backends)
            return await template.render(catalog, value)
        except (ApiError, TransportError) as error:
            raise elastic_failure(error, CATALOG_UNAVAILABLE) from error


def read_template(uri: str) -> tuple[Template, str] | None:
    for template in TEMPLATES:
        match = template.pattern.fullmatch(uri)
        if match:
            return template, match.group(1)
    return None


def listed(resource: Resource, size: int | None) -> dict[str, Any]:
    entry = {
        "uri": resource.uri, "name": resource.name, "title": resource.title,
        "description": resource.description, "mimeType": resource.mime_type,
    }  # fmt: skip
    return entry if size is None else {**entry, "size": size}


def listed_template(template: Template) -> dict[str, Any]:
    return {
        "uriTemplate": template.uri_template, "name": template.name, "title": template.title,
        "description": template.description, "mimeType": JSON,
    }  # fmt: skip


def contents(uri: str, mime_type: str, content: bytes) -> dict[str, Any]:
    return {"contents": [{"uri": uri, "mimeType": mime_type, "text": content.decode()}]}
