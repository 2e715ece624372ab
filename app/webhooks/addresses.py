"""Where webhooks may go: public addresses only, unless the operator lists networks.

A subscriber's URL must never reach the service's own network (an internal admin port, a cloud
metadata address, the database): only addresses that are globally routable are allowed, plus
the networks listed in `WEBHOOK_ALLOW_NETWORKS` (for development and tests). The check runs
twice: when the URL is saved (on every address its host resolves to, for a clear 400) and when
each connection is made (on the exact address being connected, so a host that resolves to a
public address when saved and to 127.0.0.1 later, DNS rebinding, is still refused).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Sequence
from urllib.parse import SplitResult, urlsplit, urlunsplit

import aiodns
import idna

from app.auth.address import Network, normalise
from app.errors import BadRequestError

MAX_URL = 2048
DNS_TIMEOUT = 5.0
"""Seconds a URL's host has to resolve when the URL is saved; past them, a 400."""
NAMESERVERS: list[str] | None = None
"""The name servers of those lookups (`host:port`); None: the system's (`/etc/resolv.conf`)."""


class RefusedAddressError(OSError):
    """A connection to an address webhooks may not reach. Its text is the same for every
    address (the address is `host`): a host whose addresses are all refused then fails with
    this error, not with a mix of texts that the connection's happy eyeballs would fold into
    a plain `OSError`."""

    def __init__(self, host: str) -> None:
        super().__init__("endereço não permitido para webhooks")
        self.host = host

    def said(self) -> str:
        return f"{self}: {self.host}"


TRANSITION = tuple(
    ipaddress.ip_network(prefix)
    for prefix in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96", "2002::/16", "2001::/32")
)
"""IPv6 prefixes that carry an IPv4 address inside (NAT64, IPv4-compatible, 6to4, Teredo):
Python counts most as global, yet through a NAT64 gateway or a 6to4 relay they reach the IPv4
address they carry (127.0.0.1, 10.0.0.0/8, 169.254.169.254). Refused unless listed."""


NOT_PUBLIC = tuple(
    ipaddress.ip_network(prefix)
    for prefix in (
        "192.0.0.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.175.48.0/24",
        "::ffff:0:0:0/96", "2001::/23", "2620:4f:8000::/48", "fec0::/10", "5f00::/16",
    )
)  # fmt: skip
"""Special-purpose ranges (IANA's registries) that this Python counts as global: protocol
assignments, AS112 and AMT relays, SIIT's IPv4-translated form of 127.0.0.1 and the rest,
site-local IPv6 and SRv6. None is a subscriber's endpoint; refused unless listed."""
REFUSED = (*TRANSITION, *NOT_PUBLIC)


def allowed(raw: str, networks: Sequence[Network]) -> bool:
    address = normalise(raw)
    if address is None:
        return False
    if any(address in network for network in networks):
        return True
    return (
        address.is_global
        and not address.is_multicast
        and not any(address in prefix for prefix in REFUSED)
    )


def guarded_socket(networks: Sequence[Network]) -> object:
    """A socket factory for aiohttp that refuses, at connect time, any address that is not
    allowed (it sees the exact address the connection is about to use)."""

    def factory(addr_info: tuple[int, int, int, str, tuple[object, ...]]) -> socket.socket:
        family, kind, proto, _, sockaddr = addr_info
        host = str(sockaddr[0])
        if not allowed(host, networks):
            raise RefusedAddressError(host)
        return socket.socket(family, kind, proto)

    return factory


async def check_url(url: str, networks: Sequence[Network], allow_http: bool) -> str:
    """The URL if a webhook may be sent to it; a 400 saying why not otherwise."""
    if len(url) > MAX_URL:
        raise BadRequestError(
            f"webhook_url: no máximo {MAX_URL} caracteres.", {"campo": "webhook_url"}
        )
    url = url.strip()
    if any(char.isspace() or not char.isprintable() for char in url):
        raise BadRequestError(
            "webhook_url: sem espaços nem caracteres de controle na URL.", {"campo": "webhook_url"}
        )
    schemes = ("https", "http") if allow_http else ("https",)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # an unclosed IPv6 bracket, a port that is not a number or out of range
        raise BadRequestError(
            "webhook_url: URL malformada (o endereço entre colchetes ou a porta).",
            {"campo": "webhook_url"},
        ) from None
    if parts.scheme not in schemes or not parts.hostname:
        raise BadRequestError(
            "webhook_url: use uma URL https://" + (" ou http://" if allow_http else "") + ".",
            details={"campo": "webhook_url"},
        )
    if parts.username or parts.password:
        raise BadRequestError("webhook_url: sem usuário e senha na URL.", {"campo": "webhook_url"})
    if port == 0:
        raise BadRequestError("webhook_url: porta de 1 a 65535.", {"campo": "webhook_url"})
    host = host_of(parts.hostname)
    try:
        found = await addresses_of(host, port or (443 if parts.scheme == "https" else 80))
    except TimeoutError:
        raise BadRequestError(
            f"webhook_url: o endereço {host[:100]} não respondeu a tempo; tente de novo.",
            details={"campo": "webhook_url"},
        ) from None
    except (aiodns.error.DNSError, OSError, ValueError):
        raise BadRequestError(
            f"webhook_url: o endereço {host[:100]} não foi encontrado.",
            details={"campo": "webhook_url"},
        ) from None
    refused = sorted({address for address in found if not allowed(address, networks)})
    if refused:
        raise BadRequestError(
            "webhook_url: o endereço resolve para uma rede privada, local ou reservada; use um "
            "endereço público.",
            details={"campo": "webhook_url", "enderecos": refused[:5]},
        )
    return _canonical(parts, host)


async def addresses_of(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, within `DNS_TIMEOUT` (`TimeoutError` past it).

    Through c-ares (aiodns), as the deliveries' connections resolve their hosts
    (`delivery.client`): lookups are asynchronous, all served by c-ares' one thread, so a
    subscriber's slow name servers hold no thread of their own (the system resolver blocks one
    of the event loop's few default threads, which also send the sign-in e-mails, until it
    answers), and a lookup past its time is cancelled, not left running."""
    resolver = aiodns.DNSResolver(NAMESERVERS, timeout=DNS_TIMEOUT, tries=1)
    try:
        async with asyncio.timeout(DNS_TIMEOUT):
            result = await resolver.getaddrinfo(host, port=port, type=socket.SOCK_STREAM)
    finally:
        await resolver.close()
    return [node.addr[0].decode() for node in result.nodes]


_NUMBER = re.compile(r"(0x[0-9a-f]*|[0-9]+)")


def host_of(name: str) -> str:
    """The host as connections use it: an IP address in its one written form, a name in ASCII
    as the HTTP client converts it (IDNA 2008 with UTS #46, as browsers: `straße.de` is
    `xn--strae-oqa.de`, `ｅｘａｍｐｌｅ.com` is `example.com`). A host in a form some clients
    read as an address and others refuse (`134744072`, `0x7f.1`, `127.1`, in any digits) or
    with a zone id is a 400."""
    if "%" in name:
        raise _ambiguous()
    try:
        ascii_name = name.lower() if name.isascii() else idna.encode(name, uts46=True).decode()
    except idna.IDNAError:
        raise BadRequestError(
            f"webhook_url: nome de domínio inválido: {name[:100]}.", {"campo": "webhook_url"}
        ) from None
    try:
        address = ipaddress.ip_address(ascii_name)
    except ValueError:
        pass
    else:  # an IPv4-mapped IPv6 address is its IPv4 address ([::ffff:1.1.1.1] is 1.1.1.1)
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        return (mapped or address).compressed
    if _NUMBER.fullmatch(ascii_name.rstrip(".").rsplit(".", 1)[-1]):  # no top-level name is one
        raise _ambiguous()
    return ascii_name


def _ambiguous() -> BadRequestError:
    return BadRequestError(
        "webhook_url: o endereço deve ser um nome, um IPv4 de quatro números (1.2.3.4) ou um "
        "IPv6 entre colchetes sem zona.",
        {"campo": "webhook_url"},
    )


def _canonical(parts: SplitResult, host: str) -> str:
    """The URL as it is stored and compared: scheme and host in their one form, no default
    port, no fragment (never sent), so one endpoint spelt two ways is one endpoint."""
    default = {"https": 443, "http": 80}[parts.scheme]
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None and parts.port != default:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


def networks_of(raw: str) -> list[Network]:
    return [
        ipaddress.ip_network(item.strip(), strict=False) for item in raw.split(",") if item.strip()
    ]
