"""`completion/complete`: values for prompt and resource-template arguments (UF, CNAE,
município, escopo), from the live release's catalog. An argument with nothing to offer, or a
reference this server does not know, gets an empty list rather than an error, so a client can
ask freely."""

from __future__ import annotations

from typing import Any

from app.catalog.service import BuscaCidade, BuscaCnae, search_cities, search_cnaes
from app.context import Backends
from app.domain import codes
from app.domain.text import normalize
from app.errors import BadRequestError
from app.mcp import prompts
from app.mcp.protocol import INVALID_PARAMS, RpcError

MAX_VALUES = 100
MAX_VALUE = 100
SEARCHED = 20
"""Values a catalog search offers (its best ones); `total` says how many match in all."""
_UF_NAMES = {"uf"}
_CNAE_NAMES = {"cnae", "codigo", "segmento"}
_CITY_NAMES = {"cidade", "municipio"}
_SCOPES = ("municipio", "uf", "brasil")
_SECTIONS = frozenset("ABCDEFGHIJKLMNOPQRSTU")
"""The sections of CNAE 2.3, the letters `service://cnaes/{codigo}` reads."""


def _known_arguments(ref: dict[str, Any]) -> set[str]:
    kind = ref.get("type")
    if kind == "ref/prompt":
        prompt = prompts.BY_NAME.get(str(ref.get("name")))
        return {a.name for a in prompt.arguments} if prompt else set()
    if kind == "ref/resource":
        uri = str(ref.get("uri"))
        return (
            {"uf"}
            if uri.startswith("service://municipios/")
            else ({"codigo"} if uri.startswith("service://cnaes/") else set())
        )
    raise RpcError(INVALID_PARAMS, "ref.type deve ser ref/prompt ou ref/resource.")


async def _values(
    backends: Backends, name: str, value: str, context: dict[str, Any]
) -> tuple[list[str], int]:
    """The values offered for argument `name` and how many there are in all (a catalog search
    offers its best 20 of `total`)."""
    if name in _UF_NAMES:
        typed = normalize(value)
        if value.strip() and not typed:  # typed something, but nothing a UF could start with
            return [], 0
        ufs = [
            uf for uf in codes.UFS
            if uf.lower().startswith(typed) or normalize(codes.UF_NOMES[uf]).startswith(typed)
        ]  # fmt: skip
        return ufs, len(ufs)
    if name == "escopo":
        scopes = [scope for scope in _SCOPES if scope.startswith(value.lower())]
        return scopes, len(scopes)
    if not value.strip():
        return [], 0
    if name == "codigo" and len(value.strip()) == 1 and value.strip().isalpha():
        section = value.strip().upper()  # a section of the resource template
        return ([section], 1) if section in _SECTIONS else ([], 0)
    if name in _CNAE_NAMES:
        found = await search_cnaes(backends, BuscaCnae(query=value, limit=SEARCHED))
        if name == "segmento":
            return [item.descricao for item in found.data if item.descricao], found.total
        return [item.codigo_formatado for item in found.data], found.total
    if name in _CITY_NAMES:
        uf = str(context.get("uf", "")).upper() or None
        cities = await search_cities(
            backends, BuscaCidade(query=value, uf=uf if uf in codes.UFS else None, limit=SEARCHED)
        )
        return [city.nome for city in cities.data], cities.total
    return [], 0


async def complete(backends: Backends, params: dict[str, Any]) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise RpcError(INVALID_PARAMS, "Informe ref e argument {name, value}.")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str) or len(value) > MAX_VALUE:
        raise RpcError(INVALID_PARAMS, f"argument: name e value (até {MAX_VALUE} caracteres).")
    context = params.get("context") or {}
    arguments = context.get("arguments") if isinstance(context, dict) else None
    values: list[str] = []
    total = 0
    if name in _known_arguments(ref):
        given = arguments if isinstance(arguments, dict) else {}
        try:
            values, total = await _values(backends, name, value, given)
        except BadRequestError:  # text the catalog cannot search (no letters...): no values
            values, total = [], 0
    shown = values[:MAX_VALUES]
    total = max(total, len(values))
    return {"completion": {"values": shown, "total": total, "hasMore": total > len(shown)}}
