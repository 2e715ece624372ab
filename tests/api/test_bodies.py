"""Request bodies on every route that takes one: malformed JSON of any kind is a 400 with the
error body, a body over the cap is a 413 before any work, and no traceback reaches the log."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.mcp.protocol import INVALID_REQUEST, PARSE_ERROR
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
        ("POST", "/v1/me/monitoramentos"),
        ("PATCH", "/v1/me/monitoramentos/1"),
        ("POST", "/v1/leads/exportacao"),
        ("POST", "/v1/me/lotes"),
    ]


_calls = itertools.count()


def _send(
    server: Server,
    admin: Issued,
    method: str,
    path: str,
    body: bytes,
    content_type: str | None = "application/json",
) -> httpx.Response:
    # The bootstrap routes have a per-address window; each call comes from its own address.
    n = next(_calls)
    address = f"127.1.{n // 250}.{n % 250 + 1}"
    headers = {} if content_type is None else {"content-type": content_type}
    with server.client(address, headers=admin.headers) as client:
        return client.request(method, path, content=body, headers=headers)


MALFORMED = pytest.mark.parametrize(
    "body",
    [INVALID_UTF8, DEEP, DEEP_OBJECT, b"{", b"\x00", b'{"a": NaN}', b"[1, 2,]"],
    ids=["invalid-utf8", "deep-array", "deep-object", "truncated", "nul", "nan", "trailing-comma"],
)


@MALFORMED
def test_malformed_body_every_route_400(server: Server, admin: Issued, body: bytes) -> None:
    for method, path in _routes(admin, admin.key_id):
        response = _send(server, admin, method, path, body)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"] == "Bad Request"
        assert response.json()["message"]


@MALFORMED
def test_malformed_body_agent_interface_400_json_rpc_error(
    server: Server, admin: Issued, body: bytes
) -> None:
    """The agent interface reads a JSON body too; it answers in JSON-RPC, not the REST body."""
    response = _send(server, admin, "POST", "/mcp", body)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] is None
    assert answer["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST), answer


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_body_declared_not_json_every_route_415(
    server: Server, admin: Issued, content_type: str
) -> None:
    """Requests with a body carry `Content-Type: application/json` (spec §1): a body declared
    as anything else (curl's `-d` without `-H` sends a form) is a 415 that says so, before it
    is parsed; the same bytes as JSON reach the route's own checks."""
    for method, path in _routes(admin, admin.key_id):
        refused = _send(server, admin, method, path, b'{"campo_inexistente": 1}', content_type)
        assert refused.status_code == 415, (path, refused.text)
        assert refused.json() == {
            "error": "Unsupported Media Type",
            "message": "Content-Type deve ser application/json.",
            "details": {"content_type": content_type},
        }


@pytest.mark.parametrize(
    "content_type", [None, "application/json; charset=utf-8", "application/merge-patch+json"]
)
def test_body_as_json_any_spelling_reaches_the_route(
    server: Server, admin: Issued, content_type: str | None
) -> None:
    """No `Content-Type`, a charset parameter, or a `+json` type: the body is read as JSON, so
    an unknown field is the route's 400 naming it, not a 415."""
    for method, path in _routes(admin, admin.key_id):
        response = _send(server, admin, method, path, b'{"campo_inexistente": 1}', content_type)
        assert response.status_code == 400, (path, response.text)
        assert "campo_inexistente" in response.json()["message"], (path, response.text)


@pytest.mark.parametrize(
    ("method", "path", "body", "message", "details"),
    [
        ("POST", "/v1/me/monitoramentos", b'{"cnpj": 5}',
         "Valor inválido em cnpj: deve ser um texto.", {"campo": "cnpj"}),
        ("POST", "/v1/me/monitoramentos", b"[1]", "Corpo JSON inválido: deve ser um objeto.", None),
        ("POST", "/v1/me/monitoramentos", b"", "Corpo ausente: envie um objeto JSON.", None),
        ("PUT", "/v1/me/chaves/{key}/allowlist", b'{"allowlist": ["127.0.0.1", 3]}',
         "Valor inválido em allowlist[1]: deve ser um texto.", {"campo": "allowlist[1]"}),
        ("POST", "/v1/me/chaves", b'{"rotulo": "x", "sobra": 1}',
         "Campo desconhecido: sobra.", {"campo": "sobra"}),
        ("POST", "/v1/me/chaves", b"{}", "Campo obrigatório ausente: rotulo.", {"campo": "rotulo"}),
        # as strict as every other body: no number or true read from a text
        ("POST", "/v1/me/lotes", b'{"quantidade": "7"}',
         "Valor inválido em quantidade: deve ser um número inteiro.", {"campo": "quantidade"}),
        ("POST", "/v1/me/lotes", b'{"confirmar_lgpd": "1"}',
         "Valor inválido em confirmar_lgpd: deve ser verdadeiro ou falso (true/false).",
         {"campo": "confirmar_lgpd"}),
        ("POST", "/v1/me/lotes", b'{"uso_responsavel": 1}',
         "Valor inválido em uso_responsavel: deve ser verdadeiro ou falso (true/false).",
         {"campo": "uso_responsavel"}),
        ("PATCH", "/v1/me/monitoramentos/1", b'{"descricao": 5}',
         "Valor inválido em descricao: deve ser um texto.", {"campo": "descricao"}),
        ("POST", "/v1/cnpj/lote", b"", "Corpo ausente: envie um JSON.", None),
        ("POST", "/v1/cnpj/lote", b'["33683111000280"] xx',
         "Corpo JSON inválido: há texto depois do fim do JSON (byte 20).", None),
        ("POST", "/v1/cnpj/lote", b"[1 2]", "Corpo JSON inválido: esperado ',' ou ']' (byte 3).",
         None),
        ("POST", "/v1/seek", b'{"capital_min": 1e400}',
         "Corpo JSON inválido: número fora do intervalo representável.", None),
        ("POST", "/v1/seek", b'{"municipio": "\\ud800"}',
         "Corpo JSON inválido: um escape \\uD800-\\uDBFF sem o par UTF-16 que o completa.", None),
        ("POST", "/v1/seek", b'{"municipio": "\\\\ud800", "b": "x',  # the text \\ud800, cut
         "Corpo JSON inválido: o JSON termina antes do fim (corpo vazio ou cortado).", None),
        ("POST", "/v1/cnpj/lote", b'["\\udc00x"]',
         "Corpo JSON inválido: par de escapes \\u UTF-16 inválido num texto (byte 8).", None),
        ("POST", "/v1/search", b"{1:2}",
         "Corpo JSON inválido: o nome de cada campo deve ser um texto entre aspas (byte 1).", None),
        ("POST", "/v1/cnpj/lote", b"[01]", "Corpo JSON inválido: número inválido (sem zeros à "
         "esquerda; dígitos antes e depois do ponto) (byte 2).", None),
        ("POST", "/v1/seek", b'["\\u12"]',
         "Corpo JSON inválido: escape \\u inválido num texto (4 hexadecimais) (byte 7).", None),
        ("POST", "/v1/cnpj/lote", b'{"cnpjs": ["1"], "": 1}', "Campo desconhecido: .",
         {"campo": ""}),
    ],
)  # fmt: skip
def test_body_refused_by_type_in_the_service_words(
    server: Server, admin: Issued, method: str, path: str, body: bytes, message: str,
    details: dict[str, str] | None,
) -> None:  # fmt: skip
    """Routes whose body the framework converts say what is wrong as every other 400 does: a
    Portuguese sentence naming the field, and `details.campo`."""
    response = _send(server, admin, method, path.format(key=admin.key_id), body)
    assert response.status_code == 400, response.text
    assert response.json() == {"error": "Bad Request", "message": message,
                               **({"details": details} if details else {})}  # fmt: skip


def test_body_over_cap_413_under_cap_parsed(server: Server, admin: Issued) -> None:
    over = b'{"municipio": "' + "\ufdfa".encode() * (CAP // 3 + 1) + b'"}'
    for method, path in _routes(admin, admin.key_id):
        response = _send(server, admin, method, path, over)
        assert response.status_code == 413, (path, response.text)
        assert response.json() == {
            "error": "Request Entity Too Large",
            "message": "Corpo da requisição grande demais.",
        }
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


HUGE = "\ufdfa" * 100_000
"""The CPU-DoS input of the security review: a character NFKD turns into 18 letters."""


@pytest.fixture(scope="module")
def roomy_server(peer_alias: str) -> Iterator[Server]:
    """A server whose body cap lets 100,000 three-byte characters reach the parser."""
    with serving(peer_alias, env={"MAX_BODY_SIZE": str(2**20)}) as running:
        yield running


@pytest.mark.parametrize(("path", "field"), [("/v1/seek", "municipio"), ("/v1/search", "q")])
def test_huge_text_body_field_refused_by_its_bound(
    roomy_server: Server, admin: Issued, path: str, field: str
) -> None:
    """Past the default cap (a 413 there), the field's own length bound refuses the value
    before any normalisation: a 400 naming the field. (In a query string, 100,000 such
    characters make a URL of 900 kB that uvicorn refuses before the app sees it.)"""
    body = msgspec.json.encode({field: HUGE})
    assert len(body) > CAP
    with roomy_server.client(headers=admin.headers, timeout=60) as client:
        response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text[:500]
    assert response.json()["error"] == "Bad Request"
    assert response.json()["details"]["campo"] == field
