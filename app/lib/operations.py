"""What an operation is worth and what it is called, declared once beside its service function.

Every face meters an operation the same way: the REST handler or the agent tool names the
operation on the request's access state (`app.auth.middleware.RequestAccess`), which draws its
units from the caller's window and writes the audit row and the usage counter under that name
and cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from litestar import Request

from app.auth.middleware import RequestAccess, access


class Custo(StrEnum):
    """The usage counters, after the spec's cost column."""

    CONSULTA = "consultas"
    BUSCA = "buscas"
    ANALISE = "analises"
    EXPORTACAO = "exportacoes"


@dataclass(frozen=True, slots=True)
class Operacao:
    nome: str
    """The name the audit log and the usage show (the tool's name for agent tools)."""
    custo: Custo | None
    """The usage counter it adds to; None for calls that count for nothing."""


async def charge(state: RequestAccess | None, operacao: Operacao, units: int = 1) -> None:
    """Names the operation on the request and makes the request weigh `units` in its window
    (403 or 429 when they do not fit)."""
    if state is None:
        return
    state.operacao = operacao.nome
    state.custo = operacao.custo.value if operacao.custo else None
    state.audited = True
    await state.charge(units)


async def meter(request: Request[Any, Any, Any], operacao: Operacao, units: int = 1) -> None:
    """`charge` for a REST handler's request."""
    await charge(access(request), operacao, units)
