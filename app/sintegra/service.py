"""State registrations (Sintegra) of an establishment, from its record."""

from __future__ import annotations

from typing import Annotated

import msgspec

from app.context import Backends
from app.domain import cnpj as cnpj_rules
from app.domain.codes import UFS
from app.domain.record import InscricaoEstadual
from app.errors import NotFoundError
from app.lib.operations import Custo, Operacao
from app.lookup.service import CnpjTexto, ConsultaCnpj, consultar
from app.search.filters import estado

CONSULTAR_SINTEGRA = Operacao("consultar_sintegra", Custo.CONSULTA)


class ConsultaSintegra(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    cnpj: CnpjTexto
    uf: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=8,
                description="Só a inscrição desta UF.",
                extra_json_schema={"enum": UFS},  # documented only: `filters.estado` reads it
            ),
        ]
        | None
    ) = None


class Sintegra(msgspec.Struct, frozen=True, kw_only=True):
    """The state registrations of one establishment."""

    cnpj: str
    razao_social: str | None
    uf: str | None
    """The UF of the establishment's address."""
    habilitada: bool
    """True when at least one registration is HABILITADO."""
    inscricoes_estaduais: list[InscricaoEstadual]


async def inscricoes(backends: Backends, entrada: ConsultaSintegra) -> Sintegra:
    """The establishment's registrations (one UF with `uf`); 404 when there is none."""
    state = estado(entrada.uf)
    company = await consultar(backends, ConsultaCnpj(cnpj=entrada.cnpj))
    registrations = [
        item for item in company.inscricoes_estaduais if state is None or item.uf == state
    ]
    if not registrations:
        where = f" em {state}" if state else ""
        raise NotFoundError(
            f"Nenhuma inscrição estadual{where} para o CNPJ {cnpj_rules.format_cnpj(company.cnpj)}."
        )
    return Sintegra(
        cnpj=company.cnpj,
        razao_social=company.razao_social,
        uf=company.endereco.uf,
        habilitada=any(item.habilitada for item in registrations),
        inscricoes_estaduais=registrations,
    )
