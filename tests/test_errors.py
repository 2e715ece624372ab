"""The app's last-resort exception handler (`Exception` in `app.errors.HANDLERS`): no request
of the suite reaches it (a 500 would be a bug, and its traceback fails the server's log check),
so it is judged alone: a 500 with the JSON error body that says nothing of the error, and the
error logged with its traceback."""

from __future__ import annotations

import logging

import pytest
from litestar import Request

from app.errors import ErrorBody, internal_error_handler


def test_internal_error_handler_500_hides_error_and_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scope = {
        "type": "http", "method": "POST", "path": "/v1/search", "raw_path": b"/v1/search",
        "root_path": "", "scheme": "http", "server": ("127.0.0.1", 8000), "query_string": b"",
        "headers": [], "client": ("127.0.0.1", 50000),
    }  # fmt: skip
    error = RuntimeError("senha=segredo-interno")
    with caplog.at_level(logging.ERROR, logger="app.errors"):
        response = internal_error_handler(Request(scope), error)  # type: ignore[arg-type]
    assert response.status_code == 500
    assert response.media_type == "application/json"
    assert response.content == ErrorBody(
        error="Internal Server Error",
        message="Erro interno inesperado; ele foi registrado e será analisado.",
    )
    [record] = caplog.records
    assert record.getMessage() == "unhandled RuntimeError on POST /v1/search"
    assert record.exc_info is not None
    assert record.exc_info[1] is error
