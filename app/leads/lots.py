"""Paid lead lots and the free export.

A lot is asked for with the lead filters, a quantity and a format; it is refused unless the
user confirmed the LGPD terms (`confirmar_lgpd` and `uso_responsavel` both true), the plan
includes lots and the month's allowance has room (checked and reserved in one transaction,
under a lock of the account's row). The worker then makes it: `pendente -> processando ->
concluido | falhou`, and `concluido -> expirado` when its file's time is up. A worker killed
half-way leaves the lot `processando` and its job to be run again: the file is made again from
the start under a staging name and published by one rename, so it is never lost and never
delivered as two files. Status changes go to the lot's `webhook_url` as signed events
(`lote.concluido`, `lote.falhou`) through the monitors' delivery log and retries.

The free export is a small CSV in the answer itself: at most `FREE_ROWS` leads, `FREE_PER_DAY`
exports a day per account and per client fingerprint (Brasília's day), counted as an export.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, BinaryIO, ClassVar, Literal

import msgspec
from psycopg import AsyncConnection

from app.auth.access import Identity
from app.context import Backends
from app.domain.summary import SOURCE_FIELDS, Fonte
from app.errors import (
    AppError,
    BadRequestError,
    ConflictError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    TooManyRequestsError,
    UnavailableError,
)
from app.leads import formats, repository
from app.leads.filters import FiltrosLead, Resolvidos, resolve
from app.leads.service import SORT, USO_RESPONSAVEL, Lead, filters_of, lead_of
from app.leads.storage import Directory, Storage
from app.lib import paging
from app.lib.elastic import body, decoder
from app.lib.operations import Custo, Operacao
from app.lib.wording import END
from app.monitoring import releases
from app.monitoring.repository import NovaEntrega, insert_entregas
from app.monitoring.service import Url, defer_deliveries
from app.webhooks import signing
from app.webhooks.addresses import check_url, networks_of

log = logging.getLogger("app.leads")

CRIAR_LOTE = Operacao("criar_lote_leads", Custo.EXPORTACAO)
CONSULTAR_LOTE = Operacao("consultar_lote_leads", None)
EXPORTAR_GRATIS = Operacao("exportar_leads_gratis", Custo.EXPORTACAO)
MAKE = "gerar_lote"
MAX_ROWS = 100_000
MAX_PDF_ROWS = 10_000
FREE_ROWS = 50
FREE_PER_DAY = 3
BATCH = 1000
KEEP_ALIVE = "2m"
ATTEMPTS = 5
"""Runs of a lot's job before it is given up as `falhou` (a database or index away, a bug)."""
DEADLINE_HOURS = 24
"""Hours a lot may wait to be made: past them it fails and gives its reservation back."""
GIVEN_UP = (
    f"O lote não ficou pronto em {DEADLINE_HOURS} horas (o serviço que faz os arquivos não o "
    "processou); a franquia foi devolvida: crie outro lote."
)
EVENT_DONE = "lote.concluido"
EVENT_FAILED = "lote.falhou"


IDEMPOTENCY_HOURS = 24
IDEMPOTENCY_WINDOW = timedelta(hours=IDEMPOTENCY_HOURS)
"""How long an idempotency key names its lot: the same key within it answers that lot again."""
IDEMPOTENCY_KEY = re.compile(r"[!-~]{1,255}")
ChaveIdempotencia = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=255,
        pattern=f"^{IDEMPOTENCY_KEY.pattern}{END}",
        description=(
            "Opcional: uma chave sua, única por pedido (um UUID, por exemplo). Repetir o pedido "
            f"com a mesma chave em até {IDEMPOTENCY_HOURS} horas responde o mesmo lote "
            "(`repetido`: true) em vez de "
            "criar outro e tirá-lo da franquia; a mesma chave com outro pedido é um 409. Na API "
            "REST, também pelo cabeçalho `Idempotency-Key`."
        ),
    ),
]

CONFIRMED: dict[str, Any] = {"const": True}
"""How the document shows a confirmation: false is refused with the terms to show the user (a
400 that says what to confirm, not a type error), so only true is accepted."""


class NovoLote(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Um lote pago de leads: os mesmos filtros, uma quantidade e um formato."""

    __schema_rules__: ClassVar[dict[str, Any]] = {
        **FiltrosLead.__schema_rules__,
        "required": ["quantidade", "confirmar_lgpd", "uso_responsavel"],
    }
    """The document asks for both confirmations (`CONFIRMED`)."""

    quantidade: Annotated[
        int,
        msgspec.Meta(ge=1, le=MAX_ROWS, description="Quantos leads (os melhores por score)."),
    ]
    formato: Annotated[
        formats.Formato,
        msgspec.Meta(description="csv (separador ;), xlsx ou pdf (até 10.000 linhas)."),
    ] = "csv"
    confirmar_lgpd: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "true: o usuário leu e aceita o uso responsável (LGPD): contato só B2B "
                "pertinente, identificação, opt-out em todo contato."
            ),
            extra_json_schema=CONFIRMED,
        ),
    ] = False
    uso_responsavel: Annotated[
        bool,
        msgspec.Meta(
            description="true: o usuário se compromete com o uso responsável.",
            extra_json_schema=CONFIRMED,
        ),
    ] = False
    webhook_url: Url | None = None
    chave_idempotencia: ChaveIdempotencia | None = None


class Lote(msgspec.Struct, kw_only=True):
    """A lot as its owner sees it."""

    id: int
    estado: Literal["pendente", "processando", "concluido", "falhou", "expirado"]
    formato: str
    quantidade: int
    filtros: dict[str, Any]
    linhas: int | None
    """Rows in the file (at most `quantidade`: fewer when fewer companies match)."""
    tamanho: int | None
    """The file's size in bytes."""
    criado_em: datetime
    iniciado_em: datetime | None
    concluido_em: datetime | None
    expira_em: datetime | None
    """Until when the file can be downloaded."""
    erro: str | None
    download_url: str | None
    webhook_url: str | None
    webhook_estado: str | None
    """The status event's delivery: `pendente`, `entregue`, `falhou` (None without a URL)."""


class LoteCriado(msgspec.Struct, kw_only=True):
    lote: Lote
    segredo: str | None
    """The signing secret of the lot's webhook events (shown once: None without a URL, and in
    the answer to a repeated request)."""
    uso_responsavel: str
    repetido: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "true quando a chave de idempotência já tinha criado este lote: nada novo foi "
                "feito nem tirado da franquia (e o segredo do webhook não é mostrado de novo)."
            )
        ),
    ] = False


class ConsultaLote(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """O estado de um lote (e o endereço do arquivo quando pronto)."""

    id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1, description="O id do lote.")]


class ListaLotes(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20
    cursor: paging.CursorTexto | None = None


class PaginaLotes(msgspec.Struct, kw_only=True):
    data: list[Lote]
    total: int
    """The account's lots, on every page."""
    next_cursor: str | None


class ExportaGratis(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Exportação grátis pequena (CSV na resposta), com limite diário."""

    quantidade: Annotated[int, msgspec.Meta(ge=1, le=FREE_ROWS, description="Até 50 leads.")] = (
        FREE_ROWS
    )
    fingerprint: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=8,
                max_length=128,
                pattern=r"^[A-Za-z0-9_.:-]+" + END,
                description=(
                    "Identificador estável do cliente (navegador, instalação): o limite diário "
                    "vale por conta e por fingerprint."
                ),
            ),
        ]
        | None
    ) = None


class ExportacaoGratis(msgspec.Struct, kw_only=True):
    formato: str
    separador: str
    linhas: int
    csv: str
    restantes_hoje: int
    """Free exports left today (the fewest of the account's and the fingerprint's)."""
    limite_diario: int
    uso_responsavel: str


def storage_of(backends: Backends) -> Storage:
    return Directory(backends.settings.lots_dir)


def _failure(error: Exception) -> str:
    """Why a lot failed, as its `erro` tells the account: the service's own refusal as it
    says it, anything else (the index or the database away) without a library's text."""
    if isinstance(error, AppError):
        return error.message
    return "falha interna ao gerar o arquivo; peça um novo lote (o saldo deste foi devolvido)."


def _file_name(lote_id: int, formato: str) -> str:
    return f"lote-{lote_id}.{formato}"


def _expired(row: repository.Lote) -> bool:
    """Whether the lot's file is past its time, whether or not the expiry job got to it."""
    return row.estado == "expirado" or (
        row.expira_em is not None and row.expira_em <= datetime.now(UTC)
    )


def download_path(lote_id: int) -> str:
    return f"/v1/me/lotes/{lote_id}/arquivo"


def _public(backends: Backends, row: repository.Lote, webhooks: dict[int, str]) -> Lote:
    """The lot as its owner sees it; `webhooks`: the state of the lots' status events (a lot
    with a URL whose event is not made yet is `pendente`)."""
    estado = "expirado" if _expired(row) else row.estado  # before the expiry job's round
    ready = estado == "concluido"
    webhook = webhooks.get(row.id, "pendente") if row.webhook_url else None
    base = backends.settings.public_url.rstrip("/")
    return Lote(
        id=row.id, estado=estado,  # type: ignore[arg-type]
        formato=row.formato, quantidade=row.quantidade, filtros=row.filtros, linhas=row.linhas,
        tamanho=row.tamanho, criado_em=row.criado_em, iniciado_em=row.iniciado_em,
        concluido_em=row.concluido_em, expira_em=row.expira_em, erro=row.erro,
        download_url=f"{base}{download_path(row.id)}" if ready else None,
        webhook_url=row.webhook_url, webhook_estado=webhook,
    )  # fmt: skip


async def _count(backends: Backends, resolved: Resolvidos) -> int:
    response = await backends.es.count(index=backends.alias, query=resolved.counted())
    return int(msgspec.json.decode(body(response))["count"])


def _none_match(resolved: Resolvidos, consequence: str) -> BadRequestError:
    """The 400 of a lot or a free export that no company matches: nothing is spent."""
    return BadRequestError(
        "Nenhuma empresa atende a estes filtros: relaxe-os (planejar_leads_quentes diz como)"
        + consequence,
        details={"filtros_aplicados": resolved.aplicados},
    )


async def criar(backends: Backends, conta: Identity, entrada: NovoLote) -> LoteCriado:
    """A new lot, after the LGPD gate, the plan gate and the month's allowance."""
    missing = [
        name for name in ("confirmar_lgpd", "uso_responsavel") if getattr(entrada, name) is not True
    ]
    if missing:
        raise BadRequestError(
            "Lote recusado: o usuário precisa confirmar o uso responsável dos dados (LGPD) — "
            "envie confirmar_lgpd: true e uso_responsavel: true depois de mostrar a ele: "
            + USO_RESPONSAVEL,
            details={"campos": missing},
        )
    if entrada.formato == "pdf" and entrada.quantidade > MAX_PDF_ROWS:
        raise BadRequestError(
            f"PDF: até {MAX_PDF_ROWS} linhas; para mais, use csv ou xlsx.",
            details={"campo": "quantidade", "maximo": MAX_PDF_ROWS},
        )
    key = entrada.chave_idempotencia
    digest = _request_digest(entrada)
    if key is not None:
        async with backends.pool.connection() as conn:
            earlier = await repository.by_idempotency_key(
                conn, conta.conta_id, key, IDEMPOTENCY_WINDOW
            )
            if earlier is not None:
                return await _repeated(backends, conn, earlier, digest)
    settings = backends.settings
    url = None
    if entrada.webhook_url is not None:
        url = await check_url(
            entrada.webhook_url,
            networks_of(settings.webhook_allow_networks),
            settings.webhook_allow_http,
        )
    filters = filters_of(entrada)
    resolved = await resolve(backends, filters)
    if await _count(backends, resolved) == 0:
        raise _none_match(resolved, " antes de criar um lote.")
    salt = signing.new_salt()
    async with backends.pool.connection() as conn, conn.transaction():
        plano, allowed, used = await repository.allowance(conn, conta.conta_id)
        if key is not None:  # a twin request may have made it while this one was checked
            earlier = await repository.by_idempotency_key(
                conn, conta.conta_id, key, IDEMPOTENCY_WINDOW
            )
            if earlier is not None:
                return await _repeated(backends, conn, earlier, digest)
            await repository.release_key(conn, conta.conta_id, key)
        if allowed <= 0:
            raise ForbiddenError(
                f"O plano {plano or conta.plano} não inclui lotes de leads: use "
                f"exportar_leads_gratis (até {FREE_ROWS} por exportação) ou mude para um plano "
                "pago (basic ou superior).",
                details={"plano": plano or conta.plano},
            )
        if used + entrada.quantidade > allowed:
            raise ForbiddenError(
                f"A franquia do mês ({allowed} leads) não comporta {entrada.quantidade}: "
                f"restam {max(allowed - used, 0)}.",
                details={"franquia": allowed, "usados": used, "restantes": max(allowed - used, 0)},
            )
        row = await repository.insert(
            conn,
            conta_id=conta.conta_id,
            filtros=msgspec.to_builtins(filters),
            quantidade=entrada.quantidade,
            formato=entrada.formato,
            webhook_url=url,
            sal=salt,
            chave_idempotencia=key,
            pedido_hash=digest if key is not None else None,
        )
        queue = releases.queue_of(backends.alias, "lotes")  # made by a worker of this alias
        job = backends.queue.configure_task(MAKE, queue=queue).make_new_job(lote_id=row.id)
        await backends.queue.job_manager.batch_defer_jobs_async(jobs=[job], connection=conn)
    secret = signing.secret_of(backends.secret, f"lote-{row.id}", salt) if url else None
    return LoteCriado(
        lote=_public(backends, row, {}),
        segredo=secret,
        uso_responsavel=USO_RESPONSAVEL,
    )


def _request_digest(entrada: NovoLote) -> str:
    """What a repeated request must match: the request less its idempotency key."""
    asked = msgspec.structs.replace(entrada, chave_idempotencia=None)
    return hashlib.sha256(msgspec.json.encode(asked)).hexdigest()


async def _repeated(
    backends: Backends, conn: AsyncConnection, earlier: repository.Lote, digest: str
) -> LoteCriado:
    """The answer to a request whose idempotency key already made `earlier`: that lot again
    (its webhook secret is not shown twice), or a 409 when the key came with another request."""
    if earlier.pedido_hash != digest:
        raise ConflictError(
            f"Esta chave de idempotência já criou o lote {earlier.id} com outro pedido: use "
            "outra chave para um pedido novo.",
            details={"campo": "chave_idempotencia", "lote": earlier.id},
        )
    webhooks = await repository.webhook_states(conn, [earlier.id])
    return LoteCriado(
        lote=_public(backends, earlier, webhooks),
        segredo=None,
        uso_responsavel=USO_RESPONSAVEL,
        repetido=True,
    )


async def consultar(backends: Backends, conta: Identity, entrada: ConsultaLote) -> Lote:
    async with backends.pool.connection() as conn:
        row = await repository.find(conn, entrada.id, conta.conta_id)
        if row is None:
            raise NotFoundError("Lote não encontrado nesta conta.")
        webhooks = await repository.webhook_states(conn, [row.id])
    return _public(backends, row, webhooks)


async def listar(backends: Backends, conta: Identity, entrada: ListaLotes) -> PaginaLotes:
    request = paging.digest(["lotes", conta.conta_id])
    before = backends.cursors.after_id(entrada.cursor, "lotes", request)
    async with backends.pool.connection() as conn:
        rows = await repository.listing(conn, conta.conta_id, before, entrada.limit + 1)
        page, next_cursor = backends.cursors.next_by_id(rows, entrada.limit, "lotes", request)
        webhooks = await repository.webhook_states(conn, [row.id for row in page])
        total = await repository.count(conn, conta.conta_id)
    return PaginaLotes(
        data=[_public(backends, row, webhooks) for row in page],
        total=total,
        next_cursor=next_cursor,
    )


async def arquivo(backends: Backends, conta: Identity, lote_id: int) -> tuple[BinaryIO, str, str]:
    """The file of the account's lot, opened: its handle (the caller closes it), download name
    and media type (404 for a lot of another account, 409 while it is made or when it failed,
    410 once expired or when the file is gone)."""
    async with backends.pool.connection() as conn:
        row = await repository.find(conn, lote_id, conta.conta_id)
    if row is None:
        raise NotFoundError("Lote não encontrado nesta conta.")
    if _expired(row):
        raise GoneError("O arquivo deste lote expirou; crie outro lote.")
    if row.estado != "concluido" or row.arquivo is None:
        raise ConflictError(
            f"O lote está {row.estado}: o arquivo fica disponível quando estiver concluido.",
            details={"estado": row.estado, "erro": row.erro},
        )
    handle = storage_of(backends).open(row.arquivo)
    if handle is None:
        raise GoneError("O arquivo deste lote não está mais disponível; crie outro lote.")
    return handle, row.arquivo, formats.MEDIA_TYPES[row.formato]


# ---------------------------------------------------------------- the free export


async def exportar_gratis(
    backends: Backends, conta: Identity, entrada: ExportaGratis
) -> ExportacaoGratis:
    """The best `quantidade` leads as CSV text, within the daily free quota (400, using none of
    it, when nothing matches)."""
    resolved = await resolve(backends, filters_of(entrada))
    rows = []
    async for position, lead in _stream(backends, resolved, entrada.quantidade, pit=False):
        rows.append(formats.row_of(position, lead))
    if not rows:  # refused as a lot would be: an empty file does not use a free export
        raise _none_match(resolved, "; nenhuma exportação grátis foi usada.")
    keys = [f"conta:{conta.conta_id}"]
    if entrada.fingerprint:
        keys.append("fp:" + hashlib.sha256(entrada.fingerprint.encode()).hexdigest()[:32])
    async with backends.pool.connection() as conn, conn.transaction():
        left = await repository.take_free_export(conn, keys, FREE_PER_DAY)
        if left is None:
            wait = await repository.seconds_to_midnight(conn)
            raise TooManyRequestsError(
                f"As {FREE_PER_DAY} exportações grátis de hoje já foram usadas (por esta conta "
                "ou por este fingerprint); voltam à meia-noite (Brasília). Para mais, crie um "
                "lote (plano pago).",
                details={"limite_diario": FREE_PER_DAY},
                headers={"Retry-After": str(max(wait, 1))},
            )
    buffer = io.BytesIO()
    writer = formats.CsvWriter.to(buffer)
    for row in rows:
        writer.write(row)
    writer.close()
    return ExportacaoGratis(
        formato="csv",
        separador=";",
        linhas=len(rows),
        csv=buffer.getvalue().decode("utf-8-sig"),
        restantes_hoje=left,
        limite_diario=FREE_PER_DAY,
        uso_responsavel=USO_RESPONSAVEL,
    )


# ---------------------------------------------------------------- streaming and making


class _PitPage(msgspec.Struct):
    hits: Any
    pit_id: str | None = None


_page = decoder(Fonte)
_pit = msgspec.json.Decoder(_PitPage)
_FIELDS = [*SOURCE_FIELDS, "contato", "matriz_filial.codigo"]


async def _stream(
    backends: Backends, resolved: Resolvidos, limit: int, *, pit: bool
) -> AsyncIterator[tuple[int, Lead]]:
    """The best `limit` leads in ranking order, with their positions (1, 2...). With `pit`,
    in batches over one point in time of the live release (a lot's whole file reads one
    snapshot, at constant memory); without, in one search (a page's worth)."""
    query = resolved.query(datetime.now(UTC).date())  # one day for the whole lot
    applied = resolved.aplicados
    if not pit:
        response = await backends.es.search(
            index=backends.alias, query=query, sort=SORT, size=limit, source_includes=_FIELDS,
            track_total_hits=False,
        )  # fmt: skip
        for position, hit in enumerate(_page.decode(body(response)).hits.hits, start=1):
            yield position, lead_of(hit, resolved, applied)
        return
    opened = await backends.es.open_point_in_time(index=backends.alias, keep_alive=KEEP_ALIVE)
    pit_id = str(msgspec.json.decode(body(opened))["id"])
    position = 0
    after: list[Any] | None = None
    try:
        while position < limit:
            response = await backends.es.search(
                pit={"id": pit_id, "keep_alive": KEEP_ALIVE},
                query=query,
                sort=SORT,
                search_after=after,
                size=min(BATCH, limit - position),
                source_includes=_FIELDS,
                track_total_hits=False,
            )
            raw = body(response)
            pit_id = _pit.decode(raw).pit_id or pit_id
            hits = _page.decode(raw).hits.hits
            if not hits:
                break
            for hit in hits:
                position += 1
                yield position, lead_of(hit, resolved, applied)
            after = hits[-1].sort
    finally:
        await backends.es.close_point_in_time(id=pit_id)


def _event(tipo: str, row: repository.Lote, data: dict[str, Any]) -> NovaEntrega:
    body_ = {
        "type": tipo,
        "timestamp": datetime.now(UTC).isoformat(),
        "data": {"lote_id": row.id, "formato": row.formato, **data},
    }
    return NovaEntrega(uuid.uuid4(), None, tipo, body_, lote_id=row.id)


async def _notify(conn: Any, backends: Backends, row: repository.Lote, event: NovaEntrega) -> None:
    if row.webhook_url is None:
        return
    await insert_entregas(conn, [event])
    await defer_deliveries(conn, backends, [event])


async def processar(backends: Backends, lote_id: int, final_attempt: bool = False) -> str | None:
    """Makes a lot's file (the worker's job): streams the ranked leads into the format's
    writer under a staging name, publishes it, and marks the lot `concluido` with the
    `lote.concluido` event in one transaction. A failure is raised for the job to be run
    again, except on the `final_attempt` or when the lot itself is at fault (an `AppError`:
    filters no longer valid), where the lot becomes `falhou` (with `lote.falhou`).
    The lot's state afterwards, or None when it was already finished."""
    async with backends.pool.connection() as conn:
        row = await repository.start(conn, lote_id)
    if row is None:
        return None
    store = storage_of(backends)
    name = _file_name(row.id, row.formato)
    try:
        resolved = await resolve(backends, msgspec.convert(row.filtros, FiltrosLead))
        staged = store.staging(name, row.tentativas)
        title = f"Leads — lote {row.id} — {_describe(resolved)}"
        writer = formats.writer(row.formato, staged, title, USO_RESPONSAVEL)  # type: ignore[arg-type]
        written = 0
        try:
            async for position, lead in _stream(backends, resolved, row.quantidade, pit=True):
                writer.write(formats.row_of(position, lead))
                written = position
        finally:
            writer.close()
        done = await _publish(backends, row, name, written)
    except Exception as error:
        # The lot's own problem (its filters no longer valid) will not mend by waiting: it
        # fails at once; anything else (the index, the catalog or the database away, which a
        # service may have said with an `UnavailableError`) is tried again.
        own = isinstance(error, AppError) and not isinstance(error, UnavailableError)
        if not (final_attempt or own):
            raise
        log.warning("lot %s failed: %s: %s", row.id, type(error).__name__, error)
        store.discard(name, row.tentativas)  # no later run will take its place
        async with backends.pool.connection() as conn, conn.transaction():
            if not await repository.fail(conn, row.id, row.tentativas, _failure(error)):
                return None  # a later run has the lot: its outcome is the lot's
            event = _event(EVENT_FAILED, row, {"estado": "falhou"})
            await _notify(conn, backends, row, event)
        return "falhou"
    return "concluido" if done else None


async def _publish(backends: Backends, row: repository.Lote, name: str, written: int) -> bool:
    """Publishes the run's file and marks the lot `concluido` (with its event), under a lock of
    the lot's row, if this run is still the lot's latest: a run the worker's recovery gave up
    on as stalled (and started again elsewhere) drops its file instead, so it can neither
    replace the file of the run that took over nor finish the lot a second time."""
    store = storage_of(backends)
    hours = backends.settings.lots_keep_hours
    async with backends.pool.connection() as conn, conn.transaction():
        if not await repository.current_run(conn, row.id, row.tentativas):
            store.discard(name, row.tentativas)
            log.warning("lot %s: run %d was taken over by a later run; its file is dropped",
                        row.id, row.tentativas)  # fmt: skip
            return False
        size = store.publish(name, row.tentativas)
        await repository.finish(conn, row.id, row.tentativas, written, size, name, hours)
        base = backends.settings.public_url.rstrip("/")
        event = _event(
            EVENT_DONE, row,
            {"estado": "concluido", "linhas": written, "tamanho": size,
             "download_url": f"{base}{download_path(row.id)}"},
        )  # fmt: skip
        await _notify(conn, backends, row, event)
    return True


def _describe(resolved: Resolvidos) -> str:
    parts = [segment.nome for segment in resolved.segmentos]
    applied = resolved.aplicados
    parts += [str(applied[key]) for key in ("uf", "cidade") if applied.get(key)]
    return ", ".join(parts) or "filtros"


async def desistir(backends: Backends) -> int:
    """Gives up the lots not made within `DEADLINE_HOURS` of being asked for (no worker took
    them, or every run failed before it could record the failure): `falhou`, with
    `lote.falhou`, and their reservation back in the month's allowance. How many."""
    async with backends.pool.connection() as conn, conn.transaction():
        given_up = await repository.give_up(conn, DEADLINE_HOURS, GIVEN_UP)
        for row in given_up:
            await _notify(conn, backends, row, _event(EVENT_FAILED, row, {"estado": "falhou"}))
    for row in given_up:
        log.warning("lot %s given up: not made within %d hours", row.id, DEADLINE_HOURS)
    return len(given_up)


async def expirar(backends: Backends) -> int:
    """Expires the lots whose file's time is up and deletes their files; how many."""
    async with backends.pool.connection() as conn:
        expired = await repository.expire(conn)
    store = storage_of(backends)
    for _, name in expired:
        if name:
            store.delete(name)
    return len(expired)
