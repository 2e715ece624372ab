"""`/v1/me/monitoramentos`: monitors of CNPJs with signed webhooks, their delivery log, and
`/v1/admin/monitoramentos/run`. Unprefixed aliases as in the spec."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from app.auth.guards import identity, require_admin
from app.context import Backends
from app.lib.body import from_query
from app.lib.documented import CONFLICT, NOT_FOUND
from app.lib.operations import meter
from app.monitoring import service
from app.monitoring.repository import Monitor
from app.monitoring.service import (
    AlteraMonitor,
    FiltroTentativas,
    ListaMonitores,
    MonitorCriado,
    NovoMonitor,
    NovoSegredo,
    PaginaMonitores,
    PaginaTentativas,
    Rodada,
    Teste,
    Verificacao,
)

BASE = ["/v1/me/monitoramentos", "/me/monitoramentos"]
TAGS = ["Monitoramento"]


def _paths(suffix: str) -> list[str]:
    return [path + suffix for path in BASE]


@post(
    BASE,
    summary="Monitor a CNPJ",
    description=(
        "Body `{cnpj, webhook_url, eventos?, descricao?}`. 201 with the monitor and its signing "
        "secret (`segredo`, shown once). 404 for an unknown CNPJ; 400 for a URL that is not "
        "https (or http when allowed) or that resolves to a private, loopback, link-local or "
        "reserved address; 409 when the account already watches the CNPJ at that URL or has "
        "reached its plan's number of monitors."
    ),
    responses={404: NOT_FOUND, 409: CONFLICT},
    tags=TAGS,
)
async def create_monitor(
    request: Request[Any, Any, Any],
    data: JSONBody[NovoMonitor],
    backends: NamedDependency[Backends],
) -> MonitorCriado:
    await meter(request, service.CRIAR)
    return await service.create(backends, identity(request).conta_id, data)


@get(
    BASE,
    summary="My monitors",
    description="Cursor pages (`limit` 50, at most 200); `estado` filters `ativo` or `pausado`.",
    opt={"query": tuple(ListaMonitores.__struct_fields__), "query_struct": ListaMonitores},
    tags=TAGS,
)
async def list_monitors(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> PaginaMonitores:
    entrada = from_query(request, ListaMonitores)
    return await service.listing(backends, identity(request).conta_id, entrada)


@get(
    _paths("/logs"),
    summary="Delivery log",
    description=(
        "Every delivery attempt of the account's events, newest first: event, attempt number, "
        "HTTP status, duration, error and the next retry. Filters `monitor`, `evento`, `ok`."
    ),
    opt={"query": tuple(FiltroTentativas.__struct_fields__), "query_struct": FiltroTentativas},
    tags=TAGS,
)
async def delivery_log(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> PaginaTentativas:
    entrada = from_query(request, FiltroTentativas)
    return await service.attempts(backends, identity(request).conta_id, entrada)


@post(
    _paths("/logs/{entrega_id:uuid}/reenviar"),
    summary="Deliver an event again",
    description=(
        "A finished event (delivered, failed, cancelled) delivered again: the same "
        "`webhook-id`, a fresh round of retries. 202 with the event, `pendente` again, and the "
        "attempts made before; 409 while the event is still on its way; "
        "400 while the monitor is paused."
    ),
    status_code=202,
    responses={409: CONFLICT},
    tags=TAGS,
)
async def resend_event(
    request: Request[Any, Any, Any],
    entrega_id: FromPath[uuid.UUID],
    backends: NamedDependency[Backends],
) -> service.Reenvio:
    return await service.resend(backends, identity(request).conta_id, entrega_id)


@get(_paths("/{monitor_id:int}"), summary="One monitor", tags=TAGS)
async def get_monitor(
    request: Request[Any, Any, Any], monitor_id: FromPath[int], backends: NamedDependency[Backends]
) -> Monitor:
    return await service.get(backends, identity(request).conta_id, monitor_id)


@patch(
    _paths("/{monitor_id:int}"),
    summary="Change, pause or resume a monitor",
    description=(
        "Body with any of `webhook_url`, `eventos`, `descricao`, `estado` (`ativo`, `pausado`)."
    ),
    tags=TAGS,
)
async def update_monitor(
    request: Request[Any, Any, Any],
    monitor_id: FromPath[int],
    data: JSONBody[AlteraMonitor],
    backends: NamedDependency[Backends],
) -> Monitor:
    return await service.update(backends, identity(request).conta_id, monitor_id, data)


@delete(_paths("/{monitor_id:int}"), summary="Stop monitoring", tags=TAGS)
async def delete_monitor(
    request: Request[Any, Any, Any], monitor_id: FromPath[int], backends: NamedDependency[Backends]
) -> None:
    await service.delete(backends, identity(request).conta_id, monitor_id)


@post(
    _paths("/{monitor_id:int}/segredo"),
    summary="Rotate the signing secret",
    description="A new secret, shown this once; the old one stops signing at once.",
    status_code=200,
    tags=TAGS,
)
async def rotate_secret(
    request: Request[Any, Any, Any], monitor_id: FromPath[int], backends: NamedDependency[Backends]
) -> NovoSegredo:
    return await service.rotate(backends, identity(request).conta_id, monitor_id)


@post(
    _paths("/{monitor_id:int}/testar"),
    summary="Send a test webhook",
    description=(
        "Sends a signed `monitor.teste` event now and answers with the attempt. 429, with "
        f"`Retry-After`, while the account has {service.TESTS_AT_ONCE} tests in flight."
    ),
    status_code=200,
    tags=TAGS,
)
async def test_monitor(
    request: Request[Any, Any, Any], monitor_id: FromPath[int], backends: NamedDependency[Backends]
) -> Teste:
    await meter(request, service.TESTAR)
    return await service.test(backends, identity(request).conta_id, monitor_id)


@post(
    _paths("/{monitor_id:int}/verificar"),
    summary="Check a monitor now",
    description=(
        "Compares the monitor's record with the live release now: the changed fields, and the "
        "event raised (`entrega_id`) when something changed. 409 while the monitor is paused "
        "(what changed meanwhile is reported once it is resumed)."
    ),
    status_code=200,
    responses={409: CONFLICT},
    tags=TAGS,
)
async def verify_monitor(
    request: Request[Any, Any, Any], monitor_id: FromPath[int], backends: NamedDependency[Backends]
) -> Verificacao:
    await meter(request, service.VERIFICAR)
    return await service.verify(backends, identity(request).conta_id, monitor_id)


@post(
    ["/v1/admin/monitoramentos/run", "/admin/monitoramentos/run"],
    summary="Run the monitoring check now (administrator)",
    description="Checks every active monitor against the live release and answers with counts.",
    status_code=200,
    guards=[require_admin],
    tags=["Admin"],
)
async def run_monitoring(backends: NamedDependency[Backends]) -> Rodada:
    return await service.check_release(backends)


ROUTES = [
    create_monitor,
    list_monitors,
    delivery_log,
    resend_event,
    get_monitor,
    update_monitor,
    delete_monitor,
    rotate_secret,
    test_monitor,
    verify_monitor,
    run_monitoring,
]
