"""Counts, ranking, reasons, previews and bad input of the lead routes, against the oracle of
`tests.leads.release`."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import msgspec
import pytest

from app.leads.vocabulary import vocabulary
from app.lib.paging import Cursor, Cursors
from app.settings import get_settings
from tests.conftest import Issued, Server
from tests.leads.conftest import all_pages, get, ok
from tests.leads.release import LEADS, RESTAURANT, ranked

pytestmark = pytest.mark.usefixtures("leads_server")


def _restaurants(uf: str | None = None, primary_only: bool = False) -> list[Any]:
    return [
        lead for lead in LEADS
        if lead.active and (uf is None or lead.uf == uf)
        and (lead.cnae == RESTAURANT or (not primary_only and lead.secondary == RESTAURANT))
    ]  # fmt: skip


def test_count_is_exact_by_uf_and_porte(leads_server: Server, paid_key: Issued) -> None:
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", cnae=RESTAURANT, uf="PR"))
    expected = _restaurants("PR")
    assert counted["total"] == len(expected) > 50
    assert counted["com_email"] == sum(lead.has_email for lead in expected)
    assert counted["com_telefone"] == sum(lead.has_phone for lead in expected)
    assert {row["codigo"]: row["total"] for row in counted["por_uf"]} == {"PR": len(expected)}
    by_porte = {row["codigo"]: row["total"] for row in counted["por_porte"]}
    for code in ("01", "03", "05", "00"):
        assert by_porte.get(code, 0) == sum(lead.porte == code for lead in expected)
    with_email = ok(get(leads_server, paid_key, "/v1/leads/contagem", cnae=RESTAURANT, uf="PR",
                        exigir_email="true"))  # fmt: skip
    assert with_email["total"] == counted["com_email"]
    without = ok(get(leads_server, paid_key, "/v1/leads/contagem", cnae=RESTAURANT, uf="PR",
                     filtro="sem_email"))  # fmt: skip
    assert without["total"] == len(expected) - counted["com_email"]


def test_ranking_scores_and_reasons_follow_the_documented_table(
    leads_server: Server, paid_key: Issued
) -> None:
    leads = all_pages(leads_server, paid_key, cnae=RESTAURANT, uf="SP,RJ")
    expected = ranked(
        [lead for lead in _restaurants() if lead.uf in ("SP", "RJ")], activity=RESTAURANT
    )
    assert [(lead["score"], lead["empresa"]["cnpj"]) for lead in leads] == expected
    for lead in leads:
        reasons = lead["motivo"]
        assert lead["score"] == sum(item["pontos"] for item in reasons)
        assert {item["componente"] for item in reasons} == {
            "situacao", "email", "telefone", "atividade", "porte", "capital", "idade", "matriz",
            "regime",
        }  # fmt: skip
        assert sum(item["maximo"] for item in reasons) == 100
        assert all(0 <= item["pontos"] <= item["maximo"] for item in reasons)
        assert "LGPD" in lead["uso_responsavel"]
        assert "opt-out" in lead["uso_responsavel"]
        assert lead["filtros_aplicados"]["cnaes"] == [RESTAURANT]
    secondary = [lead for lead in leads if next(
        m for m in lead["motivo"] if m["componente"] == "atividade")["pontos"] == 5]  # fmt: skip
    assert secondary, "companies with the activity only as secondary are listed, lower"


def test_primary_only_and_regime_filter(leads_server: Server, paid_key: Issued) -> None:
    leads = all_pages(leads_server, paid_key, cnae=RESTAURANT, uf="PR",
                       incluir_secundarias="false")  # fmt: skip
    assert [(lead["score"], lead["empresa"]["cnpj"]) for lead in leads] == ranked(
        _restaurants("PR", primary_only=True), activity=RESTAURANT
    )
    meis = all_pages(leads_server, paid_key, cnae=RESTAURANT, uf="PR", mei="true")
    expected = [lead for lead in _restaurants("PR") if lead.mei]
    assert [(lead["score"], lead["empresa"]["cnpj"]) for lead in meis] == ranked(
        expected, activity=RESTAURANT, regime_asked=True
    )


def test_preview_masks_contacts_that_pages_give_in_full(
    leads_server: Server, paid_key: Issued
) -> None:
    params = {"cnae": RESTAURANT, "uf": "PR", "com_email": "true", "com_telefone": "true"}
    preview = ok(get(leads_server, paid_key, "/v1/leads/previa", limit=5, **params))
    full = ok(get(leads_server, paid_key, "/v1/leads", limit=5, **params))
    assert preview["contatos_mascarados"] is True
    assert [lead["empresa"]["cnpj"] for lead in preview["data"]] == [
        lead["empresa"]["cnpj"] for lead in full["data"]
    ]
    for shown, whole in zip(preview["data"], full["data"], strict=True):
        email = whole["contatos"]["emails"][0]
        assert email not in str(shown)
        assert shown["contatos"]["emails"][0] == email[0] + "***@" + email.split("@")[1]
        phone = whole["contatos"]["telefones"][0]
        masked = shown["contatos"]["telefones"][0]
        assert masked["ddd"] == phone["ddd"]
        assert masked["numero"].endswith(phone["numero"][-2:])
        assert phone["numero"] not in str(shown)
        assert shown["score"] == whole["score"]
        assert shown["motivo"] == whole["motivo"]


def test_plan_relaxes_and_its_next_calls_run(leads_server: Server, paid_key: Issued) -> None:
    plan = ok(get(leads_server, paid_key, "/v1/leads/plano", segmento="restaurantes", uf="PR",
                  exigir_email="true", exigir_telefone="true",
                  quantidade_desejada=100000))  # fmt: skip
    assert plan["suficiente"] is False
    changes = {item["mudanca"]: item for item in plan["relaxar"]}
    assert {"não exigir e-mail", "não exigir telefone", "o Brasil todo"} <= set(changes)
    for item in plan["relaxar"]:
        counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", **item["argumentos"]))
        assert counted["total"] == item["total"] >= plan["total"]
    calls = {call["ferramenta"]: call["argumentos"] for call in plan["proximas_chamadas"]}
    assert set(calls) == {"contar_leads_quentes", "prever_leads_quentes", "gerar_leads_quentes",
                          "exportar_leads_gratis", "criar_lote_leads"}  # fmt: skip
    assert calls["criar_lote_leads"]["confirmar_lgpd"] is True
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", **calls["contar_leads_quentes"]))
    assert counted["total"] == plan["total"]


def test_plan_of_a_place_alone_relaxes_only_what_leaves_a_search(
    leads_server: Server, paid_key: Issued
) -> None:
    """A state (or a city) as the only filter, too few companies there: the plan answers, and
    does not offer to drop the place, which would leave nothing to search by (it was a 400)."""
    for place in ({"uf": "PR"}, {"cidade": "Curitiba"}):
        plan = ok(get(leads_server, paid_key, "/v1/leads/plano", quantidade_desejada=100000,
                      **place))  # fmt: skip
        assert plan["suficiente"] is False
        assert plan["total"] > 0
        for item in plan["relaxar"]:
            assert {"uf", "cidade"} & set(item["argumentos"]), item
    prospect = get(leads_server, paid_key, "/v1/leads/prospeccao",
                   objetivo="empresas no Paraná", quantidade_desejada=100000)  # fmt: skip
    assert prospect.status_code == 200, prospect.text


def test_objective_of_many_activities_keeps_every_code_and_its_next_calls_run(
    leads_server: Server, paid_key: Issued
) -> None:
    """An objective standing for 109 CNAE codes: every code of every segment read is applied
    (past 60 they were dropped in silence), and the plan's own arguments are taken by the next
    call (its `cnae` ran past the field's 400 characters)."""
    objetivo = "vendo uniformes, produtos de limpeza, pcmso, energia solar e cftv"
    plan = ok(get(leads_server, paid_key, "/v1/leads/plano", objetivo=objetivo))
    vocab = vocabulary()
    read = [segment["segmento"] for segment in plan["segmentos"]]
    expected = list(dict.fromkeys(c for slug in read for c in vocab.segmentos[slug].cnaes))
    assert len(expected) > 100
    assert plan["filtros_aplicados"]["cnaes"] == expected
    calls = {call["ferramenta"]: call["argumentos"] for call in plan["proximas_chamadas"]}
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", **calls["contar_leads_quentes"]))
    assert counted["total"] == plan["total"]


def test_objective_past_the_codes_of_one_search_is_refused_naming_its_segments(
    leads_server: Server, paid_key: Issued
) -> None:
    objetivo = (
        "vendo mop, pdv, cpr, aet, gaze, tv, arla, piso, racao, ete, pvc, cftv, ovo, "
        "balao, acm, wms, televisor, bone, kinesio, bim, software, couro, apostila"
    )
    refused = get(leads_server, paid_key, "/v1/leads/contagem", objetivo=objetivo)
    assert refused.status_code == 400, refused.text
    assert "códigos CNAE" in refused.json()["message"]
    assert len(refused.json()["details"]["segmentos"]) > 10


def test_objective_in_words(leads_server: Server, paid_key: Issued) -> None:
    objetivo = "Vendo cardápio digital para pequenos restaurantes no Paraná"
    plan = ok(get(leads_server, paid_key, "/v1/leads/plano", objetivo=objetivo))
    slugs = [segment["segmento"] for segment in plan["segmentos"]]
    assert "restaurantes" in slugs
    assert plan["argumentos"]["uf"] == "PR"
    assert plan["argumentos"]["porte"] == "01,03"
    expected = [lead for lead in LEADS if lead.active and lead.uf == "PR"
                and lead.porte in ("01", "03")]  # fmt: skip
    codes = plan["filtros_aplicados"]["cnaes"]
    matching = [lead for lead in expected
                if any(lead.cnae.startswith(c) or (lead.secondary and lead.secondary.startswith(c))
                       for c in codes)]  # fmt: skip
    assert plan["total"] == len(matching) > 0


def test_states_named_in_a_segment_apply_unless_uf_is_given(
    leads_server: Server, paid_key: Issued
) -> None:
    plan = ok(get(leads_server, paid_key, "/v1/leads/plano", segmento="restaurantes no Paraná"))
    assert plan["argumentos"]["uf"] == "PR"
    assert [segment["segmento"] for segment in plan["segmentos"]] == ["restaurantes"]
    codes = plan["filtros_aplicados"]["cnaes"]
    matching = [lead for lead in LEADS if lead.active and lead.uf == "PR"
                and any(lead.cnae.startswith(c) or (lead.secondary and lead.secondary.startswith(c))
                        for c in codes)]  # fmt: skip
    assert plan["total"] == len(matching) > 0
    given = ok(get(leads_server, paid_key, "/v1/leads/plano", segmento="restaurantes no Paraná",
                   uf="SP"))  # fmt: skip
    assert given["argumentos"]["uf"] == "SP"
    city = ok(get(leads_server, paid_key, "/v1/leads/plano", segmento="restaurantes no Paraná",
                  cidade="Curitiba"))  # fmt: skip
    assert "uf" not in city["argumentos"]  # a place given wins over the segment's words


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cnae": RESTAURANT, "bogus": "1"}, "bogus"),
        ({"cnae": "56112011"}, "cnae"),
        ({"cnae": RESTAURANT, "filtro": "sem_cnpj"}, "filtro"),
        ({"cnae": RESTAURANT, "com_email": "true", "exigir_email": "false"}, "exigir_email"),
        ({"cnae": RESTAURANT, "filtro": "sem_email", "com_email": "true"}, "com_email"),
        ({"cnae": RESTAURANT, "uf": "XX"}, "uf"),
        ({"cnae_grupo": "5"}, "cnae_grupo"),
        ({"situacao": "ativa"}, None),
        ({"objetivo": "quero vender coisas"}, "objetivo"),
        ({"cnae": RESTAURANT, "capital_min": "-1"}, "capital_min"),
        ({"cnae": "x" * 500}, "cnae"),
    ],
)
def test_bad_filters_are_400s_naming_the_field(
    leads_server: Server, paid_key: Issued, params: dict[str, str], field: str | None
) -> None:
    response = get(leads_server, paid_key, "/v1/leads/contagem", **params)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "Bad Request"
    assert body["message"]
    if field is not None:
        assert field in str(body), body


def test_contradiction_names_the_field_given(leads_server: Server, paid_key: Issued) -> None:
    for given in ("exigir_email", "com_email"):
        params = {"cnae": RESTAURANT, "filtro": "sem_email", given: "true"}
        refused = get(leads_server, paid_key, "/v1/leads/contagem", **params)
        assert refused.status_code == 400, refused.text
        assert refused.json()["details"]["campo"] == given
        assert refused.json()["message"].startswith(given)


def test_preview_and_page_limits(leads_server: Server, paid_key: Issued) -> None:
    assert (
        get(leads_server, paid_key, "/v1/leads/previa", cnae=RESTAURANT, limit=11).status_code
        == 400
    )
    assert get(leads_server, paid_key, "/v1/leads", cnae=RESTAURANT, limit=101).status_code == 400
    response = get(leads_server, paid_key, "/v1/leads", cnae=RESTAURANT, cursor="x.y")
    assert response.status_code == 400
    assert "cursor" in response.text


def _age_points(opened: dt.date, day: dt.date) -> int:
    """The `idade` component on `day` (docs/leads.md): 10 from 5 years, 6 from 2, 3 from 1."""
    for years, points in ((5, 10), (2, 6), (1, 3)):
        if opened <= _years_before(day, years):
            return points
    return 0


def _years_before(day: dt.date, years: int) -> dt.date:
    """As Elasticsearch's date math: 29 February goes back to the 28th of a common year."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, day=28)


def test_pages_after_the_first_rank_on_the_first_page_s_day(
    leads_server: Server, paid_key: Issued
) -> None:
    """Ages count from the day the first page ranked on, which its cursor carries: a listing
    read across midnight neither repeats nor skips a company whose age band changed. The day
    is set back here by sealing the server's own cursor again with another day."""
    first = ok(get(leads_server, paid_key, "/v1/leads", cnae=RESTAURANT, uf="PR", limit=3))
    payload = first["next_cursor"].split(".")[0]
    lista, indice, _, pedido, dia = msgspec.json.decode(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    assert dia == dt.datetime.now(dt.UTC).date().isoformat(), "the first page ranks on today"
    back = dt.date.fromisoformat(dia) - dt.timedelta(days=2 * 365 + 180)
    cursors = Cursors(get_settings().api_key_secret.encode())
    from_the_top = cursors.seal(Cursor(lista, indice, (1_000.0, ""), pedido, back.isoformat()))
    leads, cursor, pages = [], from_the_top, 0
    while cursor:  # every page after it: each cursor carries the day on
        page = ok(get(leads_server, paid_key, "/v1/leads", cnae=RESTAURANT, uf="PR", limit=50,
                      cursor=cursor))  # fmt: skip
        leads += page["data"]
        cursor, pages = page["next_cursor"], pages + 1
    assert pages > 1
    opened = {lead.cnpj: lead.opened for lead in LEADS}
    today = dt.date.fromisoformat(dia)
    changed = 0
    for lead in leads:
        age = next(item for item in lead["motivo"] if item["componente"] == "idade")
        assert age["pontos"] == _age_points(opened[lead["empresa"]["cnpj"]], back), lead
        changed += age["pontos"] != _age_points(opened[lead["empresa"]["cnpj"]], today)
    assert changed, "the release has companies whose age band differs between the two days"
    scores = [(-lead["score"], lead["empresa"]["cnpj"]) for lead in leads]
    assert scores == sorted(scores), "ranked by the scores of that day"
    everyone = all_pages(leads_server, paid_key, cnae=RESTAURANT, uf="PR")
    assert sorted(lead["empresa"]["cnpj"] for lead in leads) == sorted(
        lead["empresa"]["cnpj"] for lead in everyone
    ), "no company repeated or skipped"
