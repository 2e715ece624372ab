"""`POST /mcp` and `POST /api/mcp`: the agent interface (Model Context Protocol, Streamable
HTTP, one JSON answer per POST, no session, so any app process answers any request).

Checks before the message is read: the Host and Origin headers against the allowed hosts
(DNS-rebinding protection: 421 for a foreign Host, 403 for a foreign Origin, 400 for two Host
lines; each value of a repeated header is checked), the content type
(415), the Accept header (406) and the `MCP-Protocol-Version` header (400 for a revision this
server does not speak). GET, DELETE and the other methods answer 405 with `Allow: POST`: there
is no event stream and no session to end."""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import msgspec
from elasticsearch import ApiError, TransportError
from litestar import Request, Response, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException

from app.auth.access import NO_TOKEN, Access
from app.auth.middleware import access, record_call
from app.context import Backends
from app.errors import (
    INTERNAL_MESSAGE,
    AppError,
    elastic_failure,
    framework_message,
    log_unhandled,
)
from app.mcp import protocol, resources, server
from app.mcp.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    RESOURCE_NOT_FOUND,
    RpcError,
)

PATHS = ["/mcp", "/api/mcp"]
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_JSON = "application/json"
_rendered = resources.Rendered()


def allowed_hosts(public_url: str, extra: str) -> frozenset[str]:
    """Host names the agent interface answers to: loopback, the public URL's, and those the
    operator lists in `MCP_ALLOWED_HOSTS`."""
    names = {*LOOPBACK, (urlsplit(public_url).hostname or "").lower()}
    names |= {name.strip().lower() for name in extra.split(",") if name.strip()}
    return frozenset(name for name in names if name)


_AUTHORITY = r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::[0-9]{0,5})?"
_HOST = re.compile(_AUTHORITY)
"""A `Host` header: a host and an optional port, nothing else (no user, path or backslash)."""
_ORIGIN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://" + _AUTHORITY + "/?")
"""An `Origin` header as browsers send it: scheme, host and optional port (RFC 6454, 6.1); a
trailing slash, which some other clients add, is taken."""


def _host_name(value: str, form: re.Pattern[str] = _HOST) -> str:
    """The host of a `Host` (or, with `_ORIGIN`, an `Origin`) header, lower case and without
    an IPv6 address's brackets; empty (no allowed host) when the value has another shape:
    `evil.com@localhost` or `http://evil.com\\@localhost` name `localhost` to one parser and
    `evil.com` to another, and `[::1` does not parse."""
    found = form.fullmatch(value)
    return found["host"].strip("[]").lower() if found else ""


def _answer(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> Response[bytes]:
    return Response(body, status_code=status, media_type=_JSON, headers=headers)


def _failure(request_id: protocol.Id, failure: RpcError) -> Response[bytes]:
    return _answer(protocol.error(request_id, failure), failure.status, failure.headers)


def _accepts_json(header: str) -> bool:
    """Whether an `Accept` header takes JSON: a media range of JSON, `application/*` or `*/*`
    whose weight (`q`) is not 0; a weight that is not a number counts as 0."""
    for item in header.lower().split(","):
        media, *parameters = (part.strip() for part in item.split(";"))
        weight = next((value[2:] for value in parameters if value.startswith("q=")), "1")
        try:
            taken = 0 < float(weight) <= 1
        except ValueError:
            taken = False
        if taken and media in (_JSON, "*/*", "application/*"):
            return True
    return False


def _check_headers(request: Request[Any, Any, Any], hosts: frozenset[str]) -> None:
    """Every value of a header given more than once is checked: a proxy or a client that
    forwards two of them must not get a foreign one past the first."""
    headers = request.headers
    given = headers.getall("host", [])
    if len(given) > 1:  # RFC 9112, 3.2: more than one Host is a bad request
        raise RpcError(
            INVALID_REQUEST, "Host repetido: envie um só.", status=HTTPStatus.BAD_REQUEST
        )
    if _host_name(given[0] if given else "") not in hosts:
        raise RpcError(
            INVALID_REQUEST, "Host não permitido.", status=HTTPStatus.MISDIRECTED_REQUEST
        )
    if any(_host_name(origin, _ORIGIN) not in hosts for origin in headers.getall("origin", [])):
        raise RpcError(INVALID_REQUEST, "Origin não permitida.", status=HTTPStatus.FORBIDDEN)
    content_types = headers.getall("content-type", [])
    if not content_types or any(
        value.split(";")[0].strip().lower() != _JSON for value in content_types
    ):
        raise RpcError(
            INVALID_REQUEST, "Content-Type deve ser application/json.",
            status=HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        )  # fmt: skip
    if not _accepts_json(headers.get("accept", "*/*")):
        raise RpcError(
            INVALID_REQUEST, "Accept deve incluir application/json.",
            status=HTTPStatus.NOT_ACCEPTABLE,
        )  # fmt: skip
    versions = set(headers.getall("mcp-protocol-version", []))
    for version in versions:
        if version not in protocol.SUPPORTED:
            raise RpcError(
                INVALID_REQUEST,
                f"MCP-Protocol-Version não suportada: {version[:32]}; use uma de "
                f"{', '.join(protocol.SUPPORTED)}.",
                status=HTTPStatus.BAD_REQUEST,
            )
    if len(versions) > 1:
        raise RpcError(
            INVALID_REQUEST, "MCP-Protocol-Version repetida com valores diferentes.",
            status=HTTPStatus.BAD_REQUEST,
        )  # fmt: skip


def refused(request: Request[Any, Any, Any], error: AppError | HTTPException) -> Response[bytes]:
    """What is refused before the message is read (a query parameter, a body over the cap, a
    key in the URL) as a JSON-RPC error, with the same HTTP status and headers."""
    if isinstance(error, AppError):
        failure = server.access_failure(error, request.app.state.backends.settings.public_url)
        if error.status in (HTTPStatus.BAD_REQUEST, HTTPStatus.REQUEST_ENTITY_TOO_LARGE):
            failure = RpcError(
                INVALID_REQUEST, error.message, status=error.status, data=error.details
            )
    else:
        message, details = framework_message(request, error)
        failure = RpcError(
            INVALID_REQUEST, message, status=error.status_code, data=details,
            headers={k: v for k, v in (error.headers or {}).items() if k.lower() == "allow"},
        )  # fmt: skip
    return _failure(None, failure)


REFUSALS = {AppError: refused, HTTPException: refused}
"""The route's own exception handlers: its refusals keep the JSON-RPC shape."""


def _as_failure(error: AppError) -> RpcError:
    """A failure outside a tool (a resource, a completion) as a JSON-RPC error."""
    if error.status == HTTPStatus.NOT_FOUND:
        return RpcError(RESOURCE_NOT_FOUND, error.message)
    if error.status == HTTPStatus.BAD_REQUEST:
        return RpcError(INVALID_PARAMS, error.message, data=error.details)
    return server.access_failure(error)


@post(
    PATHS,
    summary="Agent interface (MCP, JSON-RPC 2.0)",
    description=(
        "Model Context Protocol 2025-11-25 over Streamable HTTP, one JSON-RPC message per POST "
        "(a batch from a 2025-03-26 client) and one JSON answer, no session. Discovery "
        "(initialize, tools/list, resources/*, prompts/*, completion/complete) needs no key "
        "(completion/complete without one: 60 a minute per address); "
        "tools/call needs a Bearer key and counts against the account's window like REST. See "
        "docs/mcp.md."
    ),
    status_code=200,
    opt={"access": Access.AGENT},
    security=NO_TOKEN,
    tags=["Agentes (MCP)"],
    include_in_schema=True,
    exception_handlers=REFUSALS,  # type: ignore[arg-type]
)
async def mcp_post(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    settings = backends.settings
    request_id: protocol.Id = None
    try:
        _check_headers(request, allowed_hosts(settings.public_url, settings.mcp_allowed_hosts))
        raw = await request.body()
        version = request.headers.get("mcp-protocol-version", protocol.BATCHING)
        if version == protocol.BATCHING and protocol.is_batch(raw):
            return await _batch(request, _context(request, backends), protocol.parse_batch(raw))
        message = protocol.parse(raw)
        if message.method is None or message.is_notification:
            state = access(request)
            if state is not None and state.refusal is not None:  # a wrong key is never ignored
                raise server.access_failure(state.refusal, settings.public_url)
            return Response(b"", status_code=HTTPStatus.ACCEPTED)
        request_id = None if message.id is msgspec.UNSET else message.id
        result = await server.dispatch(_context(request, backends), message.method, message.params)
    except (RpcError, AppError, ApiError, TransportError) as error:
        failure = _as_rpc(error)
        return _failure(request_id if request_id is not None else failure.request_id, failure)
    except HTTPException:  # refused by the framework (a body over the cap): `refused` answers
        raise
    except Exception as error:
        return _failure(
            request_id, _internal(request, error, status=HTTPStatus.INTERNAL_SERVER_ERROR)
        )
    return _answer(protocol.result(request_id, result))


def _context(request: Request[Any, Any, Any], backends: Backends) -> server.Context:
    return server.Context(
        backends,
        access(request),
        _rendered,
        request.app.openapi_config.version,  # type: ignore[union-attr]
        backends.settings.public_url,
    )


def _as_rpc(error: RpcError | AppError | ApiError | TransportError) -> RpcError:
    """Any failure of a request as its JSON-RPC error."""
    if isinstance(error, RpcError):
        return error
    if isinstance(error, AppError):
        return _as_failure(error)
    return server.access_failure(elastic_failure(error))


def _internal(
    request: Request[Any, Any, Any], error: Exception, status: int = HTTPStatus.OK
) -> RpcError:
    """A bug of ours as JSON-RPC's internal error (-32603), never the REST error body: logged
    with its traceback, and nothing of it told to the caller. Alone, the message travels with
    HTTP 500; in a batch, the other messages are answered as usual under HTTP 200."""
    log_unhandled(request, error)
    return RpcError(INTERNAL_ERROR, INTERNAL_MESSAGE, status=status)


async def _batch(
    request: Request[Any, Any, Any],
    context: server.Context,
    items: list[protocol.Message | RpcError],
) -> Response[bytes]:
    """The answers to a batch (revision 2025-03-26), in its order: one per request, none for
    notifications and responses; 202 when there is none. Each message is served as it would
    be alone: admitted, charged and audited on its own (`Context.alone`), its errors in the
    array under HTTP 200, whose headers carry those of its refusals (`Retry-After`,
    `WWW-Authenticate`) and the window as the last message left it. A key that is refused
    (unknown, revoked, outside its allowlist) refuses the whole batch, as it would each
    message, with its HTTP status."""
    outer = context.state
    if outer is not None and outer.refusal is not None:
        raise server.access_failure(outer.refusal, context.public_url)
    replies: list[protocol.Reply] = []
    headers: dict[str, str] = {}
    for item in items:
        if isinstance(item, RpcError):
            replies.append(protocol.failed(item.request_id, item))
            continue
        if item.method is None or item.is_notification:
            continue
        request_id = None if item.id is msgspec.UNSET else item.id
        own = context.alone()
        try:
            value = await server.dispatch(own, item.method, item.params)
        except (RpcError, AppError, ApiError, TransportError) as error:
            failure = _as_rpc(error)
            headers.update(failure.headers)
            replies.append(protocol.failed(request_id, failure))
        except HTTPException:
            raise
        except Exception as error:
            if own.state is not None:
                own.state.status = HTTPStatus.INTERNAL_SERVER_ERROR
            replies.append(protocol.failed(request_id, _internal(request, error)))
        else:
            replies.append(protocol.succeeded(request_id, value))
        finally:
            if own.state is not None and outer is not None:
                record_call(request.scope, own.state, HTTPStatus.OK)
                outer.decision = own.state.decision or outer.decision
    if not replies:
        return Response(b"", status_code=HTTPStatus.ACCEPTED)
    return _answer(protocol.ENCODER.encode(replies), headers=headers or None)


def method_refused() -> Response[bytes]:
    """A method other than POST (or OPTIONS, which the framework answers from the route):
    405 with `Allow: POST` in the JSON-RPC shape. It is the routing's answer, not a route's, so
    that OPTIONS lists only what is served."""
    failure = RpcError(
        INVALID_REQUEST, "Use POST: este servidor não abre fluxos de eventos nem sessões.",
        status=HTTPStatus.METHOD_NOT_ALLOWED, headers={"Allow": "POST"},
    )  # fmt: skip
    return _failure(None, failure)
