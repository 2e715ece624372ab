"""Stage the main files on disk and join them per company root with DuckDB.

Empresas, Socios and Simples of a real month do not fit in memory, and none of the files is
sorted by key. The reader processes write the rows that passed validation to UTF-8 staging
parts, one line per row: its key columns, then all its fields as one JSON array (`staged_line`).
DuckDB loads them into an on-disk database, split into buckets by ranges of the company root
(cut at quantiles of the establishments' roots, so buckets hold about the same number of
establishments), and joins establishments with their company, Simples option and partner list
one bucket at a time. Ranges rather than a hash: the builders then meet the CNPJs nearly in
order, which is how the record store's B-tree takes them fastest and most compactly (inserting
5M records in random order took 14-17 µs each and grew with the file; in order, under 1 µs).
DuckDB runs under a memory limit and spills to disk, so the indexer's memory stays bounded
whatever the input size; results are fetched in batches.

DuckDB never looks inside the JSON: it sorts, groups and concatenates a few text columns
instead of thirty, and each joined row reaches Python as one JSON text that msgspec decodes
(`Joined`), much faster than DuckDB's conversion of wide rows and lists of structs to Python.

Sequence numbers of partner rows are zero-padded text, so text order is release order.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import duckdb
import msgspec

from app.domain.text import is_code
from indexer.sources import Kind

ESTABELECIMENTO_COLUMNS = (
    "cnpj_basico", "cnpj_ordem", "cnpj_dv", "matriz_filial", "nome_fantasia",
    "situacao", "data_situacao", "motivo", "cidade_exterior", "pais", "inicio_atividade",
    "cnae_principal", "cnaes_secundarios", "tipo_logradouro", "logradouro", "numero",
    "complemento", "bairro", "cep", "uf", "municipio", "ddd1", "telefone1", "ddd2", "telefone2",
    "ddd_fax", "fax", "email", "situacao_especial", "data_situacao_especial",
)  # fmt: skip
EMPRESA_COLUMNS = (
    "cnpj_basico", "razao_social", "natureza", "qualificacao_responsavel", "capital",
    "porte", "ente_federativo",
)  # fmt: skip
SIMPLES_COLUMNS = (
    "cnpj_basico", "opcao_simples", "data_opcao_simples", "data_exclusao_simples",
    "opcao_mei", "data_opcao_mei", "data_exclusao_mei",
)  # fmt: skip
SOCIO_COLUMNS = (
    "cnpj_basico", "tipo", "nome", "documento", "qualificacao", "data_entrada", "pais",
    "representante_documento", "representante_nome", "representante_qualificacao", "faixa",
)  # fmt: skip

INSCRICAO_COLUMNS = (
    "uf", "inscricao_estadual", "tipo", "situacao", "data_situacao", "data_inicio",
    "regime_apuracao",
)  # fmt: skip
"""As staged by `indexer.reader.stage`, after the two keys (company root and CNPJ)."""

REGIME_COLUMNS = ("ano", "cnpj_da_scp", "forma_de_tributacao", "quantidade_de_escrituracoes")
"""As staged by `indexer.reader.stage`, after the company root."""

KEYS: dict[Kind, tuple[str, tuple[str, ...]]] = {
    Kind.ESTABELECIMENTOS: ("estabelecimentos", ("cnpj_basico", "cnpj")),
    Kind.EMPRESAS: ("empresas", ("cnpj_basico",)),
    Kind.SIMPLES: ("simples", ("cnpj_basico",)),
    Kind.SOCIOS: ("socios", ("cnpj_basico", "seq")),
    Kind.INSCRICOES: ("inscricoes", ("cnpj_basico", "cnpj")),
    Kind.REGIMES: ("regimes", ("cnpj_basico",)),
}
"""Staging table and key columns of each main kind; every table ends with `payload`."""
SAMPLE_PER_BUCKET = 250
MIN_SAMPLE = 100_000
"""Roots the buckets' bounds are cut from (`Staging._cut`)."""

_encode = msgspec.json.Encoder().encode


def staged_line(kind: Kind, fields: list[str], seq: str = "") -> bytes:
    """One staging line: the key columns and the fields as a JSON array, tab-separated. JSON
    escapes every control character, so the payload never holds a raw tab or newline, and the
    keys (validated roots and CNPJs, digit sequence numbers) hold none either."""
    if kind is Kind.ESTABELECIMENTOS:
        keys = f"{fields[0]}\t{fields[0]}{fields[1]}{fields[2]}"
    elif kind is Kind.SOCIOS:
        keys = f"{fields[0]}\t{seq}"
    elif kind is Kind.INSCRICOES:
        keys, fields = f"{fields[0]}\t{fields[1]}", fields[2:]
    elif kind is Kind.REGIMES:
        keys, fields = fields[0], fields[1:]
    else:
        keys = fields[0]
    return b"%s\t%s\n" % (keys.encode(), _encode(fields))


class Joined(msgspec.Struct, array_like=True, gc=False):
    """One establishment joined with its company, Simples row, partners, registrations and the
    company's tax regimes; each part is the staged fields of its row, in `*_COLUMNS` order (None
    when absent)."""

    estabelecimento: list[str]
    empresa: list[str] | None
    simples: list[str] | None
    socios: list[list[str]]
    inscricoes: list[list[str]]
    regimes: list[list[str]] = msgspec.field(default_factory=list)
    """Newest year first."""


MAX_PARTNERS = 10_000
"""Partners of one company joined to its establishments (the first, in the release's order):
a record holds its company's partners, and the builder holds the record, so one company of
millions of partner rows would take gigabytes. The rest are counted (`Staging.over_caps`)."""
MAX_REGIMES = 1_000
"""Tax-regime rows of one company joined (the newest): a year gives one or a few."""
MAX_REGISTRATIONS = 1_000
"""State registrations of one establishment joined (by UF and number): 27 states give a few."""

_JOIN = """
WITH companies AS (
    -- one row per root (`Staging.repeated_roots` counts the others): a root given twice
    -- would join each of its establishments twice
    SELECT cnpj_basico, max(payload) AS payload
    FROM empresas WHERE bucket = $bucket GROUP BY cnpj_basico
), opted AS (
    SELECT cnpj_basico, max(payload) AS payload
    FROM simples WHERE bucket = $bucket GROUP BY cnpj_basico
), partners AS (
    SELECT cnpj_basico,
           '[' || array_to_string(list(payload ORDER BY seq)[1:$partners], ',') || ']' AS socios
    FROM socios WHERE bucket = $bucket GROUP BY cnpj_basico
), registrations AS (
    -- the payload starts with the UF and the number: its order is (uf, inscricao_estadual)
    SELECT cnpj,
           '[' || array_to_string(list(payload ORDER BY payload)[1:$registrations], ',')
           || ']' AS inscricoes
    FROM inscricoes WHERE bucket = $bucket GROUP BY cnpj
), regimes AS (
    -- the payload starts with the year (four digits): descending payloads are newest first
    SELECT cnpj_basico,
           '[' || array_to_string(list(payload ORDER BY payload DESC)[1:$regimes], ',')
           || ']' AS regimes
    FROM regimes WHERE bucket = $bucket GROUP BY cnpj_basico
)
SELECT '[' || e.payload || ',' || coalesce(c.payload, 'null') || ','
       || coalesce(s.payload, 'null') || ',' || coalesce(p.socios, '[]') || ','
       || coalesce(r.inscricoes, '[]') || ',' || coalesce(t.regimes, '[]') || ']'
FROM (SELECT * FROM estabelecimentos WHERE bucket = $bucket) e
LEFT JOIN companies c USING (cnpj_basico)
LEFT JOIN opted s USING (cnpj_basico)
LEFT JOIN partners p USING (cnpj_basico)
LEFT JOIN registrations r ON r.cnpj = e.cnpj
LEFT JOIN regimes t USING (cnpj_basico)
"""


BUCKET_ROWS = 25_000
"""Establishments a bucket holds by default (`--bucket-rows`)."""
PREFIX = "staging-"
"""How a load names its staging folder in the work folder (`tempfile.mkdtemp`)."""
IN_USE = "in-use.lock"
"""A file of each staging folder, locked while its load runs: the system drops the lock when the
load's process ends, however it ends."""


def remove_abandoned(parent: Path) -> list[Path]:
    """Remove the staging folders in `parent` that no running load holds: a load killed before
    its end (SIGKILL, a machine stopped) leaves one, with a whole month's rows staged in it. A
    folder without the lock file is left alone (it may be one a load is just making), and so is
    one whose lock is not a plain file of its own (a link: no load makes one)."""
    removed = []
    for folder in sorted(parent.glob(f"{PREFIX}*")):
        lock = folder / IN_USE
        if folder.is_symlink() or not folder.is_dir() or not lock.is_file():
            continue
        try:
            handle = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # a link (ELOOP), or a lock gone since it was seen
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its load runs
        finally:
            os.close(handle)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


class Staging:
    """An on-disk staging area in `workdir`, removed by `close()` (or, when its load was killed,
    by the next load that stages in the same place: `remove_abandoned`).

    Every table is split into buckets by ranges of `cnpj_basico` and stored in bucket order, so
    the join runs one bucket at a time (each touching only its own row groups) and its working
    set stays around `bucket_rows` establishments whatever the release size.
    """

    def __init__(
        self,
        workdir: Path,
        memory_limit: str = "384MB",
        threads: int = 2,
        bucket_rows: int = BUCKET_ROWS,
    ) -> None:
        self.workdir = workdir
        self.bucket_rows = bucket_rows
        self.buckets = 1
        self._parts: dict[Kind, list[Path]] = {}
        self._counts: Counter[Kind] = Counter()
        self._in_use = -1
        con: duckdb.DuckDBPyConnection | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        try:  # a folder that cannot be set up is removed at once, not left to the next load
            # Locked under another name, then named: `remove_abandoned` never sees it unlocked.
            making = workdir / f".{IN_USE}"
            self._in_use = os.open(making, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            fcntl.flock(self._in_use, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(making, workdir / IN_USE)
            con = duckdb.connect(str(self.database))
            con.execute(f"SET memory_limit = '{megabytes(memory_limit)}MB'")
            con.execute(f"SET threads = {int(threads)}")
            con.execute("SET temp_directory = ?", [str(workdir / "spill")])
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
        except BaseException:
            if con is not None:
                con.close()
            self._remove()
            raise
        self.con = con

    def add(self, kind: Kind, path: Path, rows: int) -> None:
        """Register a staging CSV part (written by `indexer.readjob`) of a main file."""
        self._parts.setdefault(kind, []).append(path)
        self._counts[kind] += rows

    def build(self) -> int:
        """Load the staged CSVs into bucketed DuckDB tables; returns the establishment count."""
        establishments = self._counts[Kind.ESTABELECIMENTOS]
        self._cut(max(1, -(-establishments // self.bucket_rows)))
        for kind, (table, keys) in KEYS.items():
            parts = self._parts.get(kind)
            if not parts:
                names = ", ".join(f"{column} VARCHAR" for column in (*keys, "payload"))
                self.con.execute(f"CREATE OR REPLACE TABLE {table} ({names}, bucket BIGINT)")
                continue
            self.con.execute(
                f"CREATE OR REPLACE TABLE {table} AS "  # noqa: S608
                f"SELECT s.*, b.bucket FROM {_read_parts(keys)} s "
                "ASOF JOIN bounds b ON s.cnpj_basico >= b.lo ORDER BY b.bucket",
                [[str(part) for part in parts]],
            )
            for part in parts:
                part.unlink()
        return establishments

    def _cut(self, wanted: int) -> None:
        """The table `bounds` of each bucket's lowest root: quantiles of the establishments'
        roots (a root is never split; repeated quantiles make fewer buckets). The quantiles
        are those of a uniform sample of `SAMPLE_PER_BUCKET` roots a bucket, which DuckDB
        holds in memory (the exact quantiles of 10M roots do not fit its memory limit); bucket
        sizes then vary by a few percent."""
        parts = self._parts.get(Kind.ESTABELECIMENTOS)
        lows: list[str] = []
        if wanted > 1 and parts:
            quantiles = [step / wanted for step in range(1, wanted)]
            sample = max(MIN_SAMPLE, SAMPLE_PER_BUCKET * wanted)
            row = self.con.execute(
                f"SELECT quantile_disc(cnpj_basico, {quantiles}) FROM ("  # noqa: S608
                f"SELECT cnpj_basico FROM {_read_parts(KEYS[Kind.ESTABELECIMENTOS][1])} "
                f"USING SAMPLE reservoir({sample} ROWS))",
                [[str(part) for part in parts]],
            ).fetchone()
            lows = sorted(set(row[0])) if row else []
        self.con.execute(
            "CREATE OR REPLACE TABLE bounds AS SELECT lo, "
            "(row_number() OVER (ORDER BY lo) - 1)::BIGINT AS bucket FROM unnest(?) AS t(lo)",
            [["", *lows]],
        )
        self.buckets = len(lows) + 1

    def unmatched_registrations(self) -> int:
        """State registrations whose CNPJ is not an establishment of the release."""
        row = self.con.execute(
            "SELECT count(*) FROM inscricoes i ANTI JOIN estabelecimentos e "
            "ON i.bucket = e.bucket AND i.cnpj = e.cnpj"
        ).fetchone()
        return int(row[0]) if row else 0

    def unmatched_rows(self) -> dict[Kind, int]:
        """Rows of each kind keyed by company (companies, partners, Simples, tax regimes) whose
        company has no establishment in the release: none is loaded, as a record is an
        establishment's."""
        counts = {}
        for kind in (Kind.EMPRESAS, Kind.SOCIOS, Kind.SIMPLES, Kind.REGIMES):
            # One statement a kind: the anti join's table of the establishments' roots then
            # spills to disk within the memory limit. Counted in one statement, the four were
            # built at once beside a materialised list of the roots, which did not fit 384 MB
            # at 10M establishments.
            row = self.con.execute(
                f"SELECT count(*) FROM {KEYS[kind][0]} t "  # noqa: S608 (`KEYS`' tables only)
                "ANTI JOIN estabelecimentos e "
                "ON t.bucket = e.bucket AND t.cnpj_basico = e.cnpj_basico"
            ).fetchone()
            counts[kind] = int(row[0]) if row else 0
        return counts

    def over_caps(self) -> dict[str, int]:
        """Rows past a cap of their company or establishment (not joined), by reason; those of a
        company or CNPJ with no establishment are not joined at all (`unmatched_rows`...),
        and not counted here again."""
        counted = {}
        for table, key, cap, what in (
            ("socios", "cnpj_basico", MAX_PARTNERS, "partners of one company"),
            ("regimes", "cnpj_basico", MAX_REGIMES, "tax-regime rows of one company"),
            ("inscricoes", "cnpj", MAX_REGISTRATIONS, "state registrations of one establishment"),
        ):
            # Names of this module only in the SQL. The groups over the cap are few (each holds
            # more than `cap` rows); only they are looked up among the establishments.
            over = self.con.execute(
                f"SELECT {key}, count(*) - $cap FROM {table} GROUP BY {key} "  # noqa: S608
                "HAVING count(*) > $cap",
                {"cap": cap},
            ).fetchall()
            if not over:
                continue
            present = self.con.execute(
                f"SELECT DISTINCT {key} FROM estabelecimentos "  # noqa: S608
                f"WHERE {key} IN (SELECT unnest($k))",
                {"k": [found for found, _ in over]},
            ).fetchall()
            joined = {found for (found,) in present}
            extra = sum(int(rows) for found, rows in over if found in joined)
            if extra:
                counted[f"more than {cap:,} {what} (the rest not loaded)"] = extra
        return counted

    def repeated_roots(self) -> int:
        """Company and Simples rows whose root an earlier row of the same kind gave: one row
        of each root is joined (the greatest, so a reload keeps the same one)."""
        row = self.con.execute(
            "SELECT (SELECT count(*) - count(DISTINCT cnpj_basico) FROM empresas) "
            "+ (SELECT count(*) - count(DISTINCT cnpj_basico) FROM simples)"
        ).fetchone()
        return int(row[0]) if row else 0

    @property
    def database(self) -> Path:
        return self.workdir / "staging.duckdb"

    def release(self) -> None:
        """Close the writing connection so worker processes can open the database read-only."""
        self.con.close()

    def close(self) -> None:
        """Remove the folder: its contents while the lock is held, then the lock, then the
        folder (another load never takes it for abandoned while it is being removed)."""
        self.con.close()
        self._remove()

    def _remove(self) -> None:
        lock = self.workdir / IN_USE
        for path in sorted(self.workdir.rglob("*"), reverse=True):
            if path.is_dir():
                path.rmdir()
            elif path != lock:
                path.unlink()
        lock.unlink(missing_ok=True)
        if self._in_use >= 0:
            os.close(self._in_use)
        self.workdir.rmdir()


def _read_parts(keys: tuple[str, ...]) -> str:
    """`read_csv` of staging parts (the query's parameter) with `keys` and `payload`."""
    spec = ", ".join(f"'{column}': 'VARCHAR'" for column in (*keys, "payload"))
    return (
        "read_csv(?, header = false, delim = '\t', quote = '', escape = '', "
        f"new_line = '\\n', columns = {{{spec}}}, auto_detect = false, null_padding = false)"
    )


_joined = msgspec.json.Decoder(Joined)


def join_bucket(
    con: duckdb.DuckDBPyConnection, bucket: int, batch_size: int
) -> Iterator[list[Joined]]:
    """Establishments of one bucket joined with company, Simples and partners, in batches."""
    caps = {"partners": MAX_PARTNERS, "regimes": MAX_REGIMES, "registrations": MAX_REGISTRATIONS}
    result = con.execute(_JOIN, {"bucket": bucket, **caps})
    decode = _joined.decode
    while True:
        rows = result.fetchmany(batch_size)
        if not rows:
            return
        yield [decode(row[0]) for row in rows]


MIN_MEMORY = 64
"""Megabytes the staging database needs at least (less fails after the whole read phase)."""
MAX_MEMORY = 1 << 20


def megabytes(value: str) -> int:
    """`512MB`, `2GB`, `1GiB`... in megabytes; ValueError for anything else."""
    number = value.strip().rstrip("KMGTBkmgtib")
    unit = value.strip()[len(number) :].upper().removesuffix("B").removesuffix("I") or "M"
    factor = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}.get(unit)
    if not is_code(number) or factor is None:
        raise ValueError(f"invalid memory size {value!r}: use a number and KB, MB or GB")
    size = int(int(number) * factor)
    if not MIN_MEMORY <= size <= MAX_MEMORY:
        raise ValueError(f"memory size {value!r}: between {MIN_MEMORY}MB and 1TB")
    return size
