"""A record store the API cannot open (a file cut short, overwritten or deleted under the
name the pointer gives) is no store: lookups read Elasticsearch and answer as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.lookup.records import RecordStore
from indexer import records
from tests.conftest import SERPRO, MakeKey, serving

RELEASE = "empresas-quebrado"


def _unreadable_store(folder: Path, alias: str, contents: bytes | None) -> None:
    """A pointer naming `RELEASE` for `alias`, whose file holds `contents` (None: no file)."""
    records.pointer_path(folder, alias).write_text(RELEASE)
    if contents is not None:
        records.store_path(folder, RELEASE).write_bytes(contents)


@pytest.mark.parametrize("contents", [b"not an lmdb file " * 512, None], ids=["garbage", "gone"])
def test_record_store_unopenable_file_is_no_store(tmp_path: Path, contents: bytes | None) -> None:
    _unreadable_store(tmp_path, "empresas", contents)
    store = RecordStore(tmp_path, "empresas")
    assert store.records([SERPRO]) is None
    assert store.index is None
    store.close()


def test_lookup_with_unopenable_store_answered_from_elasticsearch(
    peer_alias: str, make_key: MakeKey, tmp_path: Path
) -> None:
    _unreadable_store(tmp_path, peer_alias, b"\x00" * 4096)
    with (
        serving(peer_alias, env={"RECORDS_DIR": str(tmp_path)}) as server,
        server.client(headers=make_key().headers) as client,
    ):
        found = client.get(f"/v1/cnpj/{SERPRO}")
        batch = client.post("/v1/cnpj/lote", json=[SERPRO])
    assert found.status_code == 200, found.text
    assert found.json()["cnpj"] == SERPRO
    assert batch.status_code == 200, batch.text
    assert batch.json()["encontrados"] == 1
    assert batch.json()["data"][0]["empresa"]["cnpj"] == SERPRO
