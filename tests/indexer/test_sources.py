from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from indexer.sources import LINKED_FOLDER, Kind, scan
from tests.conftest import PEER_DATA, RECEITA_SAMPLE, ROOT


def test_scan_peer_release_zips_recognised_by_kind() -> None:
    recognised, ignored = scan(PEER_DATA)
    kinds = sorted(item.kind.value for item in recognised)
    assert kinds == sorted(
        ["cnaes", "empresas", "empresas", "estabelecimentos", "motivos", "municipios",
         "naturezas", "paises", "qualificacoes", "simples", "socios",
         "regimes", "regimes", "regimes", "regimes"]
    )  # fmt: skip
    ignored_names = {item.source.path.name for item in ignored}
    assert ignored_names == {"PROVENANCE.txt", "tabmun.csv", "response.json", "updated_at.txt"}


def test_scan_member_names_unstable_kind_from_name_or_columns(tmp_path: Path) -> None:
    release = tmp_path / "2026-11"
    release.mkdir()
    with zipfile.ZipFile(release / "Estabelecimentos3.zip", "w") as archive:
        archive.write(RECEITA_SAMPLE / "ESTABELE.csv", "K3241.K03200Y3.D61108.ESTABELE")
    with zipfile.ZipFile(release / "Simples.zip", "w") as archive:
        archive.write(RECEITA_SAMPLE / "SIMPLESCSV.csv", "F.K03200$W.SIMPLES.CSV.D61108")
    shutil.copy(RECEITA_SAMPLE / "SOCIOCSV.csv", release / "part-0007.csv")
    recognised, ignored = scan(release)
    assert ignored == []
    assert {item.source.name: item.kind for item in recognised} == {
        "Estabelecimentos3.zip:K3241.K03200Y3.D61108.ESTABELE": Kind.ESTABELECIMENTOS,
        "Simples.zip:F.K03200$W.SIMPLES.CSV.D61108": Kind.SIMPLES,
        "part-0007.csv": Kind.SOCIOS,
    }


def test_scan_state_registrations_by_name_only(tmp_path: Path) -> None:
    registrations = ROOT / "fixtures" / "sample" / "INSCRICOES.ESTADUAIS.csv"
    with zipfile.ZipFile(tmp_path / "Sintegra.zip", "w") as archive:
        archive.write(registrations, "D61108.IE.CSV")
    shutil.copy(registrations, tmp_path / "inscricoes-estaduais-2026-11.csv")
    shutil.copy(registrations, tmp_path / "part-0001.csv")
    recognised, ignored = scan(tmp_path)
    assert {item.source.name: item.kind for item in recognised} == {
        "Sintegra.zip:D61108.IE.CSV": Kind.INSCRICOES,
        "inscricoes-estaduais-2026-11.csv": Kind.INSCRICOES,
    }
    assert [(item.source.name, item.reason) for item in ignored] == [
        ("part-0001.csv", "not a Receita CNPJ file (8 columns in its first row)")
    ]


def test_scan_corrupt_or_encrypted_zip_ignored_as_unreadable(tmp_path: Path) -> None:
    """A damaged download is reported, with why, and never stops the scan."""
    (tmp_path / "Empresas0.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    with zipfile.ZipFile(tmp_path / "Socios0.zip", "w") as archive:
        archive.writestr("K3241.SOCIOCSV", b'"1";"2";"3";"4";"5";"6";"7";"8";"9";"10";"11"\n')
    data = (tmp_path / "Socios0.zip").read_bytes()
    (tmp_path / "Socios0.zip").write_bytes(data[: len(data) // 2])  # truncated mid-file
    recognised, ignored = scan(tmp_path)
    assert recognised == []
    assert sorted(item.source.path.name for item in ignored) == ["Empresas0.zip", "Socios0.zip"]
    assert all(item.reason.startswith("unreadable:") for item in ignored)


def test_a_link_to_a_folder_is_named_among_the_ignored_not_skipped(tmp_path: Path) -> None:
    """A link to a folder is not followed (a link can loop), and the report says so: the
    files behind it would otherwise be missing from the month without a word."""
    parts = tmp_path / "elsewhere"
    parts.mkdir()
    shutil.copy(RECEITA_SAMPLE / "SOCIOCSV.csv", parts / "SOCIOCSV.csv")
    month = tmp_path / "2026-10"
    month.mkdir()
    shutil.copy(RECEITA_SAMPLE / "ESTABELE.csv", month / "ESTABELE.csv")
    (month / "socios").symlink_to(parts, target_is_directory=True)
    (month / "empresas.csv").symlink_to(RECEITA_SAMPLE / "EMPRECSV.csv")  # a linked file is read
    recognised, ignored = scan(month)
    assert sorted(item.kind for item in recognised) == [Kind.EMPRESAS, Kind.ESTABELECIMENTOS]
    assert [(item.source.path, item.reason) for item in ignored] == [
        (month / "socios", LINKED_FOLDER)
    ]
