"""`GET /sintegra/{cnpj}`: state registrations loaded from their file into the index."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator

import httpx
import pytest

from indexer.load import LoadReport
from tests.conftest import RECEITA_SAMPLE, SERPRO, Loader, Server

MISTER = "13810056000153"  # BA, in the Receita sample
MERCEARIA = "20518630000160"  # RJ, in the Receita sample
WITHOUT = "17422340000103"  # in the sample, no registration below

ROWS = f'''"{MISTER}";"BA";"12345663";"NORMAL";"HABILITADO";"20200115";"19851122";"SIMPLES NACIONAL"
"13.810.056/0001-53";"sp";"110.042.490-114";"substituto tributário";"habilitado";"20210301";"";""
"{MISTER}";"BA";"12345663";"NORMAL";"HABILITADO";"20200115";"19851122";"SIMPLES NACIONAL"
"{MERCEARIA}";"RJ";"99999993";"";"Baixado";"20180201";"20140629";"normal"
"{MERCEARIA}";"RJ";"99999994";"NORMAL";"HABILITADO";"";"";""
"13810056000154";"BA";"12345663";"NORMAL";"HABILITADO";"";"";""
"{MISTER}";"XX";"12345663";"NORMAL";"HABILITADO";"";"";""
"{MISTER}";"SP";"P011004243002";"PRODUTOR RURAL";"ATIVO";"";"";""
"{MISTER}";"SP";"P011004243002";"PRODUTOR RURAL";"HABILITADO";"20201340";"";""
"{MISTER}";"MG";"P0623079040081";"NORMAL";"HABILITADO";"";"";""
"{MISTER}";"SP"
"{SERPRO}";"DF";"0730000100109";"NORMAL";"HABILITADO";"";"";""
'''


@pytest.fixture(scope="module")
def loaded(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, LoadReport]:
    release = tmp_path_factory.mktemp("release")
    for path in RECEITA_SAMPLE.iterdir():
        if path.suffix.lower() == ".csv":
            shutil.copy(path, release / path.name)
    (release / "INSCRICOES.ESTADUAIS.D61108.csv").write_bytes(ROWS.encode("latin-1"))
    alias = new_alias()
    return alias, load(release, alias)


@pytest.fixture(scope="module")
def api(loaded: tuple[str, LoadReport]) -> Iterator[httpx.Client]:
    server = Server(loaded[0], workers=1)
    with server.client() as client:
        yield client
    assert "Traceback" not in server.stop()


def test_bad_registration_rows_reported_rest_loaded(loaded: tuple[str, LoadReport]) -> None:
    report = loaded[1]
    [registrations] = [file for file in report.files if file.kind == "inscricoes"]
    assert (registrations.rows, registrations.bad_rows) == (5, 7)
    reasons = report.bad_rows_by_reason
    assert reasons["invalid inscrição estadual"] == 2  # wrong digit (RJ), P outside SP (MG)
    assert reasons["invalid UF"] == 1
    assert reasons["invalid situação"] == 1
    assert reasons["invalid data_situacao"] == 1
    assert reasons["invalid CNPJ"] >= 1
    assert reasons["wrong number of columns"] >= 1
    lines = {bad.line for bad in report.bad_rows_sample if bad.file.startswith("INSCRICOES")}
    assert {5, 6, 7, 8, 9, 10, 11} <= lines
    assert report.registrations_without_establishment == 1  # SERPRO is not in the sample


def test_registrations_of_a_cnpj(api: httpx.Client) -> None:
    for path in (f"/sintegra/{MISTER}", "/v1/sintegra/13.810.056%2F0001-53"):
        response = api.get(path)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["cnpj"] == MISTER
        assert body["razao_social"] is None  # the sample has no company row for it
        assert body["uf"] == "BA"
        assert body["habilitada"] is True
        assert body["inscricoes_estaduais"] == [
            {
                "uf": "BA",
                "inscricao_estadual": "12345663",
                "inscricao_formatada": "012.345.663",
                "tipo": "NORMAL",
                "situacao": "HABILITADO",
                "habilitada": True,
                "data_situacao": "2020-01-15",
                "data_inicio": "1985-11-22",
                "regime_apuracao": "SIMPLES NACIONAL",
            },
            {
                "uf": "SP",
                "inscricao_estadual": "110042490114",
                "inscricao_formatada": "110.042.490.114",
                "tipo": "SUBSTITUTO TRIBUTÁRIO",
                "situacao": "HABILITADO",
                "habilitada": True,
                "data_situacao": "2021-03-01",
                "data_inicio": None,
                "regime_apuracao": None,
            },
        ]


def test_registrations_filtered_by_uf(api: httpx.Client) -> None:
    response = api.get(f"/sintegra/{MISTER}", params={"uf": "sp"})
    assert [item["uf"] for item in response.json()["inscricoes_estaduais"]] == ["SP"]
    missing = api.get(f"/sintegra/{MISTER}", params={"uf": "RJ"})
    assert missing.status_code == 404
    assert "RJ" in missing.json()["message"]


def test_closed_registration_not_habilitada(api: httpx.Client) -> None:
    body = api.get(f"/sintegra/{MERCEARIA}").json()
    assert body["habilitada"] is False
    [item] = body["inscricoes_estaduais"]
    assert (item["situacao"], item["habilitada"], item["tipo"]) == ("BAIXADO", False, None)
    assert item["regime_apuracao"] == "NORMAL"


def test_registrations_also_in_full_record(api: httpx.Client) -> None:
    record = api.get(f"/v1/cnpj/{MISTER}").json()
    assert [item["uf"] for item in record["inscricoes_estaduais"]] == ["BA", "SP"]
    assert api.get(f"/v1/cnpj/{WITHOUT}").json()["inscricoes_estaduais"] == []


@pytest.mark.parametrize(
    ("path", "params", "status", "field"),
    [
        (f"/sintegra/{WITHOUT}", {}, 404, None),
        (f"/sintegra/{SERPRO}", {}, 404, None),
        ("/sintegra/123", {}, 400, "cnpj"),
        (f"/sintegra/{MISTER[:-1]}4", {}, 400, "cnpj"),
        (f"/sintegra/{MISTER}", {"uf": "XX"}, 400, "uf"),
        (f"/sintegra/{MISTER}", {"uf": ""}, 400, "uf"),
        (f"/sintegra/{MISTER}", {"estado": "SP"}, 400, None),
        (f"/sintegra/{MISTER}", [("uf", "SP"), ("uf", "BA")], 400, "uf"),  # repeated
    ],
)
def test_sintegra_errors(
    api: httpx.Client,
    path: str,
    params: dict[str, str] | list[tuple[str, str]],
    status: int,
    field: str | None,
) -> None:
    response = api.get(path, params=params)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]
    assert body["message"]
    if field == "cnpj":
        assert field in body["details"]  # the CNPJ's own refusal: the value and its `motivo`
    elif field:
        assert body["details"]["campo"] == field  # a bad or repeated parameter, named


def test_a_bad_uf_is_refused_in_the_words_of_every_state_filter(api: httpx.Client) -> None:
    sintegra = api.get(f"/sintegra/{MISTER}", params={"uf": "XX"}).json()
    segments = api.get("/v1/segmentos", params={"termo": "padaria", "uf": "XX"}).json()
    assert (
        sintegra["message"] == segments["message"] == "uf: sigla de um dos 27 estados (SP, RJ...)."
    )
