"""`registry-admin`: database migrations and the first administrator key of an install."""

from __future__ import annotations

import asyncio

import msgspec
import typer
from psycopg import AsyncConnection
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.accounts import repository, service
from app.accounts.keys import check_secret
from app.auth.credentials import TTL
from app.lib.migrate import migrate
from app.ratelimit.limiter import epoch_key
from app.settings import Settings, get_settings

app = typer.Typer(help="Administration of the CNPJ registry: migrations and keys.")


@app.command("migrate")
def migrate_command() -> None:
    """Apply the pending database migrations (idempotent)."""
    applied = migrate(get_settings().database_url)
    typer.echo(f"applied: {', '.join(applied)}" if applied else "database is up to date")


async def _admin_key(email: str, nome: str, rotulo: str, replace: bool) -> str:
    settings = get_settings()
    try:
        secret = check_secret(settings.api_key_secret)
    except ValueError as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(1) from None
    async with await AsyncConnection.connect(settings.database_url) as conn:
        conta, _ = await service.ensure_account(
            conn, nome=nome, email=service.normal_email(email), telefone="",
            plano="enterprise", papel="admin",
        )  # fmt: skip
        if conta.papel != "admin":
            raise typer.BadParameter(f"{email} already has an account that is not admin")
        revoked = 0
        if replace:
            for chave in await repository.list_keys(conn, conta.id):
                if chave.rotulo == rotulo and chave.revogada_em is None:
                    await repository.revoke_key(conn, conta.id, chave.id)
                    revoked += 1
        issued = await service.issue_key(conn, secret, conta.id, rotulo, [])
    if revoked:
        await _credentials_changed(settings)
    return issued.api_key


async def _credentials_changed(settings: Settings) -> None:
    """Tells the API's processes that keys were revoked (their credential caches)."""
    redis = Redis.from_url(settings.redis_url, socket_timeout=5)
    try:
        await redis.incr(epoch_key(settings.redis_prefix))
    except (RedisError, OSError):
        typer.echo(
            "warning: Redis did not answer; the revoked keys stop working within "
            f"{TTL:.0f} s instead of at once",
            err=True,
        )
    finally:
        await redis.aclose()


ADMIN_EMAIL = "admin@localhost.localdomain"
"""The administrator's address by default: one the dashboard's sign-in takes, so the
administrator signs in there too (on a machine without SMTP the code is written to MAIL_DIR)."""


@app.command("create-admin-key")
def create_admin_key(
    email: str = typer.Option(
        ADMIN_EMAIL, help="E-mail of the administrator account (one the dashboard's sign-in takes)."
    ),
    nome: str = typer.Option("Administrador", help="Name, when the account is created."),
    rotulo: str = typer.Option("admin", help="Label of the new key."),
    replace: bool = typer.Option(
        False, "--replace", help="Revoke the account's earlier keys with the same label."
    ),
) -> None:
    """Create the administrator account if missing, and print a new API key for it (the key
    is shown only here; run again for another)."""
    try:
        msgspec.convert(email, service.Email)
    except msgspec.ValidationError:
        typer.echo(f"not an e-mail the dashboard's sign-in takes: {email!r}", err=True)
        raise typer.Exit(2) from None
    typer.echo(asyncio.run(_admin_key(email, nome, rotulo, replace)))
