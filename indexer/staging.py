"""Stage the main files on disk and join them per company root with DuckDB.

Empresas, Socios and Simples of a real month do not fit in memory, and none of the files is
sorted by key. The reader processes write the rows that passed validation to UTF-8 staging CSV
parts; DuckDB loads them into an on-disk database, split into buckets by a hash of the company
root, and joins establishments with their company, Simples option and partner list one bucket
at a time. DuckDB runs under a memory limit and spills to disk, so the indexer's memory stays
bounded whatever the input size; results are fetched in batches.

Sequence numbers of partner rows are zero-padded text, so text order is release order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

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
    "cnpj_basico", "cnpj", "uf", "inscricao_estadual", "tipo", "situacao", "data_situacao",
    "data_inicio", "regime_apuracao",
)  # fmt: skip
"""As staged by `indexer.reader.stage`: the root first, then the file's eight columns."""

TABLES: dict[Kind, tuple[str, tuple[str, ...]]] = {
    Kind.ESTABELECIMENTOS: ("estabelecimentos", ESTABELECIMENTO_COLUMNS),
    Kind.EMPRESAS: ("empresas", EMPRESA_COLUMNS),
    Kind.SIMPLES: ("simples", SIMPLES_COLUMNS),
    Kind.SOCIOS: ("socios", (*SOCIO_COLUMNS, "seq")),
    Kind.INSCRICOES: ("inscricoes", INSCRICAO_COLUMNS),
}

_JOIN = """
WITH partners AS (
    SELECT cnpj_basico,
           list(struct_pack(
               tipo, nome, documento, qualificacao, data_entrada, pais,
               representante_documento, representante_nome, representante_qualificacao, faixa
           ) ORDER BY seq) AS socios
    FROM socios WHERE bucket = $bucket GROUP BY cnpj_basico
), registrations AS (
    SELECT cnpj,
           list(struct_pack(
               uf, inscricao_estadual, tipo, situacao, data_situacao, data_inicio,
               regime_apuracao
           ) ORDER BY uf, inscricao_estadual) AS inscricoes
    FROM inscricoes WHERE bucket = $bucket GROUP BY cnpj
)
SELECT e.* EXCLUDE (bucket),
       c.razao_social, c.natureza, c.qualificacao_responsavel, c.capital, c.porte,
       c.ente_federativo,
       s.opcao_simples, s.data_opcao_simples, s.data_exclusao_simples,
       s.opcao_mei, s.data_opcao_mei, s.data_exclusao_mei,
       p.socios,
       r.inscricoes
FROM (SELECT * FROM estabelecimentos WHERE bucket = $bucket) e
LEFT JOIN (SELECT * FROM empresas WHERE bucket = $bucket) c USING (cnpj_basico)
LEFT JOIN (SELECT * FROM simples WHERE bucket = $bucket) s USING (cnpj_basico)
LEFT JOIN partners p USING (cnpj_basico)
LEFT JOIN registrations r ON r.cnpj = e.cnpj_basico || e.cnpj_ordem || e.cnpj_dv
"""

JOINED_COLUMNS = (
    *ESTABELECIMENTO_COLUMNS,
    *EMPRESA_COLUMNS[1:],
    *SIMPLES_COLUMNS[1:],
    "socios",
    "inscricoes",
)


class Staging:
    """An on-disk staging area in `workdir`, removed by `close()`.

    Every table is split into buckets by a hash of `cnpj_basico` and stored in bucket order, so
    the join runs one bucket at a time (each touching only its own row groups) and its working
    set stays around `bucket_rows` establishments whatever the release size.
    """

    def __init__(
        self,
        workdir: Path,
        memory_limit: str = "384MB",
        threads: int = 2,
        bucket_rows: int = 25_000,
    ) -> None:
        self.workdir = workdir
        self.bucket_rows = bucket_rows
        self.buckets = 1
        workdir.mkdir(parents=True, exist_ok=True)
        self._parts: dict[Kind, list[Path]] = {}
        self._counts: Counter[Kind] = Counter()
        self.con = duckdb.connect(str(self.database))
        self.con.execute(f"SET memory_limit = '{megabytes(memory_limit)}MB'")
        self.con.execute(f"SET threads = {int(threads)}")
        self.con.execute("SET temp_directory = ?", [str(workdir / "spill")])
        self.con.execute("SET preserve_insertion_order = false")
        self.con.execute("SET enable_progress_bar = false")

    def add(self, kind: Kind, path: Path, rows: int) -> None:
        """Register a staging CSV part (written by `indexer.readjob`) of a main file."""
        self._parts.setdefault(kind, []).append(path)
        self._counts[kind] += rows

    def build(self) -> int:
        """Load the staged CSVs into bucketed DuckDB tables; returns the establishment count."""
        establishments = self._counts[Kind.ESTABELECIMENTOS]
        self.buckets = max(1, -(-establishments // self.bucket_rows))
        for kind, (table, columns) in TABLES.items():
            parts = self._parts.get(kind)
            if not parts:
                names = ", ".join(f"{column} VARCHAR" for column in columns)
                self.con.execute(f"CREATE OR REPLACE TABLE {table} ({names}, bucket BIGINT)")
                continue
            spec = ", ".join(f"'{column}': 'VARCHAR'" for column in columns)
            self.con.execute(
                f"CREATE OR REPLACE TABLE {table} AS "  # noqa: S608
                f"SELECT *, hash(cnpj_basico) % {self.buckets} AS bucket FROM read_csv("
                f"?, header = false, delim = ',', quote = '\"', escape = '\"', "
                f"columns = {{{spec}}}, auto_detect = false, null_padding = false) "
                f"ORDER BY bucket",
                [[str(part) for part in parts]],
            )
            for part in parts:
                part.unlink()
        return establishments

    def unmatched_registrations(self) -> int:
        """State registrations whose CNPJ is not an establishment of the release."""
        row = self.con.execute(
            "SELECT count(*) FROM inscricoes i ANTI JOIN estabelecimentos e "
            "ON i.bucket = e.bucket AND i.cnpj = e.cnpj_basico || e.cnpj_ordem || e.cnpj_dv"
        ).fetchone()
        return int(row[0]) if row else 0

    @property
    def database(self) -> Path:
        return self.workdir / "staging.duckdb"

    def release(self) -> None:
        """Close the writing connection so worker processes can open the database read-only."""
        self.con.close()

    def close(self) -> None:
        self.con.close()
        for path in sorted(self.workdir.rglob("*"), reverse=True):
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink()
        self.workdir.rmdir()


def join_bucket(
    con: duckdb.DuckDBPyConnection, bucket: int, batch_size: int
) -> Iterator[list[tuple[Any, ...]]]:
    """Establishments of one bucket joined with company, Simples and partners, in batches."""
    result = con.execute(_JOIN, {"bucket": bucket})
    while True:
        rows = result.fetchmany(batch_size)
        if not rows:
            return
        yield rows


def megabytes(value: str) -> int:
    """`512MB`, `2GB`, `1GiB`... in megabytes; ValueError for anything else."""
    number = value.strip().rstrip("KMGTBkmgtib")
    unit = value.strip()[len(number) :].upper().removesuffix("B").removesuffix("I") or "M"
    factor = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}.get(unit)
    if not number.isdigit() or factor is None:
        raise ValueError(f"invalid memory size {value!r}: use a number and KB, MB or GB")
    return int(int(number) * factor)
