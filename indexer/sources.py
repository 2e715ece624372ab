"""Find the Receita files in a release folder and tell each one's kind.

A release is a folder of zips whose CSV members have unstable names
(`K3241.K03200Y0.D50308.EMPRECSV`, `F.K03200$W.SIMPLES.CSV.D50308`...), or the same members
already extracted. A file is recognised by a kind marker in its member or zip name, confirmed by
the column count of its first rows; a file with no marker is recognised by its columns alone.
The yearly tax-regime CSVs (Lucro Real, Lucro Presumido, Lucro Arbitrado, Imunes e Isentas) have
a header of their own, which recognises them. Anything else (notes, checksums) is listed as
ignored, never guessed; but a CSV named as a part of the month whose rows do not fit it is a
misfit, which stops a load (`load._check_release`).
"""

from __future__ import annotations

import codecs
import csv
import io
import zipfile
import zlib
from collections import Counter
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


MAX_LINE = 1 << 16
"""Characters of a line read at most, to recognise a file and to read its rows (Receita's
longest rows are about 1,500)."""
SAMPLED = 20
"""Lines a file named like a kind is checked on when its first row does not fit the kind."""


def _latin1_rest(error: UnicodeError) -> tuple[str, int]:
    """The bytes that are not UTF-8, read as latin-1 (Receita's encoding)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("latin1_rest", _latin1_rest)


def text_of(raw: IO[bytes]) -> io.TextIOWrapper:
    """A file's text: Receita publishes latin-1, and a copy re-encoded to UTF-8 must read the
    same. Bytes are read as UTF-8 and those that are not UTF-8 as latin-1: latin-1's accented
    letters are never valid UTF-8 in Portuguese text (an accented letter is followed by a
    letter, a space or a separator, never by the continuation byte UTF-8 would need), so each
    file reads right in either encoding, even one that mixes them line by line. A copy saved
    as UTF-16 with its byte-order mark (Windows tools' "Unicode text") is read as UTF-16 (a
    byte left over at its end reads as U+FFFD)."""
    if _first_two(raw) in UTF16_MARKS:
        return io.TextIOWrapper(raw, encoding="utf-16", errors="replace", newline="")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="latin1_rest", newline="")


def _first_two(raw: IO[bytes]) -> bytes:
    """The stream's first two bytes, left to be read (files and zip members can be peeked at,
    other streams sought back)."""
    peek = getattr(raw, "peek", None)
    if peek is not None:
        return bytes(peek(2)[:2])
    if not raw.seekable():
        return b""
    start = raw.read(2)
    raw.seek(-len(start), io.SEEK_CUR)
    return start


UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
"""UTF-16's byte-order marks, little- and big-endian."""


def first_lines(source: Source, count: int) -> list[str]:
    """The first `count` non-blank lines, each read up to `MAX_LINE` characters (a longer one
    ends the sample: what follows it is not read here)."""
    lines: list[str] = []
    with source.open() as raw, text_of(raw) as text:
        while len(lines) < count:
            line = text.readline(MAX_LINE)
            if not line:
                break
            if line.strip("\r\n\x00 "):
                lines.append(line.replace("\x00", ""))
            if len(line) == MAX_LINE and not line.endswith("\n"):
                break
    return lines


REGIME_NAMES = ("lucro real", "lucro presumido", "lucro arbitrado", "imunes e isentas")
"""How Receita names the tax-regime files (folded): a file so named must have their header."""


def named_like_regime(source: Source) -> bool:
    """Whether the file itself (a zip's member, not the zip: a note may sit beside the CSV) is
    named as a tax-regime file."""
    name = fold(Path(source.member).name if source.member else source.path.name)
    return any(regime in name for regime in REGIME_NAMES)


BYTE_ORDER_MARKS = ("\ufeff", "\u00ef\u00bb\u00bf")
"""A UTF-8 byte-order mark as read in UTF-8 and in latin-1."""


def without_mark(line: str) -> str:
    """`line` without a byte-order mark at its start."""
    for mark in BYTE_ORDER_MARKS:
        line = line.removeprefix(mark)
    return line


def is_regime_header(line: str) -> bool:
    """Whether `line` is the header of a tax-regime file (a UTF-8 byte-order mark is allowed
    before it)."""
    text = without_mark(line.strip("\r\n "))
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
    """The file's kind: by its name when its rows fit the kind (the first one, or most of the
    first `SAMPLED`: a shifted first row is a bad row, not a reason to drop the file), else by
    its columns; or why it is ignored."""
    try:
        if source.member is None and source.path.name.lower().endswith(".zip"):
            # A zip is read through its members: this one did not open as a zip. A truncated
            # one fails on opening (`Source.open`); without even the signature, it is something
            # else saved under the name, such as an error page a download kept.
            source.open().close()
            return Ignored(source, "unreadable: named .zip but not a zip archive")
        lines = first_lines(source, SAMPLED)
        if not lines:
            named = Kind.REGIMES if named_like_regime(source) else kind_from_name(source)
            return Ignored(source, f"named like {named.value} but empty" if named else "empty file")
        if is_regime_header(lines[0]):
            return Recognised(source, Kind.REGIMES)
        if named_like_regime(source):
            return Ignored(
                source,
                f"named like {Kind.REGIMES.value} but its first line is not their header "
                f"({','.join(REGIME_HEADER)})",
            )
        rows = list(csv.reader(lines, delimiter=";"))
    except (OSError, zipfile.BadZipFile, zlib.error, RuntimeError, EOFError, csv.Error) as error:
        return Ignored(source, f"unreadable: {error}")
    named = kind_from_name(source)
    if named is not None:
        fitting = sum(len(row) == COLUMNS[named] for row in rows)
        if len(rows[0]) == COLUMNS[named] or fitting * 2 > len(rows):
            return Recognised(source, named)
    guessed = kind_from_columns(rows[0])
    if guessed is not None:
        return Recognised(source, guessed)
    if named is not None and max(len(row) for row in rows) <= 1:  # a note, a checksum
        return Ignored(source, f"not a CSV file, though named like {named.value}")
    if named is not None:
        return Ignored(
            source,
            f"named like {named.value} but its first rows have {len(rows[0])} columns, "
            f"not {COLUMNS[named]}",
        )
    return Ignored(source, f"not a Receita CNPJ file ({len(rows[0])} columns in its first row)")


def _same_content(path: Path, member: Source) -> bool:
    """Whether the plain file at `path` is the zip member extracted: same size and CRC-32 (read
    in chunks, only when the sizes match)."""
    with zipfile.ZipFile(member.path) as archive:  # listed by `iter_sources` a moment ago
        info = archive.getinfo(str(member.member))
    if path.stat().st_size != info.file_size:
        return False
    crc = 0
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc == info.CRC


MAX_MEMBERS = 1000
"""Members of one zip read at most: each is opened to be recognised."""


LINKED_FOLDER = "a link to a folder, not followed: load the folder itself, or link its files"


def scan(root: Path) -> tuple[list[Recognised], list[Ignored]]:
    """Every file's kind, or why it is ignored. A plain file beside a zip holding the same file
    under the same name (a zip also extracted where it lies) is read once, from the zip; a zip
    of more than `MAX_MEMBERS` members is unreadable (which fails a load)."""
    recognised: list[Recognised] = []
    ignored: list[Ignored] = []
    sources = list(iter_sources(root))
    members = Counter(source.path for source in sources if source.member is not None)
    for path in sorted(path for path, count in members.items() if count > MAX_MEMBERS):
        reason = f"unreadable: {members[path]:,} members, where Receita's zips hold one"
        ignored.append(Ignored(Source(path, None), reason))
    sources = [source for source in sources if members[source.path] <= MAX_MEMBERS]
    zipped = {
        (source.path.parent, Path(source.member).name): source
        for source in sources if source.member is not None
    }  # fmt: skip
    if root.is_dir():  # a link to a folder is not followed (a link may loop): said, not skipped
        for link in sorted(p for p in root.rglob("*") if p.is_symlink() and p.is_dir()):
            ignored.append(Ignored(Source(link, None), LINKED_FOLDER))
    for source in sources:
        twin = zipped.get((source.path.parent, source.path.name)) if not source.member else None
        if twin is not None and _same_content(source.path, twin):
            ignored.append(Ignored(source, f"the same file as {twin.name}, read from the zip"))
            continue
        outcome = recognise(source)
        (recognised if isinstance(outcome, Recognised) else ignored).append(outcome)  # type: ignore[arg-type]
    return recognised, ignored
