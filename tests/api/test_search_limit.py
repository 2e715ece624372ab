"""The adaptive search limit (`app.lib.shedding.SearchLimit`): cut while searches are slow, at
most once per cool-down and never below its floor, raised back to its ceiling once they are
fast again; and the middleware admitting searches by it while lookups keep their own room."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.lib.shedding import COOL_DOWN, CUT, FLOOR, SearchLimit, Shedding


def test_fast_searches_keep_the_ceiling() -> None:
    limit = SearchLimit(16, target=0.075)
    for step in range(1_000):
        limit.answered(0.010, now=step * 0.01)
    assert limit.value == 16
    assert limit.admits(15)
    assert not limit.admits(16)


def test_slow_searches_cut_once_per_cool_down_down_to_the_floor() -> None:
    limit = SearchLimit(16, target=0.075)
    now = 100.0
    for _ in range(50):  # a burst of slow answers within one cool-down: the average rises
        limit.answered(0.5, now)
    assert limit.value == 16 * CUT, "one cut for one burst"
    for _ in range(40):
        now += COOL_DOWN
        limit.answered(0.5, now)
    assert limit.value == FLOOR
    assert limit.admits(FLOOR - 1)
    assert not limit.admits(FLOOR)


def test_the_limit_recovers_once_searches_are_fast_again() -> None:
    limit = SearchLimit(16, target=0.075)
    now = 0.0
    for _ in range(40):
        now += COOL_DOWN
        limit.answered(1.0, now)
    assert limit.value == FLOOR
    recovered_after = None
    for answered in range(1, 1_000):
        now += 0.01
        limit.answered(0.005, now)
        if limit.value == 16:
            recovered_after = answered
            break
    # The average falls back under the target within a few dozen answers, then each answer
    # adds 1 / limit: about 16 ** 2 / 2 answers from the floor to the ceiling.
    assert recovered_after is not None
    assert recovered_after < 300, recovered_after


@pytest.mark.parametrize("target", [0.0, -0.05])
def test_a_target_of_zero_or_less_keeps_the_limit_fixed(target: float) -> None:
    limit = SearchLimit(16, target=target)
    for step in range(100):
        limit.answered(5.0, now=step * 1.0)
        limit.answered(0.001, now=step * 1.0 + 0.5)
    assert limit.value == 16


def test_a_ceiling_under_the_floor_is_its_own_floor() -> None:
    limit = SearchLimit(1, target=0.075)
    for step in range(10):
        limit.answered(1.0, now=step * 1.0)
    assert limit.value == 1
    assert limit.admits(0)


class _Slow:
    """An ASGI app whose searches take `seconds` and whose other routes answer at once;
    records the most searches it ever held at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.searching = 0
        self.most = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        search = scope["path"].startswith("/v1/search")
        if search:
            self.searching += 1
            self.most = max(self.most, self.searching)
            await asyncio.sleep(self.seconds)
            self.searching -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})


async def _call(app: Shedding, path: str) -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "path": path, "method": "GET", "headers": []}, receive, send)
    return int(sent[0]["status"])


def test_an_overload_of_slow_searches_is_held_at_the_floor_while_lookups_pass() -> None:
    inner = _Slow(seconds=0.05)
    app = Shedding(inner, limit=100, searches=16, target=0.01)

    async def scenario() -> tuple[list[int], list[int], int]:
        first = await asyncio.gather(*(_call(app, "/v1/search") for _ in range(40)))
        for _ in range(8):  # waves of slow answers, one cool-down apart, cut the limit
            await asyncio.gather(*(_call(app, "/v1/search") for _ in range(40)))
            await asyncio.sleep(COOL_DOWN)
        inner.most = 0
        late = asyncio.gather(*(_call(app, "/v1/search") for _ in range(40)))
        lookups = await asyncio.gather(*(_call(app, "/v1/cnpj/1") for _ in range(40)))
        return first, [*await late, *lookups], inner.most

    first, later, most = asyncio.run(scenario())
    assert first.count(200) == 16, "the ceiling at first"
    assert first.count(503) == 24
    assert most == FLOOR, f"slow searches held at the floor, not {most}"
    assert later[:40].count(200) == FLOOR
    assert later[:40].count(503) == 40 - FLOOR
    assert later[40:] == [200] * 40, "lookups are not searches: none refused"
