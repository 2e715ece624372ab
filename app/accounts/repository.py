"""All SQL of accounts, keys and e-mail codes: plain parameterised psycopg 3. Callers own the
transaction: the app's pool hands out autocommit connections, so a single statement stands
alone and callers wrap several in `conn.transaction()`."""

from __future__ import annotations

from datetime import datetime
from ipaddress import IPv4Network, IPv6Network

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import class_row

Network = IPv4Network | IPv6Network


class Conta(msgspec.Struct, kw_only=True):
    id: int
    nome: str
    email: str
    telefone: str
    plano: str
    papel: str
    criada_em: datetime


class Chave(msgspec.Struct, kw_only=True):
    """A key as its owner sees it: never the key nor its hash."""

    id: str
    rotulo: str
    allowlist: list[str]
    criada_em: datetime
    ultimo_uso: datetime | None
    revogada_em: datetime | None


class Credencial(msgspec.Struct, kw_only=True, frozen=True):
    """What authentication needs about a key, its account and its plan."""

    id: str
    hash: bytes
    conta_id: int
    papel: str
    plano: str
    limite: int
    allowlist: list[Network]
    revogada: bool


class Codigo(msgspec.Struct, kw_only=True):
    email: str
    nome: str
    telefone: str
    hash: bytes
    expirado: bool
    tentativas: int
    usado: bool


_TODAY = "(now() AT TIME ZONE 'UTC')::date"
"""Today, in UTC: the day of the bootstrap's daily counters, whatever the server's zone."""
_CHAVE = "id, rotulo, allowlist::text[] AS allowlist, criada_em, ultimo_uso, revogada_em"


async def find_credential(conn: AsyncConnection, key_id: str) -> Credencial | None:
    cursor = conn.cursor(row_factory=class_row(Credencial))
    await cursor.execute(
        """
        SELECT k.id, k.hash, k.conta_id, a.papel, a.plano, p.limite_por_minuto AS limite,
               k.allowlist, k.revogada_em IS NOT NULL AS revogada
        FROM chaves k JOIN contas a ON a.id = k.conta_id JOIN planos p ON p.nome = a.plano
        WHERE k.id = %s
        """,
        (key_id,),
    )
    return await cursor.fetchone()


async def find_account(conn: AsyncConnection, email: str) -> Conta | None:
    cursor = conn.cursor(row_factory=class_row(Conta))
    await cursor.execute("SELECT * FROM contas WHERE email = %s", (email,))
    return await cursor.fetchone()


class Perfil(Conta, kw_only=True):
    """An account with its plan's limit: who is signed in to the dashboard."""

    limite_por_minuto: int


_PERFIL = """
    SELECT a.*, p.limite_por_minuto FROM contas a JOIN planos p ON p.nome = a.plano
"""


async def find_profile(conn: AsyncConnection, conta_id: int) -> Perfil | None:
    cursor = conn.cursor(row_factory=class_row(Perfil))
    await cursor.execute(_PERFIL + " WHERE a.id = %s", (conta_id,))
    return await cursor.fetchone()


async def list_profiles(conn: AsyncConnection, limit: int, offset: int) -> list[Perfil]:
    """Accounts, newest first (administrators' dashboard)."""
    cursor = conn.cursor(row_factory=class_row(Perfil))
    await cursor.execute(
        _PERFIL + " ORDER BY a.criada_em DESC, a.id DESC LIMIT %s OFFSET %s", (limit, offset)
    )
    return await cursor.fetchall()


async def count_accounts(conn: AsyncConnection) -> int:
    cursor = await conn.execute("SELECT count(*) FROM contas")
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def insert_account(
    conn: AsyncConnection, *, nome: str, email: str, telefone: str, plano: str, papel: str
) -> Conta | None:
    """The new account, or None when the e-mail already has one."""
    cursor = conn.cursor(row_factory=class_row(Conta))
    await cursor.execute(
        """
        INSERT INTO contas (nome, email, telefone, plano, papel)
        VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (email) DO NOTHING
        RETURNING *
        """,
        (nome, email, telefone, plano, papel),
    )
    return await cursor.fetchone()


async def plan_exists(conn: AsyncConnection, plano: str) -> bool:
    cursor = await conn.execute("SELECT 1 FROM planos WHERE nome = %s", (plano,))
    return await cursor.fetchone() is not None


async def insert_key(
    conn: AsyncConnection,
    *,
    key_id: str,
    conta_id: int,
    rotulo: str,
    digest: bytes,
    allowlist: list[Network],
) -> Chave | None:
    """The new key, or None when its random id is already taken (the caller draws again)."""
    cursor = conn.cursor(row_factory=class_row(Chave))
    await cursor.execute(
        f"""
        INSERT INTO chaves (id, conta_id, rotulo, hash, allowlist)
        VALUES (%s, %s, %s, %s, %s::cidr[])
        ON CONFLICT (id) DO NOTHING
        RETURNING {_CHAVE}
        """,  # noqa: S608 - a constant column list, no caller text
        (key_id, conta_id, rotulo, digest, allowlist),
    )
    return await cursor.fetchone()


async def list_keys(conn: AsyncConnection, conta_id: int) -> list[Chave]:
    cursor = conn.cursor(row_factory=class_row(Chave))
    await cursor.execute(
        f"SELECT {_CHAVE} FROM chaves WHERE conta_id = %s ORDER BY criada_em, id",  # noqa: S608
        (conta_id,),
    )
    return await cursor.fetchall()


async def revoke_key(conn: AsyncConnection, conta_id: int, key_id: str) -> Chave | None:
    """Revokes an account's key (a second revocation keeps the first time)."""
    cursor = conn.cursor(row_factory=class_row(Chave))
    await cursor.execute(
        f"""
        UPDATE chaves SET revogada_em = COALESCE(revogada_em, now())
        WHERE conta_id = %s AND id = %s
        RETURNING {_CHAVE}
        """,  # noqa: S608
        (conta_id, key_id),
    )
    return await cursor.fetchone()


async def set_allowlist(
    conn: AsyncConnection, conta_id: int, key_id: str, allowlist: list[Network]
) -> Chave | None:
    """Sets the allowlist of an active key; a revoked key is returned unchanged."""
    cursor = conn.cursor(row_factory=class_row(Chave))
    await cursor.execute(
        f"""
        UPDATE chaves
        SET allowlist = CASE WHEN revogada_em IS NULL THEN %s::cidr[] ELSE allowlist END
        WHERE conta_id = %s AND id = %s
        RETURNING {_CHAVE}
        """,  # noqa: S608
        (allowlist, conta_id, key_id),
    )
    return await cursor.fetchone()


async def save_code(
    conn: AsyncConnection, *, email: str, nome: str, telefone: str, digest: bytes, ttl: int
) -> None:
    """Stores a new code for the e-mail, replacing any earlier one (and its attempts)."""
    await conn.execute(
        """
        INSERT INTO codigos_email (email, nome, telefone, hash, expira_em)
        VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s))
        ON CONFLICT (email) DO UPDATE SET
            nome = EXCLUDED.nome, telefone = EXCLUDED.telefone, hash = EXCLUDED.hash,
            expira_em = EXCLUDED.expira_em, tentativas = 0, usado_em = NULL
        """,
        (email, nome, telefone, digest, ttl),
    )
    await conn.execute("UPDATE falhas_codigo SET no_codigo = 0 WHERE email = %s", (email,))


async def lock_code(conn: AsyncConnection, email: str) -> Codigo | None:
    """The e-mail's code, locked for this transaction so two checks cannot both use it."""
    cursor = conn.cursor(row_factory=class_row(Codigo))
    await cursor.execute(
        """
        SELECT email, nome, telefone, hash, expira_em <= now() AS expirado, tentativas,
               usado_em IS NOT NULL AS usado
        FROM codigos_email WHERE email = %s FOR UPDATE
        """,
        (email,),
    )
    return await cursor.fetchone()


async def count_failure(conn: AsyncConnection, email: str, origem: str) -> None:
    """A wrong code: one more attempt on the code (from anywhere), and one more on the code and
    on the day from `origem`."""
    await conn.execute(
        "UPDATE codigos_email SET tentativas = tentativas + 1 WHERE email = %s", (email,)
    )
    await conn.execute(
        f"""
        INSERT INTO falhas_codigo (email, origem, dia, falhas, no_codigo)
        VALUES (%s, %s, {_TODAY}, 1, 1)
        ON CONFLICT (email, origem, dia) DO UPDATE SET
            falhas = falhas_codigo.falhas + 1, no_codigo = falhas_codigo.no_codigo + 1
        """,  # noqa: S608 - a constant expression, no caller text
        (email, origem),
    )


async def mark_used(conn: AsyncConnection, email: str) -> None:
    await conn.execute("UPDATE codigos_email SET usado_em = now() WHERE email = %s", (email,))


async def lock_account(conn: AsyncConnection, conta_id: int) -> None:
    """Locks the account's row for this transaction (key creation counts keys under it)."""
    await conn.execute("SELECT 1 FROM contas WHERE id = %s FOR UPDATE", (conta_id,))


async def active_keys(conn: AsyncConnection, conta_id: int) -> int:
    cursor = await conn.execute(
        "SELECT count(*) FROM chaves WHERE conta_id = %s AND revogada_em IS NULL", (conta_id,)
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def count_code_sent(conn: AsyncConnection, email: str) -> int:
    """Counts one more code sent to the e-mail today (UTC); returns today's count."""
    cursor = await conn.execute(
        f"""
        INSERT INTO bootstrap_diario (email, dia, codigos) VALUES (%s, {_TODAY}, 1)
        ON CONFLICT (email, dia) DO UPDATE SET codigos = bootstrap_diario.codigos + 1
        RETURNING codigos
        """,  # noqa: S608 - a constant expression, no caller text
        (email,),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def forget_past_days(conn: AsyncConnection) -> int:
    """Deletes the sign-in counters of days before yesterday (UTC), which no limit reads any
    more; how many rows went."""
    gone = 0
    for table in ("falhas_codigo", "bootstrap_diario"):
        cursor = await conn.execute(
            f"DELETE FROM {table} WHERE dia < {_TODAY} - 1"  # noqa: S608 - constant names
        )
        gone += cursor.rowcount
    return gone


async def failures_from(conn: AsyncConnection, email: str, origem: str) -> tuple[int, int]:
    """Wrong codes tried for the e-mail today (UTC) from `origem`, and those on its current
    code, locked for this transaction."""
    query = f"""
        SELECT falhas, no_codigo FROM falhas_codigo
        WHERE email = %s AND origem = %s AND dia = {_TODAY} FOR UPDATE
        """  # noqa: S608 - a constant expression, no caller text
    cursor = await conn.execute(query, (email, origem))
    row = await cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)
