"""The caller's address: the TCP peer unless `TRUSTED_PROXIES` names the proxy; normalised
(zone ids, IPv4-mapped IPv6); IPv6 callers counted per /64."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.auth.address import client_address, normalise, parse_networks, window_key
from app.settings import Settings
from tests.conftest import Issued, MakeKey, Server, serving

VALIDATE = "/v1/cnpj/validar/11222333000181"
AUDIT = "/v1/admin/auditoria"
FORGED = "198.51.100.23"


def _scope(peer: str, *forwarded: str) -> dict[str, Any]:
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    return {"client": (peer, 50000), "headers": headers}


def test_client_address_untrusted_peer_ignores_forwarded_for() -> None:
    assert str(client_address(_scope("127.0.0.1", FORGED))) == "127.0.0.1"
    assert str(client_address(_scope("127.0.0.1", FORGED), ())) == "127.0.0.1"
    proxies = parse_networks("10.0.0.0/8")
    assert str(client_address(_scope("127.0.0.1", FORGED), proxies)) == "127.0.0.1"


def test_client_address_trusted_proxy_takes_rightmost_untrusted_hop() -> None:
    proxies = parse_networks("127.0.0.1, 10.0.0.0/8")
    # The client wrote the left part; the proxies appended what they saw.
    scope = _scope("127.0.0.1", f"{FORGED}, 203.0.113.7, 10.1.2.3")
    assert str(client_address(scope, proxies)) == "203.0.113.7"
    assert str(client_address(_scope("127.0.0.1", "10.0.0.1", "203.0.113.9"), proxies)) == (
        "203.0.113.9"
    )
    assert str(client_address(_scope("127.0.0.1"), proxies)) == "127.0.0.1"
    assert str(client_address(_scope("127.0.0.1", "garbage"), proxies)) == "127.0.0.1"


def test_normalise_drops_zone_id_and_unwraps_ipv4_mapped() -> None:
    assert str(normalise("fe80::1%eth0")) == "fe80::1"
    assert str(normalise("[2001:db8::1]")) == "2001:db8::1"
    assert str(normalise("::ffff:192.0.2.1")) == "192.0.2.1"
    assert normalise("not-an-ip") is None
    assert normalise("") is None


def test_window_key_ipv6_per_64_ipv4_whole() -> None:
    assert window_key(normalise("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    assert window_key(normalise("2001:db8:1:2:ffff::9")) == "2001:db8:1:2::/64"
    assert window_key(normalise("2001:db8:1:3::1")) == "2001:db8:1:3::/64"
    assert window_key(normalise("192.0.2.1")) == "192.0.2.1"


@given(st.ip_addresses(), st.text(max_size=12))
def test_normalise_any_address_with_any_zone_is_storable(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, zone: str
) -> None:
    raw = f"{address}%{zone}" if address.version == 6 else str(address)
    found = normalise(raw)
    assert found is not None
    assert "%" not in str(found)
    assert ipaddress.ip_address(str(found)) == found


def test_parse_networks_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not an address"):
        parse_networks("127.0.0.1, proxy.example")


@pytest.fixture(scope="module")
def behind_proxy(peer_alias: str) -> Iterator[Server]:
    """A server that trusts loopback as its reverse proxy."""
    with serving(peer_alias, env={"TRUSTED_PROXIES": "127.0.0.1/32", "REFUSED_LIMIT": "10"}) as s:
        yield s


@pytest.fixture(scope="module")
def default_server(peer_alias: str) -> Iterator[Server]:
    """A server with the default settings of the caller's address and of refusals: no
    `TRUSTED_PROXIES`, the default `REFUSED_LIMIT`."""
    with serving(peer_alias, env={"REFUSED_LIMIT": str(Settings().refused_limit)}) as s:
        yield s


def _audit_ips(server: Server, admin: Issued, caller: Issued, expected: int) -> list[str]:
    deadline = time.monotonic() + 30
    with server.client(headers=admin.headers) as api:
        while True:
            rows = api.get(AUDIT, params={"chave": caller.key_id}).json()["data"]
            if len(rows) >= expected or time.monotonic() > deadline:
                return [row["ip"] for row in rows]
            time.sleep(0.1)


def test_forwarded_for_ignored_by_default_windows_allowlist_audit(
    api_server: Server, make_key: MakeKey
) -> None:
    """Without `TRUSTED_PROXIES`, `X-Forwarded-For` changes nothing: the anonymous window is
    the peer's, an allowlist sees the peer, the audit stores the peer."""
    forged = {"X-Forwarded-For": FORGED}
    with api_server.client("127.0.3.1", headers={}) as anonymous:
        statuses = [
            anonymous.get(VALIDATE, headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code
            for n in range(5)
        ]
    assert statuses == [200, 200, 200, 429, 429]
    owner, admin = make_key(), make_key(papel="admin")
    with api_server.client(headers=owner.headers) as client:
        created = client.post("/v1/me/chaves", json={"rotulo": "x", "allowlist": [FORGED]})
        limited = created.json()["api_key"]
        refused = client.get(VALIDATE, headers={"Authorization": f"Bearer {limited}", **forged})
        assert refused.status_code == 403
        assert client.get(VALIDATE, headers=forged).status_code == 200
    assert _audit_ips(api_server, admin, owner, 2) == ["127.0.0.1"] * 2


def test_forwarded_for_ignored_by_default_refusal_window(default_server: Server) -> None:
    """A forged `X-Forwarded-For` on each refused call opens no fresh 401 window: the calls
    fill the peer's window, and naming a full window's address from another peer does not
    reach it."""
    limit = Settings().refused_limit
    with default_server.client("127.0.3.2", headers={}) as guesser:
        calls = [
            guesser.get("/v1/me/chaves", headers={"X-Forwarded-For": f"198.51.100.{n}"})
            for n in range(limit + 2)
        ]
    assert [c.status_code for c in calls] == [401] * limit + [429] * 2
    assert [c.headers["X-RateLimit-Remaining"] for c in calls[:limit]] == [
        str(limit - n) for n in range(1, limit + 1)
    ]
    assert calls[-1].json()["error"] == "Too Many Requests"
    with default_server.client("127.0.3.3", headers={}) as neighbour:
        refused = neighbour.get("/v1/me/chaves", headers={"X-Forwarded-For": "127.0.3.2"})
    assert refused.status_code == 401
    assert refused.headers["X-RateLimit-Remaining"] == str(limit - 1)


def test_trusted_proxy_forwarded_address_counts_ipv6_per_64(
    behind_proxy: Server, make_key: MakeKey
) -> None:
    with behind_proxy.client(headers={}) as client:

        def status(address: str) -> int:
            return client.get(VALIDATE, headers={"X-Forwarded-For": address}).status_code

        same_block = [status(f"2001:db8:aa:1::{n}") for n in range(1, 5)]
        assert same_block == [200, 200, 200, 429]
        assert status("2001:db8:aa:2::1") == 200  # another /64: a window of its own
        assert status("203.0.113.50") == 200
        # Refused calls are counted per /64 too.
        refused = [
            client.get("/v1/me/chaves", headers={"X-Forwarded-For": f"2001:db8:bb:1::{n}"})
            for n in range(1, 13)
        ]
        assert [r.status_code for r in refused] == [401] * 10 + [429] * 2
    owner, admin = make_key(), make_key(papel="admin")
    with behind_proxy.client(headers=owner.headers) as client:
        client.get(VALIDATE, headers={"X-Forwarded-For": f"{FORGED}, 203.0.113.8"})
    assert _audit_ips(behind_proxy, admin, owner, 1) == ["203.0.113.8"]


def test_trusted_proxy_zone_id_address_stored_with_other_rows(
    behind_proxy: Server, make_key: MakeKey
) -> None:
    """A zone id used to fail the `inet` cast and lose the whole batch of every caller."""
    owner, other, admin = make_key(), make_key(), make_key(papel="admin")
    with (
        behind_proxy.client(headers=owner.headers) as client,
        behind_proxy.client(headers=other.headers) as neighbour,
    ):
        for _ in range(5):
            assert neighbour.get(VALIDATE).status_code == 200
        response = client.get(VALIDATE, headers={"X-Forwarded-For": "fe80::1%eth0"})
        assert response.status_code == 200
        for _ in range(5):
            assert neighbour.get(VALIDATE).status_code == 200
    assert _audit_ips(behind_proxy, admin, owner, 1) == ["fe80::1"]
    assert _audit_ips(behind_proxy, admin, other, 10) == ["127.0.0.1"] * 10
    with behind_proxy.client(headers={}) as anyone:
        assert anyone.get("/v1/status").json()["auditoria"]["perdidas"] == 0


def test_ipv6_peer_served_and_audited(peer_alias: str, make_key: MakeKey) -> None:
    """A real IPv6 peer (`::1`): its address reaches the audit log as the TCP layer gave it."""
    owner, admin = make_key(), make_key(papel="admin")
    with serving(peer_alias, host="::1") as server:
        with httpx.Client(base_url=server.url, headers=owner.headers, timeout=10) as client:
            assert client.get(VALIDATE).status_code == 200
        assert _audit_ips(server, admin, owner, 1) == ["::1"]


def test_status_counters_for_the_operators_networks_only(behind_proxy: Server) -> None:
    """`/v1/status` shows the process's counters and the index's name to callers from
    `STATUS_DETAIL_NETWORKS` (loopback by default), not to a caller the proxy names."""
    with behind_proxy.client(headers={}) as client:
        local = client.get("/v1/status").json()
        outside = client.get("/v1/status", headers={"X-Forwarded-For": "203.0.113.7"}).json()
    assert local["auditoria"] is not None
    assert local["carga"] is not None
    assert local["index"]["name"]
    assert outside["status"] == local["status"] == "ok"
    assert outside["index"] == {**local["index"], "name": None}
    assert outside["auditoria"] is None
    assert outside["carga"] is None
    assert outside["consultas_rapidas"] is None
    assert outside["dependencies"] == local["dependencies"]
