"""Request bodies on every route that takes one: malformed JSON of any kind is a 400 with the
error body, a body over the cap is a 413 before any work, and no traceback reaches the log."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.settings import Settings
from tests.conftest import Issued, MakeKey, Server, serving

CAP = Settings().max_body_size
INVALID_UTF8 = b'{"q":"\xff\xfe"}'
DEEP = b"[" * 3000 + b"]" * 3000
DEEP_OBJECT = b'{"a":' * 3000 + b"1" + b"}" * 3000


@pytest.fixture(scope="module")
def server(peer_alias: str) -> Iterator[Server]:
    with serving(peer_alias) as running:
        yield running


@pytest.fixture(scope="module")
def admin(make_key: MakeKey) -> Issued:
    return make_key(papel="admin")


def _routes(admin: Issued, key_id: str) -> list[tuple[str, str]]:
    return [
        ("POST", "/v1/search"),
        ("POST", "/v1/seek"),
        ("POST", "/v1/cnpj/lote"),
        ("POST", "/v1/me/chaves"),
        ("PUT", f"/v1/me/chaves/{key_id}/allowlist"),
        ("POST", "/v1/admin/contas"),
        ("POST", "/api/mcp/auth/start"),
        ("POST", "/api/mcp/auth/verify"),
    ]


_calls = itertools.count()


def _send(server: Server, admin: Issued, method: str, path: str, body: bytes) -> httpx.Response:
    # The bootstrap routes have a per-address window; each call comes from its own address.
    n = next(_calls)
    address = f"127.1.{n // 250}.{n % 250 + 1}"
    with server.client(address, headers=admin.headers) as client:
        return client.request(
            method, path, content=body, headers={"content-type": "application/json"}
        )


@pytest.mark.parametrize(
    "body",
    [INVALID_UTF8, DEEP, DEEP_OBJECT, b"{", b"\x00", b'{"a": NaN}', b"[1, 2,]"],
    ids=["invalid-utf8", "deep-array", "deep-object", "truncated", "nul", "nan", "trailing-comma"],
)
def test_malformed_body_every_route_400(server: Server, admin: Issued, body: bytes) -> None:
    for method, path in _routes(admin, admin.key_id):
        response = _send(server, admin, method, path, body)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"] == "Bad Request"
        assert response.json()["message"]


def test_body_over_cap_413_under_cap_parsed(server: Server, admin: Issued) -> None:
    over = b'{"municipio": "' + "\ufdfa".encode() * (CAP // 3 + 1) + b'"}'
    for method, path in _routes(admin, admin.key_id):
        response = _send(server, admin, method, path, over)
        assert response.status_code == 413, (path, response.text)
        assert response.json()["error"] == "Request Entity Too Large"
    # Just under the cap, a long value is refused by the type's bound, naming the field.
    under = b'{"municipio": "' + "\ufdfa".encode() * ((CAP - 40) // 3) + b'"}'
    assert len(under) <= CAP
    response = _send(server, admin, "POST", "/v1/seek", under)
    assert response.status_code == 400
    assert response.json()["details"]["campo"] == "municipio"


@given(raw=st.binary(max_size=300))
def test_any_bytes_to_search_body_never_500(server: Server, admin: Issued, raw: bytes) -> None:
    response = _send(server, admin, "POST", "/v1/search", raw)
    assert response.status_code in (200, 400), response.text
    assert response.headers["content-type"].startswith("application/json")
