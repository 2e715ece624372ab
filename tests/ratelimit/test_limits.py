"""Rate limits: exact under concurrency across processes, per IP without a token, refused
calls per IP, headers, and failing closed when Redis is down."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
from redis.asyncio import Redis

from app.ratelimit.limiter import RateLimiter, account_bucket
from app.settings import Settings, get_settings
from tests.conftest import Issued, MakeKey, Server, another_key
from tests.loopback import free_port

VALIDATE = "/v1/cnpj/validar/11222333000181"


async def _burst(url: str, headers: dict[str, str], clients: int) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30) as c:
        return await asyncio.gather(*(c.get(VALIDATE) for _ in range(clients)))


def test_starter_key_fifty_clients_two_processes_exactly_three(
    api_server: Server, make_key: MakeKey
) -> None:
    key = make_key(plano="starter")
    started = time.time()
    responses = asyncio.run(_burst(api_server.url, key.headers, 50))
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 3, 429: 47}
    for response in responses:
        assert response.headers["X-RateLimit-Limit"] == "3"
        reset = int(response.headers["X-RateLimit-Reset"])
        assert started + 59 <= reset <= time.time() + 61
    for response in (r for r in responses if r.status_code == 429):
        assert response.json()["error"] == "Too Many Requests"
        assert response.headers["X-RateLimit-Remaining"] == "0"
        # Whatever the burst took on a busy machine: the first admitted entry leaves the window
        # 60 s after it entered, and the answer says how long is left of that.
        waited = time.time() - started
        assert 60 - waited - 1 <= int(response.headers["Retry-After"]) <= 60
    remaining = sorted(r.headers["X-RateLimit-Remaining"] for r in responses if r.is_success)
    assert remaining == ["0", "1", "2"]
    # After the window the key is served again. Rather than sleep a minute, the window's
    # entries are aged by 60 s in Redis, as the passing of time would.
    asyncio.run(_age(f"{api_server.redis_prefix}rl:{account_bucket(key.conta_id)}", 60))
    with api_server.client(headers=key.headers) as client:
        resumed = client.get(VALIDATE)
    assert resumed.status_code == 200
    assert resumed.headers["X-RateLimit-Remaining"] == "2"


async def _age(bucket: str, seconds: int) -> None:
    redis = Redis.from_url(get_settings().redis_url)
    try:
        entries = await redis.zrange(bucket, 0, -1, withscores=True)
        assert len(entries) == 3
        await redis.zadd(bucket, {member: score - seconds * 1e6 for member, score in entries})
    finally:
        await redis.aclose()


def test_window_frees_after_its_length_exact() -> None:
    """The same script as the HTTP path, with a 2-second window so the wait stays short."""

    async def scenario() -> list[bool]:
        redis = Redis.from_url(get_settings().redis_url)
        limiter = RateLimiter(redis, f"test-{uuid.uuid4().hex[:8]}:")
        try:
            first = await asyncio.gather(*(limiter.hit("b", 3, window=2) for _ in range(20)))
            refused = next(d for d in first if not d.admitted)
            assert 1 <= refused.retry_after <= 2
            await asyncio.sleep(refused.retry_after + 0.05)
            after = await limiter.hit("b", 3, window=2)
            return [d.admitted for d in first] + [after.admitted]
        finally:
            await redis.aclose()

    admitted = asyncio.run(scenario())
    assert admitted[:-1].count(True) == 3
    assert admitted[-1] is True


def test_hits_sent_together_count_exactly_after_redis_forgot_the_script() -> None:
    """Hits that arrive together go to Redis as one pipeline; when Redis has lost the script
    (a restart, `SCRIPT FLUSH`), the batch is sent again with the script's text, once."""

    async def scenario() -> tuple[list[bool], list[bool]]:
        redis = Redis.from_url(get_settings().redis_url)
        limiter = RateLimiter(redis, f"test-{uuid.uuid4().hex[:8]}:")
        try:
            await redis.script_flush()
            first = await asyncio.gather(*(limiter.hit("a", 5) for _ in range(12)))
            other = await asyncio.gather(*(limiter.hit(f"c{i % 3}", 2) for i in range(9)))
            return [d.admitted for d in first], [d.admitted for d in other]
        finally:
            await redis.aclose()

    first, other = asyncio.run(scenario())
    assert first.count(True) == 5
    assert first[:5] == [True] * 5, "the batch keeps the order the requests came in"
    assert other.count(True) == 6, "each bucket of the batch counted on its own"


def test_anonymous_ip_three_per_minute(api_server: Server) -> None:
    with api_server.client("127.0.0.3", headers={}) as client:
        statuses = [client.get(path).status_code for path in
                    (VALIDATE, "/v1/cnpj/33683111000280", "/cnpj/validar/1", VALIDATE)]  # fmt: skip
        assert statuses == [200, 200, 200, 429]
        refused = client.get("/cnpj/33683111000280")
        assert refused.status_code == 429
        assert refused.headers["X-RateLimit-Limit"] == "3"
        assert int(refused.headers["Retry-After"]) >= 1
        assert client.get("/v1/status").status_code == 200  # open routes stay open
        assert client.get("/v1/search", params={"q": "x"}).status_code == 401
    with api_server.client("127.0.0.4", headers={}) as other:  # another address, own window
        assert other.get(VALIDATE).status_code == 200


def test_limit_headers_on_errors_after_the_check(api: httpx.Client) -> None:
    for method, path, status in (("GET", "/v1/cnpj/123", 400),
                                 ("GET", "/v1/cnpj/11222333000181", 404),
                                 ("DELETE", "/v1/me/chaves/deadbeef", 404)):  # fmt: skip
        response = api.request(method, path)
        assert response.status_code == status
        for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            assert name in response.headers, (path, name)


@pytest.fixture(scope="module")
def redis_down(peer_alias: str) -> Iterator[Server]:
    server = Server(peer_alias, workers=1, env={"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    yield server
    assert "Traceback" not in server.stop()


def test_redis_down_fails_closed_503(redis_down: Server, make_key: MakeKey) -> None:
    status = httpx.get(f"{redis_down.url}/v1/status", timeout=10)
    assert status.status_code == 503
    assert status.json()["dependencies"]["redis"]["status"] == "down"
    for headers in (make_key().headers, {}):  # with a key, and anonymous
        with redis_down.client(headers=headers) as client:
            response = client.get(VALIDATE)
        assert response.status_code == 503
        assert response.json()["error"] == "Service Unavailable"
        assert int(response.headers["Retry-After"]) > 0


@pytest.fixture(scope="module")
def postgres_down(peer_alias: str) -> Iterator[Server]:
    closed = f"postgresql://registry:registry@127.0.0.1:{free_port()}/registry"
    server = Server(
        peer_alias,
        workers=1,
        env={"DATABASE_URL": closed, "REQUEST_TIMEOUT": "1", "HEALTH_TIMEOUT": "0.5"},
    )
    yield server
    server.stop()


def test_postgres_down_keyed_calls_503_anonymous_served(
    postgres_down: Server, make_key: MakeKey
) -> None:
    with postgres_down.client(headers=make_key().headers) as client:
        response = client.get(VALIDATE)
        assert response.status_code == 503
        assert response.json()["error"] == "Service Unavailable"
        assert int(response.headers["Retry-After"]) > 0
    with postgres_down.client(headers={}) as anonymous:
        assert anonymous.get(VALIDATE).status_code == 200


@pytest.fixture(scope="module")
def default_refusals(peer_alias: str) -> Iterator[Server]:
    server = Server(peer_alias, workers=2, env={"REFUSED_LIMIT": str(Settings().refused_limit)})
    yield server
    assert "Traceback" not in server.stop()


def test_refused_calls_limited_per_address_valid_keys_unaffected(
    default_refusals: Server, make_key: MakeKey
) -> None:
    limit = Settings().refused_limit
    wrong = {"Authorization": "Bearer cnpj_00000000_" + "x" * 43}
    with default_refusals.client("127.0.0.5", headers=wrong) as client:
        calls = [client.get(VALIDATE) for _ in range(limit)]
        assert [c.status_code for c in calls] == [401] * limit
        assert [c.headers["X-RateLimit-Remaining"] for c in calls] == [
            str(limit - n) for n in range(1, limit + 1)
        ]
        assert all(c.headers["X-RateLimit-Limit"] == str(limit) for c in calls)
        # the window is full: wrong, missing and misplaced keys all wait now
        for headers, params in ((wrong, {}), ({}, {}), ({}, {"api_key": "abc"})):
            refused = client.get("/v1/search", headers=headers, params={"q": "x", **params})
            assert refused.status_code == 429
            assert refused.json()["error"] == "Too Many Requests"
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
        # a valid key from the same address is served
        assert client.get(VALIDATE, headers=make_key().headers).status_code == 200
    with default_refusals.client("127.0.0.6", headers=wrong) as other:  # its own window
        assert other.get(VALIDATE).status_code == 401


def test_plan_window_belongs_to_account_not_key(api_server: Server, make_key: MakeKey) -> None:
    """Keys of one account share one window: a second key is not a second quota."""
    first = make_key(plano="starter")
    second = another_key(first)
    with api_server.client(headers={}) as client:

        def call(key: Issued) -> httpx.Response:
            return client.get(VALIDATE, headers=key.headers)

        statuses = [call(key).status_code for key in (first, second, second, first, second)]
        assert statuses == [200, 200, 200, 429, 429]
        refused = call(second)
        assert refused.headers["X-RateLimit-Remaining"] == "0"
        assert int(refused.headers["Retry-After"]) >= 1
        assert call(make_key(plano="starter")).status_code == 200  # another account


def test_batch_counts_one_per_item(api_server: Server, make_key: MakeKey) -> None:
    key = make_key(plano="basic")  # 20 a minute
    batch = [f"{n:08d}000191" for n in range(5)]
    with api_server.client(headers=key.headers) as client:
        five = client.post("/v1/cnpj/lote", json=batch)
        assert five.status_code == 200
        assert five.headers["X-RateLimit-Cost"] == "5"
        assert five.headers["X-RateLimit-Remaining"] == "15"
        one = client.get(VALIDATE)
        assert one.headers["X-RateLimit-Cost"] == "1"
        assert one.headers["X-RateLimit-Remaining"] == "14"
        too_many = client.post("/v1/cnpj/lote", json=[f"{n:08d}000191" for n in range(15)])
        assert too_many.status_code == 429
        assert int(too_many.headers["Retry-After"]) >= 1
        # The refused batch still counts as the one request it was (13 left), then this one.
        assert client.get(VALIDATE).headers["X-RateLimit-Remaining"] == "12"
        larger_than_plan = client.post("/v1/cnpj/lote", json=[f"{n:08d}000191" for n in range(21)])
        assert larger_than_plan.status_code == 403
        assert larger_than_plan.json()["details"] == {"unidades": 21, "limite_por_minuto": 20}


def test_batch_over_window_refused_in_window_of_other_keys(
    api_server: Server, make_key: MakeKey
) -> None:
    """A batch drawn on one key empties the account's window for its other keys."""
    first = make_key(plano="starter")
    second = another_key(first)
    with api_server.client(headers=first.headers) as client:
        assert client.post("/v1/cnpj/lote", json=["33683111000280", "123", "1"]).status_code == 200
        assert client.get(VALIDATE, headers=second.headers).status_code == 429
