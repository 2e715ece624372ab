"""What changed in a company's record between two releases, field by field.

Scalars and nested objects are compared by dotted path (`endereco.cep`, `situacao_cadastral.codigo`)
with the old and new values. Lists are compared as sets, by what identifies an element (a
partner by name and document, an activity by its code, a phone by DDD and number, a state
registration by UF and number): `adicionados` and `removidos`, and `alterados` for an element
whose identity stayed but whose other fields changed (a partner's qualification). Fields that
follow from others by a fixed rule (the content hash, the contact checks) are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

IGNORED = frozenset({"hash", "data_referencia", "contato.validacao", "contato.disponibilidade"})
"""Paths whose change is never news on its own (they follow from other fields, or say which
release answered)."""


def _partner(item: Any) -> str:
    return f"{item.get('nome')}|{item.get('documento')}"


IDENTITY: dict[str, Callable[[Any], str]] = {
    "socios": _partner,
    "cnaes_secundarios": lambda item: str(item.get("codigo")),
    "contato.telefones": lambda item: f"{item.get('ddd') or ''}{item.get('numero')}",
    "contato.emails": str,
    "inscricoes_estaduais": lambda item: f"{item.get('uf')}{item.get('inscricao_estadual')}",
}
"""How an element of each list is recognised across releases."""


class Alterado(msgspec.Struct, kw_only=True):
    chave: str
    antes: Any
    depois: Any


class Mudanca(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One changed field: old and new values, or for a list what entered, left or changed."""

    campo: str
    antes: Any = None
    depois: Any = None
    adicionados: list[Any] | None = None
    removidos: list[Any] | None = None
    alterados: list[Alterado] | None = None


def _list(path: str, old: list[Any], new: list[Any]) -> Mudanca | None:
    key = IDENTITY.get(path, lambda item: msgspec.json.encode(item).decode())
    before = {key(item): item for item in old}
    after = {key(item): item for item in new}
    added = [after[k] for k in after if k not in before]
    removed = [before[k] for k in before if k not in after]
    changed = [
        Alterado(chave=k, antes=before[k], depois=after[k])
        for k in after
        if k in before and before[k] != after[k]
    ]
    if not (added or removed or changed):
        return None
    return Mudanca(
        campo=path, adicionados=added or None, removidos=removed or None,
        alterados=changed or None,
    )  # fmt: skip


def _walk(path: str, old: Any, new: Any, found: list[Mudanca]) -> None:
    if path in IGNORED or old == new:
        return
    if (old is None and new == []) or (old == [] and new is None):
        return  # a list the older record did not have yet, still empty: nothing happened
    if isinstance(old, dict) and isinstance(new, dict):
        for name in sorted({*old, *new}):
            _walk(f"{path}.{name}" if path else name, old.get(name), new.get(name), found)
    elif isinstance(old, list) and isinstance(new, list):
        change = _list(path, old, new)
        if change is not None:
            found.append(change)
    else:
        found.append(Mudanca(campo=path, antes=old, depois=new))


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[Mudanca]:
    """Every change from record `old` to record `new` (both as JSON objects), by path."""
    found: list[Mudanca] = []
    _walk("", old, new, found)
    return found
