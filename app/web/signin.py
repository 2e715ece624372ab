"""Signing up, in and out of the dashboard with the token bootstrap's e-mail code."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery
from litestar.response import Template
from litestar.response.base import Response

from app.accounts import service
from app.accounts.keys import CODE_DIGITS
from app.accounts.service import Inicio, Verificacao
from app.auth.gate import Gate
from app.context import Backends
from app.errors import AppError, BadRequestError
from app.lib.body import field_of
from app.lib.wording import CONTROL, invalid
from app.web.render import form_of, page, redirect, text
from app.web.sessions import PRE_COOKIE, SESSION_COOKIE
from app.web.visit import Visita, check_form, cookie, sessions_of

HOME = "/painel"


def _next(raw: str | None) -> str:
    """Where to go after sign-in: a page of ours only (never another site, nor a path that a
    `..` or its escape takes out of the pages), whole: a longer or odder one goes home."""
    path = (raw or "").split("?", 1)[0]
    if (
        raw
        and len(raw) <= 500
        and raw.startswith(("/painel", "/busca"))
        and raw.isprintable()
        and "//" not in raw
        and "\\" not in raw
        and not any(part in path.lower() for part in ("..", "%2e", "%2f", "%5c"))
    ):
        return raw
    return HOME


async def _admit(request: Request[Any, Any, Any], gate: Gate, limit: int) -> None:
    caller = gate.caller(request.scope)
    await gate.admit(caller, group="painel-entrar", anonymous_limit=limit)


@get("/painel/entrar", opt={"query": ("proximo",)})
async def sign_in_form(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    proximo: FromQuery[str | None] = None,
) -> Template | Response[Any]:
    if visita.perfil is not None:
        return redirect(visita, _next(proximo))
    return page(request, visita, "entrar.html", proximo=_next(proximo), valores={},
                digitos=CODE_DIGITS)  # fmt: skip


@post("/painel/entrar", status_code=200)
async def send_code(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template:
    form = await form_of(request)
    check_form(request, visita, form, backends.secret)
    email, nome = text(form, "email"), text(form, "nome")
    proximo = _next(text(form, "proximo"))
    try:
        await _admit(request, gate, backends.settings.sign_in_limit)
        entrada = msgspec.convert(
            {"email": email, "nome": nome or _default_name(email),
             "telefone": text(form, "telefone")},
            Inicio,
        )  # fmt: skip
        await service.start_bootstrap(backends.pool, gate.limiter, backends.settings, entrada,
                                      dashboard=True)  # fmt: skip
    except (AppError, msgspec.ValidationError) as error:
        message = (
            error.message if isinstance(error, AppError)
            else "Confira o e-mail informado." if field_of(error) == "email"
            else invalid(str(error))
        )  # fmt: skip
        status = error.status if isinstance(error, AppError) else 400
        return page(request, visita, "entrar.html", status=status, erro=message, failure=error,
                    proximo=proximo, valores=form, digitos=CODE_DIGITS)  # fmt: skip
    return page(request, visita, "codigo.html", email=service.normal_email(email),
                proximo=proximo, digitos=CODE_DIGITS)  # fmt: skip


def _default_name(email: str) -> str:
    """An account's name when the form leaves it empty: the address's local part, without what
    a name cannot hold, so a bad address is refused as the address, not as the name."""
    return CONTROL.sub("", email.split("@")[0])[:200].strip() or "conta"


@post("/painel/codigo", status_code=200)
async def check_code(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
    gate: NamedDependency[Gate],
) -> Template | Response[Any]:
    form = await form_of(request)
    check_form(request, visita, form, backends.secret)
    email, proximo = text(form, "email"), _next(text(form, "proximo"))
    try:
        await _admit(request, gate, backends.settings.sign_in_limit)
        entrada = msgspec.convert({"email": email, "codigo": text(form, "codigo")}, Verificacao)
        origem = service.origin(gate.caller(request.scope).address)
        conta = await service.sign_in(backends.pool, backends.settings, entrada, origem)
    except (AppError, msgspec.ValidationError) as error:
        if isinstance(error, msgspec.ValidationError):
            error = BadRequestError(
                f"O código tem {CODE_DIGITS} dígitos." if field_of(error) == "codigo"
                else "Confira o e-mail informado." if field_of(error) == "email"
                else invalid(str(error))
            )  # fmt: skip
        return page(request, visita, "codigo.html", status=error.status, erro=error.message,
                    failure=error,
                    email=email, proximo=proximo, digitos=CODE_DIGITS)  # fmt: skip
    sessions = sessions_of(request)
    await sessions.close(request.cookies.get(SESSION_COOKIE))  # the session it replaces ends
    token = await sessions.open(conta.id)
    visita.cookies = [
        cookie(SESSION_COOKIE, token, visita.secure),
        cookie(PRE_COOKIE, "", visita.secure, max_age=0),
    ]
    return redirect(visita, proximo)


@post("/painel/sair", status_code=303)
async def sign_out(
    request: Request[Any, Any, Any],
    visita: NamedDependency[Visita],
    backends: NamedDependency[Backends],
) -> Response[Any]:
    if visita.perfil is not None:  # a session that has already ended has nothing to protect
        check_form(request, visita, await form_of(request), backends.secret)
        await sessions_of(request).close(request.cookies.get(SESSION_COOKIE))
    visita.cookies = [cookie(SESSION_COOKIE, "", visita.secure, max_age=0)]
    return redirect(visita, "/painel/entrar")


ROUTES = [sign_in_form, send_code, check_code, sign_out]
