"""`/v1/leads/...` and `/v1/me/lotes`: the REST twins of the lead tools. Unprefixed aliases
as everywhere else."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, HeaderParameter, JSONBody
from litestar.response import Stream

from app.auth.guards import identity
from app.context import Backends
from app.errors import BadRequestError
from app.leads import lots
from app.leads import service as leads
from app.lib.body import from_query
from app.lib.documented import CONFLICT, GONE
from app.lib.download import FILE_RESPONSE, download
from app.lib.operations import meter
from app.lib.rest import query_route

TAGS = ["Leads"]
_FILTERS = (
    " Filters: `objetivo`, `segmento`, `cnae` (comma-separated codes), `cnae_grupo`, `uf`, "
    "`cidade`, `porte`, `situacao` (default `ativa`), `com_email`/`exigir_email`, "
    "`com_telefone`/`exigir_telefone`, `filtro` (named: `sem_email`, `matriz`, `sem_mei`...), "
    "`matriz`, `simples`, `mei`, `capital_min`, `capital_max`, `abertura_de`, `abertura_ate`, "
    "`incluir_secundarias`. Unknown or invalid filters are 400s naming them."
)


def _both(path: str) -> list[str]:
    return [f"/v1{path}", path]


plan = query_route(
    _both("/leads/plano"),
    name="leads_plan",
    operation=leads.PLANEJAR,
    input=leads.PlanejaLeads,
    output=leads.PlanoLeads,
    run=leads.planejar,
    summary="Plan a lead list",
    description=(
        "Segments found for the objective or segment, the filters applied, the count, what to "
        "relax when there are fewer than `quantidade_desejada`, and the next calls with "
        "explicit arguments. Twin of `planejar_leads_quentes`." + _FILTERS
    ),
    tags=TAGS,
)
count = query_route(
    _both("/leads/contagem"),
    name="leads_count",
    operation=leads.CONTAR,
    input=leads.ContaLeads,
    output=leads.ContagemLeads,
    run=leads.contar,
    summary="Count leads",
    description=(
        "The exact count for the filters, with e-mail, with phone, by UF and by porte. Twin of "
        "`contar_leads_quentes`." + _FILTERS
    ),
    tags=TAGS,
)
preview = query_route(
    _both("/leads/previa"),
    name="leads_preview",
    operation=leads.PREVER,
    input=leads.PreveLeads,
    output=leads.Previa,
    run=leads.prever,
    summary="Preview leads (contacts masked)",
    description=(
        "The best `limit` leads (at most 10) with score and reasons; e-mails show their first "
        "letter and domain, phones their DDD and last two digits. Twin of "
        "`prever_leads_quentes`." + _FILTERS
    ),
    tags=TAGS,
)
ranked = query_route(
    _both("/leads"),
    name="leads_ranked",
    operation=leads.GERAR,
    input=leads.GeraLeads,
    output=leads.PaginaLeads,
    run=leads.gerar,
    summary="Ranked leads",
    description=(
        "Leads by score then CNPJ, contacts in full, in cursor pages (`limit` up to 100). "
        "Files and free exports hold the same rows in the same order. Twin of "
        "`gerar_leads_quentes`." + _FILTERS
    ),
    tags=TAGS,
)
prospect = query_route(
    _both("/leads/prospeccao"),
    name="leads_prospect",
    operation=leads.PROSPECTAR,
    input=leads.ProspectaEmpresas,
    output=leads.Prospeccao,
    run=leads.prospectar,
    summary="Objective to plan, sample and next steps",
    description="One call: the plan, a masked sample and the next steps. Twin of "
    "`prospectar_empresas_com_ia`." + _FILTERS,
    tags=TAGS,
)


@post(
    _both("/leads/exportacao"),
    summary="Free export (small CSV)",
    description=(
        "JSON body: the filters, `quantidade` (at most 50) and an optional `fingerprint`. The "
        "best leads as CSV text (`;`-separated) in the answer. 3 a day per account and per "
        "fingerprint (Brasília's day): 429 with `Retry-After` until midnight when used up. "
        "Twin of `exportar_leads_gratis`."
    ),
    status_code=200,
    tags=TAGS,
)
async def free_export(
    request: Request[Any, Any, Any],
    data: JSONBody[lots.ExportaGratis],
    backends: NamedDependency[Backends],
) -> lots.ExportacaoGratis:
    await meter(request, lots.EXPORTAR_GRATIS)
    return await lots.exportar_gratis(backends, identity(request), data)


LOTS = ["/v1/me/lotes", "/me/lotes"]


REPEATED = ResponseSpec(
    data_container=lots.LoteCriado,
    generate_examples=False,
    description="A repeated request (same idempotency key, same request): the lot it made",
)


@post(
    LOTS,
    summary="Create a lead lot",
    description=(
        "JSON body: the filters, `quantidade` (up to 100,000; PDF up to 10,000), `formato` "
        "(`csv`, `xlsx`, `pdf`), `confirmar_lgpd` and `uso_responsavel` (both must be true), "
        "and an optional `webhook_url` for the signed `lote.concluido` / `lote.falhou` events. "
        "201 with the lot (`pendente`) and the webhook signing secret, shown once. 400 without "
        "the LGPD confirmation or for filters matching nothing; 403 when the plan has no lots "
        "or the month's allowance has no room. Twin of `criar_lote_leads`. An optional "
        "`Idempotency-Key` header (or `chave_idempotencia` in the body; 1 to 255 visible ASCII "
        "characters) makes a retry safe: the same key with the same request within "
        f"{lots.IDEMPOTENCY_HOURS} hours "
        "answers 200 with the same lot and `repetido: true` (its webhook secret is not shown "
        "again): no new lot, nothing more from the allowance (the call itself counts in usage "
        "as any call does). The same key with another request is a 409."
    ),
    responses={200: REPEATED, 409: CONFLICT},
    tags=TAGS,
)
async def create_lot(
    request: Request[Any, Any, Any],
    data: JSONBody[lots.NovoLote],
    backends: NamedDependency[Backends],
    header: Annotated[
        str | None,
        HeaderParameter(
            name="Idempotency-Key",
            description="Optional: your key for this request (the body's `chave_idempotencia`).",
        ),
    ] = None,
) -> Response[lots.LoteCriado]:
    await meter(request, lots.CRIAR_LOTE)
    if header is not None:
        data = _with_key(data, header)
    created = await lots.criar(backends, identity(request), data)
    return Response(created, status_code=200 if created.repetido else 201)


def _with_key(data: lots.NovoLote, header: str) -> lots.NovoLote:
    """The request with the `Idempotency-Key` header's key (400 for a malformed one, or one
    that differs from the body's)."""
    if not lots.IDEMPOTENCY_KEY.fullmatch(header):
        raise BadRequestError(
            "Idempotency-Key inválida: de 1 a 255 caracteres ASCII visíveis (um UUID, por "
            "exemplo).",
            details={"campo": "Idempotency-Key"},
        )
    if data.chave_idempotencia not in (None, header):
        raise BadRequestError(
            "Idempotency-Key e chave_idempotencia diferem: envie uma só.",
            details={"campo": "Idempotency-Key"},
        )
    return msgspec.structs.replace(data, chave_idempotencia=header)


@get(
    LOTS,
    summary="My lots",
    description="Newest first, cursor pages (`limit` 20, at most 100).",
    opt={"query": tuple(lots.ListaLotes.__struct_fields__), "query_struct": lots.ListaLotes},
    tags=TAGS,
)
async def list_lots(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> lots.PaginaLotes:
    return await lots.listar(backends, identity(request), from_query(request, lots.ListaLotes))


@get(
    [f"{path}/{{lote_id:int}}" for path in LOTS],
    summary="One lot",
    description="Its state, rows, size, download address and expiry. Twin of "
    "`consultar_lote_leads`.",
    tags=TAGS,
)
async def get_lot(
    request: Request[Any, Any, Any], lote_id: FromPath[int], backends: NamedDependency[Backends]
) -> lots.Lote:
    await meter(request, lots.CONSULTAR_LOTE)
    return await lots.consultar(backends, identity(request), lots.ConsultaLote(id=lote_id))


@get(
    [f"{path}/{{lote_id:int}}/arquivo" for path in LOTS],
    summary="Download a lot's file",
    description=(
        "The file of a finished lot, to its owner only (404 for any other key), until "
        "`expira_em` (410 after). 409 while it is being made or when it failed."
    ),
    responses={200: FILE_RESPONSE, 409: CONFLICT, 410: GONE},
    tags=TAGS,
)
async def download_lot(
    request: Request[Any, Any, Any], lote_id: FromPath[int], backends: NamedDependency[Backends]
) -> Stream:
    handle, name, media_type = await lots.arquivo(backends, identity(request), lote_id)
    return download(handle, name, media_type)


ROUTES = [plan, count, preview, ranked, prospect, free_export, create_lot, list_lots, get_lot,
          download_lot]  # fmt: skip
