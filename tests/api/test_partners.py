"""`GET /socios/{cnpj}`: the QSA and the companies tied by the same partner."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.conftest import PEER_DATA, SERPRO, Loader, Server

RELATED = "11222333000181"
NAMESAKE = "11222335000170"


def _rows(*rows: list[str]) -> bytes:
    return "".join(";".join(f'"{v}"' for v in row) + "\n" for row in rows).encode("latin-1")


PHONE = "88445077"
"""A phone both companies list without a DDD."""


def _establishment(root: str, order: str, dv: str, trade: str) -> list[str]:
    return [root, order, dv, "1", trade, "02", "20200101", "00", "", "", "20200101", "6204000",
            "", "RUA", "A", "1", "", "CENTRO", "70836900", "DF", "9701", "", PHONE,
            *[""] * 7]  # fmt: skip


@pytest.fixture(scope="module")
def partners_api(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    release = tmp_path_factory.mktemp("partners") / "release"
    shutil.copytree(PEER_DATA, release)
    (release / "Empresas9").write_bytes(
        _rows(
            ["11222333", "CONSULTORIA CESERO LTDA", "2062", "49", "1000,00", "01", ""],
            ["11222335", "OUTRA CESERO LTDA", "2062", "49", "1000,00", "01", ""],
        )
    )
    (release / "Estabelecimentos9").write_bytes(
        _rows(
            _establishment("11222333", "0001", "81", "CESERO TI"),
            _establishment("11222335", "0001", "70", "HOMONIMO"),
        )
    )
    partner = ["2", "ANDRÉ DE CESERO", "***220050**", "49", "20210101", "", "***000000**",
               "", "00", "6"]  # fmt: skip
    namesake = ["2", "ANDRE DE CESERO", "***999999**", "49", "20210101", "", "***000000**",
                "", "00", "6"]  # fmt: skip
    (release / "Socios9").write_bytes(_rows(["11222333", *partner], ["11222335", *namesake]))
    alias = new_alias()
    load(release, alias)
    server = Server(alias, workers=1)
    with server.client() as client:
        yield client
    server.stop()


def test_partners_qsa_and_related_by_name_and_document(partners_api: httpx.Client) -> None:
    for prefix in ("/socios/", "/v1/socios/"):
        response = partners_api.get(prefix + "33.683.111/0002-80")
        assert response.status_code == 200
        body = response.json()
        assert body["cnpj"] == SERPRO
        assert len(body["socios"]) == 6
        assert body["socios"][0]["nome"] == "ANDRE DE CESERO"
        assert body["socios"][0]["faixa_etaria"]["descricao"] == "Entre 51 a 60 anos"
        assert body["total_relacionadas"] == 1
        assert [(r["cnpj"], r["socios_em_comum"]) for r in body["relacionadas"]] == [
            (RELATED, ["ANDRE DE CESERO"])
        ]


def test_partners_relation_is_symmetric_and_namesake_excluded(
    partners_api: httpx.Client,
) -> None:
    body = partners_api.get(f"/socios/{RELATED}").json()
    assert [r["cnpj"] for r in body["relacionadas"]] == [SERPRO]
    assert partners_api.get(f"/socios/{NAMESAKE}").json()["relacionadas"] == []


def test_partners_errors_like_lookup(partners_api: httpx.Client) -> None:
    assert partners_api.get("/socios/123").status_code == 400
    assert partners_api.get("/socios/00000000000191").status_code == 404


def _related(api: httpx.Client, **params: object) -> httpx.Response:
    return api.get("/socios/relacionados", params=params)


def test_related_by_name_paged_with_cursor(partners_api: httpx.Client) -> None:
    first = _related(partners_api, nome="André de Cesero", limit=2)
    assert first.status_code == 200
    page = first.json()
    assert page["total"] == 3
    assert [item["cnpj"] for item in page["data"]] == [NAMESAKE_ORDER[0], NAMESAKE_ORDER[1]]
    assert page["next_cursor"]
    second = _related(partners_api, nome="André de Cesero", limit=2, cursor=page["next_cursor"])
    assert second.status_code == 200
    rest = second.json()
    assert [item["cnpj"] for item in rest["data"]] == [NAMESAKE_ORDER[2]]
    assert rest["next_cursor"] is None


NAMESAKE_ORDER = sorted([RELATED, NAMESAKE, SERPRO])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"nome": "ANDRE DE CESERO", "doc": "***220050**"}, sorted([RELATED, SERPRO])),
        ({"doc": "220050"}, sorted([RELATED, SERPRO])),
        ({"doc": "123.220.050-99"}, sorted([RELATED, SERPRO])),
        ({"nome": "andre de cesero", "idade": "6"}, NAMESAKE_ORDER),
        ({"nome": "andre de cesero", "idade": "9"}, []),
        ({"nome": "GILENO GURJAO BARRETO"}, [SERPRO]),
        ({"nome": "de cesero"}, NAMESAKE_ORDER),  # part of the name: a phrase
        ({"nome": "Gurjão"}, [SERPRO]),
    ],
)
def test_related_filters(
    partners_api: httpx.Client, params: dict[str, str], expected: list[str]
) -> None:
    response = _related(partners_api, **params)
    assert response.status_code == 200
    body = response.json()
    assert [item["cnpj"] for item in body["data"]] == expected
    assert body["total"] == len(expected)
    for item in body["data"]:
        assert item["socios"], item["cnpj"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "nome"),
        ({"idade": "6"}, "nome"),  # idade alone: nome (or doc) is what is missing
        ({"nome": "x", "idade": "12"}, "idade"),
        ({"nome": "..."}, "nome"),
        ({"doc": "abc"}, "doc"),
        ({"nome": "x", "limit": "0"}, "limit"),
        ({"nome": "x", "limit": "101"}, "limit"),
        ({"nome": "x", "limit": "dez"}, "limit"),
        ({"nome": "x", "cursor": "not-a-cursor"}, "cursor"),
    ],
)
def test_related_bad_input_400(
    partners_api: httpx.Client, params: dict[str, str], field: str
) -> None:
    """Each refusal names the parameter at fault in `details.campo`, as every 400 does."""
    response = _related(partners_api, **params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Bad Request"
    assert body["details"]["campo"] == field, body


@pytest.mark.parametrize("idade", ["12", "a", "٣", " 1"])
def test_related_idade_refused_saying_what_it_holds(partners_api: httpx.Client, idade: str) -> None:
    response = _related(partners_api, nome="x", idade=idade)
    assert response.status_code == 400
    assert response.json()["message"] == "idade é a faixa etária da Receita, de 0 a 9."


def test_related_unknown_parameter_named(partners_api: httpx.Client) -> None:
    response = _related(partners_api, nome="x", filtro="y")
    assert response.status_code == 400
    assert response.json()["details"]["desconhecidos"] == ["filtro"]


def test_related_cursor_bound_to_its_filters(partners_api: httpx.Client) -> None:
    cursor = _related(partners_api, nome="andre de cesero", limit=1).json()["next_cursor"]
    assert _related(partners_api, nome="outro nome", limit=1, cursor=cursor).status_code == 400
    tampered = cursor[:-4] + ("AAAA" if not cursor.endswith("AAAA") else "BBBB")
    assert _related(partners_api, nome="andre de cesero", cursor=tampered).status_code == 400


def test_related_cursor_holds_for_the_value_as_searched(partners_api: httpx.Client) -> None:
    """A cursor belongs to what was searched: the value in another case or spacing is the same
    search; another value is not."""
    params = {"kind": "socio", "value": "de cesero", "limit": 1}
    first = partners_api.get("/v1/relacionadas", params=params).json()
    assert first["next_cursor"]
    again = {**params, "value": "  DE  Cesero ", "cursor": first["next_cursor"]}
    second = partners_api.get("/v1/relacionadas", params=again)
    assert second.status_code == 200, second.text
    assert second.json()["data"][0]["cnpj"] != first["data"][0]["cnpj"]
    other = {**params, "value": "cesero", "cursor": first["next_cursor"]}
    assert partners_api.get("/v1/relacionadas", params=other).status_code == 400


def test_related_by_part_of_a_name_or_a_phone_lists_what_is_shared_once(
    partners_api: httpx.Client,
) -> None:
    by_name = partners_api.get("/v1/relacionadas", params={"kind": "socio", "value": "de cesero"})
    assert by_name.status_code == 200
    shared = {item["cnpj"]: item["em_comum"] for item in by_name.json()["data"]}
    assert shared == {
        RELATED: ["ANDRÉ DE CESERO"], NAMESAKE: ["ANDRE DE CESERO"], SERPRO: ["ANDRE DE CESERO"],
    }  # fmt: skip
    by_phone = partners_api.get("/v1/relacionadas", params={"kind": "telefone", "value": PHONE})
    assert by_phone.status_code == 200
    shared = {item["cnpj"]: item["em_comum"] for item in by_phone.json()["data"]}
    assert shared == {RELATED: [PHONE], NAMESAKE: [PHONE]}


def test_related_with_nothing_to_search_refuses_a_cursor(partners_api: httpx.Client) -> None:
    """A company without the values asked for has an empty page and no next one: a cursor
    given with it is another search's, refused as any foreign cursor is."""
    params = {"kind": "socio", "value": "de cesero", "limit": 1}
    cursor = partners_api.get("/v1/relacionadas", params=params).json()["next_cursor"]
    empty = [
        {"kind": kind, "value": number}
        for kind in ("socio", "telefone", "email", "endereco")
        for number in (SERPRO, RELATED, NAMESAKE)
        if not partners_api.get("/v1/relacionadas", params={"kind": kind, "value": number}).json()[
            "procurados"
        ]
    ]
    assert empty, "a company of the release without one of the kinds of value"
    for asked in empty:
        refused = partners_api.get("/v1/relacionadas", params={**asked, "cursor": cursor})
        assert refused.status_code == 400, (asked, refused.text)
        assert refused.json()["details"]["campo"] == "cursor"
        assert partners_api.get("/v1/relacionadas", params={**asked, "cursor": ""}).json() == (
            partners_api.get("/v1/relacionadas", params=asked).json()
        )  # an empty cursor is the first page
