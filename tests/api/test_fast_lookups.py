"""The fast lane of `GET /v1/cnpj/{cnpj}` (`app.lookup.fast`) against the same release served
with the lane off (`FAST_LOOKUPS=false`): the same status, body and headers for every kind of
call, the lane answering the common case (counted in `/v1/status`), the same refusals and the
same audit rows."""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from app.domain.cnpj import check_digits
from tests.conftest import SAMPLE, Loader, MakeKey, Server, serving

VARYING = {"date", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"}
"""Headers whose values depend on the moment and the window's state, not on the path taken."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("registros")


@pytest.fixture(scope="module")
def alias(load: Loader, new_alias: Callable[[], str], store: Path) -> str:
    alias = new_alias()
    load(SAMPLE, alias, records_dir=store)
    return alias


@pytest.fixture(scope="module")
def fast(alias: str, store: Path) -> Iterator[Server]:
    with serving(alias, workers=1, env={"RECORDS_DIR": str(store)}) as server:
        yield server


@pytest.fixture(scope="module")
def framework(alias: str, store: Path) -> Iterator[Server]:
    env = {"RECORDS_DIR": str(store), "FAST_LOOKUPS": "false"}
    with serving(alias, workers=1, env=env) as server:
        yield server


def _numbers(count: int) -> list[str]:
    with (SAMPLE / "ESTABELE.csv").open(encoding="latin-1", newline="") as handle:
        rows = list(csv.reader(handle, delimiter=";"))[:count]
    return [row[0] + row[1] + row[2] for row in rows if check_digits(row[0] + row[1]) == row[2]]


def _answered(server: Server) -> int | None:
    found: int | None = (
        httpx.get(f"{server.url}/v1/status", timeout=10).json().get("consultas_rapidas")
    )
    return found


def _same(mine: httpx.Response, theirs: httpx.Response) -> None:
    assert mine.status_code == theirs.status_code, (mine.text, theirs.text)
    assert mine.content == theirs.content
    assert [(k, v) for k, v in mine.headers.multi_items() if k not in VARYING] == [
        (k, v) for k, v in theirs.headers.multi_items() if k not in VARYING
    ]
    assert set(mine.headers) == set(theirs.headers)


def test_lane_answers_every_kind_of_lookup_as_the_framework_does(
    fast: Server, framework: Server, make_key: MakeKey
) -> None:
    numbers = _numbers(30)
    formatted = f"{numbers[0][:2]}.{numbers[0][2:5]}.{numbers[0][5:8]}/{numbers[0][8:12]}-"
    formatted += numbers[0][12:]
    paths = [
        *(f"/v1/cnpj/{n}" for n in numbers[:20]),
        *(f"/cnpj/{n}" for n in numbers[20:]),
        f"/v1/cnpj/{formatted}",
        "/v1/cnpj/11222333000181",  # valid digits, not in the release: 404
        "/v1/cnpj/11222333000182",  # bad check digits: 400
        "/v1/cnpj/1122233300018A",
        f"/v1/cnpj/{numbers[1]}?campos=x",  # unknown parameter: 400
        "/v1/cnpj/123",
    ]
    key = make_key()
    with fast.client(headers=key.headers) as mine, framework.client(headers=key.headers) as theirs:
        for _ in range(2):  # the process sees the credentials' epoch, then caches the key
            assert mine.get(f"/v1/cnpj/validar/{numbers[0]}").status_code == 200
        before = _answered(fast)
        for path in paths:
            _same(mine.get(path), theirs.get(path))
        answer = mine.get(f"/v1/cnpj/{numbers[0]}")
        tag = {"If-None-Match": answer.headers["etag"]}
        path = f"/v1/cnpj/{numbers[0]}"
        _same(mine.get(path, headers=tag), theirs.get(path, headers=tag))
        after = _answered(fast)
    assert before is not None
    assert after is not None
    # Every canonical lookup was the lane's (the records, the 304 and the 404 of a CNPJ the
    # release lacks); the others the app's.
    assert after - before == len(numbers) + 2 + 1
    assert _answered(framework) is None
    with fast.client(headers={}) as mine, framework.client(headers={}) as theirs:
        for number in numbers[:3]:  # anonymous: the public part, 3 a minute per address
            _same(mine.get(f"/v1/cnpj/{number}"), theirs.get(f"/v1/cnpj/{number}"))
        refused = mine.get(f"/v1/cnpj/{numbers[3]}")
        _same(refused, theirs.get(f"/v1/cnpj/{numbers[3]}"))
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0


def test_lane_refuses_a_full_window_and_audits_as_the_route_does(
    fast: Server, framework: Server, make_key: MakeKey, database: str
) -> None:
    numbers = _numbers(12)
    answers: dict[str, list[httpx.Response]] = {}
    rows: dict[str, list[tuple[str, str, str, str | None, int, int]]] = {}
    for name, server in (("fast", fast), ("framework", framework)):
        key = make_key(plano="starter")  # 3 a minute
        with server.client(headers=key.headers) as client:
            answers[name] = [client.get(f"/v1/cnpj/{n}") for n in numbers[:5]]
        rows[name] = asyncio.run(_rows(database, key.key_id))
    for mine, theirs in zip(answers["fast"], answers["framework"], strict=True):
        _same(mine, theirs)
    assert [a.status_code for a in answers["fast"]] == [200, 200, 200, 429, 429]
    expected = [
        ("GET", "/v1/cnpj/{cnpj}", f"/v1/cnpj/{n}", "consultar_cnpj", 200, 1) for n in numbers[:3]
    ] + [("GET", "/v1/cnpj/{cnpj}", f"/v1/cnpj/{n}", None, 429, 1) for n in numbers[3:5]]
    assert rows["fast"] == rows["framework"] == expected


async def _rows(database: str, key_id: str) -> list[tuple[str, str, str, str | None, int, int]]:
    """The key's audit rows, oldest first, once the writer has stored all five."""
    for _ in range(50):
        async with await psycopg.AsyncConnection.connect(database) as conn:
            cursor = await conn.execute(
                "SELECT metodo, rota, caminho, operacao, status, unidades FROM auditoria "
                "WHERE chave_id = %s ORDER BY id",
                (key_id,),
            )
            rows = await cursor.fetchall()
        if len(rows) == 5:
            return rows
        await asyncio.sleep(0.1)
    raise AssertionError(f"{len(rows)} audit rows")


def test_lane_refuses_a_revoked_key_and_a_new_allowlist_at_once(
    fast: Server, make_key: MakeKey
) -> None:
    """A key the lane serves from the credential cache is refused on its next lookup once it is
    revoked, or once its allowlist leaves the caller out."""
    number = _numbers(1)[0]
    owner = make_key()
    with fast.client(headers=owner.headers) as client:
        keys = [client.post("/v1/me/chaves", json={"rotulo": r}).json() for r in ("a", "b")]
        for new in keys:
            headers = {"Authorization": f"Bearer {new['api_key']}"}
            for _ in range(3):  # cached by the process
                assert client.get(f"/v1/cnpj/{number}", headers=headers).status_code == 200
        before = _answered(fast)
        revoked, fenced = keys
        assert client.delete(f"/v1/me/chaves/{revoked['chave']['id']}").status_code == 204
        changed = client.put(
            f"/v1/me/chaves/{fenced['chave']['id']}/allowlist", json={"allowlist": ["10.0.0.0/8"]}
        )
        assert changed.status_code == 200
        refused = client.get(
            f"/v1/cnpj/{number}", headers={"Authorization": f"Bearer {revoked['api_key']}"}
        )
        assert refused.status_code == 401
        assert refused.json()["message"] == "Token inválido ou expirado."
        outside = client.get(
            f"/v1/cnpj/{number}", headers={"Authorization": f"Bearer {fenced['api_key']}"}
        )
        assert outside.status_code == 403
        assert _answered(fast) == before


def test_head_answers_the_get_headers_without_the_body(
    fast: Server, framework: Server, make_key: MakeKey
) -> None:
    """HEAD is the GET without its body (RFC 9110), through the lane and through the routes."""
    number = _numbers(1)[0]
    key = make_key()
    for server in (fast, framework):
        with server.client(headers=key.headers) as client:
            for path in (f"/v1/cnpj/{number}", "/v1/cnpj/11222333000181", "/v1/cnpj/validar/1",
                         f"/v1/socios/{number}", "/v1/search?q=padaria"):  # fmt: skip
                got, head = client.get(path), client.head(path)
                assert head.status_code == got.status_code, (path, head.status_code)
                assert head.content == b""
                assert head.headers["content-length"] == str(len(got.content))
                assert head.headers["content-type"] == got.headers["content-type"]
                assert head.headers.get("etag") == got.headers.get("etag")
        with server.client(headers={}) as anonymous:
            assert anonymous.head("/health").status_code == 200
