"""Cursors: signed with the server secret, typed, bound to their list and request; pages read
the release of the first page with no search context left open on the cluster."""

from __future__ import annotations

import base64
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest
from elasticsearch import Elasticsearch

from app.domain.cnpj import check_digits
from app.errors import BadRequestError
from app.lib.paging import Cursor, Cursors
from app.settings import get_settings
from indexer import elastic
from tests.api.test_partners import _establishment, _rows
from tests.conftest import ROOT, Loader, Server, serving

SAMPLE = ROOT / "fixtures" / "sample"


PARTNER = "MARIA DE PAGINAS"


@pytest.fixture(scope="module")
def alias(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The sample release plus five companies that share one partner."""
    release = tmp_path_factory.mktemp("paging") / "release"
    shutil.copytree(SAMPLE, release)
    roots = [f"9700000{n}" for n in range(5)]  # roots the sample does not use
    numbers = [valid_cnpj(root + "0001") for root in roots]
    (release / "EMPRECSV-extra.csv").write_bytes(
        _rows(*([root, f"EMPRESA PAGINADA {n}", "2062", "49", "1000,00", "01", ""]
                for n, root in enumerate(roots)))
    )  # fmt: skip
    (release / "ESTABELE-extra.csv").write_bytes(
        _rows(*(_establishment(root, "0001", number[-2:], "PAGINAS")
                for root, number in zip(roots, numbers, strict=True)))
    )  # fmt: skip
    partner = ["2", PARTNER, "***220050**", "49", "20210101", "", "***000000**", "", "00", "6"]
    (release / "SOCIOCSV-extra.csv").write_bytes(_rows(*([root, *partner] for root in roots)))
    name = new_alias()
    load(release, name)
    return name


@pytest.fixture(scope="module")
def server(alias: str) -> Iterator[Server]:
    with serving(alias) as running:
        yield running


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with server.client(timeout=30) as client:
        yield client


def valid_cnpj(twelve: str) -> str:
    return twelve + check_digits(twelve)


def open_contexts(es: Elasticsearch) -> int:
    stats = es.nodes.stats(metric="indices", index_metric="search")
    return sum(node["indices"]["search"]["open_contexts"] for node in stats["nodes"].values())


def _walk(api: httpx.Client, path: str, params: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        page = api.get(path, params=query).json()
        seen += [item["cnpj"] for item in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return seen


def test_search_bursts_leave_no_search_context_open(api: httpx.Client, es: Elasticsearch) -> None:
    baseline = open_contexts(es)
    for _ in range(30):  # first pages that have a next page
        page = api.get("/v1/seek", params={"uf": "SP", "limit": 2}).json()
        assert page["next_cursor"]
    for _ in range(20):  # first pages with nothing after them
        page = api.get("/v1/search", params={"q": "zzzzqqqq inexistente"}).json()
        assert page["next_cursor"] is None
    for _ in range(20):
        related = api.get("/v1/socios/relacionados", params={"nome": PARTNER, "limit": 2})
        assert related.json()["next_cursor"]
    for path, params in (
        ("/v1/seek", {"uf": "SP", "limit": 50}),
        ("/v1/seek", {"uf": "RJ", "limit": 7}),
        ("/v1/socios/relacionados", {"nome": PARTNER, "limit": 2}),
    ):
        seen = _walk(api, path, params)
        assert len(seen) == len(set(seen)) > 0
    assert open_contexts(es) == baseline


def test_cursor_reads_release_of_first_page_until_dropped(
    load: Loader, new_alias: Callable[[], str], es: Elasticsearch
) -> None:
    """A listing keeps reading its release after a swap; once that release is dropped, its
    cursors are expired (400), not a server error."""
    name = new_alias()
    load(SAMPLE, name)
    with serving(name, workers=1) as server, server.client(timeout=30) as client:
        first = client.get("/v1/seek", params={"uf": "SP", "limit": 3}).json()
        load(SAMPLE, name)
        second = client.get(
            "/v1/seek", params={"uf": "SP", "limit": 3, "cursor": first["next_cursor"]}
        )
        assert second.status_code == 200
        assert second.json()["next_cursor"]
        elastic.drop_old(es, name, keep=1)
        expired = client.get(
            "/v1/seek", params={"uf": "SP", "limit": 3, "cursor": second.json()["next_cursor"]}
        )
        assert expired.status_code == 400
        assert expired.json()["details"]["campo"] == "cursor"


def _cursors() -> Cursors:
    return Cursors(get_settings().api_key_secret.encode())


def test_cursor_roundtrip_and_every_forgery_refused() -> None:
    cursors = _cursors()
    sealed = cursors.seal(Cursor("busca", "empresas-1", (1.5, "33683111000280"), "d1"))
    opened = cursors.open(sealed, "busca", tuple[float, str], "d1")
    assert opened.depois == (1.5, "33683111000280")
    payload, mac = sealed.split(".")
    forged_payload = (
        base64.urlsafe_b64encode(msgspec.json.encode(["busca", "outro-indice", [1.5, "x"], "d1"]))
        .decode()
        .rstrip("=")
    )
    forgeries = [
        f"{forged_payload}.{mac}",  # altered payload, old signature
        payload,  # no signature
        f"{payload}.{mac[:-2]}",  # truncated signature
        Cursors(b"another-secret-of-32-characters!!").seal(
            Cursor("busca", "empresas-1", (1.5, "x"), "d1")
        ),
        cursors.seal(Cursor("socios", "empresas-1", ("x",), "d1")),  # another list
        cursors.seal(Cursor("busca", "empresas-1", (1.5, "x"), "d2")),  # another request
        cursors.seal(Cursor("busca", "empresas-1", ({"a": 1}, "x"), "d1")),  # wrong types
        cursors.seal(Cursor("busca", "empresas-1", (1.5, "x", "y"), "d1")),  # wrong arity
        "%%%",
        "x" * 5000,
    ]
    for raw in forgeries:
        with pytest.raises(BadRequestError):
            cursors.open(raw, "busca", tuple[float, str], "d1")


def test_partner_cursor_with_foreign_types_400(api: httpx.Client, alias: str) -> None:
    """A cursor signed by this server but carrying values of the wrong type (as a plain,
    unsigned cursor could before) never reaches Elasticsearch."""
    forged = _cursors().seal(Cursor("socios", f"{alias}-x", ({"script": "1"},), "irrelevant"))
    for path, params in (
        ("/v1/socios/relacionados", {"nome": PARTNER, "cursor": forged}),
        ("/v1/seek", {"uf": "SP", "cursor": forged}),
    ):
        response = api.get(path, params=params)
        assert response.status_code == 400, response.text
        assert "cursor" in response.json()["message"]


def test_cursor_of_one_list_refused_by_another(api: httpx.Client) -> None:
    search_cursor = api.get("/v1/seek", params={"uf": "SP", "limit": 1}).json()["next_cursor"]
    partners = api.get("/v1/socios/relacionados", params={"nome": PARTNER, "limit": 1}).json()
    assert search_cursor
    assert partners["next_cursor"]
    refused = api.get("/v1/socios/relacionados", params={"nome": PARTNER, "cursor": search_cursor})
    assert refused.status_code == 400
    refused = api.get("/v1/seek", params={"uf": "SP", "cursor": partners["next_cursor"]})
    assert refused.status_code == 400


def _flip(text: str) -> str:
    """`text` with its first character changed (the first of a base64 text carries six bits of
    data; the last may carry only padding bits)."""
    return ("B" if text[0] == "A" else "A") + text[1:]


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v1/search", {"q": "paginada", "limit": 2}),
        ("/v1/socios/relacionados", {"nome": PARTNER, "limit": 2}),
    ],
)
def test_cursor_tampered_signature_over_http_400_error_body(
    api: httpx.Client, path: str, params: dict[str, Any]
) -> None:
    """A real cursor whose signature was altered, zeroed or cut is a 400 with the JSON error
    body naming the cursor; the untouched cursor still pages."""
    cursor = api.get(path, params=params).json()["next_cursor"]
    assert cursor
    payload, mac = cursor.split(".")
    zeroed = base64.urlsafe_b64encode(bytes(16)).decode().rstrip("=")
    for forged in (f"{payload}.{_flip(mac)}", f"{payload}.{zeroed}", f"{payload}.{mac[:-3]}"):
        response = api.get(path, params={**params, "cursor": forged})
        assert response.status_code == 400, response.text
        assert response.headers["content-type"].startswith("application/json")
        assert response.json() == {
            "error": "Bad Request",
            "message": "cursor inválido ou expirado: refaça a busca sem cursor.",
            "details": {"campo": "cursor", "valor": forged[:64]},
        }
    assert api.get(path, params={**params, "cursor": cursor}).status_code == 200
