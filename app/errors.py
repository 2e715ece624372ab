"""One error hierarchy, rendered by one handler as the JSON error body of every status:
`{"error": <reason phrase>, "message": <human text>, "details": <optional>}`."""

from __future__ import annotations

import copy
import logging
from http import HTTPStatus
from typing import Any

import msgspec
import psycopg
from elasticsearch import ApiError, TransportError
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from psycopg_pool import PoolTimeout

from app.accounts.keys import redacted
from app.lib.wording import invalid, named_field

log = logging.getLogger("app.errors")


class ErrorBody(msgspec.Struct, omit_defaults=True):
    error: str
    message: str
    details: Any = None


class AppError(Exception):
    """Base of the errors the service raises on purpose."""

    status = HTTPStatus.INTERNAL_SERVER_ERROR

    def __init__(
        self, message: str, details: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}


class BadRequestError(AppError):
    status = HTTPStatus.BAD_REQUEST


def renamed(error: AppError, names: dict[str, str]) -> AppError:
    """`error` with the fields of a service it called named as its caller's input names them
    (`municipio` as `cidade`): in the sentence and in `details`."""
    message, details = error.message, error.details
    for name, argument in names.items():
        if message.startswith(f"{name}:"):
            message = argument + message[len(name) :]
        message = message.replace(f" em {name}:", f" em {argument}:")  # `convert`'s sentences
    if isinstance(details, dict) and not message.startswith("Campo desconhecido"):
        # an unknown field is the caller's own name: never renamed to the one it must use
        details = {names.get(key, key): value for key, value in details.items()}
        if details.get("campo") in names:
            details["campo"] = names[details["campo"]]
    worded = copy.copy(error)
    worded.message, worded.details = message, details
    return worded


class UnauthorizedError(AppError):
    """401: key missing, malformed, unknown, revoked, or sent outside `Authorization: Bearer`.
    Says which scheme to use (`WWW-Authenticate: Bearer`, RFC 9110 and RFC 6750)."""

    status = HTTPStatus.UNAUTHORIZED

    def __init__(
        self, message: str, details: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, details, {"WWW-Authenticate": "Bearer", **(headers or {})})


class ForbiddenError(AppError):
    """403: address outside the key's allowlist, or a route for administrators only."""

    status = HTTPStatus.FORBIDDEN


class NotFoundError(AppError):
    status = HTTPStatus.NOT_FOUND


class ConflictError(AppError):
    status = HTTPStatus.CONFLICT


class GoneError(AppError):
    """410: a resource that existed and is no longer available (an expired lot's file)."""

    status = HTTPStatus.GONE


class TooManyRequestsError(AppError):
    """429: the window of the key, plan or address is full; `headers` carry `Retry-After`."""

    status = HTTPStatus.TOO_MANY_REQUESTS


class UnsupportedMediaError(AppError):
    """415: a body sent as something other than JSON (`Content-Type` of another type)."""

    status = HTTPStatus.UNSUPPORTED_MEDIA_TYPE


class UnavailableError(AppError):
    status = HTTPStatus.SERVICE_UNAVAILABLE


def error_body(status: int, message: str, details: Any = None) -> ErrorBody:
    """The error body of `status`; a key echoed from the caller's input is masked."""
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    return ErrorBody(error=phrase, message=redacted(message), details=redacted(details))


def error_response(status: int, message: str, details: Any = None) -> Response[ErrorBody]:
    return Response(
        error_body(status, message, details), status_code=status, media_type="application/json"
    )


def app_error_handler(_: Request[Any, Any, Any], error: AppError) -> Response[ErrorBody]:
    response = error_response(error.status, error.message, error.details)
    response.headers.update(error.headers)
    return response


def http_error_handler(
    request: Request[Any, Any, Any], error: HTTPException
) -> Response[ErrorBody]:
    """The framework's own refusals (no route, a method the path does not allow, a body over
    the cap, a body or parameter its parsing refused) in the words of every other 400."""
    message, details = framework_message(request, error)
    headers = {k: v for k, v in (error.headers or {}).items() if k.lower() == "allow"}
    response = error_response(error.status_code, message, details)
    response.headers.update(headers)
    return response


def framework_message(request: Request[Any, Any, Any], error: HTTPException) -> tuple[str, Any]:
    """The message and `details` of a refusal the framework raised, in the service's words."""
    message = error.detail or HTTPStatus(error.status_code).phrase
    if isinstance(error, ValidationException):
        return _validation(error.extra)
    if message == HTTPStatus(error.status_code).phrase:
        message = _FRAMEWORK.get(error.status_code, message).format(
            method=request.method, path=_shown_path(request)
        )
    return message, None


_FRAMEWORK = {
    404: "Caminho não encontrado: {path}.",
    405: "O método {method} não é aceito em {path}; o cabeçalho Allow lista os aceitos.",
    413: "Corpo da requisição grande demais.",
}


def _shown_path(request: Request[Any, Any, Any]) -> str:
    """The request's path as the message shows it: printable and at most 200 characters."""
    path = str(request.scope["path"])
    printable = "".join(c if c.isprintable() else "?" for c in path[:200])
    return printable + (" [...]" if len(path) > 200 else "")


def _validation(extra: Any) -> tuple[str, Any]:
    """Litestar's validation of a body or a parameter (`[{"message", "key", "source"}]`, the
    first is shown) as the sentence and `details` of the service's own 400s."""
    first = extra[0] if isinstance(extra, list) and extra and isinstance(extra[0], dict) else {}
    text, key = str(first.get("message", "")), first.get("key")
    whole_body = first.get("source") == "body" and key in (None, "data")
    if whole_body and text == "'data'":
        return "Corpo ausente: envie um objeto JSON.", None
    located = text if whole_body or not key else f"{text} - at `$.{key}`"
    if named := named_field(located):  # a field of the body's object, or of one inside it
        return invalid(located), {"campo": named.campo}
    if whole_body or not key:
        return "Corpo JSON inválido: " + invalid(text).removeprefix("Valor inválido: "), None
    return invalid(located), {"campo": key}


def internal_error_handler(
    request: Request[Any, Any, Any], error: Exception
) -> Response[ErrorBody]:
    log_unhandled(request, error)
    return error_response(500, INTERNAL_MESSAGE)


def log_unhandled(request: Request[Any, Any, Any], error: Exception) -> None:
    """A bug of ours, logged with its traceback, whatever face answers it."""
    log.error(
        "unhandled %s on %s %s",
        type(error).__name__,
        request.method,
        request.scope["path"],
        exc_info=error,
    )


INTERNAL_MESSAGE = "Erro interno inesperado; ele foi registrado e será analisado."
"""What a caller is told of a bug of ours: nothing of the error, which is logged."""


INDEX_UNAVAILABLE = "O índice de empresas não está disponível no momento."
NO_RELEASE = "Nenhuma base de empresas foi carregada ainda."
CATALOG_UNAVAILABLE = "O catálogo de CNAEs e municípios não está disponível no momento."
ELASTIC_RETRY_AFTER = "5"


def elastic_failure(
    error: ApiError | TransportError, what: str = INDEX_UNAVAILABLE
) -> UnavailableError:
    """The one answer to Elasticsearch failing, for every feature and face: 503 with
    `Retry-After`. A missing index means no release was loaded (for the catalog, that it is
    gone); a refused query (400) is a bug of ours and is logged as one; the cluster being busy
    (429), down or slow is the usual case."""
    status = error.meta.status if isinstance(error, ApiError) else None
    if status == 404 and what == INDEX_UNAVAILABLE:
        what = NO_RELEASE
    if status == 400:
        log.error("Elasticsearch refused a query: %s", error)
    else:
        log.warning("Elasticsearch failed: %s", type(error).__name__)
    return UnavailableError(what, headers={"Retry-After": ELASTIC_RETRY_AFTER})


def elastic_error_handler(
    request: Request[Any, Any, Any], error: ApiError | TransportError
) -> Response[ErrorBody]:
    return app_error_handler(request, elastic_failure(error))


def database_error_handler(
    request: Request[Any, Any, Any], error: psycopg.OperationalError | PoolTimeout
) -> Response[ErrorBody]:
    """PostgreSQL away (or every pooled connection busy): 503 with `Retry-After`, never a 500;
    logged once, without a traceback."""
    log.warning("PostgreSQL unavailable on %s %s: %s", request.method, request.scope["path"], error)
    return app_error_handler(request, database_unavailable())


def database_unavailable() -> UnavailableError:
    """The service's answer to PostgreSQL away (or every pooled connection busy)."""
    return UnavailableError(
        "O banco de dados está indisponível; tente novamente.", headers={"Retry-After": "5"}
    )


HANDLERS = {
    AppError: app_error_handler,
    ApiError: elastic_error_handler,
    TransportError: elastic_error_handler,
    psycopg.OperationalError: database_error_handler,
    PoolTimeout: database_error_handler,
    HTTPException: http_error_handler,
    Exception: internal_error_handler,
}
