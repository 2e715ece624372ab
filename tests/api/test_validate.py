"""`GET /v1/cnpj/validar/{cnpj}`: always 200, with the reason when not valid."""

from __future__ import annotations

import string
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.cnpj import check_digits


@pytest.mark.parametrize(
    ("raw", "valido", "motivo"),
    [
        ("33683111000280", True, None),
        ("33.683.111/0002-80", True, None),
        ("12ABC34501DE35", True, None),
        ("12abc34501de35", True, None),
        ("12ABC34501DE34", False, "segundo_digito"),
        ("33683111000290", False, "primeiro_digito"),
        ("123", False, "tamanho"),
        ("12ABC34501DE3X", False, "caracteres"),
        ("9" * 500, False, "tamanho"),
    ],
)
def test_validate_known_inputs_reason(
    api: httpx.Client, raw: str, valido: bool, motivo: str | None
) -> None:
    for prefix in ("/v1/cnpj/validar/", "/cnpj/validar/"):
        response = api.get(prefix + raw)
        assert response.status_code == 200
        body = response.json()
        assert body["valido"] is valido
        assert body["motivo"] == motivo
        assert (body["mensagem"] is None) is valido


def test_validate_alphanumeric_formatted(api: httpx.Client) -> None:
    body = api.get("/v1/cnpj/validar/12ABC34501DE35").json()
    assert body["formatado"] == "12.ABC.345/01DE-35"
    assert body["alfanumerico"] is True
    assert api.get("/v1/cnpj/validar/33683111000280").json()["alfanumerico"] is False


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=string.digits + string.ascii_uppercase, min_size=12, max_size=12))
def test_validate_generated_cnpjs_valid(api: httpx.Client, body: str) -> None:
    value = body + check_digits(body)
    assert api.get(f"/v1/cnpj/validar/{value}").json()["valido"] is True


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=100))
def test_validate_any_input_200(api: httpx.Client, raw: str) -> None:
    response = api.get("/v1/cnpj/validar/" + quote(raw, safe=""))
    assert response.status_code in {200, 404}  # 404 only when the path has no CNPJ segment
    if raw.strip("/") and raw not in {".", ".."}:  # clients resolve dot segments away
        assert response.status_code == 200
