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


def _establishment(root: str, order: str, dv: str, trade: str) -> list[str]:
    return [root, order, dv, "1", trade, "02", "20200101", "00", "", "", "20200101", "6204000",
            "", "RUA", "A", "1", "", "CENTRO", "70836900", "DF", "9701", *[""] * 9]  # fmt: skip


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
    with httpx.Client(base_url=server.url, timeout=10) as client:
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
