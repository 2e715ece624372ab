"""The dashboard and the analyst's search in a real browser: Debian's Chromium driven by
Playwright, the app served by `registry-api`, codes received by a real SMTP server on loopback,
webhooks by a real HTTP receiver. Every page is checked by axe-core (no serious or critical
violation) and saved as a screenshot in `.state/artefacts/browser/`."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from app.web.sessions import SESSION_COOKIE
from tests.conftest import ROOT, TEST_PLAN, Issued, Server, migrated, new_key, serving
from tests.inbox import Inbox, receiving
from tests.peers import Receiver, Worker

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
ARTEFACTS = ROOT / ".state" / "artefacts" / "browser"
SIGN_IN_LIMIT = 40
"""Sign-in forms per address a minute: every test signs in from 127.0.0.1."""
CARLITO = "00532451000170"
"""The sample's CARLITO PNEUS, found by the misspelt `karlito pneus`."""


@pytest.fixture(scope="module")
def inbox() -> Iterator[Inbox]:
    with receiving() as handler:
        yield handler


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.stop()


LEADS_PLAN = "teste-painel-leads"


@pytest.fixture(scope="module")
def lots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("painel-lotes")


@pytest.fixture(scope="module")
def worker(sample_alias: str, lots_dir: Path) -> Iterator[Worker]:
    running = Worker(sample_alias, LOTS_DIR=str(lots_dir))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def server(sample_alias: str, inbox: Inbox, database: str, lots_dir: Path) -> Iterator[Server]:
    with psycopg.connect(database) as conn:  # a plan with lots, for the export
        conn.execute(
            "INSERT INTO planos (nome, limite_por_minuto, leads_mes) VALUES (%s, 1000, 100000) "
            "ON CONFLICT (nome) DO NOTHING",
            (LEADS_PLAN,),
        )
    env = {
        "LOTS_DIR": str(lots_dir),
        "SMTP_HOST": "127.0.0.1", "SMTP_PORT": str(inbox.port),
        "WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "WEBHOOK_ALLOW_HTTP": "true",
        "SIGN_IN_LIMIT": str(SIGN_IN_LIMIT),
    }  # fmt: skip
    with serving(sample_alias, env=env) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server: Server) -> Iterator[Browser]:
    """Started after the server: Playwright's synchronous API keeps an event loop running in
    this thread, so what the suite does with `asyncio.run` runs in another thread meanwhile."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


class Visitor:
    """One person's browser session, recording every address the pages asked for."""

    def __init__(self, browser: Browser, server: Server) -> None:
        self.server = server
        self.context: BrowserContext = browser.new_context(base_url=server.url)
        self.page: Page = self.context.new_page()
        self.requested: list[str] = []
        self.page.on("request", lambda request: self.requested.append(request.url))

    def check(self, name: str) -> None:
        """Screenshot of the page, then axe-core: no serious or critical violation."""
        self.page.screenshot(path=str(ARTEFACTS / f"{name}.png"), full_page=True)
        self.page.add_script_tag(path=str(AXE))
        result: dict[str, Any] = self.page.evaluate(
            "async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'best-practice']})"
        )
        bad = [
            (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"]
            if v["impact"] in ("serious", "critical")
        ]
        assert not bad, f"{name}: {bad}"

    def sign_in(self, inbox: Inbox, email: str, nome: str = "Ana Analista") -> None:
        page = self.page
        page.goto("/painel")
        expect(page).to_have_url(re.compile(r"/painel/entrar\?proximo=/painel$"))
        self.check("entrar")
        page.get_by_label("E-mail").fill(email)
        page.get_by_label("Nome").fill(nome)
        page.get_by_role("button", name="Receber código").click()
        expect(page.get_by_role("heading", name="Digite o código")).to_be_visible()
        self.check("codigo")
        page.get_by_label("Código").fill(inbox.code_for(email))
        page.get_by_role("button", name="Entrar").click()
        expect(page).to_have_url(re.compile(r"/painel$"))

    def close(self) -> None:
        self.context.close()


def _email() -> str:
    return f"painel-{uuid.uuid4().hex[:10]}@example.com"


def _curl(server: Server, key: str, path: str) -> int:
    done = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
         "-H", f"Authorization: Bearer {key}", f"{server.url}{path}"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return int(done.stdout)


def test_account_holder_creates_uses_and_revokes_a_key(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    visitor = Visitor(browser, server)
    page = visitor.page
    _, email = _account()  # every action draws from the plan's window, as the API does
    visitor.sign_in(inbox, email)
    expect(page.get_by_role("heading", name="Uso da conta")).to_be_visible()
    visitor.check("uso-vazio")

    page.get_by_role("link", name="Chaves").click()
    page.get_by_label("Rótulo").fill("produção")
    page.get_by_role("button", name="Criar chave").click()
    expect(page.get_by_role("heading", name="Chave criada")).to_be_visible()
    key = page.locator("#nova-chave").inner_text().strip()
    key_id = page.locator("main code").first.inner_text().strip()
    assert key.startswith(key_id) or len(key) > 30
    visitor.check("chave-criada")

    assert _curl(server, key, f"/v1/cnpj/{CARLITO}") == 200
    page.goto("/painel/chaves")
    expect(page.get_by_role("cell", name=key_id)).to_be_visible()
    assert key not in page.content()  # shown once, never again
    visitor.check("chaves")

    deadline = time.monotonic() + 20  # the audit writer counts usage in the background
    while True:
        page.goto("/painel")
        row = page.locator("table").nth(1).get_by_role("row").filter(has_text=key_id)
        if row.count() and row.get_by_role("cell").nth(1).inner_text() == "1":
            break
        assert time.monotonic() < deadline, "the lookup never reached the usage page"
        time.sleep(0.5)
    bars = page.locator("svg.grafico rect.barra")  # one bar: today's lookup
    assert bars.count() == 1
    assert "consultas: 1" in (bars.first.text_content() or "")
    visitor.check("uso")

    page.goto("/painel/chaves")
    form = page.locator(f"form[action='/painel/chaves/{key_id}/allowlist']")
    form.get_by_label("Redes (CIDR), vazio = qualquer endereço").fill("10.0.0.0/33")
    form.get_by_role("button", name="Salvar allowlist").click()
    expect(page.get_by_role("alert")).to_contain_text("Rede inválida")
    visitor.check("chaves-erro")

    page.get_by_role("link", name="Revogar a chave produção").click()
    expect(page.get_by_role("heading", name="Revogar a chave produção?")).to_be_visible()
    visitor.check("revogar")
    page.get_by_role("button", name="Revogar definitivamente").click()
    expect(page.get_by_role("status")).to_contain_text(key_id)
    assert _curl(server, key, f"/v1/cnpj/{CARLITO}") == 401

    page.get_by_role("button", name=re.compile("^Sair")).click()
    expect(page).to_have_url(re.compile("/painel/entrar"))
    page.goto("/painel/chaves")
    expect(page).to_have_url(re.compile(r"/painel/entrar\?proximo=/painel/chaves"))
    visitor.close()


def test_monitor_created_and_test_webhook_delivered(
    browser: Browser, server: Server, inbox: Inbox, receiver: Receiver
) -> None:
    visitor = Visitor(browser, server)
    page = visitor.page
    _, email = _account()
    visitor.sign_in(inbox, email)
    page.goto(f"/busca/empresa/{CARLITO}")
    page.get_by_role("link", name="Monitorar esta empresa").click()
    expect(page.get_by_label("CNPJ")).to_have_value(CARLITO)
    name = f"painel-{uuid.uuid4().hex[:8]}"
    page.get_by_label("URL do webhook").fill(receiver.url(name))
    page.get_by_label("Descrição").fill("fornecedor de pneus")
    visitor.check("monitores")
    page.get_by_role("button", name="Criar monitor").click()
    expect(page.get_by_role("heading", name="Monitor criado")).to_be_visible()
    receiver.secrets[name] = page.locator("#segredo").inner_text().strip()
    visitor.check("monitor-criado")

    page.get_by_role("link", name="Ver o monitor").click()
    page.get_by_role("button", name="Enviar webhook de teste").click()
    expect(page.locator("#resultado-teste")).to_contain_text("HTTP 200")
    [delivered] = receiver.wait(name, 1)
    assert delivered.verified is True
    assert delivered.event["type"] == "monitor.teste"
    expect(page.get_by_role("cell", name="monitor.teste")).to_be_visible()
    visitor.check("monitor")

    page.get_by_role("button", name="Pausar").click()
    expect(page.locator("dl.ficha")).to_contain_text("pausado")
    page.get_by_role("link", name="Excluir").click()
    visitor.check("excluir-monitor")
    page.get_by_role("button", name="Excluir").click()
    expect(page.get_by_role("cell", name="Nenhum monitor ainda.")).to_be_visible()
    visitor.close()


def test_analyst_finds_a_misspelt_company_narrows_and_opens_it(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    visitor = Visitor(browser, server)
    page = visitor.page
    _, email = _account()  # a plan with room for an analyst's many searches
    visitor.sign_in(inbox, email)
    page.goto("/busca")
    visitor.check("busca-vazia")
    page.get_by_label("Nome, fantasia ou sócio").fill("karlito pneus")
    page.get_by_role("button", name="Buscar").click()
    first = page.locator("article.resultado").first
    expect(first).to_contain_text("CARLITO PNEUS")
    expect(page).to_have_url(re.compile(r"/busca\?q=karlito\+pneus"))
    expect(page.locator(".facetas")).to_be_visible()
    visitor.check("busca")

    uf = first.inner_text().split("/")[-1].split()[0]
    page.get_by_label("UF").select_option(uf)
    expect(page).to_have_url(re.compile(rf"uf={uf}"))
    expect(page.locator("article.resultado").first).to_contain_text("CARLITO PNEUS")
    shared = page.url  # the address holds the search: opened anew, it shows the same page
    page.goto(shared)
    expect(page.locator("article.resultado").first).to_contain_text("CARLITO PNEUS")
    expect(page.get_by_label("UF")).to_have_value(uf)

    page.get_by_label("Atividade (CNAE)").fill("abc")
    page.get_by_role("button", name="Buscar").click()
    expect(page.get_by_role("alert")).to_contain_text("cnae")
    visitor.check("busca-erro")

    page.goto(shared)
    page.locator("article.resultado").first.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("CARLITO PNEUS")
    expect(page.get_by_role("heading", name="Sócios", exact=True)).to_be_visible()
    expect(page.locator("main dl.ficha").first).to_contain_text(CARLITO)
    expect(page.locator("details summary", has_text="Registro completo")).to_be_visible()
    visitor.check("empresa")
    origin = urlsplit(server.url).netloc
    assert all(urlsplit(url).netloc == origin for url in visitor.requested), visitor.requested
    visitor.close()


def test_administrator_sees_accounts_and_filters_the_audit_log(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    admin, email = _account(papel="admin")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin.key}"}) as c:
        assert c.get(f"/v1/cnpj/{CARLITO}").status_code == 200
    visitor = Visitor(browser, server)
    page = visitor.page
    visitor.sign_in(inbox, email)
    page.get_by_role("link", name="Contas").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Contas \(\d+\)"))).to_be_visible()
    expect(page.get_by_role("cell", name=email)).to_be_visible()
    visitor.check("admin-contas")

    page.get_by_role("link", name="Auditoria").click()
    page.get_by_label("Chave (id)").fill(admin.key_id)
    page.get_by_role("button", name="Filtrar").click()
    expect(page.get_by_role("cell", name=f"/v1/cnpj/{CARLITO}")).to_be_visible()
    visitor.check("admin-auditoria")
    page.get_by_label("Desde (ISO 8601)").fill("ontem")
    page.get_by_role("button", name="Filtrar").click()
    expect(page.get_by_role("alert")).to_contain_text("desde")

    page.goto("/painel/chaves")  # administrators' keys come from registry-admin only
    expect(page.get_by_role("cell", name=admin.key_id)).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("registry-admin")
    expect(page.get_by_role("button", name="Criar chave")).to_have_count(0)
    expect(page.get_by_role("button", name="Salvar allowlist")).to_have_count(0)  # nor theirs
    visitor.check("admin-chaves")
    answer = page.goto("/painel/admin/contas?pagina=%C2%B2")  # a digit int() cannot read
    assert answer is not None
    assert answer.status == 400  # refused, not page 1 shown instead
    expect(page.get_by_role("alert")).to_contain_text("pagina")
    visitor.close()


def _account(papel: str = "usuario", plano: str = TEST_PLAN) -> tuple[Issued, str]:
    """An account of the test plan (no tight limit) and its e-mail, made by the app's own
    service code, in another thread (`asyncio.run` cannot run beside Playwright's loop)."""

    def make() -> tuple[Issued, str]:
        issued = new_key(plano=plano, papel=papel)
        with psycopg.connect(migrated()) as conn:
            row = conn.execute("SELECT email FROM contas WHERE id = %s", (issued.conta_id,))
            found = row.fetchone()
        assert found is not None
        return issued, str(found[0])

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(make).result()


def test_a_user_is_refused_the_administrators_pages(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    visitor = Visitor(browser, server)
    visitor.sign_in(inbox, _email())
    response = visitor.page.goto("/painel/admin/auditoria")
    assert response is not None
    assert response.status == 403
    expect(visitor.page.get_by_role("alert")).to_contain_text("administrador")
    expect(visitor.page.get_by_role("link", name="Chaves")).to_be_visible()  # the menu stays
    expect(visitor.page.get_by_role("button", name=re.compile("^Sair"))).to_be_visible()
    visitor.check("proibido")
    visitor.close()


def test_the_api_browser_at_schema_loads_nothing_from_other_hosts(
    browser: Browser, server: Server
) -> None:
    visitor = Visitor(browser, server)
    visitor.page.goto("/schema")
    expect(visitor.page.locator(".swagger-ui .title").first).to_contain_text("CNPJ Registry API")
    expect(visitor.page.locator(".opblock").first).to_be_visible()
    visitor.page.screenshot(path=str(ARTEFACTS / "schema.png"))
    origin = urlsplit(server.url).netloc
    others = [url for url in visitor.requested if urlsplit(url).netloc != origin]
    assert not others, others
    visitor.close()


def test_forms_refuse_another_origin_and_a_missing_token(server: Server) -> None:
    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        client.get("/painel/entrar")  # the pre-session cookie
        plain = client.post("/painel/entrar", data={"email": "x@example.com"})
        assert plain.status_code == 403
        assert "Formulário" in plain.text
        page = client.get("/painel/entrar").text
        token = re.search(r'name="_csrf" value="([0-9a-f]+)"', page)
        assert token is not None
        foreign = client.post(
            "/painel/entrar",
            data={"email": "x@example.com", "_csrf": token.group(1)},
            headers={"Origin": "https://evil.example"},
        )
        assert foreign.status_code == 403
        assert client.get("/painel/chaves").headers["location"].startswith("/painel/entrar")
    with httpx.Client(base_url=server.url) as other:  # a token is bound to its own cookie
        stolen = other.post(
            "/painel/entrar", data={"email": "x@example.com", "_csrf": token.group(1)}
        )
        assert stolen.status_code == 403


def test_session_cookie_is_http_only_and_rotated_at_sign_in(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    visitor = Visitor(browser, server)
    visitor.context.add_cookies([{"name": "painel_sessao", "value": "planted", "url": server.url}])
    visitor.sign_in(inbox, _email())
    [session] = [c for c in visitor.context.cookies() if c["name"] == "painel_sessao"]
    assert session["httpOnly"]
    assert session["sameSite"] == "Lax"
    assert session["value"] != "planted"
    assert visitor.page.evaluate("document.cookie") == ""
    first, other = session["value"], _email()

    def csrf(html: str) -> str:
        found = re.search(r'name="_csrf" value="([0-9a-f]+)"', html)
        assert found is not None
        return found.group(1)

    # signing in again from a signed-in browser (the forms posted as they are) ends the session
    # it replaces: whoever kept a copy of the old cookie holds nothing
    with httpx.Client(base_url=server.url, cookies={"painel_sessao": first}) as again:
        token = csrf(again.get("/painel").text)
        asked = again.post("/painel/entrar", data={"email": other, "nome": "Outra", "_csrf": token})
        assert asked.status_code == 200, asked.text
        form = {"email": other, "codigo": inbox.code_for(other), "_csrf": csrf(asked.text)}
        signed = again.post("/painel/codigo", data=form)
        assert signed.status_code == 303, signed.text
        second = signed.cookies["painel_sessao"]
    assert second != first
    with httpx.Client(base_url=server.url, cookies={"painel_sessao": first}) as old:
        assert old.get("/painel").status_code in (302, 303)
    with httpx.Client(base_url=server.url, cookies={"painel_sessao": second}) as new:
        assert new.get("/painel").status_code == 200
    visitor.close()


def test_sign_in_forms_are_limited_per_address(server: Server) -> None:
    transport = httpx.HTTPTransport(local_address="127.0.0.93")
    with httpx.Client(base_url=server.url, transport=transport) as client:
        page = client.get("/painel/entrar").text
        token = re.search(r'name="_csrf" value="([0-9a-f]+)"', page)
        assert token is not None
        form = {"email": "limite@example.com", "codigo": "1", "_csrf": token.group(1)}
        answers = [client.post("/painel/codigo", data=form) for _ in range(SIGN_IN_LIMIT + 1)]
    assert [a.status_code for a in answers[:SIGN_IN_LIMIT]] == [400] * SIGN_IN_LIMIT
    assert answers[-1].status_code == 429
    assert int(answers[-1].headers["Retry-After"]) >= 1


def test_search_exported_as_a_lot_and_downloaded(
    browser: Browser, server: Server, inbox: Inbox, worker: Worker
) -> None:
    visitor = Visitor(browser, server)
    page = visitor.page
    _, email = _account(plano=LEADS_PLAN)
    visitor.sign_in(inbox, email)
    page.goto("/busca?uf=SP&situacao=02")
    expect(page.locator("#total")).to_contain_text("encontrada")
    page.get_by_role("link", name="Exportar estas empresas").click()
    expect(page.locator("main dl.ficha")).to_contain_text("SP")
    visitor.check("exportar")
    page.get_by_label("Quantas empresas").fill("5")
    page.get_by_label("Li e aceito o uso responsável dos dados (LGPD)").check()
    page.get_by_role("button", name="Criar lote").click()
    expect(page).to_have_url(re.compile("/painel/lotes$"))
    deadline = time.monotonic() + 60
    while not page.get_by_role("link", name=re.compile("^Baixar")).count():
        assert time.monotonic() < deadline, page.locator("table").inner_text()
        time.sleep(0.5)
        page.reload()
    visitor.check("lotes")
    with page.expect_download() as download:
        page.get_by_role("link", name=re.compile("^Baixar")).click()
    rows = Path(download.value.path()).read_text(encoding="utf-8-sig").splitlines()
    assert 2 <= len(rows) <= 6, rows  # the header and at most the 5 asked for
    assert all(";SP;" in row or '"SP"' in row for row in rows[1:]), rows
    visitor.close()


def test_an_export_form_sent_twice_makes_one_lot(server: Server, database: str) -> None:
    """The form carries a key of its own: a double click, or the form sent again, answers the
    lot the first one made instead of making (and charging) another."""
    issued, _ = _account(plano=LEADS_PLAN)
    with ThreadPoolExecutor(1) as pool:  # asyncio.run cannot run beside Playwright's loop
        session = pool.submit(server.open_session, issued.conta_id).result()
    hidden = r'<input type="hidden" name="([^"]+)" value="([^"]*)">'
    with server.client(headers={}, cookies={SESSION_COOKIE: session}) as client:
        form_page = client.get("/painel/lotes/novo", params={"uf": "SP"}).text
        fields = dict(re.findall(hidden, form_page))
        assert re.fullmatch(r"[0-9a-f-]{36}", fields["chave_idempotencia"])
        form = {**fields, "quantidade": "5", "formato": "csv", "uso_responsavel": "true"}
        sent = [client.post("/painel/lotes", data=form) for _ in range(2)]
        again = client.get("/painel/lotes/novo", params={"uf": "SP"}).text
    assert [answer.status_code for answer in sent] == [303, 303]
    assert {answer.headers["location"] for answer in sent} == {"/painel/lotes"}
    assert f'value="{fields["chave_idempotencia"]}"' not in again  # a new form, a new key
    with psycopg.connect(database) as conn:
        made = conn.execute("SELECT count(*) FROM lotes WHERE conta_id = %s", (issued.conta_id,))
        assert made.fetchone() == (1,)


def test_pages_fit_a_phone_and_sign_in_works_from_the_keyboard(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    context = browser.new_context(base_url=server.url, viewport={"width": 375, "height": 740})
    page = context.new_page()
    email = _email()
    page.goto("/painel/entrar")
    page.keyboard.press("Tab")  # the skip link first, then the form
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "email"
    page.keyboard.type(email)
    page.keyboard.press("Enter")
    expect(page.get_by_label("Código")).to_be_visible()
    page.get_by_label("Código").focus()
    page.keyboard.type(inbox.code_for(email))
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/painel$"))
    for path in ("/painel", "/painel/chaves", "/painel/monitores", "/busca?q=pneus"):
        page.goto(path)
        wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"{path} is {wide}px wider than a phone"
    page.screenshot(path=str(ARTEFACTS / "telefone-busca.png"), full_page=True)
    context.close()


def test_search_works_without_javascript_and_autocompletes_with_it(
    browser: Browser, server: Server, inbox: Inbox
) -> None:
    _, email = _account()
    visitor = Visitor(browser, server)
    visitor.sign_in(inbox, email)
    page = visitor.page
    page.goto("/busca")
    page.get_by_label("Atividade (CNAE)").press_sequentially("pneu", delay=50)
    options = page.locator("#cnaes-lista option")
    expect(options.first).to_have_attribute("value", re.compile(r"^\d{7}$"))
    page.get_by_label("Município").press_sequentially("varzea gr", delay=50)
    expect(page.locator("#cidades-lista option").first).to_have_attribute(
        "value", re.compile("Várzea Grande")
    )
    session = next(c for c in visitor.context.cookies() if c["name"] == "painel_sessao")
    visitor.close()

    plain = browser.new_context(base_url=server.url, java_script_enabled=False)
    plain.add_cookies([{"name": session["name"], "value": session["value"], "url": server.url}])
    page = plain.new_page()
    page.goto("/busca")
    page.get_by_label("Nome, fantasia ou sócio").fill("karlito pneus")
    page.get_by_role("button", name="Buscar").click()
    expect(page).to_have_url(re.compile(r"/busca\?q=karlito\+pneus$"))  # empty fields dropped
    expect(page.locator("article.resultado").first).to_contain_text("CARLITO PNEUS")
    abroad = plain.request.get("/busca/cidades?municipio=varzea+gr&uf=EX")  # no state: all
    assert abroad.status == 200
    assert "Várzea Grande" in abroad.text()
    for path in ("/busca/cnaes?cnae=**", "/busca/cidades?municipio=**"):  # nothing to suggest
        refused = plain.request.get(path)
        assert refused.status == 200
        assert "<option" not in refused.text()
    plain.close()
