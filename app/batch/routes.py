"""`POST /v1/cnpj/lote` (alias `/cnpj/lote`): up to 100 CNPJs in one call, a result per item."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from app.batch.service import (
    CONSULTAR_LOTE,
    MAX_ITEMS,
    Lote,
    check_batch,
    lookup_batch,
    parse_body,
)
from app.context import Backends
from app.errors import ErrorBody
from app.lib.body import json_bytes
from app.lib.documented_bodies import CNPJ_FORMAT
from app.lib.operations import meter
from app.lib.responses import json_response

_CNPJS: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "format": CNPJ_FORMAT, "maxLength": 64},
    "minItems": 1,
    "maxItems": MAX_ITEMS,
    "uniqueItems": True,
}
BODY_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _CNPJS,
        {
            "type": "object",
            "properties": {"cnpjs": _CNPJS},
            "required": ["cnpjs"],
            "additionalProperties": False,
        },
    ]
}
"""The body as the document shows it: any item is answered (an invalid one as `invalido`), but
what a client sends is CNPJs."""


@post(
    ["/v1/cnpj/lote", "/cnpj/lote"],
    summary="Batch lookup",
    description=(
        'Body: a JSON array of CNPJs, or `{"cnpjs": [...]}`, at most 100 items. The call counts '
        "one request per item in the plan's window (`X-RateLimit-Cost`); a batch larger than "
        "the whole window is a 403. Each item is answered on its own (`encontrado`, "
        "`nao_encontrado`, `invalido` with the reason), in input order; one bad item never "
        "fails the batch. The same CNPJ twice (formatted or not) is a 400 naming it and its "
        "positions."
    ),
    responses={
        200: ResponseSpec(data_container=Lote, generate_examples=False, description="Results"),
        400: ResponseSpec(
            data_container=ErrorBody,
            generate_examples=False,
            description="Body is not JSON, not a list, empty, over 100 items, or repeats a CNPJ",
        ),
    },
    status_code=200,
    tags=["CNPJ"],
    opt={"body_schema": BODY_SCHEMA},
)
async def batch_lookup(
    request: Request[Any, Any, Any], backends: NamedDependency[Backends]
) -> Response[bytes]:
    items = check_batch(parse_body(await json_bytes(request)))
    await meter(request, CONSULTAR_LOTE, units=len(items))
    return json_response(await lookup_batch(backends, items))
