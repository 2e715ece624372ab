"""Find the Receita files in a release folder and tell each one's kind.

A release is a folder of zips whose CSV members have unstable names
(`K3241.K03200Y0.D50308.EMPRECSV`, `F.K03200$W.SIMPLES.CSV.D50308`...), or the same members
already extracted. A file is recognised by a kind marker in its member or zip name, confirmed by
the column count of its first row; a file with no marker is recognised by its columns alone.
The yearly tax-regime CSVs (Lucro Real, Lucro Presumido, Lucro Arbitrado, Imunes e Isentas) have
a header of their own, which recognises them. Anything else (notes, checksums) is listed as
ignored, never guessed.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO

from app.domain.text import fold


class Kind(StrEnum):
    ESTABELECIMENTOS = "estabelecimentos"
    EMPRESAS = "empresas"
    SOCIOS = "socios"
    SIMPLES = "simples"
    CNAES = "cnaes"
    MOTIVOS = "motivos"
    MUNICIPIOS = "municipios"
    NATUREZAS = "naturezas"
    PAISES = "paises"
    QUALIFICACOES = "qualificacoes"
    INSCRICOES = "inscricoes"
    """State registrations (Sintegra): our own format, see docs/indexer.md."""
    REGIMES = "regimes"
    """The yearly tax-regime files: `,`-separated, with a header, formatted CNPJs."""


COLUMNS: dict[Kind, int] = {
    Kind.ESTABELECIMENTOS: 30,
    Kind.EMPRESAS: 7,
    Kind.SOCIOS: 11,
    Kind.SIMPLES: 7,
    Kind.CNAES: 2,
    Kind.MOTIVOS: 2,
    Kind.MUNICIPIOS: 2,
    Kind.NATUREZAS: 2,
    Kind.PAISES: 2,
    Kind.QUALIFICACOES: 2,
    Kind.INSCRICOES: 8,
    Kind.REGIMES: 5,
}

REGIME_HEADER = ["ano", "cnpj", "cnpj_da_scp", "forma_de_tributacao", "quantidade_de_escrituracoes"]
"""The first line of every tax-regime file."""

REFERENCE_KINDS = frozenset(kind for kind, columns in COLUMNS.items() if columns == 2)

# Markers, checked in order, against the folded member name and then the zip name.
_MARKERS: tuple[tuple[str, Kind], ...] = (
    ("inscric", Kind.INSCRICOES),
    ("sintegra", Kind.INSCRICOES),
    ("estabele", Kind.ESTABELECIMENTOS),
    ("emprecsv", Kind.EMPRESAS),
    ("empresa", Kind.EMPRESAS),
    ("sociocsv", Kind.SOCIOS),
    ("socio", Kind.SOCIOS),
    ("simples", Kind.SIMPLES),
    ("cnae", Kind.CNAES),
    ("moti", Kind.MOTIVOS),
    ("munic", Kind.MUNICIPIOS),
    ("natju", Kind.NATUREZAS),
    ("natureza", Kind.NATUREZAS),
    ("pais", Kind.PAISES),
    ("quals", Kind.QUALIFICACOES),
    ("qualifica", Kind.QUALIFICACOES),
)


ZIP_SIGNATURE = b"PK\x03\x04"


@dataclass(frozen=True, slots=True)
class Source:
    """One CSV stream: a plain file, or a member of a zip."""

    path: Path
    member: str | None

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.member}" if self.member else self.path.name

    def open(self) -> IO[bytes]:
        """The stream; `zipfile.BadZipFile` for a plain file that is a damaged zip (a download
        cut short keeps the zip's signature but loses its directory), which would otherwise be
        read as text."""
        if self.member is None:
            stream = self.path.open("rb")
            if stream.peek(4)[:4] == ZIP_SIGNATURE:
                stream.close()
                raise zipfile.BadZipFile("damaged or truncated zip (no central directory)")
            return stream
        archive = zipfile.ZipFile(self.path)
        return _ClosingMember(archive, archive.open(self.member))

    def size(self) -> int:
        if self.member is None:
            return self.path.stat().st_size
        with zipfile.ZipFile(self.path) as archive:
            return archive.getinfo(self.member).file_size


class _ClosingMember(io.BufferedReader):
    """A zip member stream that also closes its archive."""

    def __init__(self, archive: zipfile.ZipFile, member: IO[bytes]) -> None:
        super().__init__(member, buffer_size=1 << 20)  # type: ignore[arg-type]
        self._archive = archive

    def close(self) -> None:
        super().close()
        self._archive.close()


@dataclass(frozen=True, slots=True)
class Recognised:
    source: Source
    kind: Kind


@dataclass(frozen=True, slots=True)
class Ignored:
    source: Source
    reason: str


def iter_sources(root: Path) -> Iterator[Source]:
    """Every file under `root` (or `root` itself), zips expanded into their members."""
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in paths:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members = [info.filename for info in archive.infolist() if not info.is_dir()]
            for member in members:
                yield Source(path, member)
        else:
            yield Source(path, None)


def kind_from_name(source: Source) -> Kind | None:
    names = [Path(source.member).name] if source.member else []
    names.append(source.path.name)
    for name in names:
        folded = fold(name)
        for marker, kind in _MARKERS:
            if marker in folded:
                return kind
    return None


def first_line(source: Source) -> str | None:
    """The first non-blank line, or None when there is none."""
    with source.open() as raw, io.TextIOWrapper(raw, encoding="latin-1", newline="") as text:
        for line in text:
            if line.strip("\r\n\x00 "):
                return line.replace("\x00", "")
    return None


def is_regime_header(line: str) -> bool:
    """Whether `line` is the header of a tax-regime file (a UTF-8 byte-order mark, read as
    latin-1, is allowed before it)."""
    text = line.strip("\r\n ").removeprefix("\u00ef\u00bb\u00bf").removeprefix("\ufeff")
    return [part.strip().lower() for part in text.split(",")] == REGIME_HEADER


def kind_from_columns(row: list[str]) -> Kind | None:
    """Guess a main-file kind from its columns; reference tables are not guessed."""
    if len(row) == 30:
        return Kind.ESTABELECIMENTOS
    if len(row) == 11:
        return Kind.SOCIOS
    if len(row) == 7:
        is_simples = row[1] in {"S", "N", ""} and len(row[2]) in {0, 1, 8}
        return Kind.SIMPLES if is_simples else Kind.EMPRESAS
    return None


def recognise(source: Source) -> Recognised | Ignored:
    try:
        line = first_line(source)
    except (OSError, zipfile.BadZipFile, RuntimeError) as error:
        return Ignored(source, f"unreadable: {error}")
    if line is None:
        return Ignored(source, "empty file")
    if is_regime_header(line):
        return Recognised(source, Kind.REGIMES)
    row = next(csv.reader([line], delimiter=";"))
    named = kind_from_name(source)
    if named is not None and len(row) == COLUMNS[named]:
        return Recognised(source, named)
    guessed = kind_from_columns(row)
    if guessed is not None:
        return Recognised(source, guessed)
    if named is not None:
        return Ignored(
            source,
            f"named like {named.value} but its first row has {len(row)} columns, "
            f"not {COLUMNS[named]}",
        )
    return Ignored(source, f"not a Receita CNPJ file ({len(row)} columns in its first row)")


def scan(root: Path) -> tuple[list[Recognised], list[Ignored]]:
    recognised: list[Recognised] = []
    ignored: list[Ignored] = []
    for source in iter_sources(root):
        outcome = recognise(source)
        (recognised if isinstance(outcome, Recognised) else ignored).append(outcome)  # type: ignore[arg-type]
    return recognised, ignored
