"""Monitors: watch a CNPJ and be told, by a signed webhook, when its record changes.

A monitor keeps the record it last saw (its baseline). Checking it against a release compares
the record there with the baseline: a change raises `empresa.alterada` (with the changed fields),
a record gone from the release `empresa.removida`; the event is stored and its delivery job
deferred in the same transaction that moves the baseline, so a check never loses an event and
never raises the same one twice. Deliveries run on the worker (`app.worker`), which retries
them; `entregar` is one attempt, logged.
"""

from __future__ import annotations

import logging
import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import msgspec
import psycopg
from psycopg import AsyncConnection

from app.accounts.repository import lock_account
from app.context import Backends
from app.domain.record import Empresa
from app.errors import BadRequestError, ConflictError, NotFoundError, TooManyRequestsError
from app.lib import paging
from app.lib.operations import Operacao
from app.lib.wording import free_text
from app.lookup.service import CnpjTexto, find_companies, get_company, parse_cnpj
from app.monitoring import releases, repository
from app.monitoring.diff import Mudanca, changes
from app.monitoring.repository import Baseline, Monitor, NovaEntrega, Tentativa, Vigia
from app.webhooks import delivery, signing
from app.webhooks.addresses import check_url, networks_of

log = logging.getLogger(__name__)

NOT_SENT_PAUSED = "não enviada: o monitoramento foi pausado"
"""`erro` of the log row of an event cancelled because its monitor was paused."""

DELIVER = "entregar_webhook"
"""The worker's task that delivers an event (deferred by name: this module defines no task)."""
EVENTS: tuple[Literal["empresa.alterada", "empresa.removida"], ...] = (
    "empresa.alterada",
    "empresa.removida",
)
TEST_EVENT = "monitor.teste"
TESTS_AT_ONCE = 2
"""Test events of one account in flight at once. A test is sent at once, outside its origin's
share of the process's connections, and its caller waits for the endpoint's answer: without a
bound, one account's slow endpoints could hold the connections every other account's tests
(and the API's requests) need. A third test while two are in flight is a 429."""
BATCH = 500
ANALYZE_AFTER = 2000
"""Events deferred by a check between two refreshes of the queue's statistics."""
DEFAULT_LIMIT = 50
MAX_LIMIT = 200

CRIAR = Operacao("criar_monitoramento", None)
VERIFICAR = Operacao("verificar_monitoramento", None)
TESTAR = Operacao("testar_monitoramento", None)

Evento = Literal["empresa.alterada", "empresa.removida"]
TipoEvento = Literal[
    "empresa.alterada", "empresa.removida", "monitor.teste", "lote.concluido", "lote.falhou"
]
"""Every event the delivery log holds (monitors' and lead lots')."""
Url = Annotated[
    str,
    msgspec.Meta(
        min_length=8,
        max_length=2048,
        description="URL https que recebe os eventos (POST assinado, Standard Webhooks).",
        examples=["https://exemplo.com.br/webhooks/cnpj"],
        # documented only: the URL is checked (https, a public address) when it is saved
        extra_json_schema={"format": "uri", "pattern": "^https://"},
    ),
]
Descricao = Annotated[str, msgspec.Meta(max_length=200, pattern=free_text(required=False))]


class NovoMonitor(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    cnpj: CnpjTexto
    webhook_url: Url
    eventos: Annotated[list[Evento], msgspec.Meta(min_length=1, max_length=2)] = msgspec.field(
        default_factory=lambda: list(EVENTS)
    )
    descricao: Descricao = ""


class AlteraMonitor(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    webhook_url: Url | None = None
    eventos: Annotated[list[Evento], msgspec.Meta(min_length=1, max_length=2)] | None = None
    descricao: Descricao | None = None
    estado: Literal["ativo", "pausado"] | None = None


class MonitorCriado(msgspec.Struct, kw_only=True):
    monitor: Monitor
    segredo: str
    """The signing secret (`whsec_...`), shown this once: verify each webhook with it."""


class NovoSegredo(msgspec.Struct, kw_only=True):
    segredo: str


class ListaMonitores(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    estado: Literal["ativo", "pausado"] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT
    cursor: paging.CursorTexto | None = None


class PaginaMonitores(msgspec.Struct, kw_only=True):
    data: list[Monitor]
    total: int
    next_cursor: str | None


class Verificacao(msgspec.Struct, kw_only=True):
    monitor_id: int
    cnpj: str
    indice: str | None
    """The release index the record was read from."""
    alterado: bool
    removido: bool
    mudancas: list[Mudanca]
    entrega_id: str | None
    """The event raised, when one was (its `webhook-id`)."""


class Rodada(msgspec.Struct, kw_only=True):
    indice: str | None
    verificados: int = 0
    alterados: int = 0
    removidos: int = 0
    eventos: int = 0


class Teste(msgspec.Struct, kw_only=True):
    entrega_id: str
    ok: bool
    status_http: int | None
    duracao_ms: int
    erro: str | None


class Reenvio(msgspec.Struct, kw_only=True):
    """An event sent again: on its way once more, its next attempts in the delivery log."""

    entrega_id: str
    monitor_id: int | None
    evento: str
    estado: str
    """`pendente`: the worker delivers it with a fresh round of retries."""
    tentativas_anteriores: int
    """Attempts made before this round; the log numbers the next one after them."""


MonitorId = Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
"""A monitor's id: a PostgreSQL bigint."""


class FiltroTentativas(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    monitor: MonitorId | None = None
    evento: TipoEvento | None = None
    ok: bool | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT
    cursor: paging.CursorTexto | None = None


class PaginaTentativas(msgspec.Struct, kw_only=True):
    data: list[Tentativa]
    total: int
    """Attempts that pass the filters, on every page."""
    next_cursor: str | None


class Later(Exception):  # noqa: N818 - a signal to the queue, not an error
    """A delivery to run again at `at` (the queue's retry strategy reads it)."""

    def __init__(self, at: datetime, reason: str) -> None:
        super().__init__(reason)
        self.at = at


class RetryLater(Later):
    """An attempt failed: the next one at `at`."""


class Postponed(Later):
    """Not attempted (the endpoint's origin is busy or resting): try at `at`."""


# ------------------------------------------------------------------ monitors


def _snapshot(company: Empresa) -> dict[str, Any]:
    snapshot: dict[str, Any] = msgspec.to_builtins(company)
    return snapshot


async def _release_index(backends: Backends) -> str | None:
    names = msgspec.json.decode((await backends.es.indices.get_alias(name=backends.alias)).body)
    return sorted(names)[-1] if names else None


ALREADY_WATCHED = "Este CNPJ já é monitorado nesta URL pela conta."


async def create(backends: Backends, conta_id: int, entrada: NovoMonitor) -> MonitorCriado:
    """A new monitor of a CNPJ (404 unknown, 400 for a URL webhooks may not reach, 409 when
    the account already watches it at that URL or has reached its plan's number)."""
    settings = backends.settings
    number = parse_cnpj(entrada.cnpj)
    url = await check_url(
        entrada.webhook_url,
        networks_of(settings.webhook_allow_networks),
        settings.webhook_allow_http,
    )
    company = await get_company(backends.es, backends.alias, number)
    index = await _release_index(backends)
    salt = signing.new_salt()
    async with backends.pool.connection() as conn, conn.transaction():
        have, allowed = await repository.plan_allowance(conn, conta_id)
        if have >= allowed:
            raise ConflictError(
                f"O plano da conta permite {allowed} monitoramentos; remova um antes de criar "
                "outro.",
                details={"maximo": allowed},
            )
        vigia = await repository.insert_monitor(
            conn,
            conta_id=conta_id,
            cnpj=number,
            webhook_url=url,
            eventos=sorted(set(entrada.eventos)),
            descricao=entrada.descricao,
            sal=salt,
            referencia=_snapshot(company),
            referencia_hash=company.hash,
            indice=index,
            alias=backends.alias,
        )
    if vigia is None:
        raise ConflictError(ALREADY_WATCHED)
    return MonitorCriado(
        monitor=_public(vigia), segredo=signing.secret_of(backends.secret, vigia.id, salt)
    )


def _public(vigia: Vigia) -> Monitor:
    return Monitor(**{name: getattr(vigia, name) for name in Monitor.__struct_fields__})


async def _owned(
    conn: AsyncConnection, conta_id: int, monitor_id: int, lock: bool = False
) -> Vigia:
    vigia = None
    if 1 <= monitor_id < 2**63:  # beyond a bigint, no monitor has the id
        vigia = await repository.find_monitor(conn, monitor_id, conta_id, lock=lock)
    if vigia is None:
        raise NotFoundError("Monitoramento não encontrado nesta conta.")
    return vigia


async def get(backends: Backends, conta_id: int, monitor_id: int) -> Monitor:
    async with backends.pool.connection() as conn:
        return _public(await _owned(conn, conta_id, monitor_id))


async def listing(backends: Backends, conta_id: int, entrada: ListaMonitores) -> PaginaMonitores:
    request = paging.digest(["monitores", conta_id, entrada.estado])
    after = backends.cursors.after_id(entrada.cursor, "monitores", request)
    async with backends.pool.connection() as conn:
        rows = await repository.list_monitors(
            conn, conta_id, entrada.estado, after, entrada.limit + 1
        )
        total = await repository.count_monitors(conn, conta_id, entrada.estado)
    page, next_cursor = backends.cursors.next_by_id(rows, entrada.limit, "monitores", request)
    return PaginaMonitores(data=page, total=total, next_cursor=next_cursor)


async def update(
    backends: Backends, conta_id: int, monitor_id: int, entrada: AlteraMonitor
) -> Monitor:
    """Changes URL, events or description; pauses or resumes (resuming clears why it was
    paused)."""
    settings = backends.settings
    values: dict[str, Any] = {}
    if entrada.webhook_url is not None:
        values["webhook_url"] = await check_url(
            entrada.webhook_url,
            networks_of(settings.webhook_allow_networks),
            settings.webhook_allow_http,
        )
    if entrada.eventos is not None:
        values["eventos"] = sorted(set(entrada.eventos))
    if entrada.descricao is not None:
        values["descricao"] = entrada.descricao
    if entrada.estado is not None:
        values["estado"] = entrada.estado
        if entrada.estado == "ativo":
            values["motivo_pausa"] = None
    try:
        async with backends.pool.connection() as conn, conn.transaction():
            vigia = await _owned(conn, conta_id, monitor_id, lock=True)
            if not values:
                return _public(vigia)
            updated = await repository.update_monitor(conn, monitor_id, values)
    except psycopg.errors.UniqueViolation:  # another monitor of the account: same CNPJ and URL
        raise ConflictError(ALREADY_WATCHED) from None
    assert updated is not None
    return updated


async def delete(backends: Backends, conta_id: int, monitor_id: int) -> None:
    async with backends.pool.connection() as conn:
        if not await repository.delete_monitor(conn, conta_id, monitor_id):
            raise NotFoundError("Monitoramento não encontrado nesta conta.")


async def rotate(backends: Backends, conta_id: int, monitor_id: int) -> NovoSegredo:
    """A new signing secret, shown this once; the old one stops signing at once."""
    salt = signing.new_salt()
    async with backends.pool.connection() as conn, conn.transaction():
        await _owned(conn, conta_id, monitor_id, lock=True)
        await repository.update_monitor(conn, monitor_id, {"segredo_sal": salt})
    return NovoSegredo(segredo=signing.secret_of(backends.secret, monitor_id, salt))


# ------------------------------------------------------------------ checking


def _body(tipo: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": tipo, "timestamp": datetime.now(UTC).isoformat(), "data": data}


async def defer_deliveries(
    conn: AsyncConnection, backends: Backends, events: list[NovaEntrega]
) -> None:
    """Defers the delivery of `events` in the caller's transaction, in one statement. No
    queue lock per monitor: the queue's fetch would check it against every waiting job, and
    an event has one job at a time anyway (a re-send waits for the event to finish);
    receivers order events by their `timestamp`, as Standard Webhooks asks."""
    if not events:
        return
    deliver = backends.queue.configure_task(DELIVER, queue="webhooks")
    jobs = [deliver.make_new_job(entrega_id=str(event.id)) for event in events]
    await backends.queue.job_manager.batch_defer_jobs_async(jobs=jobs, connection=conn)


Desfecho = Literal["igual", "seguir", "alterada", "removida", "ausente"]


def _decide(
    vigia: Vigia, company: Empresa | None
) -> tuple[Desfecho, dict[str, Any] | None, list[Mudanca]]:
    """What the record of a release means for a monitor: the same as its baseline; moved only
    in derived fields (`seguir`: followed silently); changed (with the changes); gone from the
    release; or still gone (`ausente`)."""
    if company is None:
        return ("ausente" if vigia.referencia is None else "removida"), None, []
    if company.hash == vigia.referencia_hash:
        return "igual", None, []
    snapshot = _snapshot(company)
    found = changes(vigia.referencia or {}, snapshot)
    return ("alterada" if found else "seguir"), snapshot, found


async def _check(
    conn: AsyncConnection,
    backends: Backends,
    batch: list[Vigia],
    by_cnpj: dict[str, Empresa],
    indice: str | None,
) -> list[Verificacao]:
    """Compares monitors' baselines with the records of `indice` and, for those that changed,
    moves the baseline and raises the event, in the caller's transaction and in a fixed number
    of statements whatever the batch's size."""
    decided = [(vigia, *_decide(vigia, by_cnpj.get(vigia.cnpj))) for vigia in batch]
    await repository.mark_checked(
        conn, [vigia.id for vigia, kind, _, _ in decided if kind in ("igual", "ausente")], indice
    )
    moved = await repository.save_references(
        conn,
        [
            Baseline(
                vigia.id,
                snapshot,
                snapshot["hash"] if snapshot else None,
                vigia.referencia_hash,
                alterado=kind != "seguir",
            )
            for vigia, kind, snapshot, _ in decided
            if kind in ("seguir", "alterada", "removida")
        ],
        indice,
    )
    events: dict[int, NovaEntrega] = {}
    for vigia, kind, _, found in decided:
        tipo = f"empresa.{kind}"
        if vigia.id not in moved or tipo not in vigia.eventos:
            continue
        data: dict[str, Any] = {"monitor_id": vigia.id, "cnpj": vigia.cnpj, "indice": indice}
        if kind == "alterada":
            data["mudancas"] = msgspec.to_builtins(found)
        else:
            data["ultimo_registro"] = vigia.referencia
        events[vigia.id] = NovaEntrega(uuid.uuid4(), vigia.id, tipo, _body(tipo, data))
    await repository.insert_entregas(conn, list(events.values()))
    await defer_deliveries(conn, backends, list(events.values()))
    return [
        Verificacao(
            monitor_id=vigia.id,
            cnpj=vigia.cnpj,
            indice=indice,
            alterado=kind in ("alterada", "removida"),
            removido=kind in ("removida", "ausente"),
            mudancas=found,
            entrega_id=str(events[vigia.id].id) if vigia.id in events else None,
        )
        for vigia, kind, _, found in decided
    ]


async def verify(backends: Backends, conta_id: int, monitor_id: int) -> Verificacao:
    """Checks one monitor against the live release now. A paused monitor is not checked: its
    events would be cancelled, and the change it moved the baseline past never delivered (once
    resumed, this check or the next release's reports it)."""
    index = await _release_index(backends)
    async with backends.pool.connection() as conn, conn.transaction():
        vigia = await _owned(conn, conta_id, monitor_id, lock=True)
        if vigia.estado != "ativo":
            raise ConflictError(
                "Monitoramento pausado: retome-o (PATCH estado=ativo) e verifique; o que mudou "
                "enquanto esteve pausado é avisado então."
            )
        found = await find_companies(backends.es, backends.alias, [vigia.cnpj])
        [outcome] = await _check(conn, backends, [vigia], {c.cnpj: c for c in found}, index)
        return outcome


async def check_release(backends: Backends, indice: str | None = None) -> Rodada:
    """Checks every active monitor against a release (the live one by default), in batches:
    one search and one transaction per batch."""
    index = indice or await _release_index(backends)
    rodada = Rodada(indice=index)
    if indice and not await backends.es.indices.exists(index=indice):
        log.warning("release %s is gone (dropped before its check ran): nothing to check", indice)
        return rodada
    after = 0
    unanalysed = 0
    while True:
        async with backends.pool.connection() as conn:
            batch = await repository.active_batch(conn, backends.alias, after, BATCH)
        if not batch:
            break
        after = batch[-1].id
        companies = await find_companies(
            backends.es, index or backends.alias, sorted({v.cnpj for v in batch})
        )
        by_cnpj = {company.cnpj: company for company in companies}
        async with backends.pool.connection() as conn, conn.transaction():
            outcomes = await _check(conn, backends, batch, by_cnpj, index)
        rodada.verificados += len(outcomes)
        rodada.alterados += sum(item.alterado and not item.removido for item in outcomes)
        rodada.removidos += sum(item.alterado and item.removido for item in outcomes)
        raised = sum(item.entrega_id is not None for item in outcomes)
        rodada.eventos += raised
        unanalysed += raised
        if unanalysed >= ANALYZE_AFTER:
            async with backends.pool.connection() as conn:
                await repository.refresh_queue_statistics(conn)
            unanalysed = 0
    async with backends.pool.connection() as conn:
        if unanalysed:
            await repository.refresh_queue_statistics(conn)
        if index:
            await repository.mark_release_checked(conn, index)
    return rodada


async def record_release(backends: Backends, indice: str) -> bool:
    """Records that `indice` went live and defers the check of every monitor against it, in one
    transaction; False when it was already recorded (nothing deferred twice)."""
    async with backends.pool.connection() as conn, conn.transaction():
        return await releases.record(conn, backends.queue, backends.alias, indice)


# ------------------------------------------------------------------ delivering


def retry_delays(settings: Any) -> list[float]:
    return [float(item) for item in str(settings.webhook_retry_delays).split(",") if item.strip()]


async def entregar(
    backends: Backends, entrega_id: uuid.UUID, *, teste: bool = False
) -> delivery.Resultado | None:
    """One delivery attempt of an event, logged. Delivered: done. `410 Gone`: the monitor is
    paused, no retry. Otherwise `RetryLater` with the next time (exponential with jitter, or
    the endpoint's `Retry-After`), until the round's retries run out: then the monitor is
    paused with the reason. When the endpoint's origin has no room in this process, or stopped
    answering a moment ago, nothing is sent: `Postponed` (no attempt spent). A test event is
    tried once, at once, and pauses nothing. None when there was nothing to deliver (the
    event was delivered, cancelled, or its monitor removed)."""
    async with backends.pool.connection() as conn:
        pendente = await repository.find_entrega(conn, entrega_id)
    if pendente is None or pendente.estado != "pendente":
        return None
    if pendente.monitor_estado != "ativo" and not teste:
        # Logged like an attempt that sent nothing, so the event shows in the log (with its id,
        # to re-send once the monitor is resumed) even when it was never tried.
        try:
            async with backends.pool.connection() as conn:
                await repository.record_attempt(
                    conn, entrega_id, pendente.tentativas + 1, (None, 0, NOT_SENT_PAUSED), None,
                    "cancelada",
                )  # fmt: skip
        except psycopg.errors.ForeignKeyViolation:  # the monitor was deleted meanwhile
            log.info("delivery %s: its monitor was removed before it was cancelled", entrega_id)
        return None
    secret = signing.secret_of(backends.secret, pendente.dono, pendente.segredo_sal)
    body = msgspec.json.encode(pendente.corpo).decode()
    try:
        outcome = await backends.sender.send(
            pendente.webhook_url, secret, str(entrega_id), body, bounded=not teste
        )
    except delivery.OriginBusy as busy:
        raise Postponed(busy.at, "a origem do endpoint está ocupada ou sem responder") from None
    delays = retry_delays(backends.settings)
    in_round = pendente.tentativas - pendente.rodada_inicio
    once = teste or pendente.tipo == TEST_EVENT  # a test, or a test re-sent: pauses nothing
    last = once or outcome.gone or in_round >= len(delays)
    next_at = None if (outcome.ok or last) else _next(delays[in_round], outcome.retry_after)
    estado = "entregue" if outcome.ok else "falhou" if last else None
    attempt = (outcome.status, outcome.duracao_ms, outcome.erro)
    try:
        await _record(backends, pendente, in_round, attempt, next_at, estado, once, outcome)
    except psycopg.errors.ForeignKeyViolation:  # removed with its monitor while it was sent
        log.info("delivery %s: its monitor was removed during the attempt", entrega_id)
        return outcome
    if next_at is not None:
        raise RetryLater(next_at, outcome.erro or "falha na entrega")
    return outcome


async def _record(
    backends: Backends,
    pendente: repository.Pendente,
    in_round: int,
    attempt: tuple[int | None, int, str | None],
    next_at: datetime | None,
    estado: str | None,
    once: bool,
    outcome: delivery.Resultado,
) -> None:
    """The attempt in the log and the event's state; on the last failure of an event that is
    not tried `once` (a test), the monitor paused."""
    entrega_id = pendente.id
    async with backends.pool.connection() as conn:
        if estado != "falhou" or once:
            await repository.record_attempt(
                conn, entrega_id, pendente.tentativas + 1, attempt, next_at, estado
            )
        else:
            reason = (
                "o endpoint respondeu 410 Gone"
                if outcome.gone
                else f"falhou nas {in_round + 1} tentativas de entrega ({outcome.erro})"
            )
            async with conn.transaction():
                await repository.record_attempt(
                    conn, entrega_id, pendente.tentativas + 1, attempt, next_at, estado
                )
                if pendente.monitor_id is not None:
                    await repository.pause_monitor(conn, pendente.monitor_id, f"Pausado: {reason}.")


def _next(delay: float, asked: float | None) -> datetime:
    """The next attempt: the schedule's delay with up to 20 % jitter, or later when the endpoint
    asked for more (`Retry-After`)."""
    jittered = delay * (1 + 0.2 * uuid.uuid4().int / 2**128)
    return datetime.now(UTC) + timedelta(seconds=max(jittered, asked or 0.0))


async def test(backends: Backends, conta_id: int, monitor_id: int) -> Teste:
    """Sends a signed `monitor.teste` event now and answers with the attempt (429 while the
    account has `TESTS_AT_ONCE` tests in flight, in any process)."""
    async with backends.pool.connection() as conn, conn.transaction():
        vigia = await _owned(conn, conta_id, monitor_id)
        timeout = backends.settings.webhook_timeout
        await lock_account(conn, conta_id)  # two tests asked at once count each other
        if await repository.tests_in_flight(conn, conta_id, TEST_EVENT, timeout) >= TESTS_AT_ONCE:
            raise TooManyRequestsError(
                f"Esta conta já tem {TESTS_AT_ONCE} testes de webhook em andamento: espere a "
                "resposta deles antes de enviar outro.",
                headers={"Retry-After": str(math.ceil(timeout))},
                details={"em_andamento": TESTS_AT_ONCE},
            )
        data = {
            "monitor_id": vigia.id,
            "cnpj": vigia.cnpj,
            "mensagem": "Evento de teste: a assinatura e a entrega funcionam.",
        }
        event = NovaEntrega(uuid.uuid4(), vigia.id, TEST_EVENT, _body(TEST_EVENT, data))
        await repository.insert_entregas(conn, [event])
    entrega_id = event.id
    outcome = await entregar(backends, entrega_id, teste=True)
    assert outcome is not None
    return Teste(
        entrega_id=str(entrega_id),
        ok=outcome.ok,
        status_http=outcome.status,
        duracao_ms=outcome.duracao_ms,
        erro=outcome.erro,
    )


async def resend(backends: Backends, conta_id: int, entrega_id: uuid.UUID) -> Reenvio:
    """Delivers a finished event again (delivered, failed or cancelled; the same `webhook-id`),
    with a fresh round of retries. An event still on its way is 409: its retries go on."""
    async with backends.pool.connection() as conn, conn.transaction():
        pendente = await repository.find_entrega(conn, entrega_id, conta_id)
        if pendente is None:
            raise NotFoundError("Entrega não encontrada nesta conta.")
        if pendente.monitor_estado != "ativo":
            raise BadRequestError("O monitoramento está pausado: retome-o antes de reenviar.")
        if not await repository.reopen_entrega(conn, entrega_id):
            raise ConflictError(
                "A entrega ainda está em andamento: as próximas tentativas estão no log."
            )
        await defer_deliveries(
            conn, backends, [NovaEntrega(entrega_id, pendente.monitor_id, "", {})]
        )
    return Reenvio(
        entrega_id=str(entrega_id),
        monitor_id=pendente.monitor_id,
        evento=pendente.tipo,
        estado="pendente",
        tentativas_anteriores=pendente.tentativas,
    )


async def attempts(
    backends: Backends, conta_id: int, entrada: FiltroTentativas
) -> PaginaTentativas:
    request = paging.digest(["tentativas", conta_id, entrada.monitor, entrada.evento, entrada.ok])
    before = backends.cursors.after_id(entrada.cursor, "tentativas", request)
    async with backends.pool.connection() as conn:
        rows, total = await repository.attempts(
            conn,
            conta_id,
            monitor_id=entrada.monitor,
            evento=entrada.evento,
            ok=entrada.ok,
            before=before,
            limit=entrada.limit + 1,
        )
    page, next_cursor = backends.cursors.next_by_id(rows, entrada.limit, "tentativas", request)
    return PaginaTentativas(data=page, total=total, next_cursor=next_cursor)
