"""Request guards shared by every route."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotFoundException
from litestar.handlers.base import BaseRouteHandler

from app.auth.access import ELSEWHERE, STRAY_QUERY
from app.errors import BadRequestError, UnauthorizedError
from app.lib.body import refuse_repeated


async def reject_unknown_query(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """400 naming the query parameters a route does not take (declared in its `opt["query"]`),
    so a typo in a filter is an error instead of being silently ignored (with what to use instead
    where the route's `opt["query_hints"]` says, as `/search` does of `nome`), and those given more
    than once, rather than one of their values taken silently (on every route and page, the
    API's and the dashboard's alike). A coroutine: Litestar runs a plain function guard in a
    worker thread, a hop on every request."""
    allowed: frozenset[str] = frozenset(handler.opt.get("query", ()))
    given = set(connection.query_params)
    if {name.lower() for name in given} & STRAY_QUERY:
        raise UnauthorizedError(ELSEWHERE)  # a key in the URL, on any route
    unknown = sorted(given - allowed)
    if unknown:
        hints: dict[str, str] = handler.opt.get("query_hints", {})
        shown = [name[:MAX_NAME] for name in unknown[:MAX_SHOWN]]
        said = [f"{name} ({hints[name]})" if name in hints else name for name in shown]
        more = f" e mais {len(unknown) - MAX_SHOWN}" if len(unknown) > MAX_SHOWN else ""
        raise BadRequestError(
            f"Parâmetro(s) desconhecido(s): {', '.join(said)}{more}.",
            details={"campo": shown[0], "desconhecidos": shown, "aceitos": sorted(allowed)},
        )
    if given:
        refuse_repeated(connection.query_params.dict())
    if not connection.scope["path"].isascii() and any(
        isinstance(value, int) for value in connection.path_params.values()
    ):  # `int()` reads other scripts' digits: `/monitoramentos/９６３` is no path of an id
        raise NotFoundException()


MAX_SHOWN = 10
"""Unknown parameters a refusal names (the rest are counted): a URL of hundreds of them is not
answered back in full."""
MAX_NAME = 64
