"""Bearer keys: missing, malformed, misplaced, revoked; allowlists; admin routes; open routes."""

from __future__ import annotations

import uuid

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import MakeKey, Server, serving

PROTECTED = "/v1/me/chaves"
VALIDATE = "/v1/cnpj/validar/11222333000181"


def assert_unauthorized(response: httpx.Response, key: str | None = None) -> None:
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    body = response.json()
    assert set(body) == {"error", "message"}
    assert body["error"] == "Unauthorized"
    if key:
        assert key not in response.text


def test_protected_route_without_key_401(api_server: Server) -> None:
    with api_server.client(headers={}) as client:
        assert_unauthorized(client.get(PROTECTED))
        assert_unauthorized(client.get("/v1/search", params={"q": "padaria"}))


def test_key_outside_bearer_header_401(api_server: Server, make_key: MakeKey) -> None:
    key = make_key().key
    with api_server.client(headers={}) as client:
        for params in ({"api_key": key}, {"token": key}, {"key": key}):
            assert_unauthorized(client.get(PROTECTED, params=params), key)
        for name in ("X-API-Key", "Api-Key", "X-Auth-Token"):
            assert_unauthorized(client.get(PROTECTED, headers={name: key}), key)
        # Even next to a right Bearer header, a copy in the URL is refused.
        response = client.get(PROTECTED, params={"api_key": key}, headers=_bearer(key))
        assert_unauthorized(response, key)
    # In the path or as any query value (pasted where a CNPJ or a name goes), with or without a
    # header, on a route open to callers without a key too: refused, not echoed.
    with api_server.client("127.3.0.1", headers={}) as client:  # a refusal window of its own
        for path, params in (
            (f"/v1/cnpj/validar/{key}", {}),
            (f"/v1/cnpj/{key}", {}),
            ("/v1/search", {"q": key}),
            ("/v1/nome", {"nome": f"x {key}"}),
        ):
            for headers in ({}, _bearer(key)):
                assert_unauthorized(client.get(path, params=params, headers=headers), key)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_malformed_or_unknown_key_401(api_server: Server, make_key: MakeKey) -> None:
    key = make_key().key
    tampered = key[:-1] + ("A" if key[-1] != "A" else "B")
    with api_server.client(headers={}) as client:
        for value in (f"Basic {key}", "Bearer", "", key, f"Bearer {tampered}",
                      f"Bearer {key}x", "Bearer cnpj_00000000_" + "a" * 43):  # fmt: skip
            assert_unauthorized(client.get(PROTECTED, headers={"Authorization": value}), key)
        assert client.get(PROTECTED, headers={"Authorization": f"bearer {key}"}).status_code == 200


@given(
    scheme=st.sampled_from(["Bearer ", "bearer ", "Basic ", "", "Bearer  ", "Token "]),
    value=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=120),
)
def test_authorization_header_any_shape_never_500(
    api_server: Server, scheme: str, value: str
) -> None:
    # h11 itself refuses surrounding whitespace in a header value, so none is sent.
    with api_server.client(headers={"Authorization": (scheme + value).strip()}) as client:
        assert_unauthorized(client.get(PROTECTED))


def test_revoked_key_stops_at_once(api_server: Server, make_key: MakeKey) -> None:
    owner = make_key()
    with api_server.client(headers=_bearer(owner.key)) as client:
        created = client.post(PROTECTED, json={"rotulo": "ci"})
        assert created.status_code == 201
        new = created.json()
        assert new["api_key"].startswith(f"cnpj_{new['chave']['id']}_")
        listed = client.get(PROTECTED).json()
        assert {k["id"] for k in listed["data"]} == {owner.key_id, new["chave"]["id"]}
        assert "api_key" not in listed["data"][0]
        assert new["api_key"] not in str(listed)
        for _ in range(10):  # cached by both workers' credential caches
            assert client.get(VALIDATE, headers=_bearer(new["api_key"])).status_code == 200
        assert client.delete(f"{PROTECTED}/{new['chave']['id']}").status_code == 204
        for _ in range(10):  # both workers, straight away
            assert_unauthorized(client.get(VALIDATE, headers=_bearer(new["api_key"])))
        assert client.delete(f"{PROTECTED}/deadbeef").status_code == 404


def test_allowlist_other_address_403(api_server: Server, make_key: MakeKey) -> None:
    owner = make_key()
    with api_server.client(headers=_bearer(owner.key)) as client:
        created = client.post(PROTECTED, json={"rotulo": "servidor", "allowlist": ["127.0.0.2"]})
        assert created.status_code == 201
        assert created.json()["chave"]["allowlist"] == ["127.0.0.2/32"]
        limited = created.json()["api_key"]
        refused = client.get(VALIDATE, headers=_bearer(limited))
        assert refused.status_code == 403
        assert refused.json()["error"] == "Forbidden"
        key_id = created.json()["chave"]["id"]
        changed = client.put(f"{PROTECTED}/{key_id}/allowlist", json={"allowlist": ["10.0.0.0/8"]})
        assert changed.json()["allowlist"] == ["10.0.0.0/8"]
        assert client.get(VALIDATE, headers=_bearer(limited)).status_code == 403
        client.put(f"{PROTECTED}/{key_id}/allowlist", json={"allowlist": ["127.0.0.0/30"]})
    with api_server.client("127.0.0.2", headers=_bearer(limited)) as other:
        assert other.get(VALIDATE).status_code == 200


def test_allowlist_narrowed_applies_at_once_in_every_worker(
    api_server: Server, make_key: MakeKey
) -> None:
    owner = make_key()
    with api_server.client(headers=_bearer(owner.key)) as client:
        created = client.post(PROTECTED, json={"rotulo": "estreitada"})
        key, key_id = created.json()["api_key"], created.json()["chave"]["id"]
        for _ in range(10):  # cached by both workers
            assert client.get(VALIDATE, headers=_bearer(key)).status_code == 200
        narrowed = client.put(f"{PROTECTED}/{key_id}/allowlist", json={"allowlist": ["10.0.0.0/8"]})
        assert narrowed.status_code == 200
        for _ in range(10):
            assert client.get(VALIDATE, headers=_bearer(key)).status_code == 403


def test_allowlist_invalid_network_400(api: httpx.Client) -> None:
    key_id = api.post(PROTECTED, json={"rotulo": "rede"}).json()["chave"]["id"]
    zoned = (["fe80::1%eth0"], ["fe80::%1/64"])  # a zone names an interface of the caller's host
    for value in (["not-an-ip"], ["10.0.0.1/8"], ["300.1.1.1"], ["1.2.3.4"] * 101, *zoned):
        created = api.post(PROTECTED, json={"rotulo": "x", "allowlist": value})
        changed = api.put(f"{PROTECTED}/{key_id}/allowlist", json={"allowlist": value})
        assert created.status_code == changed.status_code == 400, value
        assert "allowlist" in created.json()["message"]
    api.delete(f"{PROTECTED}/{key_id}")
    revoked = api.put(f"{PROTECTED}/{key_id}/allowlist", json={"allowlist": ["10.0.0.0/8"]})
    assert revoked.status_code == 409
    assert "revogada" in revoked.json()["message"]
    listed = {k["id"]: k for k in api.get(PROTECTED).json()["data"]}
    assert listed[key_id]["allowlist"] == []


def test_admin_route_non_admin_403(api: httpx.Client, make_key: MakeKey) -> None:
    response = api.get("/v1/admin/auditoria")
    assert response.status_code == 403
    assert response.json()["error"] == "Forbidden"
    assert "X-RateLimit-Remaining" in response.headers
    assert (
        api.post("/admin/contas", json={"nome": "x", "email": "x@example.com"}).status_code == 403
    )
    admin = make_key(papel="admin")
    assert api.get("/admin/auditoria", headers=_bearer(admin.key)).status_code == 200


def test_admin_creates_account_with_key_once(api: httpx.Client, make_key: MakeKey) -> None:
    admin = _bearer(make_key(papel="admin").key)
    email = f"Cliente-{uuid.uuid4().hex[:8]}@Example.com"
    body = {"nome": "Cliente", "email": email, "plano": "pro"}
    created = api.post("/v1/admin/contas", json=body, headers=admin)
    assert created.status_code == 201, created.text
    account = created.json()
    assert account["conta"]["email"] == email.lower()
    assert account["conta"]["papel"] == "usuario"
    response = api.get(VALIDATE, headers=_bearer(account["api_key"]))
    assert response.headers["X-RateLimit-Limit"] == "100"
    assert api.post("/v1/admin/contas", json=body, headers=admin).status_code == 409
    unknown = {**body, "email": "outro@example.com", "plano": "platina"}
    assert api.post("/v1/admin/contas", json=unknown, headers=admin).status_code == 400
    for plano in ("starter\x00", "p" * 101):  # no plan's name: refused before the database
        refused = api.post("/v1/admin/contas", json={**unknown, "plano": plano}, headers=admin)
        assert refused.status_code == 400, refused.text  # a NUL was a 500
        assert refused.json()["details"]["campo"] == "plano"


def test_open_routes_without_key(api_server: Server) -> None:
    with api_server.client(headers={}) as client:
        for path in ("/v1/status", "/health", "/schema/openapi.json"):
            response = client.get(path)
            assert response.status_code == 200, path
            assert "X-RateLimit-Limit" not in response.headers


def test_openapi_declares_bearer_and_open_routes(api_server: Server) -> None:
    with api_server.client(headers={}) as client:
        document = client.get("/schema/openapi.json").json()
    assert document["security"] == [{"BearerAuth": []}]
    assert document["components"]["securitySchemes"]["BearerAuth"]["scheme"] == "bearer"
    paths = document["paths"]
    assert paths["/v1/status"]["get"]["security"] == [{}]
    assert paths["/api/mcp/auth/verify"]["post"]["security"] == [{}]
    assert paths["/v1/cnpj/{cnpj}"]["get"]["security"] == [{}, {"BearerAuth": []}]
    assert "security" not in paths["/v1/me/chaves"]["get"]  # the document's default: Bearer


def test_other_accounts_key_untouchable_404(api_server: Server, make_key: MakeKey) -> None:
    mine, theirs = make_key(), make_key()
    with api_server.client(headers=mine.headers) as client:
        assert client.delete(f"{PROTECTED}/{theirs.key_id}").status_code == 404
        put = client.put(
            f"{PROTECTED}/{theirs.key_id}/allowlist", json={"allowlist": ["10.0.0.0/8"]}
        )
        assert put.status_code == 404
        assert theirs.key_id not in client.get(PROTECTED).text
    with api_server.client(headers=theirs.headers) as client:
        assert client.get(VALIDATE).status_code == 200


def test_ipv6_allowlist_checked_on_ipv6_and_ipv4_callers(
    peer_alias: str, make_key: MakeKey
) -> None:
    """A dual-stack server: a key allowlisted to ::1 is served from ::1 and refused from
    127.0.0.1 (an IPv4 caller seen as ::ffff:127.0.0.1 is judged as 127.0.0.1)."""
    owner = make_key()
    with serving(peer_alias, host="::") as server:
        with httpx.Client(
            base_url=f"http://[::1]:{server.port}", headers=owner.headers, timeout=10
        ) as v6:
            created = v6.post(PROTECTED, json={"rotulo": "v6", "allowlist": ["::1/128"]}).json()
            other = v6.post(
                PROTECTED, json={"rotulo": "rede", "allowlist": ["2001:db8::/32"]}
            ).json()
            only_v6 = _bearer(created["api_key"])
            assert v6.get(VALIDATE, headers=only_v6).status_code == 200
            assert v6.get(VALIDATE, headers=_bearer(other["api_key"])).status_code == 403
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10) as v4:
            assert v4.get(VALIDATE, headers=only_v6).status_code == 403


def test_options_needs_no_key_and_shows_no_data(api_server: Server) -> None:
    """OPTIONS lists every method of the path, the same list a 405 gives, even where GET and
    POST are two handlers (`/v1/search`, the keys, the monitors)."""
    paths = (PROTECTED, "/v1/search", "/v1/seek", "/v1/me/monitoramentos", VALIDATE, "/v1/status")
    with api_server.client(headers={}) as client:
        for path in paths:
            response = client.options(path)
            assert response.status_code == 204, response.text
            assert response.content == b""
            refused = client.request("TRACE", path)
            assert refused.status_code == 405, refused.text
            allowed = set(response.headers["Allow"].split(", "))
            assert allowed == set(refused.headers["Allow"].split(", ")), path
        assert set(client.options(PROTECTED).headers["Allow"].split(", ")) >= {"GET", "POST"}


def test_allowlist_in_ipv4_mapped_form_matches_ipv4_callers(
    api_server: Server, make_key: MakeKey
) -> None:
    """Callers reaching an IPv4 address are counted as IPv4, so an entry written in the
    IPv4-mapped IPv6 form is kept as its IPv4 network (once, however often it is given)."""
    owner = make_key()
    mapped = ["::ffff:127.0.0.1", "::ffff:127.0.0.0/104", "127.0.0.1"]
    with api_server.client(headers=_bearer(owner.key)) as client:
        created = client.post(PROTECTED, json={"rotulo": "mapeado", "allowlist": mapped})
        assert created.status_code == 201, created.text
        assert created.json()["chave"]["allowlist"] == ["127.0.0.1/32", "127.0.0.0/8"]
        assert client.get(VALIDATE, headers=_bearer(created.json()["api_key"])).status_code == 200
