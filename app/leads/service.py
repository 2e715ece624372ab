"""The lead operations every face calls (REST under `/v1/leads`, the agent tools): plan,
count, preview, ranked pages, prospecting in one call, and the free export.

Ranking: by score (`app.leads.score`), then CNPJ; pages, free exports and lots list the same
rows in the same order. A preview shows scores, reasons and companies, and contacts masked
(`c***@dominio.com.br`, `(41) ****-**34`): enough to judge the list's quality, not to use it;
ranked pages (`gerar_leads_quentes`), exports and lots give the contacts in full.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from app.context import Backends
from app.domain import codes
from app.domain.contact import full_contact
from app.domain.record import Contato, ContatoArmazenado, Disponibilidade, Telefone
from app.domain.summary import Fonte, Resumo, resumo
from app.errors import BadRequestError
from app.leads.filters import FiltrosLead, Resolvidos, SegmentoLido, resolve
from app.leads.score import Motivo, explain
from app.lib import paging
from app.lib.elastic import Hit, body, decoder
from app.lib.listing import Listing, fetch
from app.lib.operations import Custo, Operacao
from app.market.service import Contagem, labelled
from app.search import filters as f

PLANEJAR = Operacao("planejar_leads_quentes", Custo.ANALISE)
CONTAR = Operacao("contar_leads_quentes", Custo.BUSCA)
PREVER = Operacao("prever_leads_quentes", Custo.BUSCA)
GERAR = Operacao("gerar_leads_quentes", Custo.BUSCA)
PROSPECTAR = Operacao("prospectar_empresas_com_ia", Custo.ANALISE)
TIMEOUT = "10s"
MAX_PREVIEW = 10
SORT: list[dict[str, Any]] = [{"_score": "desc"}, {"cnpj": "asc"}]
LISTING = Listing(
    lista="leads",
    sort=SORT,
    after=tuple[float, str],
    fields=("contato", "matriz_filial.codigo"),
)
USO_RESPONSAVEL = (
    "Dados públicos do Cadastro Nacional da Pessoa Jurídica (Receita Federal). Na LGPD, a "
    "prospecção B2B se apoia no legítimo interesse (art. 7º, IX): use estes contatos só para "
    "oferta pertinente à atividade da empresa, identifique-se em cada contato, ofereça um meio "
    "simples de recusar (opt-out) e atenda pedidos de exclusão de imediato, mantendo uma lista "
    "de quem recusou. E-mails e telefones de MEI e empresários individuais são dados pessoais. "
    "Não revenda a lista nem a cruze com dados sensíveis."
)


class EmpresaLead(Resumo, kw_only=True):
    """The company of a lead (one establishment)."""


class Lead(msgspec.Struct, kw_only=True):
    empresa: EmpresaLead
    score: int
    """0 to 100: the sum of `motivo`'s points."""
    motivo: list[Motivo]
    """Every score component with the points this company earned and why."""
    contatos: Contato
    filtros_aplicados: dict[str, Any]
    uso_responsavel: str


class Chamada(msgspec.Struct, kw_only=True):
    """A call to make next: the tool and its arguments (REST: the twin route)."""

    ferramenta: str
    argumentos: dict[str, Any]
    para_que: str


class ContagemLeads(msgspec.Struct, kw_only=True):
    total: int
    com_email: int
    com_telefone: int
    por_uf: list[Contagem]
    por_porte: list[Contagem]
    segmentos: list[SegmentoLido]
    filtros_aplicados: dict[str, Any]
    argumentos: dict[str, Any]
    """The same filters as explicit arguments (codes instead of words), for the next calls."""


class Relaxamento(msgspec.Struct, kw_only=True):
    mudanca: str
    argumentos: dict[str, Any]
    total: int


class PlanoLeads(msgspec.Struct, kw_only=True):
    segmentos: list[SegmentoLido]
    filtros_aplicados: dict[str, Any]
    argumentos: dict[str, Any]
    total: int
    com_email: int
    com_telefone: int
    quantidade_desejada: int
    suficiente: bool
    relaxar: list[Relaxamento]
    """When there are fewer than `quantidade_desejada`: what to drop, and the count then."""
    proximas_chamadas: list[Chamada]
    uso_responsavel: str


class Previa(msgspec.Struct, kw_only=True):
    total: int
    data: list[Lead]
    contatos_mascarados: bool
    filtros_aplicados: dict[str, Any]


class PaginaLeads(msgspec.Struct, kw_only=True):
    total: int
    data: list[Lead]
    next_cursor: str | None
    filtros_aplicados: dict[str, Any]


class Prospeccao(msgspec.Struct, kw_only=True):
    objetivo: str
    plano: PlanoLeads
    amostra: list[Lead]
    proximos_passos: list[str]


# ---------------------------------------------------------------- inputs

Quantidade = Annotated[
    int, msgspec.Meta(ge=1, le=100_000, description="Quantos leads você quer no fim.")
]


class PlanejaLeads(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Plano de uma lista de leads: segmentos, filtros, contagem, o que relaxar, próximas
    chamadas."""

    quantidade_desejada: Quantidade = 100


class ContaLeads(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Contagem exata de leads para os filtros, por UF e porte."""


class PreveLeads(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Amostra curta pontuada (contatos mascarados)."""

    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PREVIEW, description="Até 10.")] = 5


class GeraLeads(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Leads ordenados por score, com contatos, em páginas."""

    limit: Annotated[int, msgspec.Meta(ge=1, le=f.MAX_LIMIT, description="Até 100.")] = 20
    cursor: paging.CursorTexto | None = None


class ProspectaEmpresas(FiltrosLead, kw_only=True, forbid_unknown_fields=True):
    """Objetivo comercial -> plano, amostra e próximos passos numa chamada."""

    quantidade_desejada: Quantidade = 100
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PREVIEW, description="Tamanho da amostra.")] = 5


def filters_of(entrada: FiltrosLead) -> FiltrosLead:
    """The lead filters of a tool's input (without its own fields)."""
    values = {name: getattr(entrada, name) for name in FiltrosLead.__struct_fields__}
    return FiltrosLead(**values)


# ---------------------------------------------------------------- reading hits

_counts = decoder(msgspec.Raw)


def _contact(source: Fonte) -> Contato:
    stored = source.contato
    if stored is None:
        return full_contact(
            ContatoArmazenado(telefones=[], emails=[], origem="",
                              disponibilidade=Disponibilidade(telefone=False, email=False))
        )  # fmt: skip
    return full_contact(
        ContatoArmazenado(
            telefones=[Telefone(ddd=t.ddd, numero=t.numero, tipo=t.tipo) for t in stored.telefones],
            emails=stored.emails,
            origem=stored.origem,
            disponibilidade=stored.disponibilidade or Disponibilidade(telefone=False, email=False),
        )
    )


def mask_email(address: str) -> str:
    user, at, domain = address.partition("@")
    return f"{user[:1]}***{at}{domain}" if at else "***"


def mask_phone(phone: Telefone) -> Telefone:
    number = phone.numero
    hidden = "*" * max(len(number) - 2, 0) + number[-2:]
    return Telefone(ddd=phone.ddd, numero=hidden, tipo=phone.tipo)


def masked(contact: Contato) -> Contato:
    """The contacts of a preview: each e-mail's first letter and domain, each phone's DDD and
    last two digits; the checks say which are valid."""
    return Contato(
        telefones=[mask_phone(phone) for phone in contact.telefones],
        emails=[mask_email(address) for address in contact.emails],
        origem=contact.origem,
        validacao=[
            msgspec.structs.replace(
                check,
                valor=mask_email(check.valor) if check.tipo == "email"
                else check.valor[:2] + "*" * max(len(check.valor) - 4, 0) + check.valor[-2:],
            )
            for check in contact.validacao
        ],
        disponibilidade=contact.disponibilidade,
    )  # fmt: skip


def lead_of(hit: Hit[Fonte], resolved: Resolvidos, applied: dict[str, Any]) -> Lead:
    total, reasons = explain(resolved.componentes, hit.matched_queries)
    return Lead(
        empresa=EmpresaLead(**resumo(hit.source)),
        score=total,
        motivo=reasons,
        contatos=_contact(hit.source),
        filtros_aplicados=applied,
        uso_responsavel=USO_RESPONSAVEL,
    )


# ---------------------------------------------------------------- operations


class _Count(msgspec.Struct):
    doc_count: int


_count = msgspec.json.Decoder(_Count)


def _sub(found: Any, name: str) -> int:
    raw = (found.aggregations or {}).get(name)
    return _count.decode(raw).doc_count if raw is not None else 0


async def _count_resolved(backends: Backends, resolved: Resolvidos) -> ContagemLeads:
    response = await backends.es.search(
        index=backends.alias,
        size=0,
        track_total_hits=True,
        query=resolved.counted(),
        aggregations={
            "uf": {"terms": {"field": "endereco.uf", "size": 30}},
            "porte": {"terms": {"field": "porte.codigo", "size": 10}},
            "email": {"filter": {"term": {"contato.disponibilidade.email": True}}},
            "telefone": {"filter": {"term": {"contato.disponibilidade.telefone": True}}},
        },
        timeout=TIMEOUT,
    )
    found = _counts.decode(body(response))
    return ContagemLeads(
        total=found.hits.total.value,
        com_email=_sub(found, "email"),
        com_telefone=_sub(found, "telefone"),
        por_uf=labelled(found.buckets("uf"), codes.ADDRESS_UF_NOMES),
        por_porte=labelled(found.buckets("porte"), codes.PORTE),
        segmentos=resolved.segmentos,
        filtros_aplicados=resolved.aplicados,
        argumentos=resolved.argumentos,
    )


async def contar(backends: Backends, entrada: ContaLeads) -> ContagemLeads:
    """The exact number of leads for the filters, with e-mail, with phone, by UF and porte."""
    return await _count_resolved(backends, await resolve(backends, entrada))


async def _totals(backends: Backends, queries: list[dict[str, Any]]) -> list[int]:
    searches: list[dict[str, Any]] = []
    for query in queries:
        searches += [
            {"index": backends.alias},
            {"size": 0, "track_total_hits": True, "query": query, "timeout": TIMEOUT},
        ]
    response = await backends.es.msearch(searches=searches)
    answers = msgspec.json.decode(body(response))["responses"]
    return [int(answer.get("hits", {}).get("total", {}).get("value", 0)) for answer in answers]


_RELAXATIONS: tuple[tuple[str, str, Any], ...] = (
    ("com_email", "não exigir e-mail", None),
    ("com_telefone", "não exigir telefone", None),
    ("incluir_secundarias", "incluir quem tem a atividade só como secundária", True),
    ("porte", "qualquer porte", None),
    ("cidade", "o estado todo, não só a cidade", None),
    ("uf", "o Brasil todo", None),
    ("capital_min", "sem capital mínimo", None),
)


async def _relaxations(backends: Backends, argumentos: dict[str, Any]) -> list[Relaxamento]:
    options: list[tuple[str, dict[str, Any]]] = []
    for name, label, value in _RELAXATIONS:
        current = argumentos.get(name)
        if current is None or current == value or (name == "incluir_secundarias" and current):
            continue
        changed = {k: v for k, v in argumentos.items() if k != name}
        if value is not None:
            changed[name] = value
        options.append((label, changed))
    kept: list[tuple[str, dict[str, Any]]] = []
    resolved = []
    for label, args in options:
        try:
            resolved.append(await resolve(backends, msgspec.convert(args, FiltrosLead)))
        except BadRequestError:  # it leaves nothing to search by (the place was the only filter)
            continue
        kept.append((label, args))
    if not kept:
        return []
    totals = await _totals(backends, [item.counted() for item in resolved])
    return [
        Relaxamento(mudanca=label, argumentos=args, total=total)
        for (label, args), total in zip(kept, totals, strict=True)
    ]


def _next_calls(argumentos: dict[str, Any], quantidade: int) -> list[Chamada]:
    return [
        Chamada(ferramenta="contar_leads_quentes", argumentos=argumentos,
                para_que="a contagem exata, por UF e porte"),
        Chamada(ferramenta="prever_leads_quentes", argumentos={**argumentos, "limit": 5},
                para_que="uma amostra pontuada, com os motivos (contatos mascarados)"),
        Chamada(ferramenta="gerar_leads_quentes", argumentos={**argumentos, "limit": 20},
                para_que="os leads por score, com contatos, página a página"),
        Chamada(ferramenta="exportar_leads_gratis",
                argumentos={**argumentos, "quantidade": min(quantidade, 50)},
                para_que="um CSV pequeno grátis (limite diário)"),
        Chamada(
            ferramenta="criar_lote_leads",
            argumentos={**argumentos, "quantidade": quantidade, "formato": "xlsx",
                        "confirmar_lgpd": True, "uso_responsavel": True},
            para_que="o arquivo completo (CSV, XLSX ou PDF), em plano pago, com a LGPD "
            "confirmada pelo usuário",
        ),
    ]  # fmt: skip


async def planejar(backends: Backends, entrada: PlanejaLeads) -> PlanoLeads:
    """Segments found, filters, the count, what to relax when there are too few, and the next
    calls with their arguments."""
    resolved = await resolve(backends, entrada)
    counted = await _count_resolved(backends, resolved)
    enough = counted.total >= entrada.quantidade_desejada
    return PlanoLeads(
        segmentos=resolved.segmentos,
        filtros_aplicados=resolved.aplicados,
        argumentos=resolved.argumentos,
        total=counted.total,
        com_email=counted.com_email,
        com_telefone=counted.com_telefone,
        quantidade_desejada=entrada.quantidade_desejada,
        suficiente=enough,
        relaxar=[] if enough else await _relaxations(backends, resolved.argumentos),
        proximas_chamadas=_next_calls(resolved.argumentos, entrada.quantidade_desejada),
        uso_responsavel=USO_RESPONSAVEL,
    )


async def _page(
    backends: Backends, resolved: Resolvidos, limit: int, cursor: str | None
) -> tuple[list[Lead], int, str | None]:
    page = await fetch(
        backends,
        LISTING,
        resolved.query,
        limit=limit,
        cursor=cursor,
        request_digest=paging.digest({"route": "leads", **resolved.argumentos}),
        timeout=TIMEOUT,
    )
    leads = [lead_of(hit, resolved, resolved.aplicados) for hit in page.hits]
    return leads, page.total, page.next_cursor


async def prever(backends: Backends, entrada: PreveLeads) -> Previa:
    """The best `limit` leads, contacts masked."""
    resolved = await resolve(backends, entrada)
    leads, total, _ = await _page(backends, resolved, entrada.limit, None)
    for lead in leads:
        lead.contatos = masked(lead.contatos)
    return Previa(
        total=total, data=leads, contatos_mascarados=True, filtros_aplicados=resolved.aplicados
    )


async def gerar(backends: Backends, entrada: GeraLeads) -> PaginaLeads:
    """Leads by score then CNPJ, contacts in full, in cursor pages."""
    resolved = await resolve(backends, entrada)
    leads, total, next_cursor = await _page(backends, resolved, entrada.limit, entrada.cursor)
    return PaginaLeads(
        total=total, data=leads, next_cursor=next_cursor, filtros_aplicados=resolved.aplicados
    )


async def prospectar(backends: Backends, entrada: ProspectaEmpresas) -> Prospeccao:
    """An objective's plan, a sample and the next steps in one call."""
    if entrada.objetivo is None and entrada.segmento is None:
        raise f.bad("objetivo", "Informe objetivo (ou segmento).")
    plan = await planejar(
        backends,
        PlanejaLeads(**msgspec.structs.asdict(filters_of(entrada)),
                     quantidade_desejada=entrada.quantidade_desejada),
    )  # fmt: skip
    sample = await prever(
        backends, PreveLeads(**msgspec.structs.asdict(filters_of(entrada)), limit=entrada.limit)
    )
    steps = [
        f"{plan.total} empresas atendem aos filtros ({plan.com_email} com e-mail, "
        f"{plan.com_telefone} com telefone).",
    ]
    if not plan.suficiente and plan.relaxar:
        best = max(plan.relaxar, key=lambda item: item.total)
        steps.append(f"Para chegar a {plan.quantidade_desejada}: {best.mudanca} "
                     f"({best.total} empresas).")  # fmt: skip
    steps += [
        "Veja a amostra e os motivos de cada score; ajuste os filtros se preciso.",
        "gerar_leads_quentes dá os leads com contatos; exportar_leads_gratis, um CSV pequeno; "
        "criar_lote_leads, o arquivo completo (plano pago, confirmar_lgpd e uso_responsavel).",
        "Em todo contato: identifique-se e ofereça opt-out (LGPD).",
    ]
    return Prospeccao(
        objetivo=entrada.objetivo or entrada.segmento or "",
        plano=plan,
        amostra=sample.data,
        proximos_passos=steps,
    )
