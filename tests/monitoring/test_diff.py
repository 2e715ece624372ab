"""The field diff of two records: dotted paths for scalars and nested objects, sets for lists
(by what identifies an element), derived fields left out."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from app.monitoring.diff import changes


def _as_json(found: list[Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = msgspec.to_builtins(found)
    return result


def test_identical_records_no_change() -> None:
    record = {"cnpj": "1", "endereco": {"cep": "1"}, "socios": [{"nome": "A", "documento": "x"}]}
    assert changes(record, msgspec.json.decode(msgspec.json.encode(record))) == []


def test_nested_scalars_by_dotted_path() -> None:
    old = {"endereco": {"cep": "80010000", "numero": "1", "municipio": {"nome": "CURITIBA"}}}
    new = {"endereco": {"cep": "01310100", "numero": "1", "municipio": {"nome": "SAO PAULO"}}}
    assert _as_json(changes(old, new)) == [
        {"campo": "endereco.cep", "antes": "80010000", "depois": "01310100"},
        {"campo": "endereco.municipio.nome", "antes": "CURITIBA", "depois": "SAO PAULO"},
    ]


def test_object_appearing_reported_whole() -> None:
    new = {"situacao_especial": {"descricao": "RECUPERACAO JUDICIAL", "data": "2026-01-02"}}
    assert _as_json(changes({"situacao_especial": None}, new)) == [
        {"campo": "situacao_especial", "depois": new["situacao_especial"]}
    ]


def test_partners_as_a_set_order_ignored_qualification_change_kept() -> None:
    ana = {"nome": "ANA", "documento": "***1**", "qualificacao": {"codigo": "49"}}
    bia = {"nome": "BIA", "documento": "***2**", "qualificacao": {"codigo": "22"}}
    caio = {"nome": "CAIO", "documento": "***3**", "qualificacao": {"codigo": "22"}}
    assert changes({"socios": [ana, bia]}, {"socios": [bia, ana]}) == []
    promoted = {**bia, "qualificacao": {"codigo": "49"}}
    [change] = _as_json(changes({"socios": [ana, bia]}, {"socios": [promoted, caio]}))
    assert change == {
        "campo": "socios",
        "adicionados": [caio],
        "removidos": [ana],
        "alterados": [{"chave": "BIA|***2**", "antes": bia, "depois": promoted}],
    }


def test_secondary_activities_by_code() -> None:
    old = {"cnaes_secundarios": [{"codigo": "4711302", "descricao": "a"}, {"codigo": "5611201"}]}
    new = {"cnaes_secundarios": [{"codigo": "5611201"}, {"codigo": "6201501"}]}
    [change] = _as_json(changes(old, new))
    assert change == {
        "campo": "cnaes_secundarios",
        "adicionados": [{"codigo": "6201501"}],
        "removidos": [{"codigo": "4711302", "descricao": "a"}],
    }


def test_derived_fields_never_news() -> None:
    old = {"hash": "a", "contato": {"emails": ["a@b.c"], "validacao": [1], "disponibilidade": {}}}
    new = {"hash": "b", "contato": {"emails": ["a@b.c"], "validacao": [2], "disponibilidade": []}}
    assert changes(old, new) == []
    new["contato"]["emails"] = ["x@b.c"]
    assert _as_json(changes(old, new)) == [
        {"campo": "contato.emails", "adicionados": ["x@b.c"], "removidos": ["a@b.c"]}
    ]


LEAF = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["", "a", "b"]))
RECORD = st.dictionaries(
    st.sampled_from(["razao_social", "porte", "capital_social"]),
    st.one_of(LEAF, st.dictionaries(st.sampled_from(["codigo", "descricao"]), LEAF)),
)


def _leaves(record: dict[str, Any], path: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in record.items():
        where = f"{path}.{name}" if path else name
        found.update(_leaves(value, where) if isinstance(value, dict) else {where: value})
    return found


@given(RECORD, RECORD)
def test_every_differing_scalar_reported_once_and_nothing_else(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    found = changes(old, new)
    paths = [change.campo for change in found]
    assert len(paths) == len(set(paths))
    for change in found:
        assert change.antes != change.depois
    if old == new:
        assert found == []
    # Where both sides are objects the diff descends; elsewhere it reports the whole value.
    both = {name for name in {*old, *new}
            if isinstance(old.get(name), dict) and isinstance(new.get(name), dict)}  # fmt: skip
    expected = {
        path
        for path, value in _leaves({k: v for k, v in new.items() if k in both}).items()
        if _leaves({k: v for k, v in old.items() if k in both}).get(path) != value
    } | {
        path
        for path, value in _leaves({k: v for k, v in old.items() if k in both}).items()
        if _leaves({k: v for k, v in new.items() if k in both}).get(path) != value
    }
    expected |= {name for name in {*old, *new} - both if old.get(name) != new.get(name)}
    assert set(paths) == expected
