"""The company page's full record (`app.web.render.ficha`): escaped, empty fields left out, and
the same HTML as the recursive Jinja macro it replaced (kept here as the oracle)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jinja2 import Environment

from app.web.render import ficha
from tests.conftest import SHARED

MACRO = Environment(autoescape=True).from_string(
    """{% macro ficha(valor) -%}
{%- if valor is mapping -%}
<dl class="ficha">{% for chave, item in valor.items() if item not in (none, '', [], {}) %}"""
    """<dt>{{ chave|replace('_', ' ') }}</dt><dd>{{ ficha(item) }}</dd>{% endfor %}</dl>
{%- elif valor is sequence and valor is not string -%}
<ol>{% for item in valor %}<li>{{ ficha(item) }}</li>{% endfor %}</ol>
{%- else -%}{{ valor }}{%- endif -%}
{%- endmacro %}{{ ficha(valor) }}"""
)
PEER_RECORD = SHARED / "minha-receita-testdata" / "response.json"
"""A full record as the peer project serves it: nested companies, partners, activities."""


def test_text_is_escaped_and_empty_fields_left_out() -> None:
    html = str(
        ficha({"nome_<b>": "<script>alert(1)</script>", "vazio": "", "nada": None, "zero": 0})
    )
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<dt>nome &lt;b&gt;</dt>" in html
    assert "vazio" not in html
    assert "nada" not in html
    assert "<dt>zero</dt><dd>0</dd>" in html


@pytest.mark.parametrize(
    "valor",
    [
        {"a": [None, "x", {"b": [1, 2.5, True, False]}], "c": {}, "d": [], "e": {"f": "é & ü"}},
        json.loads(PEER_RECORD.read_text(encoding="utf-8")),
    ],
)
def test_same_html_as_the_template_macro(valor: Any) -> None:
    assert str(ficha(valor)) == MACRO.render(valor=valor)
