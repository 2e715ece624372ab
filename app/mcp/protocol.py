"""JSON-RPC 2.0 as the Model Context Protocol uses it over Streamable HTTP: one message per POST
(or a batch, from a client of revision 2025-03-26), one JSON answer, no session.

Why our own ~200 lines rather than the official SDK's server: the protocol surface of a
stateless, JSON-response tools/resources/prompts server is small, the SDK serves a sixth of the
throughput measured on our machines (`docs/mcp.md`), brings a second web stack (Starlette,
pydantic) into every app process, and would describe tools with schemas written for it instead of
the msgspec Structs our service functions already take and return. The official SDK client and
the official conformance suite are the judges, in the test command.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import msgspec

from app.accounts.keys import redacted
from app.errors import BadRequestError
from app.lib import body
from app.lib.wording import invalid

LATEST = "2025-11-25"
BATCHING = "2025-03-26"
"""The revision whose clients may send a JSON array of messages (later ones may not); a
request without `MCP-Protocol-Version` is taken to be of it, as the specification says."""
SUPPORTED = (LATEST, "2025-06-18", BATCHING)
"""Protocol revisions this server speaks; `initialize` answers the client's when it is one of
these, else the latest."""
MAX_BATCH = 20
"""Messages in one batch (each tool call in it is counted as one call)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
UNAUTHORIZED = -32040
"""A key is needed (HTTP 401) or the one sent is not valid."""
FORBIDDEN = -32043
"""The key may not do this (HTTP 403): an address outside its allowlist, a call too large."""
RATE_LIMITED = -32029
"""The account's window is full (HTTP 429, with `Retry-After`)."""
UNAVAILABLE = -32053
"""A dependency of the access layer is down (HTTP 503, with `Retry-After`)."""

Id = int | str | None


class Message(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """One JSON-RPC message from the client: a request (with `id`), a notification (without),
    or a response to something the server asked (this server never asks)."""

    jsonrpc: str
    method: str | None = None
    id: Id | msgspec.UnsetType = msgspec.UNSET
    params: dict[str, Any] | list[Any] | None = None
    """By name (what MCP uses); a list (by position, which JSON-RPC allows) is read and answered
    with Invalid params, not refused as an invalid message."""
    result: Any = msgspec.UNSET
    error: Any = msgspec.UNSET

    @property
    def is_notification(self) -> bool:
        return self.id is msgspec.UNSET


class ErrorObject(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: int
    message: str
    data: Any = None


class RpcError(Exception):
    """A JSON-RPC error answer, with the HTTP status and headers it travels with."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        status: int = HTTPStatus.OK,
        data: Any = None,
        headers: dict[str, str] | None = None,
        request_id: Id = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data
        self.headers = headers or {}
        self.request_id = request_id
        """The id of the request refused, when it could be read (null otherwise)."""


class Reply(msgspec.Struct, kw_only=True):
    """An answer: `jsonrpc` and `id` always (null when the request's could not be read), and
    either `result` or `error` (the unset one is left out)."""

    jsonrpc: str = "2.0"
    id: Id = None
    result: Any = msgspec.UNSET
    error: ErrorObject | msgspec.UnsetType = msgspec.UNSET


ENCODER = msgspec.json.Encoder(decimal_format="number")


def _decode(raw: bytes) -> Any:
    """The body's JSON, read as REST reads it; what is wrong with it in REST's words (the
    syntax error and its byte, bad UTF-8, a lone surrogate, nesting too deep)."""
    try:
        return body.decode(raw)
    except BadRequestError as error:
        raise RpcError(PARSE_ERROR, f"Parse error: {error.message}", status=400) from None


def parse(raw: bytes) -> Message:
    """The one message of a POST body; `RpcError` (HTTP 400) for anything else: not JSON, a
    batch array (one message per POST since 2025-06-18; `parse_batch` for 2025-03-26), or not
    a JSON-RPC 2.0 message."""
    value = _decode(raw)
    if isinstance(value, list):
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: envie uma mensagem JSON-RPC por requisição (lotes só na revisão "
            "2025-03-26).",
            status=400,
        )
    return _message(value)


def is_batch(raw: bytes) -> bool:
    """Whether the body is a JSON array (what a 2025-03-26 client may send)."""
    return raw.lstrip()[:1] == b"["


def parse_batch(raw: bytes) -> list[Message | RpcError]:
    """The messages of a batch (revision 2025-03-26), each one or the error it gets; an empty
    batch, one over `MAX_BATCH` or one with `initialize` (which may not be batched) is a 400."""
    value = _decode(raw)
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_BATCH:
        raise RpcError(
            INVALID_REQUEST,
            f"Invalid Request: um lote tem de 1 a {MAX_BATCH} mensagens.",
            status=400,
        )
    items: list[Message | RpcError] = []
    for item in value:
        try:
            items.append(_message(item))
        except RpcError as failure:
            items.append(failure)
    if any(isinstance(item, Message) and item.method == "initialize" for item in items):
        raise RpcError(
            INVALID_REQUEST, "Invalid Request: initialize não pode ir num lote.", status=400
        )
    return items


def _message(value: Any) -> Message:
    """One JSON-RPC 2.0 message, or the `RpcError` (400) saying what is wrong with it."""
    request_id = value.get("id") if isinstance(value, dict) else None
    if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
        request_id = None
    try:
        message = msgspec.convert(value, Message)
    except (msgspec.ValidationError, RecursionError) as error:
        said = invalid(str(error)) + " " if isinstance(error, msgspec.ValidationError) else ""
        raise RpcError(
            INVALID_REQUEST,
            f"Invalid Request: {said}Esperado um objeto JSON-RPC 2.0 (jsonrpc, method, id, "
            "params).",
            status=400,
            data={"id": request_id},
            request_id=request_id,
        ) from None
    if message.jsonrpc != "2.0":
        raise RpcError(
            INVALID_REQUEST,
            'Invalid Request: jsonrpc deve ser "2.0".',
            status=400,
            request_id=request_id,
        )
    if message.method is None and (
        message.is_notification
        or (message.result is msgspec.UNSET and message.error is msgspec.UNSET)
    ):
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: sem method (uma requisição) nem result ou error (uma resposta).",
            status=400,
            request_id=request_id,
        )
    if message.method is not None and (
        message.result is not msgspec.UNSET or message.error is not msgspec.UNSET
    ):
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: method com result ou error: uma mensagem é requisição ou resposta.",
            status=400,
            request_id=request_id,
        )
    if message.method is not None and not message.is_notification and message.id is None:
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: o id de uma requisição não pode ser null.",
            status=400,
        )
    return message


def succeeded(request_id: Id, value: Any) -> Reply:
    return Reply(id=request_id, result=value)


def failed(request_id: Id, failure: RpcError) -> Reply:
    """The error reply; a key echoed from the caller's input is masked."""
    payload = ErrorObject(
        code=failure.code, message=redacted(failure.message), data=redacted(failure.data)
    )
    return Reply(id=request_id, error=payload)


def result(request_id: Id, value: Any) -> bytes:
    return ENCODER.encode(succeeded(request_id, value))


def error(request_id: Id, failure: RpcError) -> bytes:
    return ENCODER.encode(failed(request_id, failure))
