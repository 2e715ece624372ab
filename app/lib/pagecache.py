"""Reading a file into the page cache in the background, so that the first requests after a
start do not wait on the disk.

The record store is memory-mapped: a value whose pages are not in the page cache is read
from the disk by a page fault, on the event loop's thread, which stalls every request the
process holds meanwhile. After a machine or service restart, or a new release, the first
minutes of lookups and searches (whose results are read from the store) fault in most of the
file at random. `Preload` asks the kernel to read the whole file instead, in large sequential
chunks, from a daemon thread: `madvise(MADV_POPULATE_READ)` on a mapping of it (Linux 5.14+;
the kernel reads without copying into the process, and ctypes releases the GIL for the call),
or `posix_fadvise(WILLNEED)` where that advice is unknown (the kernel then reads ahead as it
sees fit). A file over half the memory available is left alone: reading it would push out
the pages Elasticsearch and the rest of the store need.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import time
from pathlib import Path

logger = logging.getLogger(__name__)

CHUNK = 64 << 20
"""Bytes advised at a time (the thread checks between chunks whether it should stop)."""
MADV_POPULATE_READ = 22
PROT_READ = 0x1
MAP_SHARED = 0x01
MEMINFO = Path("/proc/meminfo")

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_long]  # fmt: skip
_madvise = _libc.madvise
_madvise.restype = ctypes.c_int
_madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value


def available_memory(meminfo: Path = MEMINFO) -> int:
    """Bytes of memory the kernel reports available (`MemAvailable`); 0 when unknown."""
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def populate(path: Path, stop: threading.Event | None = None, chunk: int = CHUNK) -> int:
    """Read `path` into the page cache, `chunk` bytes at a time, until done or `stop` is set;
    the bytes advised. `OSError` when the file cannot be opened or mapped."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 0
        address = _mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        if address in (None, MAP_FAILED):
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), str(path))
        try:
            return _advise(fd, address, size, stop, chunk)
        finally:
            _munmap(address, size)
    finally:
        os.close(fd)


def _advise(fd: int, address: int, size: int, stop: threading.Event | None, chunk: int) -> int:
    """Advise the `size` bytes mapped at `address` (`fd`'s), `chunk` at a time; `OSError` when
    the kernel cannot read them (EFAULT: the file shrank; EIO; ENOMEM)."""
    done = 0
    populate_known = True
    while done < size and not (stop is not None and stop.is_set()):
        length = min(chunk, size - done)
        if populate_known and _madvise(address + done, length, MADV_POPULATE_READ) != 0:
            code = ctypes.get_errno()
            if code == errno.EINTR:  # a signal came to this thread: the same chunk again
                continue
            if code not in (errno.EINVAL, errno.ENOSYS):
                raise OSError(code, os.strerror(code))
            populate_known = False  # a kernel before 5.14
        if not populate_known:
            os.posix_fadvise(fd, done, length, os.POSIX_FADV_WILLNEED)
        done += length
    return done


class Preload:
    """A daemon thread reading one file into the page cache (`populate`) when it takes at most
    `budget` bytes (by default half the memory available when it starts); `stop` ends it
    between two chunks."""

    def __init__(self, path: Path, budget: int | None = None) -> None:
        self.path = path
        self.budget = budget
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"preload {path.name}", daemon=True)

    @classmethod
    def start(cls, path: Path, budget: int | None = None) -> Preload:
        preload = cls(path, budget)
        preload.thread.start()
        return preload

    def _run(self) -> None:
        try:
            size = self.path.stat().st_size
            budget = available_memory() // 2 if self.budget is None else self.budget
            if size > budget:
                logger.info(
                    "%s not read into memory: %d MB, over the %d MB it may take",
                    self.path.name, size >> 20, budget >> 20,
                )  # fmt: skip
                return
            began = time.monotonic()
            done = populate(self.path, self._stop)
        except OSError as error:
            logger.warning("%s not read into memory: %s", self.path.name, error)
            return
        logger.info(
            "%s read into memory: %d of %d MB in %.1f s",
            self.path.name, done >> 20, size >> 20, time.monotonic() - began,
        )  # fmt: skip

    def stop(self) -> None:
        self._stop.set()
