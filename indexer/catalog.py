"""The release's reference catalog: CNAE subclasses and municipalities, for autocomplete, and
the release's other code tables (naturezas jurídicas, qualificações, países, motivos), for the
agent interface's resources.

Each release index `NAME` gets a small companion index `NAME-ref` built from the release's own
code tables (plus the shipped IBGE and CNAE-section data), CNAEs and municipalities with their
count of establishments taken from the release index by one aggregation. The alias swap moves
the catalog alias (`ALIAS-ref`) with the release alias, so both always describe the same month.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from elasticsearch import Elasticsearch

from app.domain.catalog import CnaeDoc, MunicipioDoc, ReferenciaDoc, catalog_name, format_cnae
from app.domain.cnae import hierarchy
from app.domain.text import normalize
from indexer.elastic import LoadError
from indexer.references import References
from indexer.sources import Kind

MAPPING = Path(__file__).resolve().parent.parent / "mappings" / "referencias.json"


def _counts(es: Elasticsearch, index: str, field: str, size: int) -> dict[str, int]:
    response = es.search(
        index=index,
        size=0,
        aggregations={"n": {"terms": {"field": field, "size": max(size, 1)}}},
    )
    return {b["key"]: b["doc_count"] for b in response["aggregations"]["n"]["buckets"]}


def _search_texts(*names: str | None) -> list[str]:
    return sorted({normalize(name) for name in names if name and normalize(name)})


_REFERENCE_TABLES = {
    Kind.NATUREZAS: ("natureza", 4),
    Kind.QUALIFICACOES: ("qualificacao", 2),
    Kind.PAISES: ("pais", 3),
    Kind.MOTIVOS: ("motivo", 2),
}
"""Each table's `tipo` in the catalog and the width of its codes as Receita writes them (the
tables are keyed without leading zeros)."""


def documents(
    refs: References, cnaes: dict[str, int], cities: dict[str, int]
) -> Iterator[CnaeDoc | MunicipioDoc | ReferenciaDoc]:
    """Catalog documents of the release's code tables."""
    for kind, (tipo, width) in _REFERENCE_TABLES.items():
        for key, description in refs.tables.get(kind, {}).items():
            yield ReferenciaDoc(
                tipo=tipo, codigo=key.zfill(width), descricao=description or None,
                busca=_search_texts(description),
            )  # fmt: skip
    for code, description in sorted(refs.tables.get(Kind.CNAES, {}).items()):
        yield CnaeDoc(
            codigo=code,
            codigo_formatado=format_cnae(code),
            descricao=description or None,
            hierarquia=hierarchy(code),
            empresas=cnaes.get(code, 0),
            busca=_search_texts(description),
        )
    for key, name in sorted(refs.tables.get(Kind.MUNICIPIOS, {}).items()):
        code = key.zfill(4)
        city = refs.ibge.get(key)
        yield MunicipioDoc(
            codigo=code,
            codigo_ibge=city.codigo_ibge if city else None,
            nome=city.nome if city else name,
            uf=city.uf if city else None,
            empresas=cities.get(code, 0),
            busca=_search_texts(name, city.nome if city else None),
        )


def build(es: Elasticsearch, index: str, refs: References) -> str:
    """Create and fill the catalog of release index `index` (refreshed and ready to read)."""
    mapping = msgspec.json.decode(MAPPING.read_bytes())
    name = catalog_name(index)
    es.indices.delete(index=name, ignore_unavailable=True)
    es.indices.create(index=name, settings=mapping["settings"], mappings=mapping["mappings"])
    cnaes = _counts(es, index, "cnae_principal.codigo", len(refs.tables.get(Kind.CNAES, {})) + 500)
    cities = _counts(
        es, index, "endereco.municipio.codigo", len(refs.tables.get(Kind.MUNICIPIOS, {})) + 500
    )
    operations: list[dict[str, Any]] = []
    for doc in documents(refs, cnaes, cities):
        tipo = (
            doc.tipo
            if isinstance(doc, ReferenciaDoc)
            else ("cnae" if isinstance(doc, CnaeDoc) else "municipio")
        )
        doc_id = f"{tipo}:{doc.codigo}"
        operations += [{"index": {"_id": doc_id}}, msgspec.to_builtins(doc)]
    if operations:
        response = es.bulk(index=name, operations=operations, refresh=True)
        if response["errors"]:
            raise LoadError(f"catalog {name}: Elasticsearch rejected some entries")
    return name
