"""The `indexer` command line, end to end against the real Elasticsearch."""

from __future__ import annotations

import fcntl
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import lmdb
import pytest
import typer
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from app.settings import get_settings
from indexer.cli import app
from indexer.cli_output import failing
from tests.conftest import PEER_DATA, SERPRO, stored

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    """Exit status and output, its lines joined (the console wraps long ones)."""
    result = runner.invoke(app, [*args, "--url", get_settings().elasticsearch_url])
    return result.exit_code, " ".join(result.output.split())


def test_cli_load_report_indices_rollback_drop(
    es: Elasticsearch, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    alias = new_alias()
    report_path = tmp_path / "report.json"
    code, output = _invoke(
        "load", str(PEER_DATA), "--alias", alias, "--report", str(report_path),
        "--bad-rows", str(tmp_path / "bad.csv"),
    )  # fmt: skip
    assert code == 0, output
    assert "1 documents written" in output
    report = json.loads(report_path.read_text())
    assert report["documents_written"] == 1
    assert report["live"] is True
    code, output = _invoke("rollback", "--alias", alias)
    assert code == 1
    assert "no finished release older" in output
    code, _ = _invoke("load", str(PEER_DATA), "--alias", alias)
    assert code == 0
    code, output = _invoke("indices", "--alias", alias)
    assert code == 0
    assert output.count(alias + "-") == 3  # two rows and the alias line
    code, output = _invoke("rollback", "--alias", alias)
    assert code == 0, output
    assert es.indices.get_alias(name=alias).body.keys() == {report["index"]}
    code, output = _invoke("drop", "--alias", alias, "--keep", "1")
    assert code == 0
    assert stored(es, alias, SERPRO) is not None


def test_cli_load_missing_path_fails_cleanly(tmp_path: Path) -> None:
    code, output = _invoke("load", str(tmp_path / "nothing-here"))
    assert code == 2
    assert "does not exist" in output


def test_cli_load_bad_memory_limit_fails_cleanly(new_alias: Callable[[], str]) -> None:
    code, output = _invoke("load", str(PEER_DATA), "--alias", new_alias(), "--memory-limit", "lots")
    assert code == 2  # a usage error, as for every other option
    assert "invalid memory size" in output


def test_cli_load_into_the_name_of_an_index_fails_before_work(
    es: Elasticsearch, new_alias: Callable[[], str]
) -> None:
    """An alias cannot take an index's name: the load says so before it reads the month, not
    after loading it into an index it cannot make live."""
    name = new_alias()
    es.indices.create(index=name)
    try:
        code, output = _invoke("load", str(PEER_DATA), "--alias", name)
        assert code == 1
        assert f"'{name}' is the name of an index, not of an alias" in output
        assert "documents written" not in output
        assert set(es.indices.get(index=f"{name}*").body) == {name}  # no release index made
    finally:
        es.indices.delete(index=name)


def test_cli_load_elasticsearch_unreachable_fails_cleanly() -> None:
    result = runner.invoke(app, ["load", str(PEER_DATA), "--url", "http://127.0.0.1:1"])
    assert result.exit_code == 1
    assert "load failed" in result.output


def _release(tmp_path: Path, name: str) -> Path:
    release = tmp_path / name
    shutil.copytree(PEER_DATA, release)
    return release


def test_cli_release_without_establishments_or_with_a_damaged_file_never_goes_live(
    es: Elasticsearch, new_alias: Callable[[], str], tmp_path: Path
) -> None:
    """A release goes live whole or not at all: the live one stays when the folder is empty,
    holds no establishments or lacks another part every record draws on (companies, partners,
    Simples, a code table), has one that yields no row, or has a file that cannot be read."""
    alias = new_alias()
    assert _invoke("load", str(PEER_DATA), "--alias", alias)[0] == 0
    live = set(es.indices.get_alias(name=alias).body)
    empty = tmp_path / "empty"
    empty.mkdir()
    references_only = _release(tmp_path, "references")
    for item in references_only.iterdir():
        if not item.name.startswith(("Cnaes", "Municipios", "Paises", "Naturezas")):
            shutil.rmtree(item) if item.is_dir() else item.unlink()
    no_rows = _release(tmp_path, "no-rows")
    with zipfile.ZipFile(no_rows / "Estabelecimentos0.zip", "w") as archive:
        bad = ";".join(['"12345678"', '"0001"', '"99"', *(['""'] * 27)])  # 30 columns, all bad
        archive.writestr("Estabelecimentos0", bad + "\n")
    damaged = _release(tmp_path, "damaged")
    whole = (damaged / "Socios0.zip").read_bytes()
    (damaged / "Socios0.zip").write_bytes(whole[: len(whole) // 2])
    page = _release(tmp_path, "page")  # an error page a download saved under the zip's name
    (page / "Empresas0.zip").write_text("<html><body>503 Service Unavailable</body></html>\n")
    nothing = _release(tmp_path, "nothing")
    (nothing / "Socios0.zip").write_bytes(b"")
    empty_part = _release(tmp_path, "empty-part")
    (empty_part / "Socios1.csv").write_bytes(b"")
    regime = _release(tmp_path, "regime")  # a tax-regime file whose header changed
    with zipfile.ZipFile(regime / "Lucro Real.zip", "w") as archive:
        archive.writestr("Lucro Real.csv", "ano;cnpj;cnpj_da_scp;forma_de_tributacao;qtde\n")
    blank_regime = _release(tmp_path, "blank-regime")  # a tax-regime file left empty
    (blank_regime / "Lucro Real.csv").write_bytes(b"")
    hollow = _release(tmp_path, "hollow")  # a zip named as a part, with no member
    with zipfile.ZipFile(hollow / "Socios0.zip", "w"):
        pass
    note = _release(tmp_path, "note")  # a zip named as a part, holding only a note
    with zipfile.ZipFile(note / "Simples.zip", "w") as archive:
        archive.writestr("LEIAME.txt", "Arquivo em manutenção.\n")
    tabbed = _release(tmp_path, "tabbed")  # a part in another format: tab separated
    with zipfile.ZipFile(tabbed / "Estabelecimentos1.zip", "w") as archive:
        archive.writestr("K3241.K03200Y1.D50308.ESTABELE", "\t".join(['"1"'] * 30) + "\n")
    no_companies = _release(tmp_path, "no-companies")  # establishments without their companies
    for part in no_companies.glob("Empresas*.zip"):
        part.unlink()
    lacking = {}  # the other parts every record draws on, each left out
    for name, parts in [("no-partners", ["Socios*.zip"]), ("no-simples", ["Simples.zip"]),
                        ("no-tables", ["Cnaes.zip", "Paises.zip"])]:  # fmt: skip
        lacking[name] = _release(tmp_path, name)
        for part in parts:
            for file in lacking[name].glob(part):
                file.unlink()
    months = tmp_path / "months"  # a folder of months, pointed at instead of one of them
    for month in ("2025-11", "2025-12"):
        shutil.copytree(PEER_DATA, months / month)
    cases = [
        (empty, "no establishments file"),
        (references_only, "no establishments file"),
        (no_rows, "no establishment row"),
        (damaged, "Socios0.zip (unreadable: damaged or truncated zip"),
        (page, "Empresas0.zip (unreadable: named .zip but not a zip archive)"),
        (nothing, "Socios0.zip (unreadable: named .zip but not a zip archive)"),
        (empty_part, "Socios1.csv (named like socios but empty)"),
        (regime, "Lucro Real.zip:Lucro Real.csv (named like regimes but its first line"),
        (months, "it holds 2 months (2025-11, 2025-12)"),
        (no_companies, "no companies file (Empresas*.zip): every record would lack its company"),
        (lacking["no-partners"], "no partners file (Socios*.zip): every record would lack its"),
        (lacking["no-simples"], "no Simples file (Simples.zip): every record would lack its"),
        (
            lacking["no-tables"],
            "no CNAE table file (Cnaes.zip), no countries table file (Paises.zip): every record "
            "would lack the names of its activities; the names of its countries, and every "
            "monitor would report it changed",
        ),
        (hollow, "Socios0.zip (named like socios: no file inside)"),
        (blank_regime, "Lucro Real.csv (named like regimes but empty)"),
        (note, "Simples.zip (named like simples: not a CSV file"),
        (tabbed, "Estabelecimentos1.zip (named like estabelecimentos: not a CSV file"),
    ]
    for folder, said in cases:
        code, output = _invoke("load", str(folder), "--alias", alias)
        assert code == 1, output
        assert said in output
        assert "Traceback" not in output
        assert set(es.indices.get_alias(name=alias).body) == live, folder.name
    assert stored(es, alias, SERPRO) is not None


def test_cli_commands_fail_in_one_line_before_any_work(
    new_alias: Callable[[], str], tmp_path: Path
) -> None:
    unreachable = "http://127.0.0.1:1"
    for command in ("indices", "drop", "rollback"):
        result = runner.invoke(app, [command, "--alias", "x", "--url", unreachable])
        assert result.exit_code == 1, result.output
        assert f"{command} failed" in result.output
        assert "Traceback" not in result.output
    for bad in ("", "UPPER", "a b", "-x"):
        code, output = _invoke("indices", "--alias", bad)
        assert code == 2, bad
        assert "lower-case" in output
    code, output = _invoke("indices", "--alias", "empresas-ref")  # another alias's catalog
    assert code == 2
    assert "names the catalog of another alias" in output
    for command in ("indices", "drop", "rollback", "warm", "load"):
        for url in ("notaurl", "http://127.0.0.1:99999", "http://user:secret@[::1"):
            options = [str(PEER_DATA)] if command == "load" else []
            result = runner.invoke(app, [command, *options, "--alias", "x", "--url", url])
            assert result.exit_code == 2, (command, url, result.output)
            assert "scheme, host and port" in " ".join(result.output.split())
            assert "Traceback" not in result.output
            assert "secret" not in result.output, "a password is never shown back"
    alias = new_alias()
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--records-dir", str(a_file))
    assert code == 2
    assert "is a file" in output
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--report", str(tmp_path))
    assert code == 2
    assert "is a folder" in output
    under_a_file = a_file / "report.json"  # its folder cannot be made
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--report", str(under_a_file))
    assert code == 2
    assert "cannot write" in output
    report = tmp_path / "new" / "folders" / "report.json"
    workdir = tmp_path / "staging" / "deeper"
    code, output = _invoke(
        "load", str(PEER_DATA), "--alias", alias, "--report", str(report), "--workdir", str(workdir)
    )
    assert code == 0, output
    assert json.loads(report.read_text())["live"] is True
    code, output = _invoke("drop", "--alias", alias)
    assert code == 0
    assert "nothing to delete" in output


def test_records_dir_checked_before_any_work(new_alias: Callable[[], str], tmp_path: Path) -> None:
    """A folder the store cannot be written in is refused at once (it failed only after the
    whole month was read and indexed); a file is no folder, for the store or the staging
    (`--workdir`); and so is a bad-rows file that cannot be written (it failed after the
    staging folder was made, and left it)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for folder, said in (("/proc", "cannot write in /proc"), (str(a_file), "is a file")):
        code, output = _invoke(
            "load", str(PEER_DATA), "--alias", new_alias(), "--records-dir", folder
        )
        assert code == 2, output
        assert output.startswith("--records-dir: ")
        assert said in output
        assert "files read" not in output.lower(), "refused before reading"
    code, output = _invoke(
        "load", str(PEER_DATA), "--alias", new_alias(), "--bad-rows", "/proc/nope/bad.csv"
    )
    assert code == 2, output
    assert output.startswith("--bad-rows: cannot write /proc/nope/bad.csv")
    code, output = _invoke("load", str(PEER_DATA), "--alias", new_alias(), "--workdir", str(a_file))
    assert code == 2, output
    assert output.startswith("--workdir: ")


def test_a_record_store_failure_ends_the_command_in_one_line() -> None:
    """A store that fails while it is written (a full disk: `lmdb.DiskError`) is one line and
    exit status 1, as a failure of the staging database is."""
    with pytest.raises(typer.Exit) as ended, failing("load"):
        raise lmdb.DiskError("mdb_put: No space left on device")
    assert ended.value.exit_code == 1


def test_nothing_fails_after_the_swap_and_a_load_without_store_drops_the_pointer(
    es: Elasticsearch, new_alias: Callable[[], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report that cannot be written, or a bad setting, is refused before any work (it
    failed after the alias had moved); a load with `--no-records` removes the alias's store
    pointer, so lookups read the new release from Elasticsearch, not last month's store; a
    batch past Elasticsearch's result window is refused as an option."""
    alias, stores = new_alias(), tmp_path / "stores"
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--report", "/proc/version")
    assert (code, output.startswith("--report: cannot write /proc/version")) == (2, True), output
    url = get_settings().elasticsearch_url
    with monkeypatch.context() as patched:
        patched.setenv("SMTP_PORT", "abc")
        get_settings.cache_clear()
        result = runner.invoke(app, ["load", str(PEER_DATA), "--alias", alias, "--url", url])
    get_settings.cache_clear()
    assert result.exit_code == 1, result.output
    assert "smtp_port" in result.output
    assert not es.indices.exists_alias(name=alias)
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--records-dir", str(stores))
    assert code == 0, output
    pointer = stores / f"{alias}.current"
    assert pointer.exists()
    code, output = _invoke(
        "load", str(PEER_DATA), "--alias", alias, "--records-dir", str(stores), "--no-records"
    )
    assert code == 0, output
    assert not pointer.exists(), "last month's store no longer answers for the alias"
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--batch-size", "12000")
    assert code == 2
    assert "--batch-size" in output


def test_one_load_of_an_alias_at_a_time_whatever_the_temporary_folder(
    new_alias: Callable[[], str], tmp_path: Path
) -> None:
    """The lock lives in the records folder, the alias's state on the machine: a second load
    from a session with another temporary folder (a service's private /tmp) still meets it."""
    alias, stores = new_alias(), tmp_path / "stores"
    stores.mkdir()
    with (stores / f"cnpj-indexer-{alias}.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a load of the alias is running
        code, output = _invoke(
            "load", str(PEER_DATA), "--alias", alias, "--records-dir", str(stores)
        )
        fcntl.flock(held, fcntl.LOCK_UN)
    assert code == 1, output
    assert f"another load of {alias} is running" in output
    code, output = _invoke("load", str(PEER_DATA), "--alias", alias, "--records-dir", str(stores))
    assert code == 0, output
