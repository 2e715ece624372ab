"""Companies similar to a given one: the same activity (CNAE class), active, in the chosen
scope (its município, its UF or all of Brazil), ranked by how much more they share (the same
subclass, size band, capital range, município), with the reasons for each match.

The reasons come from Elasticsearch itself: every ranking clause is named (`_name`) and each
hit reports the clauses it matched."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

import msgspec

from app.context import Backends
from app.domain.record import Empresa
from app.domain.summary import SOURCE_FIELDS, Fonte, Resumo, resumo, summary_of
from app.errors import BadRequestError
from app.lib.elastic import body, decoder
from app.lib.operations import Custo, Operacao
from app.lookup.service import CnpjTexto, ConsultaCnpj, consultar

ENCONTRAR_SIMILARES = Operacao("encontrar_empresas_similares", Custo.BUSCA)
Escopo = Literal["municipio", "uf", "brasil"]
CAPITAL_FACTOR = 5
"""Capital within this factor of the company's (either way) counts as the same range."""
ATIVA = "02"


class BuscaSimilares(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Empresas parecidas com a de um CNPJ."""

    cnpj: CnpjTexto
    escopo: Annotated[
        Escopo,
        msgspec.Meta(
            description="Onde procurar: no município da empresa, na UF dela, ou no Brasil."
        ),
    ] = "uf"
    limit: Annotated[int, msgspec.Meta(ge=1, le=50, description="Quantas empresas.")] = 10


class EmpresaSimilar(Resumo, kw_only=True):
    motivos: list[str]
    """Why it is similar, one reason per shared trait."""
    score: float


class Similares(msgspec.Struct, kw_only=True):
    origem: Resumo
    escopo: str
    data: list[EmpresaSimilar]
    total: int
    """Active companies of the same CNAE class in the scope (`data` holds the best `limit`)."""


_decoder = decoder(Fonte)


def _named(name: str, clause: dict[str, Any], boost: float) -> dict[str, Any]:
    return {"constant_score": {"filter": clause, "boost": boost, "_name": name}}


def _reasons(company: Empresa) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The ranking clauses for `company` and the reason each one stands for."""
    clauses: list[dict[str, Any]] = []
    reasons: dict[str, str] = {}
    cnae = company.cnae_principal
    if cnae:
        clauses.append(_named("subclasse", {"term": {"cnae_principal.codigo": cnae.codigo}}, 3))
        reasons["subclasse"] = f"mesma atividade principal: {cnae.codigo} {cnae.descricao or ''}"
    if company.porte and company.porte.codigo != "00":
        clauses.append(_named("porte", {"term": {"porte.codigo": company.porte.codigo}}, 2))
        reasons["porte"] = f"mesmo porte: {company.porte.descricao or company.porte.codigo}"
    capital = company.capital_social
    if capital and capital > 0:
        low, high = capital / CAPITAL_FACTOR, capital * CAPITAL_FACTOR
        window = {"range": {"capital_social": {"gte": float(low), "lte": float(high)}}}
        clauses.append(_named("capital", window, 1))
        reasons["capital"] = f"capital social na mesma faixa (R$ {_money(low)} a R$ {_money(high)})"
    municipio = company.endereco.municipio
    if municipio:
        clauses.append(
            _named("municipio", {"term": {"endereco.municipio.codigo": municipio.codigo}}, 1)
        )
        reasons["municipio"] = f"mesmo município: {municipio.nome or municipio.codigo}"
    if company.endereco.uf:
        clauses.append(_named("uf", {"term": {"endereco.uf": company.endereco.uf}}, 0.5))
        reasons["uf"] = f"mesma UF: {company.endereco.uf}"
    return clauses, reasons


def _money(value: Decimal) -> str:
    return f"{value:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")


def _scope(company: Empresa, escopo: str) -> list[dict[str, Any]]:
    municipio = company.endereco.municipio
    if escopo == "municipio":
        if municipio is None:
            raise BadRequestError("A empresa não tem município: use escopo uf ou brasil.")
        return [{"term": {"endereco.municipio.codigo": municipio.codigo}}]
    if escopo == "uf":
        if not company.endereco.uf:
            raise BadRequestError("A empresa não tem UF: use escopo brasil.")
        return [{"term": {"endereco.uf": company.endereco.uf}}]
    return []


async def similares(backends: Backends, entrada: BuscaSimilares) -> Similares:
    """Active companies of the same CNAE class as `cnpj` in the scope, most alike first."""
    company = await consultar(backends, ConsultaCnpj(cnpj=entrada.cnpj))
    cnae = company.cnae_principal
    if cnae is None:
        raise BadRequestError("A empresa não tem atividade principal (CNAE) para comparar.")
    clauses, reasons = _reasons(company)
    query = {
        "bool": {
            "filter": [
                {"term": {"cnae_principal.grupo.classe": cnae.grupo.classe}},
                {"term": {"situacao_cadastral.codigo": ATIVA}},
                *_scope(company, entrada.escopo),
            ],
            "must_not": [{"term": {"cnpj_basico": company.cnpj_basico}}],
            "should": clauses,
        }
    }
    response = await backends.es.search(
        index=backends.alias,
        query=query,
        sort=[{"_score": "desc"}, {"cnpj": "asc"}],
        size=entrada.limit,
        source_includes=SOURCE_FIELDS,
        track_total_hits=True,
        track_scores=True,
    )
    found = _decoder.decode(body(response))
    shared_class = f"mesma classe CNAE: {cnae.grupo.classe}"
    return Similares(
        origem=summary_of(company),
        escopo=entrada.escopo,
        data=[
            EmpresaSimilar(
                **resumo(hit.source),
                motivos=[shared_class, "ativa"]
                + [reasons[name] for name in reasons if name in hit.matched_queries],
                score=round(hit.score or 0.0, 4),
            )
            for hit in found.hits.hits
        ],
        total=found.hits.total.value,
    )
