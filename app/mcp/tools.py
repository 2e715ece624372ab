"""The agent tools: each one a service function with its operation, its input and output Structs
(whose JSON Schemas are the tool's `inputSchema` and `outputSchema`) and a description in
Portuguese with an example. REST routes call the same functions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec

from app.context import Backends
from app.domain.codes import UF
from app.domain.record import Empresa
from app.lib import paging
from app.lib.operations import Custo, Operacao
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

Run = Callable[[Backends, Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    operation: Operacao
    title: str
    description: str
    input: type[Any]
    output: type[Any]
    run: Run
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
                    "readOnlyHint": True,
                    "destructiveHint": False,
                    "idempotentHint": True,
                    "openWorldHint": False,
                },
            },
        )

    @property
    def name(self) -> str:
        return self.operation.nome


Texto = Annotated[str, msgspec.Meta(min_length=1, max_length=f.MAX_TEXT)]
Limite = Annotated[int, msgspec.Meta(ge=1, le=f.MAX_LIMIT, description="Itens por página.")]
Cursor = paging.CursorTexto
Uf = Annotated[UF, msgspec.Meta(description="Sigla da UF.", examples=["SP"])]
ComEmail = Annotated[bool, msgspec.Meta(description="Só empresas com e-mail válido.")]
ComTelefone = Annotated[bool, msgspec.Meta(description="Só empresas com telefone válido.")]
Cidade = Annotated[
    str,
    msgspec.Meta(
        max_length=100,
        description="Município: nome (acentos opcionais), código da Receita (4) ou IBGE (7).",
        examples=["Curitiba", "3550308"],
    ),
]
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
    cidade: Cidade | None = None
    cnae: Cnae | None = None
    situacao: Situacao | None = None
    com_email: ComEmail | None = None
    com_telefone: ComTelefone | None = None
    limit: Limite = f.DEFAULT_LIMIT
    cursor: Cursor | None = None

    def filtros(self) -> f.Filtros:
        return f.Filtros(
            nome=self.nome, uf=self.uf, municipio=self.cidade, cnae=self.cnae,
            situacao=self.situacao, com_email=self.com_email, com_telefone=self.com_telefone,
            limit=self.limit, cursor=self.cursor,
        )  # fmt: skip


class BuscaRegiaoCnae(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Empresas de uma atividade (CNAE) numa região."""

    cnae: Cnae
    uf: Uf | None = None
    cidade: Cidade | None = None
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

TOOLS = (
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
BY_NAME = {tool.name: tool for tool in TOOLS}
