"""Lookups from the release's record store: the same answers as Elasticsearch gives, served
while Elasticsearch is frozen, a new release and a rollback served within a second without a
restart, and a dropped release's store deleted."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import lmdb
import msgspec
import pytest
import zstandard

from app.batch.service import Lote
from app.lookup.records import DICTIONARY_KEY, RecordStore, unpack
from indexer import records
from tests.conftest import ROOT, SAMPLE, Loader, MakeKey, Server, serving

SERVICES = ["bash", str(ROOT / "scripts" / "services.sh")]
INDEXER = ROOT / ".venv" / "bin" / "indexer"
ZSTD_FRAME = b"\x28\xb5\x2f\xfd"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("registros")


@pytest.fixture(scope="module")
def stored_alias(load: Loader, new_alias: Callable[[], str], store: Path) -> str:
    alias = new_alias()
    report = load(SAMPLE, alias, records_dir=store)
    assert report.records_file == str(records.store_path(store, report.index))
    assert report.records_bytes > 0
    assert records.pointer_path(store, alias).read_text() == report.index
    return alias


@pytest.fixture(scope="module")
def from_store(stored_alias: str, store: Path) -> Iterator[Server]:
    with serving(stored_alias, env={"RECORDS_DIR": str(store)}) as server:
        yield server


@pytest.fixture(scope="module")
def from_index(stored_alias: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    empty = tmp_path_factory.mktemp("sem-registros")
    with serving(stored_alias, env={"RECORDS_DIR": str(empty)}) as server:
        yield server


def _sample_numbers(count: int) -> list[str]:
    from app.domain.cnpj import check_digits

    with (SAMPLE / "ESTABELE.csv").open(encoding="latin-1", newline="") as handle:
        rows = list(csv.reader(handle, delimiter=";"))[:count]
    return [row[0] + row[1] + row[2] for row in rows if check_digits(row[0] + row[1]) == row[2]]


def test_store_answers_as_the_index_does(
    from_store: Server, from_index: Server, make_key: MakeKey
) -> None:
    key = make_key()
    numbers = _sample_numbers(40)
    with (
        from_store.client(headers=key.headers) as mine,
        from_index.client(headers=key.headers) as es,
    ):
        for number in numbers:
            stored, indexed = mine.get(f"/v1/cnpj/{number}"), es.get(f"/v1/cnpj/{number}")
            assert stored.status_code == indexed.status_code == 200
            assert stored.json() == indexed.json()
        missing = "11222333000181"
        assert mine.get(f"/v1/cnpj/{missing}").status_code == 404
        answer = mine.post("/v1/cnpj/lote", json=[*numbers[:10], missing])
        assert answer.json() == es.post("/v1/cnpj/lote", json=[*numbers[:10], missing]).json()
        batch = msgspec.json.decode(answer.content, type=Lote)  # the documented answer
        assert [item.status for item in batch.data] == ["encontrado"] * 10 + ["nao_encontrado"]
        assert [item.empresa.cnpj for item in batch.data if item.empresa] == numbers[:10]


def test_lookups_keep_answering_while_elasticsearch_is_frozen(
    from_store: Server, make_key: MakeKey
) -> None:
    number = _sample_numbers(5)[0]
    pid = int(subprocess.run([*SERVICES, "pid", "elasticsearch"], capture_output=True,
                             text=True, check=True).stdout.strip())  # fmt: skip
    with from_store.client(headers=make_key().headers, timeout=30) as client:
        assert client.get(f"/v1/cnpj/{number}").status_code == 200
        os.kill(pid, signal.SIGSTOP)
        try:
            for _ in range(5):
                started = time.monotonic()
                assert client.get(f"/v1/cnpj/{number}").status_code == 200
                assert time.monotonic() - started < 1
            assert client.post("/v1/cnpj/lote", json=[number]).status_code == 200
        finally:
            os.kill(pid, signal.SIGCONT)


def test_new_release_and_rollback_served_within_a_second(
    from_store: Server,
    stored_alias: str,
    store: Path,
    load: Loader,
    make_key: MakeKey,
    tmp_path: Path,
) -> None:
    number = _sample_numbers(5)[0]
    changed = tmp_path / "release"
    shutil.copytree(SAMPLE, changed)
    path = changed / "ESTABELE.csv"
    with path.open(encoding="latin-1", newline="") as handle:
        rows = list(csv.reader(handle, delimiter=";"))
    for row in rows:
        if row[0] + row[1] + row[2] == number:
            row[4] = "NOVO NOME DE TESTE"
    with path.open("w", encoding="latin-1", newline="") as handle:
        csv.writer(handle, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
            rows
        )
    before = records.pointer_path(store, stored_alias).read_text()
    with from_store.client(headers=make_key().headers) as client:
        old_name = client.get(f"/v1/cnpj/{number}").json()["nome_fantasia"]
        report = load(changed, stored_alias, records_dir=store)
        swapped = time.monotonic()
        while client.get(f"/v1/cnpj/{number}").json()["nome_fantasia"] != "NOVO NOME DE TESTE":
            assert time.monotonic() - swapped < 2.5, "the new release within a second or so"
            time.sleep(0.05)
        env = {**os.environ, "RECORDS_DIR": str(store)}
        done = subprocess.run([str(INDEXER), "rollback", "--alias", stored_alias], env=env,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert records.pointer_path(store, stored_alias).read_text() == before
        rolled = time.monotonic()
        while client.get(f"/v1/cnpj/{number}").json()["nome_fantasia"] != old_name:
            assert time.monotonic() - rolled < 2.5
            time.sleep(0.05)
    third = load(SAMPLE, stored_alias, records_dir=store)
    dropped = subprocess.run([str(INDEXER), "drop", "--keep", "1", "--alias", stored_alias],
                             env=env, capture_output=True, text=True)  # fmt: skip
    assert dropped.returncode == 0, dropped.stderr
    for gone in (before, report.index):
        assert gone in dropped.stdout + dropped.stderr
        assert not records.store_path(store, gone).exists()
    assert records.store_path(store, third.index).exists()
    assert records.pointer_path(store, stored_alias).read_text() == third.index


def _values(path: Path) -> dict[bytes, bytes]:
    env = lmdb.open(str(path), subdir=False, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            return {bytes(key): bytes(value) for key, value in txn.cursor()}
    finally:
        env.close()


def test_store_values_compressed_with_the_releases_own_dictionary(
    stored_alias: str, store: Path
) -> None:
    index = records.pointer_path(store, stored_alias).read_text()
    values = _values(records.store_path(store, index))
    dictionary = values.pop(DICTIONARY_KEY)
    numbers = _sample_numbers(40)
    assert {number.encode() for number in numbers} <= values.keys()
    inflate = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(dictionary))
    plain = 0
    for key, value in values.items():
        assert value.startswith(ZSTD_FRAME)
        record = unpack(key.decode(), inflate.decompress(value))
        company = json.loads(record.body)
        assert company["cnpj"] == record.cnpj == key.decode()
        assert (record.hash, record.data_referencia) == (
            company["hash"],
            company["data_referencia"],
        )
        plain += len(record.body)
    packed = sum(map(len, values.values()))
    assert packed * 3 < plain, (packed, plain)


def _live_records(store: Path, alias: str) -> dict[str, bytes]:
    """The records of the alias's live store by CNPJ, as lookups answer them."""
    values = _values(records.store_path(store, records.pointer_path(store, alias).read_text()))
    inflate = zstandard.ZstdDecompressor(
        dict_data=zstandard.ZstdCompressionDict(values.pop(DICTIONARY_KEY))
    )
    return {k.decode(): unpack(k.decode(), inflate.decompress(v)).body for k, v in values.items()}


@pytest.mark.parametrize("form", ["json", "no-dictionary"])
def test_store_of_plain_json_or_without_dictionary_still_read(
    stored_alias: str, store: Path, tmp_path: Path, form: str
) -> None:
    """A store written before compression and packing (the indexed document's JSON itself)
    and one too small to train a dictionary (plain Zstandard frames) answer the same records as
    the release's store."""
    documents = _live_records(store, stored_alias)
    assert records.train(list(documents.values())[:10]) is None
    if form == "json":
        env = records.open_writer(tmp_path, "antigo")
        with env.begin(write=True) as txn:
            for number, document in documents.items():
                txn.put(number.encode(), document)
        env.close()
    else:
        writer = records.Writer(tmp_path, "antigo", None)
        writer.write(documents.items())
        writer.close()
    records.publish(tmp_path, "empresas", "antigo")
    numbers = _sample_numbers(40)
    old, live = RecordStore(tmp_path, "empresas"), RecordStore(store, stored_alias)
    try:
        assert old.records(numbers) == live.records(numbers)
        assert len(old.records(numbers) or []) == len(numbers)
        assert old.records(["11222333000181"]) == []
        summaries = old.summaries("antigo", numbers)
        assert summaries == live.summaries(live.live_index() or "", numbers)
        assert [item.cnpj for item in summaries or []] == numbers
        assert old.summaries("antigo", [*numbers, "11222333000181"]) is None
        assert old.summaries("outro", numbers) is None
    finally:
        old.close()
        live.close()


SEARCHES = [
    "/v1/search?q=comercio&limit=4",
    "/v1/seek?uf=SP&limit=6&facets=uf,situacao",
    "/v1/seek?situacao=ativa&com_email=true&limit=5",
    "/v1/nome?nome=servicos&limit=3",
]
"""Searches by name and of filters alone, with facets: each pages several times."""


def _pages(client: httpx.Client, path: str, count: int = 3) -> list[dict[str, Any]]:
    """The first `count` pages of `path`, following the cursors (which are left out: each
    server seals its own)."""
    pages, url = [], path
    for _ in range(count):
        answer = client.get(url)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        cursor = page.pop("next_cursor", None)
        pages.append(page)
        if not cursor:
            break
        url = f"{path}&cursor={cursor}"
    return pages


def test_search_pages_from_the_store_as_from_the_index(
    from_store: Server, from_index: Server, make_key: MakeKey
) -> None:
    """A list's companies come from the store (Elasticsearch only finds and sorts them): every
    page, score, total, facet and cursor as a server without a store answers."""
    key = make_key()
    with (
        from_store.client(headers=key.headers) as mine,
        from_index.client(headers=key.headers) as es,
    ):
        for path in SEARCHES:
            pages = _pages(mine, path)
            assert pages == _pages(es, path), path
            assert len(pages) > 1, path
            assert all(page["data"] for page in pages), path


def test_search_reads_the_store_of_its_release_only(
    stored_alias: str, store: Path, tmp_path: Path, make_key: MakeKey
) -> None:
    """A store written for the release that answered gives the lists their companies (a name
    changed in it shows); a store of another release, or one missing a company of the page,
    does not: the page reads Elasticsearch."""
    release = records.pointer_path(store, stored_alias).read_text()
    documents = _live_records(store, stored_alias)
    path = "/v1/seek?uf=SP&limit=5"

    def write(name: str, changed: str, missing: str | None = None) -> None:
        edited = dict(documents)
        company = json.loads(edited[changed])
        company["razao_social"] = "LIDA DO ARQUIVO DE REGISTROS"
        edited[changed] = json.dumps(company).encode()
        if missing:
            del edited[missing]
        writer = records.Writer(tmp_path / name, release, None)
        writer.write(edited.items())
        writer.close()

    def names(client: httpx.Client) -> list[str]:
        return [item["razao_social"] for item in client.get(path).json()["data"]]

    key = make_key()
    with (
        serving(stored_alias, env={"RECORDS_DIR": str(store)}) as server,
        server.client(headers=key.headers) as client,
    ):
        indexed = client.get(path).json()["data"]
    first, second = indexed[0]["cnpj"], indexed[1]["cnpj"]
    write("alterado", first)
    write("incompleto", first, missing=second)
    records.publish(tmp_path / "alterado", stored_alias, release)
    records.publish(tmp_path / "incompleto", stored_alias, release)
    expected = [item["razao_social"] for item in indexed]
    with (
        serving(stored_alias, env={"RECORDS_DIR": str(tmp_path / "alterado")}) as server,
        server.client(headers=key.headers) as client,
    ):
        assert names(client) == ["LIDA DO ARQUIVO DE REGISTROS", *expected[1:]]
        other = tmp_path / "alterado" / "outra.lmdb"
        shutil.copy(records.store_path(tmp_path / "alterado", release), other)
        records.publish(tmp_path / "alterado", stored_alias, "outra")
        switched = time.monotonic()
        while names(client) != expected:
            assert time.monotonic() - switched < 2.5, "another release's store is not read"
            time.sleep(0.05)
    with (
        serving(stored_alias, env={"RECORDS_DIR": str(tmp_path / "incompleto")}) as server,
        server.client(headers=key.headers) as client,
    ):
        assert names(client) == expected


def _mapped(path: Path) -> bool:
    """Whether this process maps `path` (its memory map lists the file)."""
    return str(path) in Path("/proc/self/maps").read_text()


def test_writer_unmaps_the_store_between_buckets(
    stored_alias: str, store: Path, tmp_path: Path
) -> None:
    """A builder maps the store while it writes a bucket and not after (`Writer.release`), so
    the pages it read stay out of its resident memory; the next bucket maps it again, and
    everything written is in the store, as the release's own store holds it."""
    documents = _live_records(store, stored_alias)
    numbers = sorted(documents)
    half = len(numbers) // 2
    writer = records.Writer(tmp_path, "rel", None)
    path = records.store_path(tmp_path, "rel")
    assert not _mapped(path)
    writer.write((n, documents[n]) for n in numbers[:half])
    assert _mapped(path)
    writer.release()
    assert not _mapped(path)
    writer.write((n, documents[n]) for n in numbers[half:])
    assert _mapped(path)
    writer.close()
    assert not _mapped(path)
    written = _values(path)
    assert sorted(written) == [n.encode() for n in numbers]
    plain = zstandard.ZstdDecompressor()
    for number in numbers[:: max(1, len(numbers) // 50)]:
        stored = unpack(number, plain.decompress(written[number.encode()]))
        assert stored.body == documents[number]
