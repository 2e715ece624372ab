"""Keys per account are capped, and concurrent creations cannot pass the cap together."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx

from app.accounts.service import MAX_ACTIVE_KEYS
from tests.conftest import MakeKey, Server

KEYS = "/v1/me/chaves"


async def _create(url: str, headers: dict[str, str], count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:
        return await asyncio.gather(
            *(client.post(KEYS, json={"rotulo": f"k{n}"}) for n in range(count))
        )


def test_key_cap_concurrent_creations_stop_exactly_at_cap(
    api_server: Server, make_key: MakeKey
) -> None:
    owner = make_key()
    responses = asyncio.run(_create(api_server.url, owner.headers, MAX_ACTIVE_KEYS + 10))
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {201: MAX_ACTIVE_KEYS - 1, 409: 11}
    refused = next(r for r in responses if r.status_code == 409)
    assert refused.json()["error"] == "Conflict"
    assert refused.json()["details"] == {"maximo": MAX_ACTIVE_KEYS}
    with api_server.client(headers=owner.headers) as client:
        listed = client.get(KEYS).json()["data"]
        assert len(listed) == MAX_ACTIVE_KEYS
        victim = next(k["id"] for k in listed if k["id"] != owner.key_id)
        assert client.delete(f"{KEYS}/{victim}").status_code == 204
        assert client.post(KEYS, json={"rotulo": "depois"}).status_code == 201  # a freed slot
        assert client.post(KEYS, json={"rotulo": "demais"}).status_code == 409
