"""`GET /v1/leads/prospeccao`: an objective's plan, a masked sample and the next steps in one
call, metered as one analysis; and the unprefixed `/leads...` routes answering like their
`/v1` twins."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.conftest import Issued, MakeKey, Server
from tests.leads.conftest import PAID_PLAN, get, ok, usage_once_written
from tests.leads.release import LEADS, RESTAURANT
from tests.leads.test_lots import post

pytestmark = pytest.mark.usefixtures("leads_server")

OBJECTIVE = "Vendo cardápio digital para pequenos restaurantes no Paraná"


def _oracle_total(codes: list[str]) -> int:
    """Active small (ME, EPP) companies in PR with one of `codes` as an activity."""
    return sum(
        lead.active and lead.uf == "PR" and lead.porte in ("01", "03")
        and any(lead.cnae.startswith(code) or (lead.secondary and lead.secondary.startswith(code))
                for code in codes)
        for lead in LEADS
    )  # fmt: skip


def test_prospect_answers_plan_masked_sample_and_steps(
    leads_server: Server, paid_key: Issued
) -> None:
    answer = ok(get(leads_server, paid_key, "/v1/leads/prospeccao", objetivo=OBJECTIVE,
                    quantidade_desejada=100000, limit=4))  # fmt: skip
    assert set(answer) == {"objetivo", "plano", "amostra", "proximos_passos"}
    assert answer["objetivo"] == OBJECTIVE
    plan = answer["plano"]
    assert plan == ok(get(leads_server, paid_key, "/v1/leads/plano", objetivo=OBJECTIVE,
                          quantidade_desejada=100000))  # fmt: skip
    assert plan["argumentos"]["uf"] == "PR"
    assert RESTAURANT in plan["filtros_aplicados"]["cnaes"]
    assert plan["total"] == _oracle_total(plan["filtros_aplicados"]["cnaes"]) > 4
    assert plan["suficiente"] is False
    preview = ok(get(leads_server, paid_key, "/v1/leads/previa", **plan["argumentos"], limit=4))
    assert answer["amostra"] == preview["data"]
    assert len(answer["amostra"]) == 4
    for lead in answer["amostra"]:
        assert lead["empresa"]["uf"] == "PR"
        assert all("***@" in email for email in lead["contatos"]["emails"])
        assert lead["score"] == sum(item["pontos"] for item in lead["motivo"])
    steps = answer["proximos_passos"]
    assert steps[0].startswith(f"{plan['total']} empresas atendem aos filtros")
    best = max(plan["relaxar"], key=lambda item: item["total"])
    assert steps[1] == f"Para chegar a 100000: {best['mudanca']} ({best['total']} empresas)."
    assert any("opt-out" in step for step in steps)


def test_prospect_without_objective_or_segment_is_400_naming_it(
    leads_server: Server, paid_key: Issued
) -> None:
    response = get(leads_server, paid_key, "/v1/leads/prospeccao", uf="PR")
    assert response.status_code == 400
    assert response.json()["details"]["campo"] == "objetivo"


def test_prospect_is_metered_as_one_analysis(
    leads_server: Server, make_key: MakeKey, plans: None, database: str
) -> None:
    key = make_key(PAID_PLAN)
    ok(get(leads_server, key, "/v1/leads/prospeccao", objetivo=OBJECTIVE))
    counters = usage_once_written(leads_server, key, 1)
    assert counters == {"consultas": 0, "buscas": 0, "analises": 1, "exportacoes": 0}
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT operacao, status FROM auditoria WHERE chave_id = %s AND operacao IS NOT NULL",
            (key.key_id,),
        ).fetchall()
    assert rows == [("prospectar_empresas_com_ia", 200)]


QUERY: dict[str, Any] = {"cnae": RESTAURANT, "uf": "PR"}


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/leads", {**QUERY, "limit": 7}),
        ("/leads/contagem", QUERY),
        ("/leads/previa", {**QUERY, "limit": 3}),
        ("/leads/plano", {"objetivo": OBJECTIVE}),
        ("/leads/prospeccao", {"objetivo": OBJECTIVE, "limit": 2}),
    ],
)
def test_unprefixed_lead_routes_answer_like_their_v1_twins(
    leads_server: Server, paid_key: Issued, path: str, params: dict[str, Any]
) -> None:
    bare = ok(get(leads_server, paid_key, path, **params))
    assert bare == ok(get(leads_server, paid_key, f"/v1{path}", **params))
    assert get(leads_server, paid_key, path, **params, bogus="1").status_code == 400


def test_unprefixed_free_export_answers_like_its_v1_twin(
    leads_server: Server, make_key: MakeKey, plans: None
) -> None:
    key = make_key(PAID_PLAN)
    body = {**QUERY, "quantidade": 4}
    bare = ok(post(leads_server, key, "/leads/exportacao", body))
    twin = ok(post(leads_server, key, "/v1/leads/exportacao", body))
    assert (bare["restantes_hoje"], twin["restantes_hoje"]) == (2, 1)
    assert {**bare, "restantes_hoje": 0} == {**twin, "restantes_hoje": 0}
    assert bare["linhas"] == 4


def test_segment_in_words_the_catalog_refuses_is_400_naming_segmento(
    leads_server: Server, paid_key: Issued
) -> None:
    """A segment with no letter or digit (a bidirectional mark) is refused naming the lead
    filter, not the catalog's own parameter."""
    response = get(leads_server, paid_key, "/v1/leads", segmento="\u202e")
    assert response.status_code == 400
    assert response.json()["details"]["campo"] == "segmento"
