"""Where lot files live, behind one small interface: a file is written under a staging name of
its run and published by an atomic rename, so a reader sees a whole file or none, a writer
killed half-way leaves only a staging file, dropped by the next run, and two runs of one lot
never write into the same file."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import BinaryIO, Protocol

ROOT = Path(__file__).resolve().parent.parent.parent


class Storage(Protocol):
    def staging(self, name: str, run: int) -> Path:
        """A path for run `run` to write `name` to before it is published (emptied first; the
        staging files of earlier runs of `name` are dropped)."""

    def publish(self, name: str, run: int) -> int:
        """Makes run `run`'s staged `name` the file (atomically); its size in bytes."""

    def discard(self, name: str, run: int) -> None:
        """Drops run `run`'s staged `name` (a run that may not publish)."""

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

    def _staged(self, name: str, run: int) -> Path:
        return self._name(name).with_name(f".{name}.{run}.part")

    def staging(self, name: str, run: int) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        for earlier in self.folder.glob(f".{glob.escape(name)}.*.part"):
            earlier.unlink(missing_ok=True)  # a run still writing there may not publish it
        return self._staged(name, run)

    def discard(self, name: str, run: int) -> None:
        self._staged(name, run).unlink(missing_ok=True)

    def publish(self, name: str, run: int) -> int:
        staged = self._staged(name, run)
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
