"""Company lookup by CNPJ, answered from the read alias."""

from __future__ import annotations

import msgspec
from elasticsearch import AsyncElasticsearch, TransportError
from elasticsearch import NotFoundError as MissingError

from app.domain import cnpj
from app.domain.record import Empresa
from app.errors import BadRequestError, NotFoundError, UnavailableError
from app.lib.elastic import body

INDEX_UNAVAILABLE = "O índice de empresas não está disponível no momento."


def parse_cnpj(raw: str) -> str:
    """The 14-character CNPJ in `raw` (formatted or not), or a 400 naming the problem."""
    checked = cnpj.check(raw[:64])
    if checked.problem is not None:
        raise BadRequestError(
            f"CNPJ inválido: {cnpj.MESSAGES[checked.problem]}",
            details={"cnpj": raw[:64], "motivo": checked.problem.value},
        )
    return checked.cnpj


class Found(msgspec.Struct):
    """A `GET /<index>/_doc/<id>` answer, decoded straight into the record."""

    found: bool = False
    source: Empresa | None = msgspec.field(name="_source", default=None)


_found = msgspec.json.Decoder(Found)


async def get_company(es: AsyncElasticsearch, alias: str, number: str) -> Empresa:
    try:
        response = await es.get(index=alias, id=number, source_excludes=["busca"])
    except MissingError as error:
        if b'"found":false' in body(error):
            raise NotFoundError(f"CNPJ {cnpj.format_cnpj(number)} não encontrado.") from error
        raise UnavailableError("Nenhuma base de empresas foi carregada ainda.") from error
    except TransportError as error:
        raise UnavailableError(INDEX_UNAVAILABLE) from error
    document = _found.decode(body(response))
    if document.source is None:
        raise NotFoundError(f"CNPJ {cnpj.format_cnpj(number)} não encontrado.")
    return document.source
