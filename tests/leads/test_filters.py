"""The lead filters beyond activity and state, each checked against the oracle of
`tests.leads.release` (the attributes each establishment was written with, never the service's
code): city by name, Receita code and IBGE code; a CNAE division; a situação other than the
default; the Simples; the porte. Counts and the ranked pages hold exactly the companies the
oracle picks, in its order and with its scores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Issued, Server
from tests.leads.conftest import all_pages, get, ok
from tests.leads.release import GROCERY, LEADS, RESTAURANT, Lead, ranked

pytestmark = pytest.mark.usefixtures("leads_server")

CURITIBA = ("Curitiba", "7535", "4106902")
"""Curitiba by name, by its Receita code (MUNICCSV) and its IBGE code
(`fixtures/reference/municipios-ibge.csv`): the release writes its PR companies there."""


def _listed(server: Server, key: Issued, **params: Any) -> list[tuple[int, str]]:
    return [(lead["score"], lead["empresa"]["cnpj"]) for lead in all_pages(server, key, **params)]


def _total(server: Server, key: Issued, **params: Any) -> int:
    total: int = ok(get(server, key, "/v1/leads/contagem", **params))["total"]
    return total


def _active(keep: Callable[[Lead], bool]) -> list[Lead]:
    return [lead for lead in LEADS if lead.active and keep(lead)]


@pytest.mark.parametrize("cidade", [*CURITIBA, "curitiba", "SÃO PAULO", "7107"])
def test_city_filter_by_name_or_code_keeps_that_city_only(
    leads_server: Server, paid_key: Issued, cidade: str
) -> None:
    city = "7107" if cidade in ("SÃO PAULO", "7107") else "7535"
    expected = _active(lambda lead: lead.city == city and lead.cnae == GROCERY)
    assert expected
    listed = _listed(leads_server, paid_key, cidade=cidade, cnae=GROCERY)
    assert listed == ranked(expected, activity=GROCERY)
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", cidade=cidade))
    everyone = _active(lambda lead: lead.city == city)
    assert counted["total"] == len(everyone)
    assert [row["codigo"] for row in counted["por_uf"]] == [everyone[0].uf]


def test_city_refused_under_its_own_name(leads_server: Server, paid_key: Issued) -> None:
    """A city the service cannot read is refused naming `cidade`, the lead tools' field (the
    search filters underneath call it `municipio`)."""
    refused = get(leads_server, paid_key, "/v1/leads/contagem", cidade="!!!")
    assert refused.status_code == 400, refused.text
    assert refused.json()["details"]["campo"] == "cidade"
    assert refused.json()["message"].startswith("cidade")


@pytest.mark.parametrize(
    ("field", "value"), [("cnae", f"{GROCERY},"), ("uf", "PR,,SP"), ("filtro", "matriz,")]
)
def test_a_list_with_an_empty_item_is_refused(
    leads_server: Server, paid_key: Issued, field: str, value: str
) -> None:
    """`4711302,` lost a code on the way: refused naming the field, not read as the rest."""
    params = {"cnae": GROCERY, field: value}
    refused = get(leads_server, paid_key, "/v1/leads/contagem", **params)
    assert refused.status_code == 400, refused.text
    assert refused.json()["details"]["campo"] == field
    assert "item vazio" in refused.json()["message"]


def test_cnae_group_takes_the_whole_division_primary_or_secondary(
    leads_server: Server, paid_key: Issued
) -> None:
    """Division 56 (restaurants and snack bars) as the primary activity, and the groceries
    with a restaurant as their secondary one, which score the secondary's points."""
    expected = _active(
        lambda lead: lead.uf == "RJ" and (lead.cnae.startswith("56") or lead.secondary[:2] == "56")
    )
    assert any(lead.cnae == GROCERY for lead in expected)
    assert _listed(leads_server, paid_key, cnae_grupo="56", uf="RJ") == ranked(
        expected, activity="56"
    )
    primary_only = _active(lambda lead: lead.cnae.startswith("56"))
    assert _total(leads_server, paid_key, cnae_grupo="56", incluir_secundarias="false") == len(
        primary_only
    )
    assert _total(leads_server, paid_key, cnae_grupo="47") == len(
        _active(lambda lead: lead.cnae == GROCERY)
    )


def test_situation_other_than_active_lists_those_companies(
    leads_server: Server, paid_key: Issued
) -> None:
    closed = [lead for lead in LEADS if not lead.active]
    assert closed
    for situacao in ("baixada", "08", "BAIXADA"):
        assert _listed(leads_server, paid_key, uf="PR,SP,RJ", situacao=situacao) == ranked(
            closed, activity=None
        )
    assert _total(leads_server, paid_key, uf="PR,SP,RJ", situacao="ativa,baixada") == len(LEADS)
    assert _total(leads_server, paid_key, uf="PR,SP,RJ", situacao="suspensa") == 0


def test_simples_true_keeps_the_optants_and_gives_everyone_the_regime_points(
    leads_server: Server, paid_key: Issued
) -> None:
    expected = _active(lambda lead: lead.simples and lead.uf == "SP" and lead.cnae == RESTAURANT)
    assert any(lead.mei for lead in expected)
    listed = _listed(leads_server, paid_key, cnae=RESTAURANT, uf="SP", simples="true",
                     incluir_secundarias="false")  # fmt: skip
    assert listed == ranked(expected, activity=RESTAURANT, regime_asked=True)
    named = _listed(leads_server, paid_key, cnae=RESTAURANT, uf="SP", filtro="simples",
                    incluir_secundarias="false")  # fmt: skip
    assert named == listed


@pytest.mark.parametrize(
    ("porte", "codes"),
    [("ME,EPP", {"01", "03"}), ("05", {"05"}), ("demais", {"05"}), ("epp", {"03"})],
)
def test_porte_filter_keeps_those_sizes(
    leads_server: Server, paid_key: Issued, porte: str, codes: set[str]
) -> None:
    expected = _active(lambda lead: lead.porte in codes and lead.uf == "SP")
    assert expected
    assert _listed(leads_server, paid_key, uf="SP", porte=porte) == ranked(expected, activity=None)
    counted = ok(get(leads_server, paid_key, "/v1/leads/contagem", uf="SP", porte=porte))
    assert {row["codigo"]: row["total"] for row in counted["por_porte"]} == {
        code: sum(lead.porte == code for lead in expected) for code in codes
    }
