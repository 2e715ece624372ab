"""PostgreSQL unreachable (a server started against a closed port): a route that needs it and
takes no key (the token bootstrap) answers 503 with `Retry-After` through the app's handler of
database failures, never a 500 (a keyed route is refused earlier, by the key check)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.accounts.keys import CODE_DIGITS
from tests.conftest import Server, serving
from tests.loopback import free_port


@pytest.fixture(scope="module")
def database_away(peer_alias: str) -> Iterator[Server]:
    closed = f"postgresql://registry:registry@127.0.0.1:{free_port()}/registry"
    env = {"DATABASE_URL": closed, "REQUEST_TIMEOUT": "1", "HEALTH_TIMEOUT": "0.5"}
    with serving(peer_alias, workers=1, env=env) as server:
        yield server


def test_bootstrap_with_database_away_503_retry_after(database_away: Server) -> None:
    email = "sem-banco@example.com"
    with database_away.client(headers={}) as client:
        started = client.post(
            "/api/mcp/auth/start", json={"nome": "Ana", "email": email, "telefone": ""}
        )
        verified = client.post(
            "/api/mcp/auth/verify", json={"email": email, "codigo": "0" * CODE_DIGITS}
        )
    for response in (started, verified):
        assert response.status_code == 503, response.text
        assert response.json()["error"] == "Service Unavailable"
        assert response.json()["message"]
        assert response.headers["Retry-After"] == "5"
