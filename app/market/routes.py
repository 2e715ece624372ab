"""`/v1/segmentos` and `/v1/mercado`: the REST twins of the agent tools
`descobrir_segmentos_cnae` and `mapear_mercado_empresas`."""

from __future__ import annotations

from app.lib.rest import query_route
from app.market.service import (
    DESCOBRIR_SEGMENTOS,
    MAPEAR_MERCADO,
    BuscaSegmentos,
    MapaMercado,
    Mercado,
    Segmentos,
    mapa,
    segmentos,
)

segments = query_route(
    ["/v1/segmentos", "/segmentos"],
    name="segments",
    operation=DESCOBRIR_SEGMENTOS,
    input=BuscaSegmentos,
    output=Segmentos,
    run=segmentos,
    summary="CNAE segments of a term, with active companies",
    description=(
        "CNAE subclasses matching `termo` (words of the activity or a code prefix), best first, "
        "each with its hierarchy, `empresas` (establishments with it as primary activity) and "
        "`ativas` (the active ones, in `uf` when given). `limit` 10 by default, at most 50. "
        "Twin of the agent tool `descobrir_segmentos_cnae`."
    ),
    tags=["Mercado"],
)

market = query_route(
    ["/v1/mercado", "/mercado"],
    name="market",
    operation=MAPEAR_MERCADO,
    input=MapaMercado,
    output=Mercado,
    run=mapa,
    summary="Market map of a segment",
    description=(
        "Counts of the establishments of a `segmento` (a CNAE code of 2 to 7 digits, a category "
        "slug, or words of the activity), optionally in one `uf` and with a valid e-mail or "
        "phone: total, active, by UF, by município (the `limit` largest), by porte, by situação "
        "and by opening year. Twin of the agent tool `mapear_mercado_empresas`."
    ),
    tags=["Mercado"],
)
