"""The agent prompts: message templates that walk an agent through the right tools for a job.
Each declares its arguments (described, required or not); `prompts/get` fills them in."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from app.domain import cnpj, codes
from app.lib.wording import CONTROL, CONTROL_REASON, shown
from app.mcp.protocol import INVALID_PARAMS, RpcError
from app.related.similar import Escopo

MAX_ARGUMENT = 500


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[Argument, ...]
    template: str
    """`str.format` text over the arguments (missing optional ones read as `(não informado)`)."""
    one_of: tuple[str, ...] = ()
    """Optional arguments of which at least one must be given."""

    def listed(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": [
                {"name": a.name, "description": a.description, "required": a.required}
                for a in self.arguments
            ],
        }

    def render(self, values: dict[str, Any]) -> dict[str, Any]:
        """The prompt's messages with `values` filled in; -32602 for a missing required
        argument (a value of spaces and format characters is none), an unknown one, a value
        that is not free text (`CONTROLS`), or a `cnpj`, `uf` or `escopo` the tools would
        refuse (`_CHECKS`)."""
        known = {a.name for a in self.arguments}
        unknown = sorted(set(values) - known)
        if unknown:
            names = ", ".join(shown(name) for name in unknown[:5])
            raise RpcError(INVALID_PARAMS, f"Argumento desconhecido: {names}.",
                          data={"aceitos": sorted(known)})  # fmt: skip
        for name, value in values.items():
            if not isinstance(value, str):
                raise RpcError(INVALID_PARAMS, f"{name}: o valor deve ser texto.")
            if len(value) > MAX_ARGUMENT:
                raise RpcError(INVALID_PARAMS, f"{name}: texto de até {MAX_ARGUMENT} caracteres.")
            if CONTROL.search(value):
                raise RpcError(INVALID_PARAMS, f"{name}: {CONTROL_REASON}.")
        values = {name: value.strip() for name, value in values.items() if _visible(value)}
        for name, value in values.items():
            check = _CHECKS.get(name)
            refusal = check(value) if check is not None else None
            if refusal is not None:
                raise RpcError(INVALID_PARAMS, f"{name}: {refusal}")
        missing = [a.name for a in self.arguments if a.required and not values.get(a.name)]
        if missing:
            raise RpcError(INVALID_PARAMS, f"Argumento obrigatório: {', '.join(missing)}.")
        if self.one_of and not any(values.get(name) for name in self.one_of):
            named = " ou ".join(self.one_of)
            raise RpcError(INVALID_PARAMS, f"Informe ao menos um destes argumentos: {named}.")
        filled = {a.name: values.get(a.name) or "(não informado)" for a in self.arguments}
        return {
            "description": self.description,
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": self.template.format(**filled)},
                }
            ],
        }


def _visible(value: str) -> str:
    """`value` without its spaces and format characters (a zero-width space is no value)."""
    return "".join(c for c in value if unicodedata.category(c) != "Cf").strip()


def _cnpj(value: str) -> str | None:
    problem = cnpj.check(value).problem
    return None if problem is None else f"CNPJ inválido: {cnpj.MESSAGES[problem]}"


def _uf(value: str) -> str | None:
    return None if value.upper() in codes.UFS else "sigla de uma UF (SP, PR...)."


def _escopo(value: str) -> str | None:
    scopes = get_args(Escopo)
    return None if value in scopes else f"use {', '.join(scopes)}."


_CHECKS: dict[str, Callable[[str], str | None]] = {"cnpj": _cnpj, "uf": _uf, "escopo": _escopo}
"""What an argument of each name must be, as the tools it leads to take it: a prompt with a
bad value would walk the agent into their refusals."""

UF = Argument("uf", "Sigla da UF (SP, PR...), opcional.")
CIDADE = Argument("cidade", "Município, opcional.")

PROMPTS = (
    Prompt(
        "gerar_leads_b2b", "Gerar leads B2B",
        "Transforma um objetivo comercial numa lista de empresas para contato, com base legal.",
        (Argument("objetivo", "O que você vende e para quem (ex.: software de gestão para "
                  "restaurantes pequenos).", required=True), Argument("segmento",
                  "Atividade ou código CNAE, se já souber."), UF, CIDADE),
        "Quero gerar leads B2B. Objetivo: {objetivo}. Segmento: {segmento}. UF: {uf}. "
        "Cidade: {cidade}.\n"
        "1. planejar_leads_quentes com o objetivo (e segmento, uf, cidade se houver): veja os "
        "segmentos CNAE encontrados, a contagem e o que relaxar se forem poucas.\n"
        "2. contar_leads_quentes com os argumentos que o plano devolveu, para a contagem por UF "
        "e porte.\n"
        "3. prever_leads_quentes com limit=5: mostre a amostra, os scores e os motivos.\n"
        "4. Só depois de o usuário aprovar: gerar_leads_quentes (páginas), "
        "exportar_leads_gratis (CSV pequeno) ou criar_lote_leads (arquivo completo, plano "
        "pago), este só com confirmar_lgpd e uso_responsavel que o próprio usuário confirmou "
        "depois de ler o aviso de uso responsável; acompanhe com consultar_lote_leads.\n"
        "Contatos são dados pessoais: use com base legal (LGPD) e ofereça opt-out.",
    ),
    Prompt(
        "pesquisar_concorrentes", "Pesquisar concorrentes",
        "Encontra e compara os concorrentes de uma empresa na mesma atividade e região.",
        (Argument("cnpj", "CNPJ da empresa de referência.", required=True),
         Argument("escopo", "municipio, uf ou brasil (padrão: uf).")),
        "Pesquise os concorrentes da empresa de CNPJ {cnpj} (escopo: {escopo}).\n"
        "1. consultar_cnpj para conhecer atividade, porte, capital e endereço.\n"
        "2. encontrar_empresas_similares com o CNPJ e o escopo, e leia os motivos de cada "
        "uma.\n"
        "3. mapear_mercado_empresas com o CNAE principal para situar a empresa no mercado.\n"
        "Resuma: quantos concorrentes ativos, os mais parecidos e por quê.",
    ),
    Prompt(
        "encontrar_fornecedores", "Encontrar fornecedores",
        "Acha fornecedores ativos de um produto ou serviço numa região.",
        (Argument("produto", "O produto ou serviço procurado.", required=True), UF, CIDADE),
        "Encontre fornecedores de {produto} (UF: {uf}, cidade: {cidade}).\n"
        "1. descobrir_segmentos_cnae com o produto para achar as atividades de quem o fabrica "
        "ou vende.\n"
        "2. buscar_empresas_por_regiao_cnae com cada CNAE relevante, a região, "
        "situacao=ativa e com_telefone=true.\n"
        "3. Para os melhores, consultar_cnpj e confira situação, abertura e porte.",
    ),
    Prompt(
        "auto_preencher_crm", "Preencher CRM pelo CNPJ",
        "Preenche um cadastro de CRM a partir de um CNPJ.",
        (Argument("cnpj", "CNPJ da empresa.", required=True),),
        "Preencha o cadastro da empresa de CNPJ {cnpj} para o CRM.\n"
        "1. consultar_cnpj e copie razão social, nome fantasia, situação, abertura, CNAE "
        "principal, porte, capital social, endereço completo, telefones e e-mails.\n"
        "2. Liste os sócios (QSA) com qualificação.\n"
        "3. Aponte qualquer alerta: situação diferente de ATIVA, contatos inválidos "
        "(contato.validacao).",
    ),
    Prompt(
        "validar_fornecedor", "Validar fornecedor",
        "Verifica se um fornecedor está regular antes de contratar.",
        (Argument("cnpj", "CNPJ do fornecedor.", required=True),
         Argument("uf", "UF onde deve ter inscrição estadual habilitada, opcional.")),
        "Valide o fornecedor de CNPJ {cnpj} (UF da inscrição: {uf}).\n"
        "1. consultar_cnpj: situação cadastral (deve ser ATIVA), data da situação, abertura, "
        "natureza jurídica, CNAE compatível com o que ele vende, inscrições estaduais "
        "habilitadas.\n"
        "2. encontrar_empresas_relacionadas com kind=socio e o CNPJ para ver outras empresas "
        "dos mesmos sócios (e a situação delas).\n"
        "Conclua: apto, apto com ressalvas ou inapto, com os motivos.",
    ),
    Prompt(
        "analisar_mercado", "Analisar mercado",
        "Dimensiona um segmento: quantas empresas, onde, de que porte, desde quando.",
        (Argument("segmento", "Atividade em palavras, categoria ou código CNAE.", required=True),
         UF),
        "Analise o mercado de {segmento} (UF: {uf}).\n"
        "1. descobrir_segmentos_cnae para confirmar as atividades CNAE do segmento.\n"
        "2. mapear_mercado_empresas com o segmento e a UF: total, ativas, distribuição por UF, "
        "cidades maiores, porte, situação e abertura por ano.\n"
        "Descreva o tamanho, a concentração geográfica e a tendência de aberturas.",
    ),
    Prompt(
        "pesquisar_socios", "Pesquisar sócios",
        "Mapeia as empresas de uma pessoa ou as ligações societárias de uma empresa.",
        (Argument("nome", "Nome do sócio (pessoa ou empresa); este, o cnpj ou os dois."),
         Argument("cnpj", "CNPJ de uma empresa para partir do quadro societário dela.")),
        "Pesquise sócios. Nome: {nome}. CNPJ: {cnpj}.\n"
        "- Com um nome: buscar_socios_relacionados com o nome (a Receita mascara CPFs, então "
        "confirme homônimos pelo documento ***NNNNNN** e pela faixa etária).\n"
        "- Com um CNPJ: consultar_cnpj para o QSA, depois encontrar_empresas_relacionadas com "
        "kind=socio e o CNPJ.\n"
        "Monte a rede: empresas, sócios em comum e situação de cada uma.",
        one_of=("nome", "cnpj"),
    ),
)  # fmt: skip
BY_NAME = {prompt.name: prompt for prompt in PROMPTS}
