"""Batch lookup: many CNPJs, one search round trip, an answer per item."""

from __future__ import annotations

from typing import Any

import msgspec

from app.context import Backends
from app.domain import cnpj
from app.domain.record import Empresa
from app.errors import BadRequestError
from app.lib.body import convert, decode
from app.lib.operations import Custo, Operacao
from app.lookup.records import Stored
from app.lookup.service import stored_records_of

CONSULTAR_LOTE = Operacao("consultar_lote", Custo.CONSULTA)
"""Counts one query per item, in the usage and in the window."""

MAX_ITEMS = 100
"""Largest batch accepted; bigger lists get 400."""


class LoteEntrada(msgspec.Struct, forbid_unknown_fields=True):
    cnpjs: list[Any]


class _Item(msgspec.Struct, kw_only=True, omit_defaults=True):
    entrada: Any
    status: str
    """`encontrado`, `nao_encontrado` or `invalido`."""
    cnpj: str | None = None
    motivo: str | None = None


class ItemLote(_Item, kw_only=True, omit_defaults=True):
    """One item of the answer, as the API documents it."""

    empresa: Empresa | None = None


class Lote(msgspec.Struct, kw_only=True):
    """The answer, as the API documents it."""

    total: int
    encontrados: int
    data: list[ItemLote]


class ItemEscrito(_Item, kw_only=True, omit_defaults=True):
    """`ItemLote` with its record already written as JSON (`Empresa`'s, from the record store):
    a batch sends its records' bytes as they are, without reading them."""

    empresa: msgspec.Raw | None = None


class LoteEscrito(msgspec.Struct, kw_only=True):
    """`Lote` of `ItemEscrito`: what `lookup_batch` answers; encoded, it is a `Lote`."""

    total: int
    encontrados: int
    data: list[ItemEscrito]


def parse_body(body: bytes) -> list[Any]:
    """The list of inputs from a JSON array or `{"cnpjs": [...]}`; 400 for anything else."""
    decoded = decode(body)
    if isinstance(decoded, dict):
        decoded = convert(decoded, LoteEntrada).cnpjs
    if not isinstance(decoded, list):
        raise BadRequestError('Envie uma lista de CNPJs ou {"cnpjs": [...]}.')
    if not decoded:
        raise BadRequestError("A lista de CNPJs está vazia.")
    if len(decoded) > MAX_ITEMS:
        raise BadRequestError(
            f"No máximo {MAX_ITEMS} CNPJs por lote; recebidos {len(decoded)}.",
            details={"maximo": MAX_ITEMS, "recebidos": len(decoded)},
        )
    return decoded


def _refuse_duplicates(items: list[ItemEscrito]) -> None:
    """400 naming each CNPJ asked more than once (formatted or not) and its positions."""
    positions: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        if item.cnpj is not None:
            positions.setdefault(item.cnpj, []).append(position)
    repeated = {number: where for number, where in positions.items() if len(where) > 1}
    if repeated:
        shown = ", ".join(list(repeated)[:5])
        raise BadRequestError(
            f"CNPJ repetido no lote: {shown}. Envie cada CNPJ uma vez.",
            details={"duplicados": [{"cnpj": n, "posicoes": w} for n, w in repeated.items()]},
        )


def _echoed(item: Any) -> Any:
    """What an item that is not a string is echoed as: a number, `true`, `false` or `null` as
    it came when its JSON is at most `cnpj.MAX_INPUT` characters; a list, an object or a longer
    number as `null`, so the answer never grows with what was sent."""
    if item is None or isinstance(item, bool):
        return item
    if isinstance(item, int | float) and len(msgspec.json.encode(item)) <= cnpj.MAX_INPUT:
        return item
    return None


def check_batch(inputs: list[Any]) -> list[ItemEscrito]:
    """Each input checked (`invalido` with the reason, or the CNPJ to look up), in input order;
    400 when a valid CNPJ comes twice, before anything is counted or looked up."""
    items: list[ItemEscrito] = []
    for raw in inputs:
        if not isinstance(raw, str):
            items.append(ItemEscrito(entrada=_echoed(raw), status="invalido", motivo="tipo"))
            continue
        checked = cnpj.check(raw)
        if checked.problem is not None:
            entrada = raw[: cnpj.MAX_INPUT]
            items.append(
                ItemEscrito(entrada=entrada, status="invalido", motivo=checked.problem.value)
            )
        else:
            items.append(ItemEscrito(entrada=raw, status="", cnpj=checked.cnpj))
    _refuse_duplicates(items)
    return items


async def lookup_batch(backends: Backends, items: list[ItemEscrito]) -> LoteEscrito:
    """The records of the checked `items` (`check_batch`), one read for the whole batch."""
    wanted = [item.cnpj for item in items if item.status == "" and item.cnpj is not None]
    found: dict[str, Stored] = {}
    if wanted:
        found = {record.cnpj: record for record in await stored_records_of(backends, wanted)}
    hits = 0
    for item in items:
        if item.status == "" and item.cnpj is not None:
            record = found.get(item.cnpj)
            if record is None:
                item.status = "nao_encontrado"
            else:
                item.status = "encontrado"
                item.empresa = msgspec.Raw(record.body)
                hits += 1
    return LoteEscrito(total=len(items), encontrados=hits, data=items)
