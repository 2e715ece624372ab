"""The job queue (procrastinate on PostgreSQL) and the worker's tasks.

Why procrastinate: jobs are rows in the app's own PostgreSQL, deferred inside the transaction
that creates what they act on (an event and its delivery job commit or roll back together),
with retry strategies that can set the next time (`Retry-After`), per-key locks (one webhook
endpoint's deliveries run in order, others in parallel) and periodic tasks. A worker killed in
the middle of a job leaves it `doing`: the periodic `recuperar_travados` gives it to another
worker once the dead one's heartbeat is older than `WORKER_STALLED_AFTER` seconds.
"""

from __future__ import annotations

import logging
import uuid

import msgspec
import procrastinate
from elasticsearch import NotFoundError
from procrastinate import JobContext, RetryDecision
from procrastinate.exceptions import ConnectorException
from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy

from app.accounts import repository as accounts
from app.context import Backends
from app.leads import lots
from app.lib.elastic import body
from app.monitoring import releases
from app.monitoring import service as monitoring

log = logging.getLogger("app.worker")
queue = procrastinate.App(connector=procrastinate.PsycopgConnector())
"""The queue with every task: each process opens it on its own pool (`open_async(pool=...)`),
the app to defer jobs in its transactions, the worker to run them."""
KEEP_DONE_HOURS = 24
MAX_WAIT = 600
"""Seconds between runs of a job that keeps failing for a reason that is not a delivery's own
failure (a database away, a bug): logged each time, run again until it succeeds."""


class Retries(BaseRetryStrategy):
    """A delivery's next time comes from the delivery (`RetryLater`: schedule, jitter,
    `Retry-After`; `Postponed`: when its endpoint has room); any other failure (the database
    briefly away) is retried after 10 s, then less and less often, down to every `MAX_WAIT`
    seconds, and never given up: a job given up would leave its event undelivered."""

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if isinstance(exception, monitoring.Later):
            return RetryDecision(retry_at=exception.at)
        return RetryDecision(retry_in={"seconds": min(10 * 2 ** min(job.attempts, 6), MAX_WAIT)})


class LotRetries(BaseRetryStrategy):
    """A lot's job is run again 10, 20, 40 and 80 s after a failure (the index or the
    database briefly away); its last run (`lots.ATTEMPTS`) marks the lot `falhou` instead."""

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if job.attempts >= lots.ATTEMPTS - 1:
            return None
        return RetryDecision(retry_in={"seconds": 10 * 2**job.attempts})


def _backends(context: JobContext) -> Backends:
    found: Backends = context.additional_context["backends"]
    return found


@queue.task(name=monitoring.DELIVER, queue="webhooks", pass_context=True, retry=Retries())
async def entregar_webhook(context: JobContext, entrega_id: str) -> None:
    await monitoring.entregar(_backends(context), uuid.UUID(entrega_id))


@queue.task(name=releases.CHECK, queue="monitoramento", pass_context=True, retry=Retries())
async def verificar_release(context: JobContext, indice: str, alias: str) -> None:
    """Checks every monitor against a release of this worker's alias. A check of another
    alias's release (deferred to the shared queue before each alias had its own) is moved to
    that alias's queue, for its own workers."""
    backends = _backends(context)
    if alias != backends.alias:
        await releases.defer_check(context.app, alias, indice)
        log.info("release %s of alias %s: moved to that alias's queue", indice, alias)
        return
    rodada = await monitoring.check_release(backends, indice)
    log.info("release %s: %s", indice, rodada)


@queue.task(name=lots.MAKE, queue="lotes", pass_context=True, retry=LotRetries())
async def gerar_lote(context: JobContext, lote_id: int) -> None:
    """Makes a lead lot's file; a lot interrupted by a dead worker is made again from the
    start (one file, published by one rename)."""
    final = context.job.attempts >= lots.ATTEMPTS - 1
    estado = await lots.processar(_backends(context), lote_id, final_attempt=final)
    log.info("lot %s: %s", lote_id, estado or "already finished")


# Periodic schedules are croniter expressions whose sixth field is the second: "* * * * * */2"
# is every two seconds ("*/2 * * * * *" would be every second of every other minute).
@queue.periodic(cron="* * * * * */10", periodic_id="conciliar")
@queue.task(
    name="conciliar_releases",
    queue="monitoramento",
    pass_context=True,
    queueing_lock="conciliar_releases",
)
async def conciliar_releases(context: JobContext, timestamp: int) -> None:
    """Records the live release when the indexer could not (a safety net: the indexer records
    it in the same step as the alias swap)."""
    backends = _backends(context)
    try:
        names = msgspec.json.decode(body(await backends.es.indices.get_alias(name=backends.alias)))
    except NotFoundError:  # no release loaded yet
        return
    if names:  # one index (the swap is atomic); were there more, the same one each time
        await monitoring.record_release(backends, max(names))


@queue.periodic(cron="* * * * * */2", periodic_id="recuperar")
@queue.task(
    name="recuperar_travados",
    queue="manutencao",
    pass_context=True,
    queueing_lock="recuperar_travados",
)
async def recuperar_travados(context: JobContext, timestamp: int) -> None:
    """Runs again the jobs of workers that stopped beating (killed, frozen, lost)."""
    backends = _backends(context)
    manager = context.app.job_manager
    stalled = await manager.get_stalled_jobs(
        seconds_since_heartbeat=backends.settings.worker_stalled_after
    )
    for job in {job.id: job for job in stalled}.values():
        log.warning("job %s (%s) of a stalled worker: running it again", job.id, job.task_name)
        try:
            await manager.retry_job(job)
        except ConnectorException:
            # Another worker's recovery (or the job's own end) got there first: the queue
            # refuses to retry a job that is no longer `doing`, which is what was wanted.
            log.info("job %s was already taken care of", job.id)


@queue.periodic(cron="17 * * * *", periodic_id="limpar")
@queue.task(name="limpar_fila", queue="manutencao", pass_context=True, queueing_lock="limpar_fila")
async def limpar_fila(context: JobContext, timestamp: int) -> None:
    """Removes the queue's rows of jobs that succeeded more than `KEEP_DONE_HOURS` ago (each
    delivery attempt stays in the delivery log; the queue needs only what is still to run),
    and the sign-in's daily counters of past days."""
    await context.app.job_manager.delete_old_jobs(nb_hours=KEEP_DONE_HOURS)
    async with _backends(context).pool.connection() as conn:
        await accounts.forget_past_days(conn)


@queue.periodic(cron="*/10 * * * *", periodic_id="expirar_lotes")
@queue.task(
    name="expirar_lotes", queue="manutencao", pass_context=True, queueing_lock="expirar_lotes"
)
async def expirar_lotes(context: JobContext, timestamp: int) -> None:
    """Expires lots whose download time is up and deletes their files, and gives up the lots
    not made within a day (their allowance back)."""
    expired = await lots.expirar(_backends(context))
    if expired:
        log.info("%s lots expired", expired)
    await lots.desistir(_backends(context))
