"""Accounts and keys: issuing keys, allowlists, and the token bootstrap by e-mail code.

Services that take a connection leave transactions to the caller (`conn.transaction()` on the
pool's autocommit connections); those that take the pool open their own.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from datetime import UTC, datetime, time, timedelta
from typing import Annotated

import msgspec
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from app.accounts import keys, mail, repository
from app.accounts.repository import Chave, Conta, Network
from app.auth.address import Address, window_key
from app.auth.gate import Gate
from app.errors import (
    BadRequestError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    TooManyRequestsError,
)
from app.lib.wording import CONTROLS, END, free_text
from app.ratelimit.limiter import RateLimiter
from app.settings import Settings

CODE_TTL = 600
MAX_ATTEMPTS = 5
"""Wrong tries a code survives from one address (the caller's IP)."""
MAX_CODE_ATTEMPTS = 50
"""Wrong tries a code survives from all addresses together: with 8-digit codes, at most 500
guesses a day at an e-mail (`DAILY_CODES` codes), however many addresses guess."""
EMAIL_LIMIT = 3
"""Codes sent to one e-mail address per `EMAIL_WINDOW` seconds."""
EMAIL_WINDOW = 600
DAILY_CODES = 10
"""Codes sent to one e-mail address per day (UTC)."""
DAILY_FAILURES = 10
"""Wrong codes tried for one e-mail address per day (UTC) from one caller's address, whatever
the code: asking for a new code does not give more tries. Tries from other addresses are
theirs: a stranger guessing at an e-mail spends the stranger's tries, not its owner's."""
MAX_ALLOWLIST = 100
MAX_ACTIVE_KEYS = 20
"""Keys an account may hold at once (revoked ones do not count)."""
INVALID_CODE = "Código inválido, expirado, já usado ou bloqueado; peça um novo."
KEY_NOT_FOUND = "Chave não encontrada nesta conta."
ADMIN_KEYS = (
    "Chaves de administrador não se gerenciam pelo painel: são criadas só no servidor, com "
    "`registry-admin`, e revogadas pela API com uma chave de administrador."
)

Text = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=free_text(required=True))]
_ADDRESS_PART = rf"[^@\s{CONTROLS},;:<>()\[\]\\\"]+"
"""A side of an e-mail address: no space, control or bidirectional mark (`CONTROLS`: an address
that shows in another order than it is stored), nor any character of the address-list syntax
(`a@b.com,c.com` or `x<a@evil.com>y.com` would be mailed to another address than the one
stored, since SMTP clients take the recipients from the `To:` header's parsing)."""
_EMAIL = rf"^{_ADDRESS_PART}@{_ADDRESS_PART}\.\w+"
Email = Annotated[str, msgspec.Meta(max_length=254, pattern=_EMAIL + END)]
Phone = Annotated[str, msgspec.Meta(max_length=40, pattern=r"^[0-9 ()+.-]*" + END)]
Label = Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=free_text(required=True))]


class ChaveCriada(msgspec.Struct, kw_only=True):
    """A new key: `api_key` is shown this once and never again."""

    chave: Chave
    api_key: str


Rede = Annotated[
    str,
    # documented only: `parse_allowlist` refuses anything else, naming the value
    msgspec.Meta(extra_json_schema={"format": "ip-network", "maxLength": 43}),
]
"""A network (`203.0.113.0/24`, `2001:db8::/32`, no host bits set) or a single address: the
custom format `ip-network`."""
Redes = Annotated[list[Rede], msgspec.Meta(extra_json_schema={"maxItems": MAX_ALLOWLIST})]


class Allowlist(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    allowlist: Redes
    """CIDRs (`203.0.113.0/24`, `2001:db8::/32`) or single addresses; empty clears it."""


class NovaChave(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    rotulo: Label
    """Which environment, agent or system uses the key."""
    allowlist: Redes = []


def normal_email(email: str) -> str:
    return email.strip().lower()


def normal_phone(phone: str) -> str:
    digits = re.sub(r"\D", "", phone)
    if phone and not 10 <= len(digits) <= 13:
        raise BadRequestError("Telefone inválido: informe DDD e número (10 a 13 dígitos).")
    return digits


def parse_allowlist(values: list[str]) -> list[Network]:
    if len(values) > MAX_ALLOWLIST:
        raise BadRequestError(f"A allowlist aceita no máximo {MAX_ALLOWLIST} redes.")
    networks: list[Network] = []
    for value in values:
        try:
            if "%" in value:  # an IPv6 zone (fe80::1%eth0) names a local interface, not a network
                raise ValueError(value)
            networks.append(_as_callers_are(ipaddress.ip_network(value.strip())))
        except ValueError:
            raise BadRequestError(
                f"Rede inválida na allowlist: {value.strip()[:64]!r}; use CIDR (203.0.113.0/24) "
                "ou um endereço.",
                details={"invalida": value[:100]},
            ) from None
    return list(dict.fromkeys(networks))  # each network once, in the order given


_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")


def _as_callers_are(network: Network) -> Network:
    """An IPv4-mapped IPv6 network (`::ffff:127.0.0.1`) as its IPv4 network: callers' addresses
    are normalised that way (`app/auth/address.py`), so the mapped form could never match."""
    if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_MAPPED):
        mapped = network.network_address.ipv4_mapped
        assert mapped is not None  # inside ::ffff:0:0/96
        return ipaddress.IPv4Network((mapped, network.prefixlen - 96))
    return network


async def issue_key(
    conn: AsyncConnection, secret: bytes, conta_id: int, rotulo: str, allowlist: list[Network]
) -> ChaveCriada:
    """A new key for the account; only its keyed hash is stored. 409 when the account already
    holds `MAX_ACTIVE_KEYS` (the count is taken under a lock of the account's row, so
    concurrent requests cannot pass it together)."""
    async with conn.transaction():
        await repository.lock_account(conn, conta_id)
        if await repository.active_keys(conn, conta_id) >= MAX_ACTIVE_KEYS:
            raise ConflictError(
                f"Esta conta já tem {MAX_ACTIVE_KEYS} chaves ativas: revogue uma antes de criar "
                "outra.",
                details={"maximo": MAX_ACTIVE_KEYS},
            )
        while True:
            key_id, key = keys.new_key()
            chave = await repository.insert_key(
                conn, key_id=key_id, conta_id=conta_id, rotulo=rotulo,
                digest=keys.digest(secret, key), allowlist=allowlist,
            )  # fmt: skip
            if chave is not None:
                return ChaveCriada(chave=chave, api_key=key)


async def create_key(
    pool: AsyncConnectionPool, settings: Settings, conta_id: int, entrada: NovaChave
) -> ChaveCriada:
    """A new key for the account, with its allowlist checked first."""
    allowlist = parse_allowlist(entrada.allowlist)
    async with pool.connection() as conn:
        return await issue_key(
            conn, keys.check_secret(settings.api_key_secret), conta_id, entrada.rotulo, allowlist
        )


def check_key_by_code(papel: str) -> None:
    """403 for an administrator signed in by an e-mail code (the dashboard): administrator
    keys come from `registry-admin` only, as in the token bootstrap, and so do their
    allowlists (a code must not widen where an administrator's key works) and their
    revocation (a code must not cut the server's own keys off)."""
    if papel == "admin":
        raise ForbiddenError(ADMIN_KEYS)


async def list_keys(pool: AsyncConnectionPool, conta_id: int) -> list[Chave]:
    async with pool.connection() as conn:
        return await repository.list_keys(conn, conta_id)


KEY_ID = re.compile(r"[0-9a-f]{1,64}")
"""The shape of a key's public id (`keys.new_key`); any other text names no key."""


def _known_shape(key_id: str) -> None:
    if not KEY_ID.fullmatch(key_id):
        raise NotFoundError(KEY_NOT_FOUND)


async def revoke_key(pool: AsyncConnectionPool, gate: Gate, conta_id: int, key_id: str) -> Chave:
    """Revokes the account's key; every process stops taking it at once."""
    _known_shape(key_id)
    async with pool.connection() as conn:
        revoked = await repository.revoke_key(conn, conta_id, key_id)
    if revoked is None:
        raise NotFoundError(KEY_NOT_FOUND)
    await gate.credentials_changed()
    return revoked


async def change_allowlist(
    pool: AsyncConnectionPool, gate: Gate, conta_id: int, key_id: str, values: list[str]
) -> Chave:
    """Sets the key's allowlist (empty: any address); every process applies it at once. 409 for
    a revoked key."""
    _known_shape(key_id)
    networks = parse_allowlist(values)
    async with pool.connection() as conn:
        updated = await repository.set_allowlist(conn, conta_id, key_id, networks)
    if updated is None:
        raise NotFoundError(KEY_NOT_FOUND)
    if updated.revogada_em is not None:
        raise ConflictError("Esta chave foi revogada: sua allowlist não muda mais.")
    await gate.credentials_changed()
    return updated


async def ensure_account(
    conn: AsyncConnection, *, nome: str, email: str, telefone: str, plano: str, papel: str
) -> tuple[Conta, bool]:
    """The account of the e-mail, created if missing; True when it was created."""
    created = await repository.insert_account(
        conn, nome=nome, email=email, telefone=telefone, plano=plano, papel=papel
    )
    if created is not None:
        return created, True
    existing = await repository.find_account(conn, email)
    assert existing is not None
    return existing, False


class Inicio(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    nome: Text
    email: Email
    telefone: Phone


class Verificacao(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    email: Email
    codigo: Annotated[str, msgspec.Meta(pattern=rf"^[0-9]{{{keys.CODE_DIGITS}}}" + END)]


class TokenEmitido(msgspec.Struct, kw_only=True):
    api_key: str
    """Shown once: store it now."""
    mcp_url: str


async def start_bootstrap(
    pool: AsyncConnectionPool,
    limiter: RateLimiter,
    settings: Settings,
    body: Inicio,
    *,
    dashboard: bool = False,
) -> None:
    """Sends a fresh code to the e-mail. The same steps run whether or not the address already
    has an account, so the answer reveals nothing about it. An administrator account gets no
    code (its keys come from `registry-admin` only): its owner is told so by e-mail instead.

    The code is stored in the same transaction that counts it, committed only once the SMTP
    server has taken the message: a code that was never sent never replaces the previous one."""
    email = normal_email(body.email)
    telefone = normal_phone(body.telefone)
    bucket = "email:" + hashlib.sha256(email.encode()).hexdigest()[:32]
    decision = await limiter.hit(bucket, EMAIL_LIMIT, EMAIL_WINDOW)
    if not decision.admitted:
        raise TooManyRequestsError(
            "Muitos códigos pedidos para este e-mail; aguarde.",
            headers={"Retry-After": str(decision.retry_after)},
        )
    secret = keys.check_secret(settings.api_key_secret)
    async with pool.connection() as conn, conn.transaction():
        if await repository.count_code_sent(conn, email) > DAILY_CODES:
            raise TooManyRequestsError(
                f"Limite de {DAILY_CODES} códigos por dia para este e-mail atingido.",
                headers={"Retry-After": str(_seconds_to_midnight())},
            )
        account = await repository.find_account(conn, email)
        if account is not None and account.papel == "admin" and not dashboard:
            message = mail.admin_message(settings.smtp_sender, email)
        else:
            code = keys.new_code()
            await repository.save_code(
                conn, email=email, nome=body.nome.strip(), telefone=telefone,
                digest=keys.code_digest(secret, email, code), ttl=CODE_TTL,
            )  # fmt: skip
            message = mail.code_message(settings.smtp_sender, email, code, CODE_TTL // 60)
        await mail.send(settings, message, email)


def origin(address: Address | None) -> str:
    """Where a try at a code came from, as its failures are counted: the caller's address, or
    its /64 for IPv6 (as the windows count it: one host has a whole /64 to spread its tries
    over)."""
    return window_key(address)


def _seconds_to_midnight() -> int:
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), time(), UTC)
    return max(int((midnight - now).total_seconds()), 1)


async def _redeem(
    conn: AsyncConnection, secret: bytes, email: str, codigo: str, origem: str
) -> Conta | None:
    """Checks the e-mail's code once, inside the caller's transaction: the account (created on
    the Starter plan if missing) for a right code; None for a wrong one, which counts an attempt
    on the code and on the e-mail's day from `origem` (the caller's address). A dead code (used,
    expired, out of tries, or the day's failures from `origem` spent) is refused before it is
    compared."""
    failures, on_code = await repository.failures_from(conn, email, origem)
    code = await repository.lock_code(conn, email)
    if (
        code is None
        or code.usado
        or code.expirado
        or code.tentativas >= MAX_CODE_ATTEMPTS
        or on_code >= MAX_ATTEMPTS
        or failures >= DAILY_FAILURES
    ):
        raise BadRequestError(INVALID_CODE)
    if not keys.code_matches(secret, email, codigo, code.hash):
        await repository.count_failure(conn, email, origem)
        return None
    await repository.mark_used(conn, email)
    conta, _ = await ensure_account(
        conn, nome=code.nome, email=email, telefone=code.telefone,
        plano="starter", papel="usuario",
    )  # fmt: skip
    return conta


async def verify_bootstrap(
    pool: AsyncConnectionPool, settings: Settings, body: Verificacao, origem: str
) -> TokenEmitido:
    """Checks the code once; a right code creates the account (Starter plan) if needed and
    releases a new key. A wrong one counts an attempt on the code and on the e-mail's day from
    `origem`: after `MAX_ATTEMPTS` the code is dead there, after `DAILY_FAILURES` every code of
    the e-mail is, until the next day. Never a key for an administrator account."""
    email = normal_email(body.email)
    secret = keys.check_secret(settings.api_key_secret)
    issued: ChaveCriada | None = None
    async with pool.connection() as conn, conn.transaction():
        conta = await _redeem(conn, secret, email, body.codigo, origem)
        if conta is not None and conta.papel != "admin":
            issued = await issue_key(conn, secret, conta.id, "mcp", [])
    if issued is None:
        raise BadRequestError(INVALID_CODE)
    return TokenEmitido(api_key=issued.api_key, mcp_url=settings.public_url.rstrip("/") + "/mcp")


async def sign_in(
    pool: AsyncConnectionPool, settings: Settings, body: Verificacao, origem: str
) -> Conta:
    """The dashboard's sign-in: the same code as the token bootstrap, with the same limits,
    but it releases no key: the account (created if missing) is signed in instead."""
    email = normal_email(body.email)
    secret = keys.check_secret(settings.api_key_secret)
    async with pool.connection() as conn, conn.transaction():
        conta = await _redeem(conn, secret, email, body.codigo, origem)
    if conta is None:
        raise BadRequestError(INVALID_CODE)
    return conta
