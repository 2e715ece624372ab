"""`GET /v1/sintegra/{cnpj}` (alias `/sintegra/{cnpj}`): state registrations of a CNPJ."""

from __future__ import annotations

import msgspec
from elasticsearch import AsyncElasticsearch
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, FromQuery

from app.domain import cnpj as cnpj_rules
from app.domain.codes import UFS
from app.domain.record import InscricaoEstadual
from app.errors import BadRequestError, NotFoundError
from app.lib.responses import json_response
from app.lookup.routes import ERRORS
from app.lookup.service import get_company, parse_cnpj
from app.settings import Settings


class Sintegra(msgspec.Struct, frozen=True, kw_only=True):
    """The state registrations of one establishment."""

    cnpj: str
    razao_social: str | None
    uf: str | None
    """The UF of the establishment's address."""
    habilitada: bool
    """True when at least one registration is HABILITADO."""
    inscricoes_estaduais: list[InscricaoEstadual]


def parse_uf(raw: str | None) -> str | None:
    if raw is None:
        return None
    uf = raw.strip().upper()
    if uf not in UFS:
        raise BadRequestError(
            "UF inválida: use uma das 27 siglas (AC ... TO).", details={"uf": raw[:16]}
        )
    return uf


@get(
    ["/v1/sintegra/{cnpj:path}", "/sintegra/{cnpj:path}"],
    summary="State registrations (Sintegra) of a CNPJ",
    description=(
        "Inscrições estaduais of the establishment, one per UF where it is registered: number "
        "(digits and as the state prints it), kind, situação, whether it is habilitada, dates "
        "and tax regime. Every number was checked against its state's check-digit rule when it "
        "was loaded. `uf` keeps one state. 404 when there is none."
    ),
    responses={
        200: ResponseSpec(
            data_container=Sintegra, generate_examples=False, description="The registrations"
        ),
        **ERRORS,
    },
    tags=["CNPJ"],
    opt={"query": ("uf",), "cost": "consultas"},
)
async def state_registrations(
    cnpj: FromPath[str],
    es: NamedDependency[AsyncElasticsearch],
    settings: NamedDependency[Settings],
    uf: FromQuery[str | None] = None,
) -> Response[bytes]:
    number = parse_cnpj(cnpj.strip("/"))
    state = parse_uf(uf)
    company = await get_company(es, settings.index_alias, number)
    registrations = [
        item for item in company.inscricoes_estaduais if state is None or item.uf == state
    ]
    if not registrations:
        where = f" em {state}" if state else ""
        raise NotFoundError(
            f"Nenhuma inscrição estadual{where} para o CNPJ {cnpj_rules.format_cnpj(number)}."
        )
    return json_response(
        Sintegra(
            cnpj=company.cnpj,
            razao_social=company.razao_social,
            uf=company.endereco.uf,
            habilitada=any(item.habilitada for item in registrations),
            inscricoes_estaduais=registrations,
        )
    )
