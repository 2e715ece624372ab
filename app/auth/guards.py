"""Guards of routes that need more than a valid key."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from app.auth.access import Identity
from app.errors import ForbiddenError, UnauthorizedError


def identity(connection: ASGIConnection[Any, Any, Any, Any]) -> Identity:
    """The authenticated caller; 401 when the middleware let the request in without one."""
    user = connection.scope.get("user")
    if not isinstance(user, Identity):
        raise UnauthorizedError("Token ausente: envie Authorization: Bearer <API_KEY>.")
    return user


async def require_admin(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    if not identity(connection).admin:
        raise ForbiddenError("Recurso restrito ao administrador.")
