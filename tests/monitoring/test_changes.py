"""Changes between two releases, end to end: a copy of the sample release is loaded, monitors
watch some of its companies, a modified copy is loaded (the indexer records the release after
the swap, the worker checks every monitor against it) and exactly the changed companies raise
events, with the right field diffs, signed and delivered to a real receiver. Loading the same
data again raises nothing."""

from __future__ import annotations

import csv
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from app.settings import get_settings
from indexer.cli import app as indexer_cli
from indexer.load import RELEASE_RECORDED
from tests.conftest import SAMPLE, Issued, Loader, MakeKey, Server
from tests.monitoring.conftest import create_monitor
from tests.peers import Receiver, Worker, until
from tests.releases import partner, rows

ESTABLISHMENTS = "ESTABELE.csv"
PARTNERS = "SOCIOCSV.csv"
OLD_PARTNER = partner("MARIA DAS DORES SOUZA", "***123456**")
KEPT_PARTNER = partner("JOSE CARLOS PEREIRA", "***654321**")
NEW_PARTNER = partner("ANA PAULA RIBEIRO", "***777888**")
NEW_CEP, NEW_NUMBER = "01310100", "1578"
NEW_CNAE = "6201501"


@dataclass(frozen=True)
class Roles:
    """The sample's establishments the test changes (or keeps) in the second release."""

    situacao: str
    endereco: str
    socios: str
    cnaes: str
    removida: str
    controls: tuple[str, str]

    @property
    def changed(self) -> dict[str, str]:
        return {
            "situacao": self.situacao,
            "endereco": self.endereco,
            "socios": self.socios,
            "cnaes": self.cnaes,
            "removida": self.removida,
        }


@dataclass(frozen=True)
class Releases:
    first: Path
    second: Path
    roles: Roles
    old_address: tuple[str, str]
    """CEP and number of `endereco` in the first release."""
    dropped_cnae: str
    """The secondary activity of `cnaes` that the second release drops."""


def _read(path: Path) -> list[list[str]]:
    with path.open(encoding="latin-1", newline="") as handle:
        return list(csv.reader(handle, delimiter=";"))


def _cnpj(row: list[str]) -> str:
    return row[0] + row[1] + row[2]


def _pick(establishments: list[list[str]]) -> Roles:
    """Active real establishments with at least two secondary activities, one per role."""
    found = [
        _cnpj(row)
        for row in establishments
        if row[5] == "02" and "," in row[12] and not row[0].startswith("99")
    ]
    assert len(found) >= 7, "the sample no longer has enough active companies"
    return Roles(*found[:5], controls=(found[5], found[6]))


@pytest.fixture(scope="module")
def two_releases(tmp_path_factory: pytest.TempPathFactory) -> Releases:
    """The sample with two partners on one company (the sample has no joined partners), and a
    copy where five monitored companies differ in one way each."""
    base = tmp_path_factory.mktemp("releases")
    first, second = base / "first", base / "second"
    shutil.copytree(SAMPLE, first)
    establishments = _read(first / ESTABLISHMENTS)
    roles = _pick(establishments)
    partner_root = roles.socios[:8]
    partners = _read(first / PARTNERS)
    (first / PARTNERS).write_bytes(
        rows(*partners, [partner_root, *OLD_PARTNER], [partner_root, *KEPT_PARTNER])
    )
    shutil.copytree(first, second)

    changed: list[list[str]] = []
    old_address: tuple[str, str] = ("", "")
    dropped = ""
    for row in establishments:
        cnpj = _cnpj(row)
        row = list(row)
        if cnpj == roles.removida:
            continue
        if cnpj == roles.situacao:
            row[5], row[6], row[7] = "08", "20260901", "01"  # baixada, extinção voluntária
        elif cnpj == roles.endereco:
            old_address = (row[18], row[15])
            row[18], row[15] = NEW_CEP, NEW_NUMBER
        elif cnpj == roles.cnaes:
            codes = row[12].split(",")
            dropped = codes[0]
            row[12] = ",".join([*codes[1:], NEW_CNAE])
        changed.append(row)
    (second / ESTABLISHMENTS).write_bytes(rows(*changed))
    (second / PARTNERS).write_bytes(
        rows(*partners, [partner_root, *KEPT_PARTNER], [partner_root, *NEW_PARTNER])
    )
    return Releases(first, second, roles, old_address, dropped)


@pytest.fixture(scope="module")
def monitored_alias(load: Loader, new_alias: Callable[[], str], two_releases: Releases) -> str:
    alias = new_alias()
    load(two_releases.first, alias)
    return alias


def _checked(database: str, index: str) -> bool:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT verificada_em IS NOT NULL FROM releases WHERE indice = %s", (index,)
        ).fetchone()
    return bool(row and row[0])


def _events_of(database: str, monitor_ids: list[int]) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM entregas WHERE monitor_id = ANY(%s)", (monitor_ids,)
        ).fetchone()
    return int(row[0]) if row else 0


def _fields(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {change["campo"]: change for change in event["data"]["mudancas"]}


@dataclass
class Watching:
    key: Issued
    monitors: dict[str, int]
    """Receiver name to monitor id."""


@pytest.fixture(scope="module")
def watching(
    server: Server, worker: Worker, make_key: MakeKey, receiver: Receiver, two_releases: Releases
) -> Watching:
    key = make_key()
    roles = two_releases.roles
    targets = {
        **{f"chg-{role}": cnpj for role, cnpj in roles.changed.items()},
        "chg-control-a": roles.controls[0],
        "chg-control-b": roles.controls[1],
    }
    monitors = {
        name: create_monitor(server, key, receiver, name, cnpj)["monitor"]["id"]
        for name, cnpj in targets.items()
    }
    # Watches only removals: the change of situação is not its business.
    monitors["chg-only-removal"] = create_monitor(
        server, key, receiver, "chg-only-removal", roles.situacao, eventos=["empresa.removida"]
    )["monitor"]["id"]
    return Watching(key, monitors)


def test_release_swap_raises_exactly_the_changes(
    load: Loader,
    monitored_alias: str,
    two_releases: Releases,
    watching: Watching,
    receiver: Receiver,
    database: str,
) -> None:
    report = load(two_releases.second, monitored_alias)
    assert report.live
    assert report.release_recorded, report.release_note
    until(lambda: _checked(database, report.index), seconds=60)
    roles = two_releases.roles

    got = {role: receiver.wait(f"chg-{role}", 1, seconds=60)[0] for role in roles.changed}
    for role, received in got.items():
        assert received.verified is True, role
        assert received.event["data"]["cnpj"] == roles.changed[role]
        assert received.event["data"]["indice"] == report.index
        assert received.headers["webhook-id"]

    removed = got.pop("removida").event
    assert removed["type"] == "empresa.removida"
    assert removed["data"]["ultimo_registro"]["cnpj"] == roles.removida
    assert {item.event["type"] for item in got.values()} == {"empresa.alterada"}

    situacao = _fields(got["situacao"].event)
    assert all(field.startswith("situacao_cadastral.") for field in situacao), situacao
    assert (situacao["situacao_cadastral.codigo"]["antes"],
            situacao["situacao_cadastral.codigo"]["depois"]) == ("02", "08")  # fmt: skip
    assert situacao["situacao_cadastral.data"]["depois"] == "2026-09-01"

    endereco = _fields(got["endereco"].event)
    assert set(endereco) == {"endereco.cep", "endereco.numero"}
    assert (endereco["endereco.cep"]["antes"], endereco["endereco.numero"]["antes"]) == (
        two_releases.old_address
    )
    assert (endereco["endereco.cep"]["depois"], endereco["endereco.numero"]["depois"]) == (
        NEW_CEP,
        NEW_NUMBER,
    )

    socios = _fields(got["socios"].event)
    assert set(socios) == {"socios"}
    assert [item["nome"] for item in socios["socios"]["adicionados"]] == [NEW_PARTNER[1]]
    assert [item["nome"] for item in socios["socios"]["removidos"]] == [OLD_PARTNER[1]]
    assert "alterados" not in socios["socios"]

    cnaes = _fields(got["cnaes"].event)
    assert set(cnaes) == {"cnaes_secundarios"}
    assert [item["codigo"] for item in cnaes["cnaes_secundarios"]["adicionados"]] == [NEW_CNAE]
    assert [item["codigo"] for item in cnaes["cnaes_secundarios"]["removidos"]] == [
        two_releases.dropped_cnae
    ]

    # The check has committed every event it raised: the others raised none.
    quiet = ["chg-control-a", "chg-control-b", "chg-only-removal"]
    assert _events_of(database, [watching.monitors[name] for name in quiet]) == 0
    assert all(receiver.of(name) == [] for name in quiet)
    changed_ids = [watching.monitors[f"chg-{role}"] for role in roles.changed]
    assert _events_of(database, changed_ids) == len(roles.changed)


def test_identical_reload_raises_nothing(
    load: Loader,
    monitored_alias: str,
    two_releases: Releases,
    watching: Watching,
    receiver: Receiver,
    database: str,
    server: Server,
) -> None:
    ids = list(watching.monitors.values())
    before = _events_of(database, ids)
    report = load(two_releases.second, monitored_alias)
    assert report.release_recorded
    assert (report.changed, report.new) == (0, 0), report
    until(lambda: _checked(database, report.index), seconds=60)
    assert _events_of(database, ids) == before
    # Each monitor now holds the live record: checking one by hand finds nothing either.
    with server.client(headers=watching.key.headers) as client:
        answer = client.post(
            f"/v1/me/monitoramentos/{watching.monitors['chg-endereco']}/verificar"
        ).json()
    assert (answer["alterado"], answer["mudancas"], answer["indice"]) == (
        False,
        [],
        report.index,
    )


def test_release_the_indexer_could_not_record_is_recorded_by_the_worker(
    load: Loader,
    es: Elasticsearch,
    monitored_alias: str,
    two_releases: Releases,
    worker: Worker,
    database: str,
) -> None:
    """PostgreSQL away at the swap: the release goes live all the same, the report says it was
    not recorded, and the worker records it (with its check) within seconds."""
    report = load(
        two_releases.second,
        monitored_alias,
        database_url=f"postgresql://nobody@127.0.0.1:{_closed_port()}/none",
    )
    assert report.live
    assert not report.release_recorded
    assert "release not recorded" in (report.release_note or "")
    assert es.indices.get_alias(name=monitored_alias).body.keys() == {report.index}
    until(lambda: _checked(database, report.index), seconds=40)


def _closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_rollback_checks_the_monitors_against_the_release_live_again(
    es: Elasticsearch,
    monitored_alias: str,
    two_releases: Releases,
    watching: Watching,
    receiver: Receiver,
    database: str,
) -> None:
    """`indexer rollback` records the older release live again, and the worker checks every
    monitor against it as against a new one: rolled back to the same data, nothing is raised;
    rolled back to the first release, each changed company is reported changed back."""
    steps: list[tuple[str, str]] = []
    for _ in range(3):  # the three loads of the second release, then the first one
        started = _now(database)
        result = CliRunner().invoke(
            indexer_cli, ["rollback", "--alias", monitored_alias,
                          "--url", get_settings().elasticsearch_url],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert RELEASE_RECORDED in " ".join(result.output.split()), result.output
        [live] = es.indices.get_alias(name=monitored_alias).body
        until(lambda index=live, since=started: _checked_since(database, index, since), seconds=60)
        steps.append((live, started))
    assert [index for index, _ in steps] == sorted((index for index, _ in steps), reverse=True)
    quiet = ["chg-control-a", "chg-control-b", "chg-only-removal"]
    assert all(receiver.of(name) == [] for name in quiet)
    roles = two_releases.roles
    _, back = receiver.wait("chg-removida", 2, seconds=60)  # in the first release, it is back
    assert (back.event["type"], back.event["data"]["cnpj"]) == ("empresa.alterada", roles.removida)
    for role in ("situacao", "endereco", "socios", "cnaes"):
        first, back = receiver.wait(f"chg-{role}", 2, seconds=60)
        assert back.verified is True
        assert back.event["type"] == "empresa.alterada"
        assert back.event["data"]["cnpj"] == roles.changed[role]
        assert back.event["data"]["indice"] == steps[-1][0]
        # Changed back: each field's before and after are the forward change's, swapped.
        forward, backward = _fields(first.event), _fields(back.event)
        assert forward.keys() == backward.keys(), role
        for field, change in forward.items():
            if "antes" in change:
                assert (backward[field]["antes"], backward[field]["depois"]) == (
                    change["depois"],
                    change["antes"],
                ), field
            else:  # a list: what was added is removed, and the other way round
                assert backward[field]["adicionados"] == change["removidos"], field
                assert backward[field]["removidos"] == change["adicionados"], field
    endereco = _fields(receiver.of("chg-endereco")[1].event)
    assert (endereco["endereco.cep"]["depois"], endereco["endereco.numero"]["depois"]) == (
        two_releases.old_address
    )


def _now(database: str) -> str:
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT now()::text").fetchone()
    assert row is not None
    return str(row[0])


def _checked_since(database: str, index: str, since: str) -> bool:
    """Whether the release `index` was recorded live at or after `since` and checked since."""
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT publicada_em >= %s::timestamptz AND verificada_em IS NOT NULL "
            "FROM releases WHERE indice = %s",
            (since, index),
        ).fetchone()
    return bool(row and row[0])
