"""The REST face of a service operation read from the query string: one GET handler that
decodes the query into the operation's input Struct, meters the operation and answers its output
as JSON. Routes that are nothing more are declared with `query_route`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from app.context import Backends
from app.errors import ErrorBody
from app.lib.body import from_query
from app.lib.operations import Operacao, meter
from app.lib.responses import json_response

ERRORS = {
    400: ResponseSpec(
        data_container=ErrorBody,
        generate_examples=False,
        description="Unknown parameter or bad value (the field is named)",
    ),
    503: ResponseSpec(
        data_container=ErrorBody,
        generate_examples=False,
        description="The index is not available (`Retry-After`)",
    ),
}


def query_route(
    paths: Sequence[str],
    *,
    name: str,
    operation: Operacao,
    input: type[Any],
    output: type[Any],
    run: Callable[[Backends, Any], Awaitable[Any]],
    summary: str,
    description: str,
    tags: Sequence[str],
    errors: dict[int, ResponseSpec] | None = None,
) -> HTTPRouteHandler:
    """A GET route over `run`: the query string as `input` (unknown parameters and bad values
    are 400s naming them), the answer as `output`."""

    async def handler(
        request: Request[Any, Any, Any], backends: NamedDependency[Backends]
    ) -> Response[bytes]:
        await meter(request, operation)
        return json_response(await run(backends, from_query(request, input)))

    handler.__name__ = handler.__qualname__ = name
    return get(
        list(paths),
        summary=summary,
        description=description,
        responses={
            200: ResponseSpec(data_container=output, generate_examples=False, description="OK"),
            **(errors or ERRORS),
        },
        opt={"query": tuple(input.__struct_fields__), "query_struct": input},
        tags=list(tags),
    )(handler)
