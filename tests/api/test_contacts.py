"""`GET /cnpj/contato/{cnpj}` on the real Receita sample."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.conftest import RECEITA_SAMPLE, SERPRO, Loader, Server


@pytest.fixture(scope="module")
def sample_api(load: Loader, new_alias: Callable[[], str]) -> Iterator[httpx.Client]:
    alias = new_alias()
    load(RECEITA_SAMPLE, alias)
    server = Server(alias, workers=1)
    with server.client() as client:
        yield client
    server.stop()


def test_contacts_phones_emails_checked(sample_api: httpx.Client) -> None:
    for prefix in ("/cnpj/contato/", "/v1/cnpj/contato/"):
        response = sample_api.get(prefix + "13.810.056/0001-53")
        assert response.status_code == 200
        body = response.json()
        assert body["cnpj"] == "13810056000153"
        assert body["origem"] == "receita_federal"
        assert [(p["ddd"], p["numero"], p["tipo"]) for p in body["telefones"]] == [
            ("77", "34544064", "telefone"),
            ("77", "34542378", "telefone"),
        ]
        assert body["emails"] == ["serconta@gbi.com.br"]
        assert [(v["tipo"], v["valido"]) for v in body["validacao"]] == [
            ("telefone", True), ("telefone", True), ("email", True)
        ]  # fmt: skip
        assert body["disponibilidade"] == {"telefone": True, "email": True}


def test_contacts_errors_like_lookup(sample_api: httpx.Client) -> None:
    assert sample_api.get("/cnpj/contato/123").status_code == 400
    assert sample_api.get(f"/cnpj/contato/{SERPRO}").status_code == 404
