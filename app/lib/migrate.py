"""Versioned SQL migrations (`app/migrations/NNNN_*.sql`), applied by yoyo-migrations.

yoyo: plain SQL files, a lock so two runners never migrate at once, a table of applied
versions so re-running applies only what is new, and a psycopg 3 backend. It is used by
`registry-admin migrate`, `scripts/run.sh` and the tests' session fixture.
"""

from __future__ import annotations

from pathlib import Path

from yoyo import get_backend, read_migrations

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def yoyo_url(database_url: str) -> str:
    """yoyo's name for a PostgreSQL address through psycopg 3."""
    scheme, sep, rest = database_url.partition("://")
    if scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg{sep}{rest}"
    return database_url


def migrate(database_url: str) -> list[str]:
    """Applies the pending migrations; returns the ids of those applied."""
    backend = get_backend(yoyo_url(database_url))
    try:
        migrations = read_migrations(str(MIGRATIONS))
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
    finally:
        backend.connection.close()
    return [m.id for m in pending]
