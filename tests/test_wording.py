"""msgspec's validation messages in the users' words: each case is a real msgspec error (raised
here, so a change of msgspec's wording shows up as a failure), and `BadRequestError`'s text
from `convert` is the same sentence."""

from __future__ import annotations

import importlib
from datetime import date, datetime
from typing import Annotated, Any, Literal

import msgspec
import pytest
from litestar import Litestar, post
from litestar.exceptions import HTTPException
from litestar.params import JSONBody
from litestar.testing import TestClient

from app.errors import BadRequestError, http_error_handler
from app.lib.body import convert
from app.lib.wording import free_text, invalid
from app.search.filters import from_query

Free = Annotated[str, msgspec.Meta(max_length=3, pattern=free_text(required=False))]


class Form(msgspec.Struct, forbid_unknown_fields=True):
    texto: Free = "x"
    sigla: Annotated[str, msgspec.Meta(pattern="^[A-Z]{2}$")] = "SP"
    rotulo: Annotated[str, msgspec.Meta(min_length=1)] = "a"
    quantidade: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1
    capital: Annotated[float, msgspec.Meta(gt=0)] = 1.0
    matriz: bool | None = None
    formato: Literal["csv", "xlsx"] = "csv"
    redes: Annotated[list[str], msgspec.Meta(max_length=2)] = []
    desde: date | None = None
    em: datetime | None = None
    notas: list[Annotated[int, msgspec.Meta(ge=0)]] = []


class Required(msgspec.Struct):
    cnpj: str


CASES = [
    ({"texto": "abcd"}, "Valor inválido em texto: deve ter no máximo 3 caracteres."),
    ({"texto": "a\x00"}, "Valor inválido em texto: não pode ter caracteres de controle"),
    ({"texto": "a\u202eb"}, "Valor inválido em texto: não pode ter caracteres de controle"),
    ({"texto": "ab\n"}, "Valor inválido em texto: não pode ter caracteres de controle"),
    ({"sigla": "sp"}, "Valor inválido em sigla: formato inválido."),
    ({"rotulo": ""}, "Valor inválido em rotulo: não pode ser vazio."),
    ({"quantidade": 0}, "Valor inválido em quantidade: deve ser no mínimo 1."),
    ({"quantidade": 11}, "Valor inválido em quantidade: deve ser no máximo 10."),
    ({"capital": 0}, "Valor inválido em capital: deve ser maior que 0."),
    ({"matriz": "talvez"}, "Valor inválido em matriz: deve ser verdadeiro ou falso (true/false)."),
    ({"quantidade": "dez"}, "Valor inválido em quantidade: deve ser um número inteiro."),
    ({"formato": "pdf"}, "Valor inválido em formato: 'pdf' não é um dos valores aceitos."),
    ({"redes": ["a", "b", "c"]}, "Valor inválido em redes: deve ter no máximo 2 itens."),
    ({"redes": "a"}, "Valor inválido em redes: deve ser uma lista."),
    ({"desde": "ontem"}, "Valor inválido em desde: data inválida: use AAAA-MM-DD."),
    ({"em": "agora"}, "Valor inválido em em: data e hora inválidas: use ISO 8601"),
    ({"desde": 20200101}, "Valor inválido em desde: deve ser uma data (AAAA-MM-DD)."),
    ({"em": 1}, "Valor inválido em em: deve ser uma data e hora (ISO 8601"),
    ({"notas": [1, -1]}, "Valor inválido em notas[1]: deve ser no mínimo 0."),
    ([], "Valor inválido: deve ser um objeto."),
]


@pytest.mark.parametrize(("value", "said"), CASES)
def test_msgspec_errors_read_as_sentences(value: Any, said: str) -> None:
    with pytest.raises(msgspec.ValidationError) as raised:
        msgspec.convert(value, Form)
    assert invalid(str(raised.value)).startswith(said)
    with pytest.raises(BadRequestError) as refused:
        convert(value, Form)
    assert refused.value.message == invalid(str(raised.value))


def test_missing_and_unknown_fields_are_named() -> None:
    with pytest.raises(BadRequestError) as missing:
        convert({}, Required)
    assert missing.value.message == "Campo obrigatório ausente: cnpj."
    assert missing.value.details == {"campo": "cnpj"}
    with pytest.raises(BadRequestError) as unknown:
        convert({"zz": 1}, Form)
    assert unknown.value.message == "Campo desconhecido: zz."
    assert unknown.value.details == {"campo": "zz"}


def test_a_long_field_name_is_said_back_cut() -> None:
    """An unknown name can be as long as the body: it is said back in 64 characters."""
    name = "z" * 20_000
    with pytest.raises(BadRequestError) as unknown:
        convert({name: 1}, Form)
    assert unknown.value.message == f"Campo desconhecido: {'z' * 64}…."
    assert unknown.value.details == {"campo": f"{'z' * 64}…"}
    with pytest.raises(BadRequestError) as nested:
        convert({"itens": [{"cnpj": "1", name: 2}]}, Nested)
    assert len(nested.value.message) < 120


class Listing(msgspec.Struct, forbid_unknown_fields=True):
    itens: list[Required]


class Inner(msgspec.Struct, forbid_unknown_fields=True):
    cnpj: str


class Nested(msgspec.Struct, forbid_unknown_fields=True):
    itens: list[Inner]


def test_fields_of_nested_objects_are_named_with_their_path() -> None:
    """A field missing or unknown inside a list of objects is named with the object's path, in
    the same words as a top-level one (msgspec puts the path after the sentence)."""
    with pytest.raises(BadRequestError) as missing:
        convert({"itens": [{"cnpj": "1"}, {}]}, Listing)
    assert missing.value.message == "Campo obrigatório ausente: itens[1].cnpj."
    assert missing.value.details == {"campo": "itens[1].cnpj"}
    with pytest.raises(BadRequestError) as unknown:
        convert({"itens": [{"cnpj": "1", "zz": 2}]}, Nested)
    assert unknown.value.message == "Campo desconhecido: itens[0].zz."
    assert unknown.value.details == {"campo": "itens[0].zz"}


def test_a_message_of_another_shape_is_kept() -> None:
    assert invalid("Something new - at `$.x`") == "Valor inválido em x: Something new."


def test_search_filters_speak_the_same_words() -> None:
    """The filters of `/search`, `/seek` and the tools convert on their own path."""
    with pytest.raises(BadRequestError) as refused:
        from_query({"limit": "500"})
    assert refused.value.message.startswith("Valor inválido em limit: deve ser no máximo")
    assert refused.value.details == {"campo": "limit"}
    with pytest.raises(BadRequestError) as huge:  # past a float's range: msgspec's own words
        from_query({"capital_min": "1e400"})
    said = "Valor inválido em capital_min: número fora do intervalo representável."
    assert huge.value.message == said


def test_framework_refusals_name_nested_fields_with_their_path() -> None:
    """A body the framework parses (`data: Struct`) is refused in the same words, its nested
    fields named with their object's path (Litestar gives the path apart from the sentence)."""

    @post("/")
    async def take(data: JSONBody[Nested]) -> None:
        return None

    handlers = {HTTPException: http_error_handler}
    with TestClient(Litestar([take], exception_handlers=handlers)) as client:  # type: ignore[dict-item]
        missing = client.post("/", json={"itens": [{}]}).json()
        unknown = client.post("/", json={"itens": [{"cnpj": "1", "zz": 2}]}).json()
        top = client.post("/", json={"itens": [], "sobra": 1}).json()
    assert (missing["message"], missing["details"]) == (
        "Campo obrigatório ausente: itens[0].cnpj.",
        {"campo": "itens[0].cnpj"},
    )
    assert (unknown["message"], unknown["details"]) == (
        "Campo desconhecido: itens[0].zz.",
        {"campo": "itens[0].zz"},
    )
    assert (top["message"], top["details"]) == ("Campo desconhecido: sobra.", {"campo": "sobra"})


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("accounts.service.Text", "Ana"),
        ("accounts.service.Email", "ana@example.com"),
        ("accounts.service.Phone", "41 3333-0000"),
        ("monitoring.service.Descricao", "fornecedor"),
        ("leads.filters.Objetivo", "padarias"),
        ("leads.lots.ChaveIdempotencia", "3f1c-uuid"),
    ],
)
def test_a_final_newline_is_refused_where_a_pattern_ends_the_text(kind: str, value: str) -> None:
    """msgspec searches a field's pattern, and `$` matches before a final newline: each pattern
    ends with `END`, so a value that is valid alone is refused with a newline after it."""
    module, name = kind.rsplit(".", 1)
    field_type = getattr(importlib.import_module(f"app.{module}"), name)
    assert msgspec.convert(value, field_type) == value
    for tail in ("\n", "\r\n", "\n\n"):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(value + tail, field_type)
