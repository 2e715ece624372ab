"""The agent tools: each one a service function with its operation, its input and output Structs
(whose JSON Schemas are the tool's `inputSchema` and `outputSchema`) and a description in
Portuguese with an example. REST routes call the same functions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec

from app.context import Backends
from app.domain.record import Empresa
from app.leads import lots
from app.leads import service as leads
from app.lib import paging
from app.lib.operations import Custo, Operacao
from app.lib.wording import free_text
from app.lookup.service import CONSULTAR_CNPJ, ConsultaCnpj, consultar
from app.market.service import (
    DESCOBRIR_SEGMENTOS,
    MAPEAR_MERCADO,
    BuscaSegmentos,
    MapaMercado,
    Mercado,
    Segmentos,
    mapa,
    segmentos,
)
from app.mcp.schema import object_schema
from app.partners.related import BUSCAR_SOCIOS_RELACIONADOS, BuscaSocios, relacionados
from app.partners.related import Pagina as PaginaSocios
from app.related.service import (
    ENCONTRAR_RELACIONADAS,
    BuscaRelacionadas,
    Relacionadas,
    relacionadas,
)
from app.related.similar import ENCONTRAR_SIMILARES, BuscaSimilares, Similares, similares
from app.search import filters as f
from app.search.service import Modo, Pagina, search

Run = Callable[..., Awaitable[Any]]
"""`run(backends, input)`, or `run(backends, identity, input)` for a tool of the account."""


@dataclass(frozen=True, slots=True)
class Tool:
    operation: Operacao
    title: str
    description: str
    input: type[Any]
    output: type[Any]
    run: Run
    account: bool = False
    """The tool acts for the caller's account (exports, lots): `run` takes its identity."""
    read_only: bool = True
    renamed: dict[str, str] = field(default_factory=dict)
    """Service fields its arguments stand for, by the service's name (`municipio`: `cidade`):
    a refusal is worded in the arguments' names."""
    definition: dict[str, Any] = field(init=False, compare=False)
    """What `tools/list` shows, built once."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "definition",
            {
                "name": self.operation.nome,
                "title": self.title,
                "description": self.description,
                "inputSchema": object_schema(self.input),
                "outputSchema": object_schema(self.output),
                "annotations": {
                    "title": self.title,
                    "readOnlyHint": self.read_only,
                    "destructiveHint": False,
                    "idempotentHint": self.read_only,
                    "openWorldHint": False,
                },
            },
        )

    @property
    def name(self) -> str:
        return self.operation.nome


Texto = Annotated[
    str, msgspec.Meta(min_length=1, max_length=f.MAX_TEXT, pattern=free_text(required=True))
]
Limite = Annotated[int, msgspec.Meta(ge=1, le=f.MAX_LIMIT, description="Itens por página.")]
Cursor = paging.CursorTexto
Uf = Annotated[
    str,
    msgspec.Meta(
        max_length=f.MAX_LIST_TEXT,
        description="Sigla da UF, ou siglas separadas por vírgula; EX para endereço no exterior.",
        examples=["SP", "SP,RJ"],
        # documented only: the search reads it as REST's `uf` (either case), naming a bad one
        extra_json_schema={"pattern": f.UF_LIST},
    ),
]
ComEmail = Annotated[bool, msgspec.Meta(description="Só empresas com e-mail válido.")]
ComTelefone = Annotated[bool, msgspec.Meta(description="Só empresas com telefone válido.")]
Cnae = Annotated[
    str,
    msgspec.Meta(
        max_length=16,
        description=(
            "Código CNAE da atividade principal: 2 (divisão), 3 (grupo), 4-5 (classe) ou 7 "
            "dígitos (subclasse); pontuação opcional."
        ),
        examples=["5611", "4721-1/02"],
    ),
]
Situacao = Annotated[
    str,
    msgspec.Meta(
        max_length=f.MAX_LIST_TEXT,
        description="Situação cadastral: ativa, baixada, suspensa, inapta, nula (ou 02, 08...).",
        examples=["ativa"],
    ),
]


class BuscaEmpresas(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Busca de empresas por nome e filtros; informe ao menos um."""

    nome: (
        Annotated[
            Texto,
            msgspec.Meta(
                description="Razão social ou nome fantasia, do jeito que se escreve.",
                examples=["padaria pão quente"],
            ),
        ]
        | None
    ) = None
    uf: Uf | None = None
    cidade: f.Cidade | None = None
    cnae: Cnae | None = None
    situacao: Situacao | None = None
    com_email: ComEmail | None = None
    com_telefone: ComTelefone | None = None
    regime_tributario: f.RegimeFiltro | None = None
    limit: Limite = f.DEFAULT_LIMIT
    cursor: Cursor | None = None

    def filtros(self) -> f.Filtros:
        return f.Filtros(
            nome=self.nome, uf=self.uf, municipio=self.cidade, cnae=self.cnae,
            situacao=self.situacao, com_email=self.com_email, com_telefone=self.com_telefone,
            regime_tributario=self.regime_tributario, limit=self.limit, cursor=self.cursor,
        )  # fmt: skip


class BuscaRegiaoCnae(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Empresas de uma atividade (CNAE) numa região."""

    cnae: Cnae
    uf: Uf | None = None
    cidade: f.Cidade | None = None
    com_email: ComEmail | None = None
    com_telefone: ComTelefone | None = None
    situacao: Situacao | None = None
    limit: Limite = f.DEFAULT_LIMIT
    cursor: Cursor | None = None

    def filtros(self) -> f.Filtros:
        return f.Filtros(
            cnae=self.cnae, uf=self.uf, municipio=self.cidade, com_email=self.com_email,
            com_telefone=self.com_telefone, situacao=self.situacao, limit=self.limit,
            cursor=self.cursor,
        )  # fmt: skip


async def _consultar(backends: Backends, entrada: ConsultaCnpj) -> Empresa:
    return await consultar(backends, entrada)


async def _buscar(backends: Backends, entrada: BuscaEmpresas | BuscaRegiaoCnae) -> Pagina:
    return await search(backends, entrada.filtros(), Modo.SEEK)


_PAGED = " Páginas: passe o next_cursor da resposta como cursor, com os mesmos argumentos."

TOOLS: tuple[Tool, ...] = (
    Tool(
        operation=CONSULTAR_CNPJ,
        title="Consultar CNPJ",
        description=(
            "Ficha completa de um estabelecimento pelo CNPJ: razão social, nome fantasia, "
            "situação cadastral, abertura, CNAE principal e secundários, natureza jurídica, "
            "porte, capital social, endereço, telefones, e-mails, sócios (QSA), Simples/MEI e "
            'inscrições estaduais. Exemplo: {"cnpj": "33683111000280"}. Custo: 1 consulta.'
        ),
        input=ConsultaCnpj,
        output=Empresa,
        run=_consultar,
    ),
    Tool(
        operation=Operacao("buscar_empresas", Custo.BUSCA),
        title="Buscar empresas",
        description=(
            "Busca empresas por nome (razão social ou fantasia, tolera erros de digitação e "
            "abreviações) e filtros de UF, cidade, CNAE, situação e contato. Devolve resumos "
            "(CNPJ, nomes, situação, CNAE, município) por relevância; a ficha completa vem de "
            'consultar_cnpj. Exemplo: {"nome": "padaria pão quente", "uf": "SP"}. Custo: 1 '
            "busca." + _PAGED
        ),
        input=BuscaEmpresas,
        output=Pagina,
        run=_buscar,
        renamed={"municipio": "cidade"},
    ),
    Tool(
        operation=BUSCAR_SOCIOS_RELACIONADOS,
        title="Buscar empresas de um sócio",
        description=(
            "Empresas que têm um sócio com este nome (acentos e caixa não importam), e/ou este "
            "documento (CPF mascarado pela Receita, ***NNNNNN**, ou CNPJ), e/ou faixa etária "
            "(0-9, com nome); cada empresa traz os sócios que casaram. Exemplo: "
            '{"nome": "Maria da Silva Santos"}. Custo: 1 busca.' + _PAGED
        ),
        input=BuscaSocios,
        output=PaginaSocios,
        run=relacionados,
    ),
    Tool(
        operation=DESCOBRIR_SEGMENTOS,
        title="Descobrir segmentos CNAE",
        description=(
            "Traduz uma atividade em palavras para subclasses CNAE (com seção, divisão, grupo "
            "e classe) e diz quantas empresas ativas cada uma tem, no Brasil ou numa UF. Use "
            'antes de filtrar por CNAE. Exemplo: {"termo": "padaria", "uf": "PR"}. Custo: 1 '
            "busca."
        ),
        input=BuscaSegmentos,
        output=Segmentos,
        run=segmentos,
    ),
    Tool(
        operation=Operacao("buscar_empresas_por_regiao_cnae", Custo.BUSCA),
        title="Empresas de uma atividade numa região",
        description=(
            "Empresas cuja atividade principal é o CNAE informado (2 a 7 dígitos), numa UF e/ou "
            "cidade, opcionalmente só com e-mail ou telefone válidos e numa situação cadastral. "
            'Exemplo: {"cnae": "5611", "uf": "PR", "cidade": "Curitiba", "com_email": true}. '
            "Custo: 1 busca." + _PAGED
        ),
        input=BuscaRegiaoCnae,
        output=Pagina,
        run=_buscar,
        renamed={"municipio": "cidade"},
    ),
    Tool(
        operation=ENCONTRAR_RELACIONADAS,
        title="Empresas relacionadas",
        description=(
            "Empresas que compartilham um sócio, telefone, e-mail ou endereço (CEP e número): "
            "kind diz o quê, value é o valor ou um CNPJ (cujos sócios, telefones, e-mails ou "
            "endereço são procurados nas outras empresas). Cada empresa diz o que compartilha "
            '(em_comum). Exemplo: {"kind": "telefone", "value": "33683111000280"}. Custo: 1 '
            "busca." + _PAGED
        ),
        input=BuscaRelacionadas,
        output=Relacionadas,
        run=relacionadas,
    ),
    Tool(
        operation=ENCONTRAR_SIMILARES,
        title="Empresas similares",
        description=(
            "Empresas ativas da mesma classe CNAE de um CNPJ, no município, na UF ou no Brasil "
            "(escopo), ordenadas pelo que mais têm em comum (subclasse, porte, faixa de capital, "
            "município), cada uma com os motivos. Exemplo: "
            '{"cnpj": "33683111000280", "escopo": "uf", "limit": 10}. Custo: 1 busca.'
        ),
        input=BuscaSimilares,
        output=Similares,
        run=similares,
    ),
    Tool(
        operation=MAPEAR_MERCADO,
        title="Mapear mercado",
        description=(
            "Mapa de um segmento (código CNAE, categoria ou palavras da atividade): total, "
            "ativas, contagens por UF, município (os maiores), porte, situação e ano de abertura. "
            "Use para dimensionar um mercado antes de buscar empresas. Exemplo: "
            '{"segmento": "restaurantes", "uf": "PR", "com_email": true}. Custo: 1 análise.'
        ),
        input=MapaMercado,
        output=Mercado,
        run=mapa,
    ),
)
_FILTERS = (
    " Filtros: objetivo (texto livre), segmento, cnae (códigos separados por vírgula), "
    "cnae_grupo (divisão de 2 dígitos), uf, cidade, porte, situacao (padrão ativa), com_email/"
    "exigir_email, com_telefone/exigir_telefone, filtro (sem_email, matriz, sem_mei...), "
    "matriz, simples, mei, capital_min/max, abertura_de/ate, incluir_secundarias."
)
_SCORE = (
    " Score 0-100: situação ativa 25, e-mail válido 15, telefone válido 15, atividade principal "
    "15 (secundária 5), porte 5, capital 5, idade 10, matriz 5, não MEI 5; motivo lista cada "
    "componente."
)
LEAD_TOOLS = (
    Tool(
        operation=leads.PLANEJAR,
        title="Planejar leads quentes",
        description=(
            "Primeiro passo de uma lista de leads: lê o objetivo comercial (ou segmento/CNAE), "
            "mostra os segmentos CNAE encontrados, os filtros aplicados, quantas empresas "
            "atendem (com e-mail, com telefone), o que relaxar se forem poucas, e as próximas "
            "chamadas com os argumentos explícitos (argumentos). Exemplo: "
            '{"objetivo": "vendo software de contabilidade para pequenos restaurantes no '
            'Paraná", "exigir_email": true, "quantidade_desejada": 500}. Custo: 1 análise.'
            + _FILTERS
        ),
        input=leads.PlanejaLeads,
        output=leads.PlanoLeads,
        run=leads.planejar,
    ),
    Tool(
        operation=leads.CONTAR,
        title="Contar leads quentes",
        description=(
            "Contagem exata de leads para os filtros, com e-mail, com telefone, por UF e por "
            'porte. Exemplo: {"cnae": "5611201", "uf": "PR", "com_email": true}. Custo: 1 '
            "busca." + _FILTERS
        ),
        input=leads.ContaLeads,
        output=leads.ContagemLeads,
        run=leads.contar,
    ),
    Tool(
        operation=leads.PREVER,
        title="Prever leads quentes",
        description=(
            "Amostra curta (até 10) dos melhores leads, com score e motivo; os contatos vêm "
            "mascarados (primeira letra e domínio do e-mail, DDD e dois últimos dígitos do "
            "telefone) para julgar a qualidade antes de gerar ou exportar. Exemplo: "
            '{"cnae": "5611201", "uf": "PR", "limit": 5}. Custo: 1 busca.' + _SCORE
        ),
        input=leads.PreveLeads,
        output=leads.Previa,
        run=leads.prever,
    ),
    Tool(
        operation=leads.GERAR,
        title="Gerar leads quentes",
        description=(
            "Leads ordenados por score (depois CNPJ), com contatos completos, motivo e o aviso "
            'de uso responsável, em páginas. Exemplo: {"cnae": "5611201", "uf": "PR", '
            '"com_email": true, "limit": 20}. Custo: 1 busca por página.' + _SCORE + _PAGED
        ),
        input=leads.GeraLeads,
        output=leads.PaginaLeads,
        run=leads.gerar,
    ),
    Tool(
        operation=leads.PROSPECTAR,
        title="Prospectar empresas com IA",
        description=(
            "Objetivo comercial em palavras -> plano (segmentos, filtros, contagem, o que "
            "relaxar), amostra pontuada (contatos mascarados) e próximos passos, numa chamada. "
            'Exemplo: {"objetivo": "quero vender uniformes para clínicas odontológicas em SP"}. '
            "Custo: 1 análise."
        ),
        input=leads.ProspectaEmpresas,
        output=leads.Prospeccao,
        run=leads.prospectar,
    ),
    Tool(
        operation=lots.EXPORTAR_GRATIS,
        title="Exportar leads grátis",
        description=(
            "CSV pequeno (até 50 leads, os melhores por score, separador ;) na própria "
            "resposta; 3 por dia por conta e por fingerprint (dia de Brasília). Exemplo: "
            '{"cnae": "5611201", "uf": "PR", "quantidade": 20, "fingerprint": "meu-app-01"}. '
            "Custo: 1 exportação."
        ),
        input=lots.ExportaGratis,
        output=lots.ExportacaoGratis,
        run=lots.exportar_gratis,
        account=True,
        read_only=False,
    ),
    Tool(
        operation=lots.CRIAR_LOTE,
        title="Criar lote de leads",
        description=(
            "Lote assíncrono (CSV, XLSX ou PDF) com os melhores leads por score, na mesma ordem "
            "de gerar_leads_quentes. Exige plano pago e confirmar_lgpd e uso_responsavel "
            "verdadeiros, depois que o usuário ler o aviso de uso responsável; desconta da "
            "franquia mensal. Responde com o id e o estado; acompanhe com consultar_lote_leads "
            "(ou pelo webhook_url, com eventos assinados lote.concluido e lote.falhou). "
            "Para repetir com segurança uma chamada sem resposta, envie chave_idempotencia (um "
            "UUID): a repetição responde o mesmo lote com repetido: true, sem descontar de novo. "
            'Exemplo: {"cnae": "5611201", "uf": "PR", "quantidade": 1000, "formato": "xlsx", '
            '"confirmar_lgpd": true, "uso_responsavel": true}. Custo: 1 exportação.'
        ),
        input=lots.NovoLote,
        output=lots.LoteCriado,
        run=lots.criar,
        account=True,
        read_only=False,
    ),
    Tool(
        operation=lots.CONSULTAR_LOTE,
        title="Consultar lote de leads",
        description=(
            "Estado de um lote da conta (pendente, processando, concluido, falhou, expirado), "
            "linhas, tamanho e, quando concluído, download_url (GET com a mesma chave em "
            'Authorization) e até quando baixar. Exemplo: {"id": 42}.'
        ),
        input=lots.ConsultaLote,
        output=lots.Lote,
        run=lots.consultar,
        account=True,
    ),
)
TOOLS = TOOLS + LEAD_TOOLS
BY_NAME = {tool.name: tool for tool in TOOLS}
