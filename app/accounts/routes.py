"""Key management (`/v1/me/chaves`), the token bootstrap (`/api/mcp/auth/...`) and account
creation by an administrator (`/v1/admin/contas`)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from psycopg_pool import AsyncConnectionPool

from app.accounts import repository, service
from app.accounts.keys import CODE_DIGITS, check_secret
from app.accounts.repository import Chave, Conta
from app.accounts.service import (
    Allowlist,
    ChaveCriada,
    Email,
    Inicio,
    Label,
    NovaChave,
    Phone,
    Text,
    TokenEmitido,
    Verificacao,
)
from app.auth.access import NO_TOKEN, Access
from app.auth.gate import Gate
from app.auth.guards import identity, require_admin
from app.errors import BadRequestError, ConflictError
from app.lib.documented import CONFLICT
from app.lib.wording import free_text
from app.settings import Settings

START_PER_MINUTE = 3
"""Calls of the bootstrap's `start` per IP address a minute."""
VERIFY_PER_MINUTE = 10
"""Calls of the bootstrap's `verify` per IP address a minute."""


class Chaves(msgspec.Struct, kw_only=True):
    data: list[Chave]
    total: int
    next_cursor: str | None = None


@get(["/v1/me/chaves", "/me/chaves"], summary="List my API keys", tags=["Accounts"])
async def list_keys(
    request: Request[Any, Any, Any], pool: NamedDependency[AsyncConnectionPool]
) -> Chaves:
    found = await service.list_keys(pool, identity(request).conta_id)
    return Chaves(data=found, total=len(found))


@post(
    ["/v1/me/chaves", "/me/chaves"],
    summary="Create an API key",
    responses={409: CONFLICT},
    description="The answer holds the key (`api_key`) this once; only a keyed hash is kept.",
    tags=["Accounts"],
)
async def create_key(
    request: Request[Any, Any, Any],
    data: JSONBody[NovaChave],
    pool: NamedDependency[AsyncConnectionPool],
    settings: NamedDependency[Settings],
) -> ChaveCriada:
    return await service.create_key(pool, settings, identity(request).conta_id, data)


@delete(
    ["/v1/me/chaves/{key_id:str}", "/me/chaves/{key_id:str}"],
    summary="Revoke an API key",
    description="Takes effect at once, in every process.",
    tags=["Accounts"],
)
async def revoke_key(
    request: Request[Any, Any, Any],
    key_id: FromPath[str],
    pool: NamedDependency[AsyncConnectionPool],
    gate: NamedDependency[Gate],
) -> None:
    await service.revoke_key(pool, gate, identity(request).conta_id, key_id)


@put(
    ["/v1/me/chaves/{key_id:str}/allowlist", "/me/chaves/{key_id:str}/allowlist"],
    summary="Set the IP allowlist of an API key",
    description=(
        "Calls from other addresses get 403. An empty list lets any address in. 409 for a "
        "revoked key."
    ),
    tags=["Accounts"],
    responses={409: CONFLICT},
)
async def set_allowlist(
    request: Request[Any, Any, Any],
    key_id: FromPath[str],
    data: JSONBody[Allowlist],
    pool: NamedDependency[AsyncConnectionPool],
    gate: NamedDependency[Gate],
) -> Chave:
    return await service.change_allowlist(
        pool, gate, identity(request).conta_id, key_id, data.allowlist
    )


class Envio(msgspec.Struct, kw_only=True):
    mensagem: str


@post(
    "/api/mcp/auth/start",
    summary="Token bootstrap: send a code by e-mail",
    description=(
        f"Sends a code of {CODE_DIGITS} digits, valid {service.CODE_TTL // 60} minutes and once, "
        "to the e-mail. The answer is the same whether or not the address already has an account. "
        f"Per e-mail address: at most {service.EMAIL_LIMIT} codes per "
        f"{service.EMAIL_WINDOW // 60} minutes and {service.DAILY_CODES} a day (UTC), then 429. "
        f"Per IP address: {START_PER_MINUTE} calls a minute. An administrator account gets no "
        "code and no key this way: its owner is e-mailed that administrator keys come from "
        "`registry-admin` only."
    ),
    status_code=202,
    opt={"access": Access.BOOTSTRAP, "bucket": "auth-start", "limit": START_PER_MINUTE},
    security=NO_TOKEN,
    tags=["Token bootstrap"],
)
async def bootstrap_start(
    data: JSONBody[Inicio],
    pool: NamedDependency[AsyncConnectionPool],
    gate: NamedDependency[Gate],
    settings: NamedDependency[Settings],
) -> Envio:
    await service.start_bootstrap(pool, gate.limiter, settings, data)
    return Envio(mensagem="Enviamos um código para o e-mail informado; ele vale por 10 minutos.")


@post(
    "/api/mcp/auth/verify",
    summary="Token bootstrap: trade the code for an API key",
    description=(
        "Returns `api_key` (shown once) and `mcp_url`. A code is single-use and dies after "
        f"{service.MAX_ATTEMPTS} wrong tries from one IP address ({service.MAX_CODE_ATTEMPTS} "
        f"from all); after {service.DAILY_FAILURES} wrong codes in a day (UTC) from one IP "
        "address every code of the e-mail address is refused to it until the next day (tries "
        "from other addresses spend their own). Never a key for an administrator account. Per "
        f"IP address: {VERIFY_PER_MINUTE} calls a minute."
    ),
    status_code=200,
    opt={"access": Access.BOOTSTRAP, "bucket": "auth-verify", "limit": VERIFY_PER_MINUTE},
    security=NO_TOKEN,
    tags=["Token bootstrap"],
)
async def bootstrap_verify(
    request: Request[Any, Any, Any],
    data: JSONBody[Verificacao],
    pool: NamedDependency[AsyncConnectionPool],
    settings: NamedDependency[Settings],
    gate: NamedDependency[Gate],
) -> TokenEmitido:
    origem = service.origin(gate.caller(request.scope).address)
    return await service.verify_bootstrap(pool, settings, data, origem)


class NovaConta(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    nome: Text
    email: Email
    telefone: Phone = ""
    plano: Annotated[
        str, msgspec.Meta(min_length=1, max_length=100, pattern=free_text(required=True))
    ] = "starter"
    """A plan's name (`planos.nome`, any text an operator gave it): control characters and
    over-long names are refused before the database."""
    papel: str = "usuario"
    rotulo: Label = "principal"
    """Label of the account's first key."""


class ContaCriada(msgspec.Struct, kw_only=True):
    conta: Conta
    chave: Chave
    api_key: str


@post(
    ["/v1/admin/contas", "/admin/contas"],
    summary="Create an account and its first key (administrator)",
    responses={409: CONFLICT},
    guards=[require_admin],
    tags=["Admin"],
)
async def create_account(
    data: JSONBody[NovaConta],
    pool: NamedDependency[AsyncConnectionPool],
    settings: NamedDependency[Settings],
) -> ContaCriada:
    if data.papel not in ("usuario", "admin"):
        raise BadRequestError("`papel` deve ser `usuario` ou `admin`.")
    secret = check_secret(settings.api_key_secret)
    async with pool.connection() as conn, conn.transaction():
        if not await repository.plan_exists(conn, data.plano):
            raise BadRequestError(f"Plano desconhecido: {data.plano[:40]}.")
        conta = await repository.insert_account(
            conn, nome=data.nome, email=service.normal_email(data.email),
            telefone=service.normal_phone(data.telefone), plano=data.plano, papel=data.papel,
        )  # fmt: skip
        if conta is None:
            raise ConflictError("Já existe uma conta com este e-mail.")
        issued = await service.issue_key(conn, secret, conta.id, data.rotulo, [])
    return ContaCriada(conta=conta, chave=issued.chave, api_key=issued.api_key)
