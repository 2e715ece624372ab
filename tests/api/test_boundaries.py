"""Every documented bound, on both sides of it: the largest accepted value is served and the
next one is a 400 (or 413) naming the field."""

from __future__ import annotations

import base64
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest

from app.lib.paging import MAX_CURSOR, Cursor, Cursors
from app.search.service import AFTER
from app.settings import Settings, get_settings
from tests.conftest import SERPRO, Loader, MakeKey, Server, serving
from tests.releases import REFERENCE_TABLES, cnpj_of, copy_sample, establishment, partner, rows

BOUNDS: list[tuple[str, str, int, str]] = [
    # (path, parameter, largest accepted length, field named in the 400)
    ("/v1/search", "q", 200, "q"),
    ("/v1/seek", "nome", 200, "nome"),
    ("/v1/nome", "nome", 200, "nome"),
    ("/v1/seek", "municipio", 100, "municipio"),
    ("/v1/search/cnae", "query", 100, "query"),
    ("/v1/search/cidade", "query", 100, "query"),
    ("/v1/socios/relacionados", "nome", 200, "nome"),
    ("/v1/segmentos", "termo", 100, "termo"),
    ("/v1/mercado", "segmento", 100, "segmento"),
    ("/v1/relacionadas", "value", 200, "value"),
]


@pytest.fixture(scope="module")
def api(sample_server: Server) -> Iterator[httpx.Client]:
    with sample_server.client(timeout=30) as client:
        yield client


def _params(path: str, name: str, length: int) -> dict[str, str]:
    """A value of `length` characters that is valid in every other respect."""
    extra = {"/v1/relacionadas": {"kind": "socio"}}.get(path, {})
    return {**extra, name: ("padaria " * 30)[: length - 1] + "a"}


@pytest.mark.parametrize(
    ("path", "name", "largest", "field"), BOUNDS, ids=[f"{b[0]}:{b[1]}" for b in BOUNDS]
)
def test_text_parameter_largest_accepted_next_refused(
    api: httpx.Client, path: str, name: str, largest: int, field: str
) -> None:
    accepted = api.get(path, params=_params(path, name, largest))
    assert accepted.status_code == 200, accepted.text
    refused = api.get(path, params=_params(path, name, largest + 1))
    assert refused.status_code == 400
    assert refused.json()["details"]["campo"] == field


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v1/search", {"q": "x"}),
        ("/v1/seek", {"uf": "DF"}),
        ("/v1/socios/relacionados", {"nome": "x"}),
    ],
)
def test_limit_bounds_one_to_hundred(api: httpx.Client, path: str, params: dict[str, str]) -> None:
    for limit, status in ((0, 400), (1, 200), (100, 200), (101, 400), (-1, 400)):
        response = api.get(path, params={**params, "limit": limit})
        assert response.status_code == status, (path, limit, response.text)
        if status == 400:
            assert response.json()["details"]["campo"] == "limit"


def test_batch_hundred_items_served_hundred_one_refused(api: httpx.Client) -> None:
    items = [f"{n:08d}000191" for n in range(100)]
    served = api.post("/v1/cnpj/lote", json=items)
    assert served.status_code == 200
    assert served.json()["total"] == 100
    refused = api.post("/v1/cnpj/lote", json=[*items, "33683111000280"])
    assert refused.status_code == 400
    assert refused.json()["details"] == {"maximo": 100, "recebidos": 101}
    assert api.post("/v1/cnpj/lote", json=[]).status_code == 400


def test_validation_input_sixty_four_checked_sixty_five_too_long(api: httpx.Client) -> None:
    padded = "33.683.111/0002-80".ljust(64, " ")
    checked = api.get(f"/v1/cnpj/validar/{padded}").json()
    assert checked["valido"] is True
    too_long = api.get(f"/v1/cnpj/validar/{padded} ").json()
    assert too_long == {**too_long, "valido": False, "motivo": "tamanho"}
    assert len(too_long["entrada"]) == 64


def test_lookup_and_batch_take_sixty_four_characters_like_validation(api: httpx.Client) -> None:
    padded = "33.683.111/0002-80".ljust(64, " ")  # valid, and not in the sample: 404
    looked_up = api.get(f"/v1/cnpj/{padded}")
    assert looked_up.status_code == 404, looked_up.text
    too_long = api.get(f"/v1/cnpj/{padded}GARBAGE")
    assert too_long.status_code == 400, too_long.text
    assert too_long.json()["details"]["motivo"] == "tamanho"
    items = api.post("/v1/cnpj/lote", json=[padded, padded + " "]).json()["data"]
    assert [item["status"] for item in items] == ["nao_encontrado", "invalido"]
    assert items[1]["motivo"] == "tamanho"
    for path in ("/v1/sintegra/{}", "/v1/similares/{}"):  # every CNPJ route alike
        refused = api.get(path.format(padded + "GARBAGE"))
        assert refused.status_code == 400, refused.text
        assert refused.json()["message"].startswith("CNPJ inválido:")
        assert refused.json()["details"]["motivo"] == "tamanho"


def test_batch_echoes_invalid_items_bounded(api: httpx.Client) -> None:
    """An invalid item is echoed no longer than validation echoes it: a string cut to 64
    characters, a short number or literal as sent, a list, an object or a long number as null."""
    items = ["1" * 500, {"aninhado": ["x"] * 50}, [1, 2], 12345678901234, True, None, 10**80]
    answered = api.post("/v1/cnpj/lote", json=items).json()["data"]
    assert [item["entrada"] for item in answered] == [
        "1" * 64,
        None,
        None,
        12345678901234,
        True,
        None,
        None,
    ]
    assert [item["motivo"] for item in answered] == ["tamanho", *["tipo"] * 6]


def test_body_cap_exact(api: httpx.Client) -> None:
    cap = Settings().max_body_size
    body = b'{"q": "serpro", "cnae": "' + b" " * (cap - 27) + b'"}'
    assert len(body) == cap
    at_cap = api.post("/v1/search", content=body, headers={"content-type": "application/json"})
    assert at_cap.status_code == 400  # read and judged: the cnae value is too long
    assert at_cap.json()["details"]["campo"] == "cnae"
    over = api.post("/v1/search", content=body + b" ", headers={"content-type": "application/json"})
    assert over.status_code == 413


def test_cursor_longest_accepted_length(api: httpx.Client) -> None:
    """A sealed cursor is never `MAX_CURSOR` (1024) characters long: the base64 of its payload,
    a dot and 22 characters of signature never make a multiple of 4. So the longest cursor the
    bound lets through is 1023 characters, and one sealed at that length pages; 1024 characters
    pass the bound and are refused as a forgery, 1025 by the bound, before any decoding."""
    params = {"uf": "SP", "limit": "1"}
    real = api.get("/v1/seek", params=params).json()["next_cursor"]
    payload = real.split(".")[0]
    cursor = msgspec.json.decode(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)), type=Cursor[AFTER]
    )
    score, last = cursor.depois
    # 750 bytes of payload are 1000 base64 characters: 1023 with the dot and the signature.
    padding = "9" * (750 - len(msgspec.json.encode(cursor)))
    longest = Cursors(get_settings().api_key_secret.encode()).seal(
        msgspec.structs.replace(cursor, depois=(score, last + padding))
    )
    assert len(longest) == MAX_CURSOR - 1
    page = api.get("/v1/seek", params={**params, "cursor": longest})
    assert page.status_code == 200, page.text
    assert page.json()["data"]
    forged = api.get("/v1/seek", params={**params, "cursor": "a" * MAX_CURSOR})
    assert forged.status_code == 400
    assert forged.json()["details"]["campo"] == "cursor"
    assert "no máximo" not in forged.json()["message"]
    too_long = api.get("/v1/seek", params={**params, "cursor": "a" * (MAX_CURSOR + 1)})
    assert too_long.status_code == 400
    assert too_long.json()["details"]["campo"] == "cursor"
    assert f"no máximo {MAX_CURSOR} caracteres" in too_long.json()["message"]  # by its type


def test_allowlist_hundred_networks_accepted_hundred_one_refused(api: httpx.Client) -> None:
    networks = [f"10.0.{n}.0/24" for n in range(100)]
    created = api.post("/v1/me/chaves", json={"rotulo": "muitas", "allowlist": networks})
    assert created.status_code == 201
    refused = api.post(
        "/v1/me/chaves", json={"rotulo": "demais", "allowlist": [*networks, "10.1.0.0/16"]}
    )
    assert refused.status_code == 400


def test_repeated_parameter_named(api: httpx.Client) -> None:
    for path in (
        "/v1/seek?uf=SP&uf=RJ",
        "/v1/search?q=a&q=b",
        "/v1/relacionadas?kind=socio&value=a&value=b",
    ):
        response = api.get(path)
        assert response.status_code == 400, path
        assert "repetido" in response.json()["message"]


@pytest.mark.parametrize(
    ("path", "name"), [("/v1/segmentos", "termo"), ("/v1/mercado", "segmento")]
)
def test_activity_words_refused_under_the_parameter_sent(
    api: httpx.Client, path: str, name: str
) -> None:
    """No letters, or a code too long: the 400 names the parameter the caller typed it in."""
    for value in ("!!!", "123456789"):
        response = api.get(path, params={name: value})
        assert response.status_code == 400, response.text
        assert response.json()["details"]["campo"] == name
        assert response.json()["message"].startswith(f"{name}:")


def test_unknown_parameter_named_with_the_accepted_ones(api: httpx.Client) -> None:
    response = api.get("/v1/mercado", params={"segmento": "47", "cor": "azul"})
    assert response.status_code == 400
    details: dict[str, Any] = response.json()["details"]
    assert details["desconhecidos"] == ["cor"]
    assert details["campo"] == "cor"  # as every other 400 names its field
    assert "segmento" in details["aceitos"]


def test_the_other_search_modes_text_field_says_what_to_use(api: httpx.Client) -> None:
    """`/search` reads its text from `q`, `/seek` and `/nome` from `nome`: the query string says
    so, as the JSON body does."""
    for path, given, use in (("/v1/search", "nome", "q"), ("/v1/seek", "q", "nome"),
                             ("/v1/nome", "q", "nome")):  # fmt: skip
        response = api.get(path, params={given: "padaria"})
        assert response.status_code == 400, path
        assert f"desconhecido(s): {given} (use {use})." in response.json()["message"], path
        assert response.json()["details"]["campo"] == given


def test_method_not_allowed_says_allow(api: httpx.Client) -> None:
    response = api.delete(f"/v1/cnpj/{SERPRO}")
    assert response.status_code == 405
    allowed = set(response.headers["Allow"].replace(" ", "").split(","))
    assert "GET" in allowed
    assert "DELETE" not in allowed


CAPPED_ROOTS = [f"9920{n:04d}" for n in range(53)]
CAPPED = [cnpj_of(root) for root in CAPPED_ROOTS]


@pytest.fixture(scope="module")
def capped_server(
    load: Loader, new_alias: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A release of 53 companies sharing one partner."""
    release = tmp_path_factory.mktemp("capped")
    (release / "EMPRECSV.csv").write_bytes(
        rows(
            *(
                [root, f"EMPRESA {n}", "2062", "49", "1000,00", "01", ""]
                for n, root in enumerate(CAPPED_ROOTS)
            )
        )
    )
    (release / "ESTABELE.csv").write_bytes(
        rows(
            *(
                establishment(root, number, "X")
                for root, number in zip(CAPPED_ROOTS, CAPPED, strict=True)
            )
        )
    )
    shared = partner("SOCIO DE MUITAS", "***111111**")
    (release / "SOCIOCSV.csv").write_bytes(rows(*([root, *shared] for root in CAPPED_ROOTS)))
    copy_sample(release, *REFERENCE_TABLES, "SIMPLESCSV.csv")
    alias = new_alias()
    load(release, alias)
    with serving(alias) as server:
        yield server


def test_partners_related_capped_at_fifty(make_key: MakeKey, capped_server: Server) -> None:
    with capped_server.client(headers=make_key().headers) as client:
        body = client.get(f"/v1/socios/{CAPPED[0]}").json()
    assert body["total_relacionadas"] == len(CAPPED) - 1
    assert len(body["relacionadas"]) == 50
    listed = [r["cnpj"] for r in body["relacionadas"]]
    assert listed == sorted(CAPPED[1:])[:50]


def test_hundreds_of_unknown_parameters_named_in_part(api: httpx.Client) -> None:
    """A refusal names the first unknown parameters and counts the rest, each name cut short."""
    params = {f"p{n:03d}" + "x" * 100: "1" for n in range(300)}
    response = api.get("/v1/search", params={"q": "padaria", **params})
    assert response.status_code == 400, response.text[:300]
    body = response.json()
    assert len(body["details"]["desconhecidos"]) == 10
    assert all(len(name) == 64 for name in body["details"]["desconhecidos"])
    assert body["message"].endswith(" e mais 290.")


def test_an_empty_cursor_is_a_first_page(api: httpx.Client) -> None:
    """`cursor=` reads as no cursor on every face: the typo-tolerant passes still run (an empty
    cursor used to keep only the exact pass, and found nothing)."""
    typo = "clubinhu banho"  # CLUBINHO DO BANHO with a typo
    for path, params in (("/v1/search", {"q": typo}), ("/v1/nome", {"nome": "clubinhu"})):
        plain = api.get(path, params=params).json()
        empty = api.get(path, params={**params, "cursor": ""}).json()
        assert [c["cnpj"] for c in plain["data"]][:1] == ["33933798000183"], plain
        assert empty["data"] == plain["data"], path
    posted = api.post("/v1/seek", json={"nome": "clubinhu", "cursor": ""}).json()
    assert [c["cnpj"] for c in posted["data"]][:1] == ["33933798000183"], posted


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/v1/seek", {"cnae": "47\u0664"}, "cnae"),  # an Arabic-Indic four
        ("/v1/mercado", {"segmento": "47\u0664"}, "segmento"),
        ("/v1/socios/relacionados", {"doc": "***\u0661\u0662\u0663\u0664\u0665\u0666**"}, "doc"),
    ],
)
def test_digits_of_other_scripts_are_no_code(
    api: httpx.Client, path: str, params: dict[str, str], field: str
) -> None:
    """A code is ASCII digits: a digit of another script is refused, not dropped (`47٤` was
    searched as division 47)."""
    response = api.get(path, params=params)
    assert response.status_code == 400, response.text
    assert response.json()["details"]["campo"] == field
    assert api.get("/v1/search/cnae", params={"query": "47\u0664"}).json()["data"] == [], (
        "read as words, not as the code 47"
    )


@pytest.mark.parametrize(("path", "refused"), [("/v1/seek", "q"), ("/v1/search", "nome")])
def test_unknown_body_field_named_with_the_route_s_own_fields(
    api: httpx.Client, path: str, refused: str
) -> None:
    response = api.post(path, json={"uf": "SP", "foo": 1})
    assert response.status_code == 400
    details = response.json()["details"]
    assert details["campo"] == "foo"
    assert "uf" in details["aceitos"]
    assert refused not in details["aceitos"], "a field the route refuses is not offered"


def test_address_number_needs_a_letter_or_digit(api: httpx.Client) -> None:
    response = api.get("/v1/relacionadas", params={"kind": "endereco", "value": "01310100 /"})
    assert response.status_code == 400
    assert response.json()["details"]["campo"] == "value"


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /v1/search?q=\xd9\xa3 HTTP/1.1\r\nHost: x\r\n\r\n",  # a raw byte outside ASCII
        b"GET /v1/search?q=a HTTP/1.1\r\nHost: x\r\nSem dois pontos\r\n\r\n",  # no colon
    ],
)
def test_a_request_the_parser_refuses_gets_the_json_error_body(
    sample_server: Server, request_bytes: bytes
) -> None:
    host, port = sample_server.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as client:
        client.sendall(request_bytes)
        received = b""
        while piece := client.recv(65536):
            received += piece
    head, _, content = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), received
    assert b"content-type: application/json" in head.lower()
    refused = msgspec.json.decode(content)
    assert refused["error"] == "Bad Request"
    assert "malformada" in refused["message"]


def test_an_id_in_another_scripts_digits_is_no_path(api: httpx.Client) -> None:
    """`int()` reads `９` as 9: `/v1/me/lotes/９` would answer lot 9."""
    for path in ("/v1/me/lotes/%EF%BC%99", "/v1/me/monitoramentos/%D9%A3"):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["message"].startswith("Caminho não encontrado")
