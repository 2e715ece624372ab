"""Token bootstrap against a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

import asyncio
import itertools
import stat
import uuid
from collections.abc import Iterator
from email import message_from_bytes
from ipaddress import IPv4Address, IPv6Address
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.accounts import repository
from app.accounts.keys import CODE_DIGITS
from app.accounts.service import (
    DAILY_CODES,
    DAILY_FAILURES,
    MAX_ATTEMPTS,
    MAX_CODE_ATTEMPTS,
    origin,
)
from tests.conftest import MakeKey, Server, serving
from tests.inbox import CODE, Inbox, receiving
from tests.strategies import json_values

START = "/api/mcp/auth/start"
VERIFY = "/api/mcp/auth/verify"
PUBLIC_URL = "https://registry.example.test"


@pytest.fixture(scope="module")
def inbox() -> Iterator[Inbox]:
    with receiving() as handler:
        yield handler


@pytest.fixture(scope="module")
def server(peer_alias: str, inbox: Inbox, database: str) -> Iterator[Server]:
    running = Server(peer_alias, env={"SMTP_HOST": "127.0.0.1", "SMTP_PORT": str(inbox.port),
                                      "PUBLIC_URL": PUBLIC_URL})  # fmt: skip
    yield running
    log = running.stop()
    assert "Traceback" not in log, log
    for message in inbox.messages:  # no code ever reaches the log
        body = message.get_payload(decode=True)
        assert isinstance(body, bytes)
        code = CODE.search(body.decode())
        assert code is None or code.group(1) not in log


_addresses = (f"127.0.{a}.{b}" for a, b in itertools.product(range(10, 250), range(1, 250)))


def caller(server: Server) -> httpx.Client:
    """A client from a loopback address no other test uses: a per-IP window of its own."""
    return server.client(next(_addresses), headers={})


def _other(code: str) -> str:
    """A well-formed code that is not `code`."""
    return f"{(int(code) + 1) % 10**CODE_DIGITS:0{CODE_DIGITS}d}"


def _email() -> str:
    return f"novo-{uuid.uuid4().hex[:12]}@example.com"


def test_bootstrap_code_by_email_releases_key_once(server: Server, inbox: Inbox) -> None:
    email = _email()
    with caller(server) as client:
        started = client.post(START, json={"nome": "Ana", "email": email,
                                           "telefone": "(11) 98765-4321"})  # fmt: skip
        assert started.status_code == 202
        code = inbox.code_for(email)
        verified = client.post(VERIFY, json={"email": email.upper(), "codigo": code})
        assert verified.status_code == 200, verified.text
        body = verified.json()
        assert body["mcp_url"] == f"{PUBLIC_URL}/mcp"
        key = body["api_key"]
        again = client.post(VERIFY, json={"email": email, "codigo": code})
        assert again.status_code == 400
        assert key not in again.text
    with server.client(headers={"Authorization": f"Bearer {key}"}) as owner:
        keys = owner.get("/v1/me/chaves")
        assert keys.status_code == 200
        assert keys.json()["data"][0]["rotulo"] == "mcp"
        limited = owner.get("/v1/cnpj/validar/11222333000181")
        assert limited.headers["X-RateLimit-Limit"] == "3"  # a new account is on Starter


def test_code_mail_carries_no_text_the_requester_typed(server: Server, inbox: Inbox) -> None:
    """Whoever asks a code for an address writes no word of the mail it receives: a name
    holding a phishing text is not repeated."""
    email = _email()
    bait = "Bob. ATENCAO: sua conta foi suspensa; responda para https://golpe.example"
    with caller(server) as client:
        started = client.post(START, json={"nome": bait, "email": email, "telefone": ""})
        assert started.status_code == 202, started.text
    mail = inbox.message_for(email)
    assert "golpe" not in mail
    assert "Bob" not in mail
    assert len(inbox.code_for(email)) == CODE_DIGITS


@pytest.mark.parametrize(
    "email",
    ["dono@empresa.com,outro.com", "x<alvo@fora.com>y.com", "a@b.com;c@d.com", "a b@c.com",
     '"a@b"@c.com', "a@[127.0.0.1].com", "a@b.com\n", "moc.arof\u202e@alvo.com"],
)  # fmt: skip
def test_bootstrap_refuses_addresses_a_mailer_would_read_as_another(
    server: Server, inbox: Inbox, email: str
) -> None:
    """An SMTP client takes the recipients from the parsing of `To:`: a stored address written
    with the address-list syntax would be mailed to someone else. Refused, nothing sent."""
    with caller(server) as client:
        started = client.post(START, json={"nome": "Ana", "email": email, "telefone": ""})
    assert started.status_code == 400, started.text
    assert started.json()["details"]["campo"] == "email"
    assert not [m for m in inbox.messages if "fora.com" in str(m["To"]) or "outro" in str(m["To"])]


def test_failures_of_an_ipv6_caller_count_per_64() -> None:
    """One IPv6 host has a whole /64: its wrong codes count as one origin, as its windows do."""
    first, second = IPv6Address("2001:db8:1:2::1"), IPv6Address("2001:db8:1:2:ffff::9")
    assert origin(first) == origin(second) == "2001:db8:1:2::/64"
    assert origin(IPv4Address("203.0.113.7")) == "203.0.113.7"
    assert origin(None) == "desconhecido"


def test_bootstrap_start_same_answer_for_registered_email(server: Server, inbox: Inbox) -> None:
    email = _email()
    with caller(server) as client:
        first = client.post(START, json={"nome": "Bia", "email": email, "telefone": ""})
        client.post(VERIFY, json={"email": email, "codigo": inbox.code_for(email)})
    with caller(server) as client:
        registered = client.post(START, json={"nome": "Bia", "email": email, "telefone": ""})
        fresh = client.post(START, json={"nome": "Bia", "email": _email(), "telefone": ""})
    assert first.status_code == registered.status_code == fresh.status_code == 202
    assert first.json() == registered.json() == fresh.json()


def test_bootstrap_code_locked_after_five_wrong_tries_from_one_address(
    server: Server, inbox: Inbox, database: str
) -> None:
    """Five wrong tries kill the code for the address they came from; a stranger guessing at
    someone's e-mail does not kill the owner's code, until the code's tries from all
    addresses together are spent."""
    email = _email()
    with caller(server) as client:
        client.post(START, json={"nome": "Caio", "email": email, "telefone": ""})
        code = inbox.code_for(email)
        wrong = _other(code)
        for _ in range(MAX_ATTEMPTS):
            assert client.post(VERIFY, json={"email": email, "codigo": wrong}).status_code == 400
        assert client.post(VERIFY, json={"email": email, "codigo": code}).status_code == 400
    with psycopg.connect(database) as conn:
        conn.execute(
            "UPDATE codigos_email SET tentativas = %s WHERE email = %s",
            (MAX_CODE_ATTEMPTS, email),
        )
    assert _verify(server, email, code).status_code == 400  # all addresses' tries spent
    with psycopg.connect(database) as conn:
        conn.execute("UPDATE codigos_email SET tentativas = %s WHERE email = %s", (5, email))
    assert _verify(server, email, code).status_code == 200  # the owner, from elsewhere


def test_bootstrap_code_expired_refused(server: Server, inbox: Inbox, database: str) -> None:
    email = _email()
    with caller(server) as client:
        client.post(START, json={"nome": "Davi", "email": email, "telefone": ""})
        code = inbox.code_for(email)
        with psycopg.connect(database) as conn:
            stored = conn.execute(
                "UPDATE codigos_email SET expira_em = now() - interval '1 second' "
                "WHERE email = %s RETURNING hash", (email,),
            ).fetchone()  # fmt: skip
        assert stored is not None
        assert code.encode() not in stored[0]
        assert client.post(VERIFY, json={"email": email, "codigo": code}).status_code == 400


def test_bootstrap_rate_limited_per_ip_and_email(server: Server) -> None:
    email = _email()
    with caller(server) as client:
        statuses = [client.post(START, json={"nome": "Eva", "email": email, "telefone": ""})
                    for _ in range(4)]  # fmt: skip
    assert [r.status_code for r in statuses] == [202, 202, 202, 429]
    assert int(statuses[-1].headers["Retry-After"]) >= 1
    with caller(server) as other:  # another address, but the e-mail has had its 3 codes
        refused = other.post(START, json={"nome": "Eva", "email": email, "telefone": ""})
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1


fields = st.fixed_dictionaries(
    {},
    optional={"nome": json_values | st.text(max_size=300), "email": json_values | st.emails(),
              "telefone": json_values | st.text("0123456789 ()-+", max_size=20),
              "codigo": json_values | st.text("0123456789", min_size=7, max_size=9)},
)  # fmt: skip


@given(path=st.sampled_from([START, VERIFY]), body=json_values | fields)
def test_bootstrap_any_body_never_500(server: Server, path: str, body: Any) -> None:
    with caller(server) as client:  # an address of its own: no per-address window applies
        response = client.post(path, json=body)
    if path == VERIFY:  # no code was ever sent to these addresses
        assert response.status_code == 400, response.text
    elif response.status_code == 202:
        assert isinstance(body, dict)
        assert {"nome", "email", "telefone"} <= set(body)
    else:  # 429 only when hypothesis draws one e-mail more than three times
        assert response.status_code in (400, 429), response.text
    if response.status_code != 202:
        assert set(response.json()) == {"error", "message"} | (
            {"details"} if "details" in response.json() else set()
        )


@given(raw=st.binary(max_size=200))
def test_bootstrap_raw_bytes_never_500(server: Server, raw: bytes) -> None:
    with caller(server) as client:
        response = client.post(VERIFY, content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400


def _start(server: Server, email: str) -> httpx.Response:
    with caller(server) as client:
        return client.post(START, json={"nome": "Gil", "email": email, "telefone": ""})


def _verify(server: Server, email: str, code: str) -> httpx.Response:
    with caller(server) as client:
        return client.post(VERIFY, json={"email": email, "codigo": code})


def test_bootstrap_admin_account_gets_no_code_and_no_key(
    server: Server, inbox: Inbox, make_key: MakeKey, database: str
) -> None:
    admin = make_key(papel="admin")
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT email FROM contas WHERE id = %s", (admin.conta_id,)).fetchone()
    assert row is not None
    email = row[0]
    assert _start(server, email).status_code == 202  # the same answer as for anyone
    message = inbox.message_for(email)
    assert CODE.search(message) is None
    assert "administrador" in message
    assert _verify(server, email, "0" * CODE_DIGITS).status_code == 400


def test_bootstrap_code_of_account_turned_admin_releases_no_key(
    server: Server, inbox: Inbox, database: str
) -> None:
    """A code asked before the address became an administrator's is worth nothing after."""
    email = _email()
    assert _start(server, email).status_code == 202
    code = inbox.code_for(email)
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO contas (nome, email, plano, papel) VALUES ('Adm', %s, 'enterprise', "
            "'admin')",
            (email,),
        )
    refused = _verify(server, email, code)
    assert refused.status_code == 400
    with psycopg.connect(database) as conn:
        keys = conn.execute(
            "SELECT count(*) FROM chaves k JOIN contas c ON c.id = k.conta_id WHERE c.email = %s",
            (email,),
        ).fetchone()
    assert keys == (0,)
    assert _verify(server, email, code).status_code == 400  # the code is spent


def test_bootstrap_wrong_tries_capped_per_day_per_address(
    server: Server, inbox: Inbox, database: str
) -> None:
    """Asking for a new code does not give new tries: after `DAILY_FAILURES` wrong codes in a
    day from one address, even the right code is refused to it. The owner, from another
    address, still signs in with that code."""
    email, stranger = _email(), next(_addresses)
    with server.client(stranger, headers={}) as client:
        assert (
            client.post(START, json={"nome": "Gil", "email": email, "telefone": ""}).status_code
            == 202
        )
        code = inbox.code_for(email)
        for _ in range(MAX_ATTEMPTS):
            assert (
                client.post(VERIFY, json={"email": email, "codigo": _other(code)}).status_code
                == 400
            )
    with psycopg.connect(database) as conn:  # the rest of the day's tries, spent on earlier codes
        conn.execute(
            "UPDATE falhas_codigo SET falhas = %s WHERE email = %s AND origem = %s",
            (DAILY_FAILURES, email, stranger),
        )
    inbox.messages.clear()
    assert _start(server, email).status_code == 202
    fresh = inbox.code_for(email)
    with server.client(stranger, headers={}) as client:
        assert client.post(VERIFY, json={"email": email, "codigo": fresh}).status_code == 400
    assert _verify(server, email, fresh).status_code == 200


def test_bootstrap_daily_code_cap_429(server: Server, inbox: Inbox, database: str) -> None:
    email = _email()
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO bootstrap_diario (email, dia, codigos) "
            "VALUES (%s, (now() AT TIME ZONE 'UTC')::date, %s)",
            (email, DAILY_CODES),
        )
    refused = _start(server, email)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 86400
    assert not [m for m in inbox.messages if m["To"] == email]


def test_bootstrap_code_kept_when_mail_refused(server: Server, inbox: Inbox) -> None:
    """A new code is stored only once the SMTP server took it: a refused e-mail leaves the
    code the user already has working."""
    email = _email()
    assert _start(server, email).status_code == 202
    code = inbox.code_for(email)
    inbox.refused.add(email)
    try:
        failed = _start(server, email)
    finally:
        inbox.refused.discard(email)
    assert failed.status_code == 503
    assert int(failed.headers["Retry-After"]) > 0
    verified = _verify(server, email, code)
    assert verified.status_code == 200, verified.text


def test_bootstrap_new_code_replaces_the_previous_one(server: Server, inbox: Inbox) -> None:
    email = _email()
    assert _start(server, email).status_code == 202
    first = inbox.code_for(email)
    inbox.messages.clear()
    assert _start(server, email).status_code == 202
    second = inbox.code_for(email)
    assert first != second
    assert _verify(server, email, first).status_code == 400
    assert _verify(server, email, second).status_code == 200


def test_bootstrap_verify_ten_per_minute_per_address(server: Server) -> None:
    email = _email()
    with caller(server) as client:  # one address for all eleven calls
        statuses = [
            client.post(VERIFY, json={"email": email, "codigo": "0" * CODE_DIGITS}).status_code
            for _ in range(11)
        ]
        last = client.post(VERIFY, json={"email": email, "codigo": "0" * CODE_DIGITS})
    assert statuses == [400] * 10 + [429]
    assert last.status_code == 429
    assert 1 <= int(last.headers["Retry-After"]) <= 60


def test_bootstrap_forwarded_for_ignored_by_default(server: Server) -> None:
    """Without `TRUSTED_PROXIES`, a forged `X-Forwarded-For` on each call opens no fresh
    bootstrap window: `start` and `verify` are counted by the TCP peer, codes by the e-mail."""
    email = _email()

    def forged(n: int) -> dict[str, str]:
        return {"X-Forwarded-For": f"198.51.100.{n}"}

    with caller(server) as client:
        starts = [
            client.post(START, json={"nome": "Ivo", "email": address, "telefone": ""},
                        headers=forged(n)).status_code
            for n, address in enumerate([email, email, email, _email()])
        ]  # fmt: skip
        verifies = [
            client.post(VERIFY, json={"email": email, "codigo": "0" * CODE_DIGITS},
                        headers=forged(n)).status_code
            for n in range(11)
        ]  # fmt: skip
    assert starts == [202, 202, 202, 429]
    assert verifies == [400] * 10 + [429]
    with caller(server) as other:  # a fresh peer: only the e-mail's window is full
        again = other.post(START, json={"nome": "Ivo", "email": email, "telefone": ""},
                           headers=forged(99))  # fmt: skip
        fresh = other.post(START, json={"nome": "Ivo", "email": _email(), "telefone": ""},
                           headers=forged(99))  # fmt: skip
    assert again.status_code == 429
    assert fresh.status_code == 202


def test_codes_written_to_the_mail_folder_without_smtp(
    peer_alias: str, database: str, tmp_path: Path
) -> None:
    """`MAIL_DIR` (the sample setup of `scripts/run.sh`): the e-mail is a file only its owner
    reads, and its code works."""
    folder = tmp_path / "mail"
    with serving(peer_alias, env={"MAIL_DIR": str(folder), "SMTP_PORT": "1"}) as running:
        email = _email()
        with caller(running) as client:
            started = client.post(START, json={"nome": "Bia", "email": email, "telefone": ""})
            assert started.status_code == 202, started.text
            [written] = list(folder.glob("*.eml"))
            assert stat.S_IMODE(written.stat().st_mode) == 0o600
            message = message_from_bytes(written.read_bytes())
            assert message["To"] == email
            body = message.get_payload(decode=True)
            assert isinstance(body, bytes)
            code = CODE.search(body.decode())
            assert code is not None
            verified = client.post(VERIFY, json={"email": email, "codigo": code.group(1)})
            assert verified.status_code == 200, verified.text


def test_counters_of_past_days_are_forgotten(database: str) -> None:
    """The hourly housekeeping drops the sign-in's day counters no limit reads any more
    (before yesterday), and keeps today's."""
    email = _email()
    today = "(now() AT TIME ZONE 'UTC')::date"
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO falhas_codigo (email, origem, dia, falhas) VALUES "
            f"(%s, '127.0.0.1', {today} - 3, 1), (%s, '127.0.0.1', {today}, 1)",
            (email, email),
        )
        conn.execute(
            f"INSERT INTO bootstrap_diario (email, dia, codigos) VALUES (%s, {today} - 5, 2)",
            (email,),
        )

    async def forget() -> int:
        async with await psycopg.AsyncConnection.connect(database, autocommit=True) as conn:
            return await repository.forget_past_days(conn)

    assert asyncio.run(forget()) >= 2
    with psycopg.connect(database) as conn:
        kept = conn.execute(
            f"SELECT dia = {today} FROM falhas_codigo WHERE email = %s",
            (email,),
        ).fetchall()
        days = conn.execute("SELECT count(*) FROM bootstrap_diario WHERE email = %s", (email,))
        assert kept == [(True,)]
        assert days.fetchone() == (0,)
