"""What the scripts that run the app on state of their own share: a scratch database (created,
migrated, dropped at the end), with a plan row, and the wait for a process to listen."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.lib.migrate import migrate
from tests.loopback import free_port

__all__ = ["database_url", "drop_database", "free_port", "fresh_database", "wait_port"]


def database_url(base: str, name: str) -> str:
    """The URL of database `name` on the server of `base`."""
    return urlsplit(base)._replace(path=f"/{name}").geturl()


def drop_database(base: str, name: str) -> None:
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def fresh_database(base: str, name: str, plan: tuple[str, int, int] | None = None) -> str:
    """Database `name`, created anew and migrated, with the plan row `(name, requests a minute,
    leads a month)` when given; its URL."""
    drop_database(base, name)
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = database_url(base, name)
    migrate(url)
    if plan:
        with psycopg.connect(url) as conn:
            conn.execute(
                "INSERT INTO planos (nome, limite_por_minuto, leads_mes) VALUES (%s, %s, %s) "
                "ON CONFLICT (nome) DO NOTHING",
                plan,
            )
    return url


def wait_port(port: int, process: subprocess.Popen[bytes], what: str, seconds: float = 30) -> None:
    """Returns once something listens on loopback `port`; fails when `process` exits first or
    `seconds` pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.2)
