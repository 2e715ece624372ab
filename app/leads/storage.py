"""Where lot files live, behind one small interface: a file is written under a staging name
and published by an atomic rename, so a reader sees a whole file or none, and a writer killed
half-way leaves only a staging file, overwritten by the next attempt."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, Protocol

ROOT = Path(__file__).resolve().parent.parent.parent


class Storage(Protocol):
    def staging(self, name: str) -> Path:
        """A path to write `name` to before it is published (emptied first)."""

    def publish(self, name: str) -> int:
        """Makes the staged `name` the file (atomically); its size in bytes."""

    def open(self, name: str) -> BinaryIO | None:
        """The published file opened for reading, if it exists (once open, it reads to the end
        even if it is deleted meanwhile)."""

    def delete(self, name: str) -> None: ...


class Directory:
    """Files in one local directory (created on first use)."""

    def __init__(self, directory: str | Path) -> None:
        folder = Path(directory)
        self.folder = folder if folder.is_absolute() else ROOT / folder

    def _name(self, name: str) -> Path:
        if "/" in name or name.startswith("."):
            raise ValueError(f"not a plain file name: {name!r}")
        return self.folder / name

    def staging(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        staged = self._name(name).with_name(f".{name}.part")
        staged.unlink(missing_ok=True)
        return staged

    def publish(self, name: str) -> int:
        staged = self._name(name).with_name(f".{name}.part")
        with staged.open("rb") as handle:
            os.fsync(handle.fileno())
        final = self._name(name)
        staged.replace(final)
        return final.stat().st_size

    def open(self, name: str) -> BinaryIO | None:
        try:
            return self._name(name).open("rb")
        except (FileNotFoundError, IsADirectoryError):
            return None

    def delete(self, name: str) -> None:
        self._name(name).unlink(missing_ok=True)
