"""The account's monitors: list, create (the signing secret shown once), pause, resume,
delete after a confirmation, send a test webhook, and each monitor's delivery log."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Template
from litestar.response.base import Response

from app.auth.gate import Gate
from app.context import Backends
from app.errors import AppError, BadRequestError
from app.lib.body import convert
from app.monitoring import service
from app.monitoring.service import (
    EVENTS,
    AlteraMonitor,
    FiltroTentativas,
    ListaMonitores,
    NovoMonitor,
)
from app.web.render import action, page, redirect, text, texts
from app.web.visit import Visita, require_account

BASE = "/painel/monitores"


async def _list_page(
    request: Request[Any, Any, Any], visita: Visita, backends: Backends, status: int = 200,
    failure: Exception | None = None, **context: Any,
) -> Template:  # fmt: skip
    perfil = require_account(request, visita)
    cursor = request.query_params.get("cursor")
    monitores = await service.listing(backends, perfil.id, ListaMonitores(cursor=cursor))
    return page(request, visita, "monitores.html", status=status, failure=failure,
                monitores=monitores,
                eventos=EVENTS, **context)  # fmt: skip


@get(BASE, opt={"query": ("cursor", "cnpj")})
async def monitors_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Template:
    """The list, and the form (its CNPJ filled from a company's page)."""
    cnpj = request.query_params.get("cnpj", "")[:20]
    return await _list_page(request, visita, backends, valores={"cnpj": cnpj})


@post(BASE, status_code=200)
async def create_monitor(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template:
    perfil, form = await action(request, visita, backends, gate, lists=("eventos",))
    eventos = [e for e in texts(form, "eventos") if e]
    try:
        if not eventos:  # the boxes come checked: none is a choice, not "both"
            raise BadRequestError("Escolha ao menos um evento.", details={"campo": "eventos"})
        entrada = convert(
            {"cnpj": text(form, "cnpj"), "webhook_url": text(form, "webhook_url"),
             "eventos": eventos, "descricao": text(form, "descricao")},
            NovoMonitor,
        )  # fmt: skip
        criado = await service.create(backends, perfil.id, entrada)
    except AppError as error:
        return await _list_page(request, visita, backends, status=error.status, failure=error,
                                erro=_said(error), valores=form)  # fmt: skip
    return page(request, visita, "monitor_criado.html", criado=criado)


def _said(error: AppError) -> str:
    """The refusal as the form's reader takes it: a malformed webhook address says what one
    looks like; the rest in the service's words."""
    if error.status == 400 and (error.details or {}).get("campo") == "webhook_url":
        return f"{error.message} Use uma URL https:// completa."
    return error.message


@get(f"{BASE}/{{monitor_id:int}}", opt={"query": ("cursor",)})
async def monitor_page(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    monitor_id: FromPath[int],
) -> Template:
    perfil = require_account(request, visita)
    monitor = await service.get(backends, perfil.id, monitor_id)
    filtro = FiltroTentativas(monitor=monitor.id, cursor=request.query_params.get("cursor"))
    tentativas = await service.attempts(backends, perfil.id, filtro)
    return page(request, visita, "monitor.html", monitor=monitor, tentativas=tentativas)


@post(f"{BASE}/{{monitor_id:int}}/estado", status_code=303)
async def change_state(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    monitor_id: FromPath[int],
) -> Response[Any]:
    perfil, form = await action(request, visita, backends, gate)
    mudanca = convert({"estado": text(form, "estado")}, AlteraMonitor)  # ativo or pausado
    await service.update(backends, perfil.id, monitor_id, mudanca)
    return redirect(visita, f"{BASE}/{monitor_id}")


@post(f"{BASE}/{{monitor_id:int}}/teste", status_code=200)
async def send_test(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    monitor_id: FromPath[int],
) -> Template:
    perfil, _ = await action(request, visita, backends, gate)
    teste = await service.test(backends, perfil.id, monitor_id)
    monitor = await service.get(backends, perfil.id, monitor_id)
    tentativas = await service.attempts(backends, perfil.id, FiltroTentativas(monitor=monitor_id))
    return page(request, visita, "monitor.html", monitor=monitor, tentativas=tentativas,
                teste=teste)  # fmt: skip


@get(f"{BASE}/{{monitor_id:int}}/excluir")
async def confirm_delete(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    monitor_id: FromPath[int],
) -> Template:
    perfil = require_account(request, visita)
    monitor = await service.get(backends, perfil.id, monitor_id)
    return page(request, visita, "excluir_monitor.html", monitor=monitor)


@post(f"{BASE}/{{monitor_id:int}}/excluir", status_code=303)
async def delete_monitor(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
    monitor_id: FromPath[int],
) -> Response[Any]:
    perfil, _ = await action(request, visita, backends, gate)
    await service.delete(backends, perfil.id, monitor_id)
    return redirect(visita, BASE)


ROUTES = [
    monitors_page,
    create_monitor,
    monitor_page,
    change_state,
    send_test,
    confirm_delete,
    delete_monitor,
]
