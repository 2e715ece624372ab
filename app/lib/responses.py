"""JSON responses encoded by msgspec with exact decimals written as JSON numbers."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response

ENCODER = msgspec.json.Encoder(decimal_format="number")


def json_response(content: Any, status_code: int = 200) -> Response[bytes]:
    return Response(ENCODER.encode(content), status_code=status_code, media_type="application/json")
