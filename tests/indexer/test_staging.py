"""Staging lines survive DuckDB whatever the text in them, and the join puts rows together."""

from __future__ import annotations

import itertools
import random
import string
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.cnpj import check_digits
from indexer.sources import COLUMNS, Kind
from indexer.staging import (
    IN_USE,
    PREFIX,
    Joined,
    Staging,
    join_bucket,
    remove_abandoned,
    staged_line,
)

# Any text a latin-1 file can hold once decoded, plus what JSON must escape and the separators
# of the staging format itself (tabs, newlines, quotes, commas, backslashes).
field_text = st.text(
    alphabet=st.characters(codec="latin-1") | st.sampled_from('\t\n\r"\\,;\x00'), max_size=30
)
roots = st.text(alphabet=string.digits, min_size=8, max_size=8)


def _fields(kind: Kind, root: str, draw_text: list[str]) -> list[str]:
    fields = [root, *draw_text[: COLUMNS[kind] - 1]]
    if kind is Kind.ESTABELECIMENTOS:
        fields[1] = "0001"
        fields[2] = check_digits(root + "0001")
    return fields


def _stage(tmp: Path, rows: dict[Kind, list[list[str]]], bucket_rows: int = 1) -> Staging:
    staging = Staging(tmp / "staging", bucket_rows=bucket_rows)
    for kind, kind_rows in rows.items():
        part = tmp / f"{kind.value}.tsv"
        with part.open("wb") as stream:
            for seq, fields in enumerate(kind_rows):
                stream.write(staged_line(kind, fields, f"{seq:017d}"))
        staging.add(kind, part, len(kind_rows))
    staging.build()
    staging.release()
    return staging


def _joined(staging: Staging) -> list[Joined]:
    con = duckdb.connect(str(staging.database), read_only=True)
    try:
        return [
            row
            for bucket in range(staging.buckets)
            for batch in join_bucket(con, bucket, 100)
            for row in batch
        ]
    finally:
        con.close()


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    root=roots,
    texts=st.lists(field_text, min_size=30, max_size=30),
    partners=st.lists(st.lists(field_text, min_size=10, max_size=10), max_size=3),
)
def test_staged_rows_come_back_exactly(
    tmp_path_factory: pytest.TempPathFactory, root: str, texts: list[str], partners: list[list[str]]
) -> None:
    tmp = tmp_path_factory.mktemp("staging")
    establishment = _fields(Kind.ESTABELECIMENTOS, root, texts)
    company = _fields(Kind.EMPRESAS, root, texts[5:])
    partner_rows = [[root, *partner] for partner in partners]
    staging = _stage(
        tmp,
        {
            Kind.ESTABELECIMENTOS: [establishment],
            Kind.EMPRESAS: [company],
            Kind.SOCIOS: partner_rows,
        },
    )
    try:
        [joined] = _joined(staging)
    finally:
        staging.close()
    assert joined.estabelecimento == establishment
    assert joined.empresa == company
    assert joined.simples is None
    assert joined.socios == partner_rows  # in release order
    assert joined.inscricoes == []


def test_join_matches_rows_by_root_across_buckets(tmp_path: Path) -> None:
    roots = [f"{n:08d}" for n in range(1, 41)]
    establishments = [_fields(Kind.ESTABELECIMENTOS, root, ["x"] * 29) for root in roots]
    companies = [[root, f"EMPRESA {root}", "2062", "49", "1000,00", "05", ""] for root in roots]
    options = [[root, "S", "20200101", "", "N", "", ""] for root in roots[::2]]
    partners = [[root, "2", f"SOCIO {i} DE {root}", "", "49", "", "", "", "", "", "5"]
                for root in roots for i in range(2)]  # fmt: skip
    staging = _stage(
        tmp_path,
        {
            Kind.ESTABELECIMENTOS: establishments,
            Kind.EMPRESAS: companies,
            Kind.SIMPLES: options,
            Kind.SOCIOS: partners,
        },
        bucket_rows=7,
    )
    try:
        assert staging.buckets == 6
        joined = _joined(staging)
    finally:
        staging.close()
    assert sorted(row.estabelecimento[0] for row in joined) == roots
    for row in joined:
        root = row.estabelecimento[0]
        assert row.empresa is not None
        assert row.empresa[1] == f"EMPRESA {root}"
        assert (row.simples is not None) == (root in roots[::2])
        assert [partner[2] for partner in row.socios] == [
            f"SOCIO 0 DE {root}",
            f"SOCIO 1 DE {root}",
        ]


def _buckets(staging: Staging) -> list[tuple[int, str, str, int]]:
    con = duckdb.connect(str(staging.database), read_only=True)
    try:
        return [
            (int(bucket), low, high, int(count))
            for bucket, low, high, count in con.execute(
                "SELECT bucket, min(cnpj_basico), max(cnpj_basico), count(*) "
                "FROM estabelecimentos GROUP BY bucket ORDER BY bucket"
            ).fetchall()
        ]
    finally:
        con.close()


def test_buckets_are_balanced_ranges_of_roots_never_splitting_one(tmp_path: Path) -> None:
    """Buckets cut at quantiles of the roots: consecutive ranges of about `bucket_rows`
    establishments (so the builders meet CNPJs nearly in order), a root's rows in one bucket."""
    rng = random.Random(3)
    roots = sorted({f"{rng.randrange(10**8):08d}" for _ in range(60)})
    big = roots[25]
    establishments = [_fields(Kind.ESTABELECIMENTOS, root, ["x"] * 29) for root in roots]
    for order in range(2, 13):  # one root with 12 establishments
        row = _fields(Kind.ESTABELECIMENTOS, big, ["x"] * 29)
        row[1] = f"{order:04d}"
        row[2] = check_digits(big + row[1])
        establishments.append(row)
    rng.shuffle(establishments)
    staging = _stage(tmp_path, {Kind.ESTABELECIMENTOS: establishments}, bucket_rows=8)
    try:
        buckets = _buckets(staging)
        joined = _joined(staging)
    finally:
        staging.close()
    assert len(joined) == len(establishments) == 71
    assert [bucket for bucket, *_ in buckets] == list(range(staging.buckets))
    assert 6 <= staging.buckets <= 9
    for (_, _, high, _), (_, low, _, _) in itertools.pairwise(buckets):
        assert high < low, "ranges follow each other and do not overlap"
    holding_big = [count for _, low, high, count in buckets if low <= big <= high]
    assert len(holding_big) == 1
    assert holding_big[0] >= 12
    assert all(count <= 8 for _, low, high, count in buckets if not low <= big <= high)


def test_only_staging_folders_no_load_holds_are_removed(tmp_path: Path) -> None:
    running = Staging(tmp_path / f"{PREFIX}running")
    abandoned = tmp_path / f"{PREFIX}killed"
    abandoned.mkdir()
    (abandoned / IN_USE).touch()  # its load's lock went with its process
    (abandoned / "staging.duckdb").write_bytes(b"rows")
    unlocked = tmp_path / f"{PREFIX}being-made"
    unlocked.mkdir()  # no lock file yet: a load may be making it
    other = tmp_path / "staging-like-but-a-file"
    other.write_text("kept")
    linked = tmp_path / f"{PREFIX}linked-lock"
    linked.mkdir()
    (linked / IN_USE).symlink_to(other)  # no load makes its lock a link: not taken for one
    assert list((tmp_path / f"{PREFIX}running").glob(f"*{IN_USE}")) == [
        tmp_path / f"{PREFIX}running" / IN_USE
    ]  # locked before it was named
    assert remove_abandoned(tmp_path) == [abandoned]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            f"{PREFIX}being-made",
            f"{PREFIX}linked-lock",
            f"{PREFIX}running",
            "staging-like-but-a-file",
        ]
    )
    running.close()
    assert not (tmp_path / f"{PREFIX}running").exists()


def test_a_staging_folder_that_cannot_be_set_up_is_removed_at_once(tmp_path: Path) -> None:
    """Staging that fails after its folder, lock and database exist (here DuckDB's settings)
    leaves nothing behind: no later load has to find and remove it."""
    with pytest.raises(ValueError, match="invalid memory size"):
        Staging(tmp_path / f"{PREFIX}failed", memory_limit="lots")
    with pytest.raises(duckdb.Error):
        Staging(tmp_path / f"{PREFIX}failed-again", threads=-1)
    assert list(tmp_path.iterdir()) == []


def test_rows_without_establishment_are_counted_within_the_memory_limit(tmp_path: Path) -> None:
    """The count of rows whose company has no establishment spills to disk like the rest of
    staging: 2M establishments and 2M rows of each kind keyed by company fit the smallest
    memory limit (64 MB; counted in one statement, the four anti joins did not fit it), and
    each kind's count is exact."""
    staging = Staging(tmp_path / "staging", "64MB", threads=2)
    roots = 2_000_000

    def table(name: str, rows: int, first: int) -> None:
        """`rows` rows of roots `first`, `first + 7`, ... modulo `roots` + `first`, in
        buckets of 25,000 roots (a root past the establishments' has no establishment)."""
        staging.con.execute(
            f"CREATE TABLE {name} AS SELECT lpad(root::VARCHAR, 8, '0') AS cnpj_basico, "
            "'' AS payload, (root // 25000)::BIGINT AS bucket FROM ("
            f"SELECT {first} + (i * 7) % {roots} AS root FROM range({rows}) t(i))"
        )

    try:
        table("estabelecimentos", roots, 0)
        without = {"empresas": 0, "socios": 11, "simples": 2_000, "regimes": 1}
        for name, shift in without.items():
            table(name, roots, shift)
        counts = staging.unmatched_rows()
    finally:
        staging.close()
    assert {kind.value: n for kind, n in counts.items()} == without
