"""The web face: the dashboard's and the search's pages, their static files, and their errors
as pages (the API's errors stay JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from litestar import Request, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Redirect, Response, Template
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from app.auth.access import Access
from app.errors import HANDLERS, ErrorBody, http_error_handler
from app.lib.shedding import PAGES as PAGE_PATHS
from app.web import account, admin, lots, monitors, search, signin
from app.web.render import NO_STORE
from app.web.visit import CSRF_FIELD, SignInRequired, sign_in_path, visit

HERE = Path(__file__).parent
STATIC = HERE / "static"
SWAGGER = "/static/vendor/swagger-ui-5.35.0"
"""Swagger UI's files, served by the app so `/schema` works without internet."""

TEMPLATES = TemplateConfig(directory=HERE / "templates", engine=JinjaTemplateEngine)


def _sign_in(request: Request[Any, Any, Any], error: SignInRequired) -> Response[Any]:
    """To the sign-in page; a request of htmx (a session that ended while a page was open) is
    told to load it as a whole page, not to swap it into the part it asked for."""
    target = sign_in_path(error.next_path)
    if request.headers.get("hx-request"):
        return Response(b"", status_code=200, headers={**NO_STORE, "HX-Redirect": target})
    return Redirect(target, status_code=303, headers=NO_STORE)


def _error_page(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Any error of a page, as a page: the API's handler decides status, message and headers
    (`Retry-After`...), exactly as for the JSON face; with the menu of the visit when the error
    came after it was known."""
    handler = next(h for kind, h in HANDLERS.items() if isinstance(error, kind))
    answer = handler(request, error)  # type: ignore[operator]
    body = answer.content
    message = body.message if isinstance(body, ErrorBody) else "Erro inesperado."
    if isinstance(body, bytes):
        message = msgspec.json.decode(body, type=ErrorBody).message
    headers = {k: v for k, v in answer.headers.items() if k.lower() in ("retry-after", "allow")}
    context = {
        "status": answer.status_code, "mensagem": message, "path": request.scope["path"],
        "visita": getattr(request.state, "visita", None), "csrf_field": CSRF_FIELD,
    }  # fmt: skip
    return Template(
        template_name="erro.html",
        context=context,
        status_code=answer.status_code,
        headers={**NO_STORE, **headers},
    )


def routing_error(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    """A request no route took (an unknown path, 404; a method the path does not allow, 405):
    a page under the pages' paths, the API's JSON error elsewhere."""
    if request.scope["path"].startswith(PAGE_PATHS):
        return _error_page(request, error)
    return http_error_handler(request, error)


@get("/", include_in_schema=False)
async def root() -> Redirect:
    return Redirect("/painel", status_code=303)


PAGES = Router(
    path="/",
    route_handlers=[
        root,
        *signin.ROUTES,
        *account.ROUTES,
        *monitors.ROUTES,
        *lots.ROUTES,
        *admin.ROUTES,
        *search.ROUTES,
    ],
    dependencies={"visita": Provide(visit)},
    opt={"access": Access.OPEN},
    include_in_schema=False,
    # Every class the API's handlers know, so the most specific one found is a page's.
    exception_handlers={SignInRequired: _sign_in, **dict.fromkeys(HANDLERS, _error_page)},
)

STATIC_FILES = create_static_files_router(
    path="/static",
    directories=[STATIC],
    opt={"access": Access.OPEN},
    include_in_schema=False,
    cache_control=CacheControlHeader(public=True, max_age=3600),
)


def warm_pages(engine: object) -> None:
    """Compile every page's template and read the city names the facets show, once, as a
    process starts. Measured on a new two-worker server (`docs/api.md`), the first second of
    `/busca` at 200 a second waited for them: p95 57-83 ms, 22-48 ms with them ready."""
    if isinstance(engine, JinjaTemplateEngine):
        for name in engine.engine.list_templates():
            engine.get_template(name)
    search.city_names()
