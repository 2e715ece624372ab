"""`GET /v1/cnpj/validar/{cnpj}`: always 200, with the reason when not valid, judged over HTTP
against python-stdnum and validate-docbr (see `tests/domain/test_cnpj.py`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stdnum.br import cnpj as stdnum_cnpj

from tests.domain.test_cnpj import REAL_CNPJS, any_fourteen, bodies, oracles_accept

MESSAGES = {
    "tamanho": "O CNPJ deve ter 14 caracteres (8 da raiz, 4 da ordem, 2 dígitos verificadores).",
    "caracteres": (
        "Os 12 primeiros caracteres do CNPJ devem ser letras A-Z ou algarismos e os dois "
        "últimos, algarismos; além deles, só pontos, barra, hífen e espaços."
    ),
    "primeiro_digito": "O primeiro dígito verificador não confere.",
    "segundo_digito": "O segundo dígito verificador não confere.",
}
"""The `mensagem` of each `motivo` (`docs/api.md` names the motivos; the wording is pinned here,
so that a change to it shows in review)."""

http_examples = settings(
    max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _valid(raw: str, cnpj: str) -> dict[str, Any]:
    return {
        "entrada": raw, "cnpj": cnpj, "valido": True, "motivo": None, "mensagem": None,
        "formatado": stdnum_cnpj.format(cnpj), "alfanumerico": not cnpj.isdigit(),
    }  # fmt: skip


def _invalid(raw: str, cnpj: str, motivo: str) -> dict[str, Any]:
    return {
        "entrada": raw, "cnpj": cnpj, "valido": False, "motivo": motivo,
        "mensagem": MESSAGES[motivo], "formatado": None, "alfanumerico": False,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # /work/shared/docs/receita-format.md, "Identifiers": Receita's alphanumeric example.
        ("12ABC34501DE35", _valid("12ABC34501DE35", "12ABC34501DE35")),
        ("12abc34501de35", _valid("12abc34501de35", "12ABC34501DE35")),
        ("12.ABC.345/01DE-35", _valid("12.ABC.345/01DE-35", "12ABC34501DE35")),
        ("12ABC34501DE34", _invalid("12ABC34501DE34", "12ABC34501DE34", "segundo_digito")),
        # SERPRO, the row of the peer's test release.
        ("33683111000280", _valid("33683111000280", "33683111000280")),
        ("33.683.111/0002-80", _valid("33.683.111/0002-80", "33683111000280")),
        ("33683111000290", _invalid("33683111000290", "33683111000290", "primeiro_digito")),
        ("123", _invalid("123", "123", "tamanho")),
        ("12ABC34501DE3X", _invalid("12ABC34501DE3X", "12ABC34501DE3X", "caracteres")),
        ("33683111000280%09", _invalid("33683111000280\t", "33683111000280", "caracteres")),
        ("33683111%C2%A0000280", _invalid("33683111\xa0000280", "33683111000280", "caracteres")),
        ("9" * 500, _invalid("9" * 64, "", "tamanho")),
    ],
)
def test_validate_known_inputs_exact_answer(
    api: httpx.Client, raw: str, expected: dict[str, Any]
) -> None:
    assert oracles_accept(raw) is expected["valido"]
    for prefix in ("/v1/cnpj/validar/", "/cnpj/validar/"):
        response = api.get(prefix + raw)
        assert response.status_code == 200
        assert response.json() == expected


@pytest.mark.parametrize("number", REAL_CNPJS[::50])
def test_validate_real_cnpj_valid_like_oracles(api: httpx.Client, number: str) -> None:
    body = api.get(f"/v1/cnpj/validar/{number}").json()
    assert oracles_accept(number)
    assert body == _valid(number, stdnum_cnpj.compact(number))


@http_examples
@given(bodies)
def test_validate_oracle_check_digits_valid(api: httpx.Client, body: str) -> None:
    value = body + stdnum_cnpj.calc_check_digits(body)
    assert api.get(f"/v1/cnpj/validar/{value}").json() == _valid(value, value)


@http_examples
@given(any_fourteen)
def test_validate_any_14_characters_same_verdict_as_oracles(api: httpx.Client, raw: str) -> None:
    body = api.get(f"/v1/cnpj/validar/{raw}").json()
    assert body["valido"] is oracles_accept(raw)
    assert body["cnpj"] == raw.upper()


@http_examples
@given(st.text(max_size=100))
def test_validate_any_input_200(api: httpx.Client, raw: str) -> None:
    response = api.get("/v1/cnpj/validar/" + quote(raw, safe=""))
    assert response.status_code in {200, 404}  # 404 only when the path has no CNPJ segment
    if raw.strip("/") and raw not in {".", ".."}:  # clients resolve dot segments away
        assert response.status_code == 200
