"""Who is looking at a page: the signed-in account (or nobody yet) and the CSRF token of the
page's forms, resolved once per request; and what every form submission is checked against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from litestar import Request
from litestar.datastructures import Cookie
from litestar.di import NamedDependency
from psycopg_pool import AsyncConnectionPool

from app.accounts import repository
from app.accounts.repository import Perfil
from app.auth.access import Identity
from app.auth.gate import Gate
from app.context import Backends
from app.errors import ForbiddenError
from app.web.profiles import ProfileCache
from app.web.sessions import PRE_COOKIE, SESSION_COOKIE, TTL, Sessions, csrf_matches, csrf_token
from app.web.sessions import new_token as _new_token

CSRF_FIELD = "_csrf"
DASHBOARD_KEY = "painel"
"""The key id that actions taken in the dashboard are attributed to (no API key is used)."""


class SignInRequired(Exception):  # noqa: N818 - a redirect, not an error
    """The page needs a signed-in account; answered with a redirect to the sign-in page."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


@dataclass
class Visita:
    perfil: Perfil | None
    cookie: str
    """The cookie the forms are bound to: the session's token, or the pre-session one."""
    csrf: str
    secure: bool
    cookies: list[Cookie] = field(default_factory=list)
    """Cookies the page's answer sets (a new pre-session cookie, a session, its removal)."""

    @property
    def identity(self) -> Identity:
        """The account as the services know a caller (dashboard actions use no API key)."""
        perfil = self.signed_in
        return Identity(
            key_id=DASHBOARD_KEY, conta_id=perfil.id, papel=perfil.papel, plano=perfil.plano,
            limite=perfil.limite_por_minuto,
        )  # fmt: skip

    @property
    def signed_in(self) -> Perfil:
        assert self.perfil is not None, "pages of accounts call require_account first"
        return self.perfil

    @property
    def admin(self) -> bool:
        return self.perfil is not None and self.perfil.papel == "admin"


def cookie(name: str, value: str, secure: bool, max_age: int | None = TTL) -> Cookie:
    return Cookie(
        key=name, value=value, path="/", httponly=True, samesite="lax", secure=secure,
        max_age=max_age,
    )  # fmt: skip


def sessions_of(request: Request[Any, Any, Any]) -> Sessions:
    found: Sessions = request.app.state.sessions
    return found


async def visit(request: Request[Any, Any, Any], backends: NamedDependency[Backends]) -> Visita:
    """The visit of this request (a Litestar dependency of every page), kept in the request's
    state for the page of an error raised after it (its menu)."""
    request.state.visita = visita = await _visit(request, backends)
    return visita


async def _visit(request: Request[Any, Any, Any], backends: Backends) -> Visita:
    secure = backends.settings.public_url.startswith("https://")
    token = request.cookies.get(SESSION_COOKIE)
    session = await sessions_of(request).find(token)
    perfil = None
    if session is not None and token is not None:
        perfil = await cached_profile(request, backends.pool, session.conta_id)
    if perfil is not None and token is not None:
        return Visita(perfil, token, csrf_token(backends.secret, token), secure)
    pre = request.cookies.get(PRE_COOKIE)
    visita = Visita(None, pre or "", "", secure)
    if not pre or len(pre) > 100:
        visita.cookie = _new_token()
        visita.cookies.append(cookie(PRE_COOKIE, visita.cookie, secure, max_age=None))
    visita.csrf = csrf_token(backends.secret, visita.cookie)
    return visita


async def cached_profile(
    request: Request[Any, Any, Any], pool: AsyncConnectionPool, conta_id: int
) -> Perfil | None:
    """The account's profile, from this process's cache when it holds it (`app.web.profiles`)."""
    cache: ProfileCache = request.app.state.perfis
    gate: Gate = request.app.state.gate
    epoch = gate.credentials.epoch
    perfil = cache.get(conta_id, epoch)
    if perfil is None:
        perfil = await profile(pool, conta_id)
        if perfil is not None:
            cache.put(conta_id, perfil, epoch)
    return perfil


async def profile(pool: AsyncConnectionPool, conta_id: int) -> Perfil | None:
    async with pool.connection() as conn:
        return await repository.find_profile(conn, conta_id)


def require_account(request: Request[Any, Any, Any], visita: Visita) -> Perfil:
    if visita.perfil is None:
        query = request.scope["query_string"].decode("latin-1")
        target = request.scope["path"] + (f"?{query}" if query else "")
        raise SignInRequired(target)
    return visita.perfil


def require_admin(request: Request[Any, Any, Any], visita: Visita) -> Perfil:
    perfil = require_account(request, visita)
    if perfil.papel != "admin":
        raise ForbiddenError("Página restrita ao administrador.")
    return perfil


async def draw(request: Request[Any, Any, Any], gate: Gate, visita: Visita) -> None:
    """One unit from the signed-in account's plan window, as an API call draws (429 with
    `Retry-After` when it is full): searches and every action of the pages."""
    caller = gate.caller(request.scope)
    caller.identity = visita.identity
    await gate.admit(caller)


def _host(value: str) -> str | None:
    """`host:port` of an origin or a `Host` header; None when it cannot be read (a port that is
    not a number or out of range, an unclosed IPv6 bracket), which matches nothing."""
    try:
        parsed = urlsplit(value if "//" in value else f"//{value}")
        port = parsed.port
    except ValueError:
        return None
    return f"{parsed.hostname}:{port}" if port else str(parsed.hostname)


def check_form(
    request: Request[Any, Any, Any], visita: Visita, form: dict[str, Any], secret: bytes
) -> None:
    """403 unless the submission comes from one of our pages: same origin (when the browser
    says: the request's host, or the host of `PUBLIC_URL` behind a proxy that rewrites it) and
    the CSRF token of the cookie it travels with."""
    origin = request.headers.get("origin")
    ours = {_host(request.headers.get("host", "")), _host(request.app.state.settings.public_url)}
    if origin is not None and (_host(origin) is None or _host(origin) not in ours):
        raise ForbiddenError("Formulário enviado de outra origem.")
    sent = form.get(CSRF_FIELD)
    if not csrf_matches(secret, visita.cookie, sent if isinstance(sent, str) else None):
        raise ForbiddenError("Formulário expirado ou de outra origem: recarregue a página.")


def sign_in_path(next_path: str) -> str:
    return "/painel/entrar?proximo=" + quote(next_path, safe="/")
