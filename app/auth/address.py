"""The caller's IP address: the TCP peer, unless the operator names trusted proxies.

No header is believed by default. With `TRUSTED_PROXIES` (comma-separated CIDRs) set, a request
whose TCP peer is one of them is attributed to the right-most address of `X-Forwarded-For` that
is not itself a trusted proxy (the left part of that header is written by the client and proves
nothing). The app does this itself rather than through the ASGI server's proxy-header option, so
the rule is the same under any server; `registry-api` starts uvicorn with that option off
(uvicorn's default trusts `X-Forwarded-For` from loopback).

Addresses are normalised before anything stores or counts them: an IPv6 zone id is dropped
(`fe80::1%eth0` is not a valid `inet`), an IPv4-mapped IPv6 address becomes IPv4. Windows of
callers without a key count an IPv6 caller per /64, the block one subscriber usually holds.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from litestar.types import Scope

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
IPV6_BLOCK = 64
MAX_FORWARDED = 2048
"""Characters of `X-Forwarded-For` looked at; a longer header is cut (its right end is kept)."""


def parse_networks(raw: str) -> list[Network]:
    """CIDRs from a comma-separated setting; `ValueError` names a bad one."""
    networks = []
    for item in (part.strip() for part in raw.split(",")):
        if item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"not an address or CIDR: {item!r}") from None
    return networks


def normalise(raw: str) -> Address | None:
    """`raw` as an address without zone id (IPv4-mapped IPv6 as IPv4), or None."""
    text = raw.strip().strip("[]")
    text = text.split("%", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, proxies: Sequence[Network]) -> bool:
    return any(address in network for network in proxies)


def _forwarded(scope: Scope) -> list[str]:
    """Every `X-Forwarded-For` value of the request, in order, as one list of hops."""
    hops: list[str] = []
    for name, value in scope.get("headers", ()):
        if name.lower() == b"x-forwarded-for":
            hops.extend(value.decode("latin-1")[-MAX_FORWARDED:].split(","))
    return hops


def client_address(scope: Scope, proxies: Sequence[Network] = ()) -> Address | None:
    """The caller's address (see the module's docstring); None when the server gave none."""
    client = scope.get("client")
    peer = normalise(client[0]) if client else None
    if peer is None or not proxies or not _trusted(peer, proxies):
        return peer
    for hop in reversed(_forwarded(scope)):
        address = normalise(hop)
        if address is None:
            return peer  # a garbled chain: attribute the call to the proxy itself
        if not _trusted(address, proxies):
            return address
    return peer


def window_key(address: Address | None) -> str:
    """The part of an address that one window counts: the whole IPv4 address, the /64 of an
    IPv6 one."""
    if address is None:
        return "desconhecido"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_BLOCK), strict=False))
    return str(address)


def in_any(address: Address | None, networks: Iterable[Network]) -> bool:
    return address is not None and any(address in network for network in networks)
