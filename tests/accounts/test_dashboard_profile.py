"""The dashboard's profile of a signed-in account comes from the process's cache
(`app.web.profiles`): a plan changed by SQL shows within its TTL, at once after the credentials'
epoch is bumped; signing out is never cached."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

from app.accounts.repository import Perfil
from app.web.profiles import ProfileCache
from app.web.sessions import SESSION_COOKIE
from tests.conftest import Server, migrated, new_key, serving

OTHER_PLAN = "teste-perfil-outro"
CNPJ_SAMPLE = "00532451000170"
"""A record of the bundled sample."""


def _perfil(conta_id: int, plano: str = "free") -> Perfil:
    return Perfil(
        id=conta_id, nome="Teste", email="teste@example.com", telefone="", plano=plano,
        papel="usuario", criada_em=datetime.now(UTC), limite_por_minuto=60,
    )  # fmt: skip


def test_cache_answers_within_its_epoch_and_ttl() -> None:
    cache = ProfileCache(ttl=60, size=2)
    cache.put(1, _perfil(1), epoch=None)  # no epoch seen yet: not kept
    assert cache.get(1, None) is None
    cache.put(1, _perfil(1), epoch=5)
    kept = cache.get(1, 5)
    assert kept is not None
    assert kept.id == 1
    assert cache.get(1, 6) is None  # another epoch: dropped
    assert cache.get(1, 5) is None
    for conta in (1, 2, 3):  # at most `size` entries, the oldest dropped first
        cache.put(conta, _perfil(conta), epoch=5)
    assert cache.get(1, 5) is None
    assert cache.get(3, 5) is not None
    expired = ProfileCache(ttl=0)
    expired.put(1, _perfil(1), epoch=5)
    time.sleep(0.01)
    assert expired.get(1, 5) is None


@pytest.fixture(scope="module")
def one_worker(sample_alias: str) -> Iterator[Server]:
    with serving(sample_alias, workers=1) as server:  # one process: one cache
        yield server


def test_plan_changed_by_sql_shows_after_the_epoch_bump(one_worker: Server) -> None:
    with psycopg.connect(migrated()) as conn:
        conn.execute(
            "INSERT INTO planos (nome, limite_por_minuto) VALUES (%s, 77) "
            "ON CONFLICT (nome) DO NOTHING",
            (OTHER_PLAN,),
        )
    issued = new_key()
    cookies = {SESSION_COOKIE: one_worker.open_session(issued.conta_id)}
    with one_worker.client(headers=issued.headers) as api:
        assert api.get(f"/v1/cnpj/{CNPJ_SAMPLE}").status_code == 200  # the epoch is seen
    with one_worker.client(cookies=cookies) as page:
        before = page.get("/painel")
        assert before.status_code == 200
        assert OTHER_PLAN not in before.text
        with psycopg.connect(migrated()) as conn:
            conn.execute(
                "UPDATE contas SET plano = %s WHERE id = %s", (OTHER_PLAN, issued.conta_id)
            )
        assert OTHER_PLAN not in page.get("/painel").text  # the cached profile
        one_worker.bump_epoch()
        with one_worker.client(headers=issued.headers) as api:  # a window check sees the bump
            assert api.get(f"/v1/cnpj/{CNPJ_SAMPLE}").status_code == 200
        after = page.get("/painel")
        assert OTHER_PLAN in after.text
        assert "77" in after.text


def test_signing_out_is_not_cached(one_worker: Server) -> None:
    issued = new_key()
    token = one_worker.open_session(issued.conta_id)
    with one_worker.client(headers=issued.headers) as api:
        assert api.get(f"/v1/cnpj/{CNPJ_SAMPLE}").status_code == 200
    with one_worker.client(cookies={SESSION_COOKIE: token}) as page:
        assert page.get("/painel").status_code == 200  # cached now
    one_worker.close_session(token)
    with one_worker.client(cookies={SESSION_COOKIE: token}) as page:
        answer = page.get("/painel")
        assert answer.status_code in (302, 303)
        assert answer.headers["location"].startswith("/painel/entrar")
