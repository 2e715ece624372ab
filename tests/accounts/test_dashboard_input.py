"""Bad input to the dashboard's pages gets a page with a clear status, never a 500: origins and
tokens that cannot be read, a malformed `Host`, paths and methods no page has, and keys the
account cannot change (revoked, or not a key's id)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import httpx

from app.web.sessions import SESSION_COOKIE
from tests.conftest import Issued, MakeKey, Server

TOKEN = re.compile(r'name="_csrf" value="([0-9a-f]+)"')


def _token(client: httpx.Client, path: str) -> str:
    found = TOKEN.search(client.get(path).text)
    assert found is not None
    return found.group(1)


def test_forms_refuse_origins_and_tokens_that_cannot_be_read(api_server: Server) -> None:
    with api_server.client(headers={}) as client:
        token = _token(client, "/painel/entrar")  # and the pre-session cookie
        form = {"email": "x@example.com", "_csrf": token}
        for origin in ("http://127.0.0.1:99999", "http://127.0.0.1:abc", "http://[::1"):
            refused = client.post("/painel/entrar", data=form, headers={"Origin": origin})
            assert refused.status_code == 403, origin
            assert "origem" in refused.text
        odd = client.post("/painel/entrar", data={**form, "_csrf": "é" * 64})
        assert odd.status_code == 403
        assert "Formulário" in odd.text


def test_pages_answer_a_malformed_host(api_server: Server) -> None:
    with api_server.client(headers={"Host": "127.0.0.1:abc"}) as client:
        for path in ("/painel/entrar", "/busca", "/painel/chaves"):
            answer = client.get(path)
            assert answer.status_code in (200, 303), path
        assert client.get("/painel/chaves").headers["location"].startswith("/painel/entrar")


def test_paths_and_methods_no_page_has_answer_pages(api_server: Server) -> None:
    with api_server.client(headers={}) as client:
        for path in ("/painel/nada", "/painel/monitores/abc", "/busca/empresa/11.222.333/0001-81"):
            missing = client.get(path)
            assert missing.status_code == 404, path
            assert missing.headers["content-type"].startswith("text/html")
            assert missing.headers["cache-control"] == "no-store"
        wrong = client.delete("/painel/chaves")
        assert wrong.status_code == 405
        assert wrong.headers["content-type"].startswith("text/html")
        assert "POST" in wrong.headers["allow"]
        api = client.get("/v1/nada")  # the API's own stay JSON
        assert api.status_code == 404
        assert api.json()["error"] == "Not Found"


def test_allowlist_of_a_revoked_key_or_of_no_key_is_refused(
    api_server: Server, make_key: MakeKey
) -> None:
    owner = make_key()
    cookies = {SESSION_COOKIE: api_server.open_session(owner.conta_id)}
    with api_server.client(headers=owner.headers) as api:
        created = api.post("/v1/me/chaves", json={"rotulo": "antiga"}).json()["chave"]["id"]
        assert api.delete(f"/v1/me/chaves/{created}").status_code == 204
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/chaves")
        form = {"allowlist": "203.0.113.0/24", "_csrf": token}
        revoked = client.post(f"/painel/chaves/{created}/allowlist", data=form)
        assert revoked.status_code == 409
        assert "revogada" in revoked.text
        assert "203.0.113.0/24" not in client.get("/painel/chaves").text.split("<tbody>")[1]
        odd = client.post("/painel/chaves/a%00b/allowlist", data=form)
        assert odd.status_code == 404
        assert "\x00" not in odd.text
        assert "não encontrada" in odd.text


def test_search_page_past_the_plan_says_when_to_come_back(
    api_server: Server, make_key: MakeKey
) -> None:
    owner = make_key(plano="starter")  # 3 a minute
    cookies = {SESSION_COOKIE: api_server.open_session(owner.conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        answers = [client.get("/busca", params={"q": "brasil"}) for _ in range(4)]
        partial = client.get("/busca", params={"q": "brasil"}, headers={"HX-Request": "true"})
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    for refused in (answers[-1], partial):
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.headers["X-RateLimit-Remaining"] == "0"


def test_an_ended_session_sends_htmx_and_sign_out_to_the_sign_in_page(
    api_server: Server, make_key: MakeKey
) -> None:
    owner = make_key()
    token = api_server.open_session(owner.conta_id)
    with api_server.client(headers={}, cookies={SESSION_COOKIE: token}) as client:
        page = client.get("/busca")
        assert page.status_code == 200
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        csrf = _token(client, "/painel")
        api_server.close_session(token)  # the session ends while the page is open
        partial = client.get("/busca", params={"q": "brasil"}, headers={"HX-Request": "true"})
        assert partial.status_code == 200
        assert partial.headers["hx-redirect"].startswith("/painel/entrar?proximo=/busca")
        assert partial.content == b""
        out = client.post("/painel/sair", data={"_csrf": csrf})
        assert out.status_code == 303
        assert out.headers["location"] == "/painel/entrar"
        assert SESSION_COOKIE in out.headers["set-cookie"]


def test_search_page_refuses_a_field_given_twice(api_server: Server, make_key: MakeKey) -> None:
    cookies = {SESSION_COOKIE: api_server.open_session(make_key().conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        twice = client.get("/busca", params=[("q", "brasil"), ("uf", "SP"), ("uf", "RJ")])
    assert twice.status_code == 400
    assert twice.headers["content-type"].startswith("text/html")
    assert "Parâmetro repetido: uf" in twice.text


def _post(client: httpx.Client, path: str, pairs: list[tuple[str, str]]) -> httpx.Response:
    """A form with repeated fields, as a browser sends checkboxes of one name."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    return client.post(path, content=urlencode(pairs), headers=form)


def test_forms_refuse_a_field_given_twice_and_keep_the_events_chosen(
    api_server: Server, make_key: MakeKey
) -> None:
    cookies = {SESSION_COOKIE: api_server.open_session(make_key().conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/lotes")
        form = [("_csrf", token), ("quantidade", "10"), ("uf", "BA"), ("uf", "SP")]
        twice = _post(client, "/painel/lotes", form)
        assert twice.status_code == 400
        assert "Parâmetro repetido: uf" in twice.text
        assert "[&#39;BA&#39;" not in twice.text
        assert 'action="/painel/sair"' in twice.text  # the error page keeps the menu
        chosen = [("_csrf", token), ("cnpj", "123"), ("webhook_url", "https://example.com/h"),
                  ("eventos", "empresa.removida")]  # fmt: skip
        refused = _post(client, "/painel/monitores", chosen)
        both = _post(client, "/painel/monitores", [*chosen, ("eventos", "empresa.alterada")])
    assert refused.status_code == 400  # the CNPJ, and the form shown again as it was sent
    assert re.search(r'value="empresa.removida" checked', refused.text)
    assert re.search(r'value="empresa.alterada">', refused.text)
    assert both.status_code == 400
    assert re.search(r'value="empresa.alterada" checked', both.text)


def test_an_administrator_is_shown_no_key_form_the_dashboard_refuses(
    api_server: Server, make_key: MakeKey
) -> None:
    admin = make_key(papel="admin")
    cookies = {SESSION_COOKIE: api_server.open_session(admin.conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        keys = client.get("/painel/chaves")
        token = _token(client, "/painel")
        refused = client.post("/painel/chaves", data={"_csrf": token, "rotulo": "outra"})
        confirm = client.get(f"/painel/chaves/{admin.key_id}/revogar")
        revoke = client.post(f"/painel/chaves/{admin.key_id}/revogar", data={"_csrf": token})
    assert keys.status_code == 200
    assert admin.key_id in keys.text
    assert 'action="/painel/chaves"' not in keys.text
    listed = keys.text.split("<tbody>")[1].split("</tbody>")[0]
    assert "/allowlist" not in listed
    assert "/revogar" not in listed
    assert "registry-admin" in keys.text
    assert refused.status_code == 403  # the form is gone, and so is what it did
    # A code read from the administrator's mailbox does not cut the server's own keys off.
    assert (confirm.status_code, revoke.status_code) == (403, 403)
    with api_server.client(headers=admin.headers) as client:
        assert client.get("/v1/me/chaves").status_code == 200  # still works


def _multipart(token: str, header: str, value: bytes) -> bytes:
    disposition = b"Content-Disposition: form-data; name="
    parts = [
        disposition + b'"_csrf"\r\n\r\n' + token.encode(),
        disposition + b'"email"' + header.encode() + b"\r\n\r\n" + value,
    ]
    return b"".join(b"--XB\r\n" + part + b"\r\n" for part in parts) + b"--XB--\r\n"


def test_forms_refuse_text_they_cannot_read_or_store(api_server: Server) -> None:
    """A part in an unknown charset or not in the one it declares, a file, a lone surrogate (a
    UTF-7 part) or a NUL: a 400 page saying so, before anything is looked up or stored."""
    multipart = {"Content-Type": "multipart/form-data; boundary=XB"}
    with api_server.client(headers={}) as client:
        token = _token(client, "/painel/entrar")
        cases = {
            "ilegível": ("\r\nContent-Type: text/plain; charset=nenhum", b"a@example.com"),
            "ilegível ": ("", b"\xff@example.com"),
            "caractere inválido": ("\r\nContent-Type: text/plain; charset=utf-7", b"+2D0-@x.com"),
            "não aceita arquivo": ('; filename="a.txt"', b"a@example.com"),
        }
        for said, (header, value) in cases.items():
            body = _multipart(token, header, value)
            refused = client.post("/painel/entrar", content=body, headers=multipart)
            assert refused.status_code == 400, said
            assert refused.headers["content-type"].startswith("text/html")
            assert said.strip() in refused.text
        nul = client.post("/painel/entrar", data={"_csrf": token, "email": "a\x00@example.com"})
    assert nul.status_code == 400
    assert "O campo email tem um caractere inválido" in nul.text


def test_export_form_refuses_a_null_filter_rather_than_dropping_it(
    api_server: Server, make_key: MakeKey
) -> None:
    """As on the API's query strings, the text `null` in a filter is not read as "no filter"
    (which would export every company of the other filters); a refusal names the form's own
    fields, and an unticked LGPD box is asked for in the form's words."""
    cookies = {SESSION_COOKIE: api_server.open_session(make_key().conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/lotes")
        for field in ("matriz", "capital_min", "abertura_de"):
            form = {"_csrf": token, "quantidade": "10", "uf": "SP", "uso_responsavel": "true"}
            refused = client.post("/painel/lotes", data={**form, field: "null"})
            assert refused.status_code == 400, field
            assert f"Valor inválido em {field}: null não é um valor" in refused.text
        city = client.post("/painel/lotes", data={**form, "municipio": "sao\x01paulo"})
        unagreed = client.post("/painel/lotes", data={**form, "uso_responsavel": ""})
    said = city.text.split('class="erro"')[1].split("</p>")[0]
    assert city.status_code == 400
    assert "municipio" in said  # the form's name of the field, not the lot's `cidade`
    assert "cidade" not in said
    assert unagreed.status_code == 400
    assert "Marque a confirmação de uso responsável" in unagreed.text


def test_sign_in_refuses_an_address_that_shows_in_another_order_as_the_address(
    api_server: Server,
) -> None:
    """A bidirectional mark in the address is the address's fault, even when the form's name
    is left empty and the name would be taken from the address."""
    with api_server.client(headers={}) as client:
        token = _token(client, "/painel/entrar")
        form = {"_csrf": token, "email": "moc.arof\u202e@alvo.com", "nome": ""}
        refused = client.post("/painel/entrar", data=form)
    assert refused.status_code == 400
    assert "Confira o e-mail informado." in refused.text


def test_pages_refuse_a_parameter_given_twice(api_server: Server, make_key: MakeKey) -> None:
    """Every page, as every API route: a parameter given twice is a 400 naming it, not one of
    its values taken silently (the first one, by the framework's reading)."""
    cookies = {SESSION_COOKIE: api_server.open_session(make_key(papel="admin").conta_id)}
    twice = {
        "/painel/entrar": "proximo", "/busca/cnaes": "cnae", "/busca/cidades": "uf",
        "/painel/lotes/novo": "uf", "/painel/lotes": "cursor", "/painel/monitores": "cnpj",
        "/painel/chaves": "revogada", "/painel/admin/contas": "pagina",
        "/painel/admin/auditoria": "rota",
    }  # fmt: skip
    with api_server.client(headers={}, cookies=cookies) as client:
        for path, name in twice.items():
            refused = client.get(path, params=[(name, "1"), (name, "2")])
            assert refused.status_code == 400, path
            assert refused.headers["content-type"].startswith("text/html"), path
            assert f"Parâmetro repetido: {name}." in refused.text, path


def test_company_page_reads_the_whole_cnpj_as_the_api_does(
    api_server: Server, make_key: MakeKey
) -> None:
    """A CNPJ past the characters read as one is refused for its length, not cut to fit."""
    cookies = {SESSION_COOKIE: api_server.open_session(make_key().conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        refused = client.get("/busca/empresa/" + "33683111000280".ljust(40) + "X")
    assert refused.status_code == 400
    assert "O CNPJ deve ter 14 caracteres" in refused.text


def test_form_values_are_taken_whole_or_refused_never_cut(
    api_server: Server, make_key: MakeKey
) -> None:
    """An allowlist of a hundred networks (past the 2,000 characters a field was once cut to)
    is stored whole; a value past the form's bound is a 400 naming it, not stored cut."""
    owner = make_key()
    cookies = {SESSION_COOKIE: api_server.open_session(owner.conta_id)}
    networks = [f"2001:db8:{n + 4096:x}:1234::/64" for n in range(100)]
    with api_server.client(headers=owner.headers) as api:
        key_id = api.post("/v1/me/chaves", json={"rotulo": "longa"}).json()["chave"]["id"]
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/chaves")
        whole = " ".join(networks)
        assert len(whole) > 2000
        stored = client.post(
            f"/painel/chaves/{key_id}/allowlist", data={"_csrf": token, "allowlist": whole}
        )
        too_long = client.post(
            f"/painel/chaves/{key_id}/allowlist",
            data={"_csrf": token, "allowlist": whole + " 203.0.113.0/24" * 500},
        )
    assert stored.status_code == 303
    assert too_long.status_code == 400
    assert "O campo allowlist passa de 8000 caracteres." in too_long.text
    with api_server.client(headers=owner.headers) as api:
        listed = {k["id"]: k for k in api.get("/v1/me/chaves").json()["data"]}
    assert listed[key_id]["allowlist"] == networks


def test_url_encoded_forms_are_read_as_utf8_or_refused(
    api_server: Server, make_key: MakeKey
) -> None:
    """A browser percent-encodes UTF-8: an escape that is not UTF-8, or a raw byte past ASCII,
    is refused rather than stored as replacement characters or as Latin-1 mojibake."""
    owner = make_key()
    cookies = {SESSION_COOKIE: api_server.open_session(owner.conta_id)}
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/chaves")
        for body in (f"_csrf={token}&rotulo=%FF%FE".encode(),
                     f"_csrf={token}&rotulo=produção".encode()):  # fmt: skip
            refused = client.post("/painel/chaves", content=body, headers=form)
            assert refused.status_code == 400, body
            assert "Formulário ilegível" in refused.text
        made = client.post(
            "/painel/chaves", content=f"_csrf={token}&rotulo=produ%C3%A7%C3%A3o", headers=form
        )
        assert made.status_code == 200
    with api_server.client(headers=owner.headers) as api:
        labels = [k["rotulo"] for k in api.get("/v1/me/chaves").json()["data"]]
    assert "produção" in labels
    assert not [label for label in labels if "\ufffd" in label or "Ã" in label]


def test_key_and_monitor_forms_refuse_what_the_api_refuses(
    api_server: Server, make_key: MakeKey
) -> None:
    """The dashboard's forms take the same values as the API, no looser, and say which value
    is wrong."""
    cookies = {SESSION_COOKIE: api_server.open_session(make_key().conta_id)}
    with api_server.client(headers={}, cookies=cookies) as client:
        token = _token(client, "/painel/chaves")
        bidi = client.post("/painel/chaves", data={"_csrf": token, "rotulo": "prod\u202e"})
        assert bidi.status_code == 400
        assert "caracteres de controle" in bidi.text
        bad_net = client.post(
            "/painel/chaves",
            data={"_csrf": token, "rotulo": "x", "allowlist": "203.0.113.0/24 10.0.0.300"},
        )
        assert bad_net.status_code == 400
        assert "Rede inválida na allowlist: &#39;10.0.0.300&#39;" in bad_net.text
        monitor = {"_csrf": token, "cnpj": "33683111000280", "webhook_url": "https://x.example/h"}
        none = _post(client, "/painel/monitores", [*monitor.items(), ("eventos", "")])
        assert none.status_code == 400
        assert "Escolha ao menos um evento." in none.text
        for estado in ("PAUSADO", "foo", ""):
            odd = client.post("/painel/monitores/1/estado", data={"_csrf": token, "estado": estado})
            assert odd.status_code == 400, estado
            assert "Valor inválido em estado" in odd.text


def _signed_in(server: Server, issued: Issued) -> httpx.Client:
    """A browser-like client (no key) signed in as `issued`'s account."""
    return server.client(headers={}, cookies={SESSION_COOKIE: server.open_session(issued.conta_id)})


def test_admin_and_search_pages_refuse_values_they_once_took_silently(
    api_server: Server, make_key: MakeKey
) -> None:
    with _signed_in(api_server, make_key(papel="admin")) as client:
        for pagina in ("abc", "0", "-1", ""):
            answer = client.get("/painel/admin/contas", params={"pagina": pagina})
            assert answer.status_code == 400, pagina
        past = client.get("/painel/admin/contas", params={"pagina": "999999"})
        long_key = client.get("/painel/admin/auditoria", params={"chave": "k" * 100})
        cursor_alone = client.get("/busca", params={"cursor": "lixo"})
        wide = client.get("/painel/monitores/%EF%BC%99%EF%BC%96")  # fullwidth digits
        away = client.get("/painel/entrar", params={"proximo": "/painel/../v1/me/chaves"})
    assert past.status_code == 404
    assert "a última é a" in past.text
    assert long_key.status_code == 400
    assert "Valor inválido em chave: deve ter no máximo 64 caracteres" in long_key.text
    assert cursor_alone.status_code == 400
    assert "Informe q ou ao menos um filtro" in cursor_alone.text
    assert wide.status_code == 404
    assert "Caminho não encontrado" in wide.text
    assert away.status_code == 303
    assert away.headers["location"] == "/painel"
