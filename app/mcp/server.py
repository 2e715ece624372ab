"""The methods of the agent interface, over the tools, resources, prompts and completions.

Discovery needs no key: without one, each address has a window of `DISCOVERY_LIMIT` requests a
minute (completions, which search the index, a smaller one of their own, `COMPLETION_LIMIT`).
A tool call needs one: it is admitted on the account's window and metered as its own operation
through the same gate as REST (`app.lib.operations.charge`), so the audit row names the tool
and the usage counter its cost. Access failures are JSON-RPC errors
with the HTTP status REST would give (401, 403, 429, 503); failures of the tool itself (bad
arguments, an unknown CNPJ, the index down) are tool results with `isError: true`, which an
agent can read and act on.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import msgspec
import psycopg
from elasticsearch import ApiError, TransportError
from psycopg_pool import PoolTimeout

from app.accounts.keys import redacted
from app.auth.gate import MISSING
from app.auth.middleware import RequestAccess
from app.context import Backends
from app.errors import (
    AppError,
    UnauthorizedError,
    UnavailableError,
    database_unavailable,
    elastic_failure,
    renamed,
)
from app.lib.body import convert
from app.lib.operations import charge
from app.mcp import completion, prompts, resources, tools
from app.mcp.protocol import (
    ENCODER,
    FORBIDDEN,
    INVALID_PARAMS,
    LATEST,
    METHOD_NOT_FOUND,
    RATE_LIMITED,
    RESOURCE_NOT_FOUND,
    SUPPORTED,
    UNAUTHORIZED,
    UNAVAILABLE,
    RpcError,
)

log = logging.getLogger("app.mcp")

SERVER_NAME = "service-mcp"
INSTRUCTIONS = (
    "Dados abertos do CNPJ (Receita Federal): empresas, sócios, atividades, contatos. "
    "Sequência recomendada para leads: tools/list; planejar_leads_quentes (ou "
    "prospectar_empresas_com_ia com o objetivo em palavras); contar_leads_quentes; "
    "prever_leads_quentes (amostra curta); só então gerar_leads_quentes, exportar_leads_gratis "
    "ou criar_lote_leads, e consultar_lote_leads até o arquivo ficar pronto. "
    "descobrir_segmentos_cnae e mapear_mercado_empresas ajudam a achar e dimensionar segmentos. "
    "Detalhe empresas com consultar_cnpj. As ferramentas pedem Authorization: Bearer <API_KEY> "
    "(obtenha em /api/mcp/auth/start e /api/mcp/auth/verify) e contam no limite por minuto da "
    "conta, junto com a API REST. LGPD: contatos e sócios são dados pessoais; lotes pagos de "
    "leads só com confirmar_lgpd e uso_responsavel verdadeiros, e sempre com opt-out. Leia "
    "service://docs e service://exemplos."
)
_ACCESS_CODES = {
    HTTPStatus.UNAUTHORIZED: UNAUTHORIZED,
    HTTPStatus.FORBIDDEN: FORBIDDEN,
    HTTPStatus.TOO_MANY_REQUESTS: RATE_LIMITED,
    HTTPStatus.SERVICE_UNAVAILABLE: UNAVAILABLE,
}
_TOOLS_LIST = msgspec.Raw(ENCODER.encode({"tools": [tool.definition for tool in tools.TOOLS]}))
_PROMPTS_LIST = {"prompts": [prompt.listed() for prompt in prompts.PROMPTS]}
_TEMPLATES_LIST = {"resourceTemplates": [resources.listed_template(t) for t in resources.TEMPLATES]}


class Context:
    """One request to the agent interface: the services, the access state, the versions."""

    def __init__(
        self,
        backends: Backends,
        state: RequestAccess | None,
        rendered: resources.Rendered,
        version: str,
        public_url: str,
    ) -> None:
        self.backends = backends
        self.state = state
        self.rendered = rendered
        self.version = version
        self.public_url = public_url

    def alone(self) -> Context:
        """The context of one message of a batch: an access state of its own (`fork`)."""
        state = self.state.fork() if self.state is not None else None
        return Context(self.backends, state, self.rendered, self.version, self.public_url)


def access_failure(error: AppError, public_url: str = "") -> RpcError:
    """An access refusal as the JSON-RPC error the HTTP status travels with."""
    data: dict[str, Any] | None = None
    headers = dict(error.headers)
    if error.status == HTTPStatus.UNAUTHORIZED:  # its headers say `WWW-Authenticate: Bearer`
        base = public_url.rstrip("/")
        data = {
            "como_obter_uma_chave": (
                f"POST {base}/api/mcp/auth/start com nome, email e telefone; depois "
                f"POST {base}/api/mcp/auth/verify com email e o código recebido por e-mail. "
                "Envie a chave em Authorization: Bearer <API_KEY>."
            )
        }
    code = _ACCESS_CODES.get(HTTPStatus(error.status), UNAVAILABLE)
    return RpcError(code, error.message, status=error.status, data=data, headers=headers)


def _params(raw: dict[str, Any] | None) -> dict[str, Any]:
    params = raw or {}
    if params.get("cursor") is not None:
        raise RpcError(INVALID_PARAMS, "cursor inválido: estas listas vêm numa página só.")
    return params


def _tool_error(error: AppError, tool: str) -> dict[str, Any]:
    detail = f" Detalhes: {ENCODER.encode(error.details).decode()}." if error.details else ""
    hint = {
        HTTPStatus.BAD_REQUEST: " Corrija os argumentos conforme o inputSchema e tente de novo.",
        HTTPStatus.NOT_FOUND: " Confira o valor"
        + (" (busque com buscar_empresas se preciso)." if "lote" not in tool else "."),
        HTTPStatus.SERVICE_UNAVAILABLE: " Tente de novo em alguns segundos.",
    }.get(HTTPStatus(error.status), "")
    return {
        "content": [{"type": "text", "text": redacted(f"{tool}: {error.message}{detail}{hint}")}],
        "isError": True,
    }


COMPLETION_LIMIT = 60
"""Completions a minute per address without a key (IPv6: per /64), in a window of their own:
the one discovery method that searches the index, so a caller without a key cannot turn it
into free searches. With a key a completion is not metered, like the rest of discovery."""


DISCOVERY_LIMIT = 300
"""Discovery requests (every method but a tool call and a completion) a minute per address
without a key (IPv6: per /64). An agent's start takes a handful (initialize, the lists); the
window only bounds what one address can make the service do for free."""


async def _admit_anonymous(context: Context, method: str) -> None:
    """Draws an anonymous request from its address's window; a tool call is left to `_admit`
    (it needs a key), and a request with a key is not drawn: discovery is free with one."""
    state = context.state
    if state is None or state.caller.identity is not None or method == "tools/call":
        return
    completing = method == "completion/complete"
    try:
        await state.admit(
            group="mcp-completar" if completing else "mcp-descoberta",
            anonymous_limit=COMPLETION_LIMIT if completing else DISCOVERY_LIMIT,
        )
    except AppError as error:
        raise access_failure(error, context.public_url) from None


async def _admit(context: Context, tool: tools.Tool) -> None:
    state = context.state
    if state is None:  # an app built without the access layer (benchmarks only)
        return
    if state.caller.identity is None:
        refusal = await state.gate.refuse(UnauthorizedError(MISSING), state.caller)
        raise access_failure(refusal, context.public_url)
    try:
        await charge(state, tool.operation)
    except AppError as error:
        state.status = error.status
        raise access_failure(error, context.public_url) from None


async def call_tool(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments")
    tool = tools.BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        said = (
            f"Ferramenta desconhecida: {name[:64]}." if isinstance(name, str) else "Informe name."
        )
        raise RpcError(INVALID_PARAMS, said, data={"ferramentas": sorted(tools.BY_NAME)})
    if arguments is not None and not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "arguments deve ser um objeto.")
    await _admit(context, tool)
    try:
        entrada = convert(arguments or {}, tool.input)
        if tool.account:
            caller = context.state.caller.identity if context.state else None
            if caller is None:
                raise UnauthorizedError(MISSING)
            output = await tool.run(context.backends, caller, entrada)
        else:
            output = await tool.run(context.backends, entrada)
    except AppError as error:
        return _failed(context, _worded(error, tool), tool.name)
    except (ApiError, TransportError) as error:
        return _failed(context, elastic_failure(error), tool.name)
    except (psycopg.OperationalError, PoolTimeout) as error:  # an account tool's database
        log.warning("PostgreSQL unavailable in tool %s: %s", tool.name, error)
        return _failed(context, database_unavailable(), tool.name)
    text = ENCODER.encode(output).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": output}


def _worded(error: AppError, tool: tools.Tool) -> AppError:
    """`error` in the tool's words: a service field its argument stands for is named as the
    argument, and the names a refusal lists as accepted are the tool's arguments."""
    worded = renamed(error, tool.renamed)
    if isinstance(worded.details, dict) and "aceitos" in worded.details:
        worded.details = {**worded.details, "aceitos": sorted(tool.input.__struct_fields__)}
    return worded


def _failed(context: Context, error: AppError, tool: str) -> dict[str, Any]:
    if context.state is not None:
        context.state.status = error.status
    return _tool_error(error, tool)


def initialize(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    return {
        "protocolVersion": asked if asked in SUPPORTED else LATEST,
        "capabilities": {
            "tools": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "prompts": {"listChanged": False},
            "completions": {},
        },
        "serverInfo": {"name": SERVER_NAME, "title": "CNPJ Registry", "version": context.version},
        "instructions": INSTRUCTIONS,
    }


async def list_resources(context: Context) -> dict[str, Any]:
    """Every resource, with its size when its document can be read now (the catalog's, while
    Elasticsearch is down, are listed without it: once one of them fails, the rest are not
    tried, so a hung cluster costs one wait)."""
    listed = []
    catalog_down = False
    for resource in resources.RESOURCES:
        content: bytes | None = None
        if resource.fixed or not catalog_down:
            try:
                content = await context.rendered.get(context.backends, resource)
            except UnavailableError:
                catalog_down = True
        listed.append(resources.listed(resource, None if content is None else len(content)))
    return {"resources": listed}


async def read_resource(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "Informe uri (texto).")
    if len(uri) > MAX_URI:
        raise RpcError(
            RESOURCE_NOT_FOUND,
            f"Recurso desconhecido: uri de {len(uri)} caracteres (no máximo {MAX_URI}).",
            data={"uri": uri[:100]},
        )
    resource = resources.BY_URI.get(uri)
    if resource is not None:
        content = await context.rendered.get(context.backends, resource)
        return resources.contents(uri, resource.mime_type, content)
    found = resources.read_template(uri)
    if found is None:
        raise RpcError(
            RESOURCE_NOT_FOUND, f"Recurso desconhecido: {uri[:100]}", data={"uri": uri[:100]}
        )
    template, value = found
    content = await context.rendered.read(context.backends, template, value)
    return resources.contents(uri, resources.JSON, content)


MAX_URI = 200
"""The longest resource URI read; every URI of the resources and their templates is shorter."""


def get_prompt(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    prompt = prompts.BY_NAME.get(name) if isinstance(name, str) else None
    if prompt is None:
        said = f"Prompt desconhecido: {name[:64]}." if isinstance(name, str) else "Informe name."
        raise RpcError(INVALID_PARAMS, said, data={"prompts": sorted(prompts.BY_NAME)})
    values = params.get("arguments")
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise RpcError(INVALID_PARAMS, "arguments deve ser um objeto.")
    return prompt.render(values)


async def dispatch(context: Context, method: str, raw: dict[str, Any] | list[Any] | None) -> Any:
    """The result of one request; `RpcError` for a JSON-RPC error. A key that was sent but
    refused (invalid, revoked, outside its allowlist) fails every method: discovery needs no
    key, but a wrong one is never silently ignored."""
    if context.state is not None and context.state.refusal is not None:
        raise access_failure(context.state.refusal, context.public_url)
    if isinstance(raw, list):
        raise RpcError(
            INVALID_PARAMS, "params deve ser um objeto: parâmetros por nome, não por posição."
        )
    await _admit_anonymous(context, method)
    params = raw or {}
    if method == "initialize":
        return initialize(context, params)
    if method == "ping":
        return {}
    if method == "tools/list":
        _params(raw)
        return _TOOLS_LIST
    if method == "tools/call":
        return await call_tool(context, params)
    if method == "resources/list":
        _params(raw)
        return await list_resources(context)
    if method == "resources/templates/list":
        _params(raw)
        return _TEMPLATES_LIST
    if method == "resources/read":
        return await read_resource(context, params)
    if method == "prompts/list":
        _params(raw)
        return _PROMPTS_LIST
    if method == "prompts/get":
        return get_prompt(params)
    if method == "completion/complete":
        return await completion.complete(context.backends, params)
    raise RpcError(METHOD_NOT_FOUND, f"Método desconhecido: {method[:64]}.")
