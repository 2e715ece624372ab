"""The record store is read into the page cache when a process opens it (`app.lib.pagecache`),
so that the first requests after a restart do not fault it in from the disk one page at a
time. Residency is read by util-linux's `fincore`; each test first drops its file from the
cache (`POSIX_FADV_DONTNEED`, which a file nobody maps gives up) and checks that it did."""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from pathlib import Path

import pytest

from app.lib import pagecache
from app.lookup.records import RecordStore
from indexer import records
from tests.conftest import serving

MB = 1 << 20


def resident(path: Path) -> int:
    """Bytes of `path` in the page cache."""
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return int(out.strip())


def dropped(path: Path) -> Path:
    """`path`, written to the disk and dropped from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert resident(path) < os.path.getsize(path) // 10, "the page cache kept the file"
    return path


def _file(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "dados.bin"
    path.write_bytes(os.urandom(size))
    return dropped(path)


def test_populate_reads_the_whole_file_into_the_page_cache(tmp_path: Path) -> None:
    path = _file(tmp_path, 12 * MB + 5)
    assert pagecache.populate(path, chunk=4 * MB) == 12 * MB + 5
    assert resident(path) >= os.path.getsize(path)


def test_populate_stops_when_asked(tmp_path: Path) -> None:
    path = _file(tmp_path, 8 * MB)
    stop = threading.Event()
    stop.set()
    assert pagecache.populate(path, stop, chunk=MB) == 0
    assert resident(path) < MB


def test_populate_of_an_empty_or_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "vazio.bin"
    empty.touch()
    assert pagecache.populate(empty) == 0
    with pytest.raises(FileNotFoundError):
        pagecache.populate(tmp_path / "nenhum.bin")


def test_a_file_over_the_budget_is_left_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _file(tmp_path, 4 * MB)
    with caplog.at_level(logging.INFO, logger=pagecache.__name__):
        preload = pagecache.Preload.start(path, budget=2 * MB)
        preload.thread.join(10)
    assert not preload.thread.is_alive()
    assert resident(path) < MB
    assert "dados.bin not read into memory: 4 MB, over the 2 MB it may take" in caplog.text


def test_a_missing_file_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=pagecache.__name__):
        preload = pagecache.Preload.start(tmp_path / "nenhum.lmdb")
        preload.thread.join(10)
    assert "nenhum.lmdb not read into memory: [Errno 2]" in caplog.text


def test_available_memory_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24576000 kB\nMemAvailable:   18874368 kB\n")
    assert pagecache.available_memory(meminfo) == 18874368 * 1024
    meminfo.write_text("MemTotal:       24576000 kB\n")
    assert pagecache.available_memory(meminfo) == 0
    assert pagecache.available_memory(tmp_path / "nenhum") == 0
    assert pagecache.available_memory() > 0


def _store(folder: Path, alias: str, size: int) -> Path:
    """A release's store of about `size` bytes of values, published for `alias`, dropped from
    the page cache."""
    env = records.open_writer(folder, "empresas-1")
    with env.begin(write=True) as txn:
        for number in range(size // (4 * 1024)):
            txn.put(f"{number:014d}".encode(), os.urandom(4 * 1024))
    env.sync(True)
    env.close()
    assert records.publish(folder, alias, "empresas-1")
    return dropped(records.store_path(folder, "empresas-1"))


@pytest.mark.parametrize("preload", [True, False])
def test_record_store_read_into_memory_when_opened(tmp_path: Path, preload: bool) -> None:
    path = _store(tmp_path, "empresas", 16 * MB)
    store = RecordStore(tmp_path, "empresas", preload=preload)
    try:
        assert store.live_index() == "empresas-1"
        if preload:
            assert store.preloading is not None
            store.preloading.thread.join(30)
            assert resident(path) >= os.path.getsize(path)
        else:
            assert store.preloading is None
            assert resident(path) < os.path.getsize(path) // 10
    finally:
        store.close()
    assert store.preloading is None


def test_a_new_server_reads_its_store_before_any_request(peer_alias: str, tmp_path: Path) -> None:
    """The API opens the live store in its startup, so its preload runs before the first
    lookup (here none is made)."""
    path = _store(tmp_path, peer_alias, 24 * MB)
    with serving(peer_alias, env={"RECORDS_DIR": str(tmp_path)}) as server:
        for _ in range(100):
            if resident(path) >= os.path.getsize(path):
                break
            threading.Event().wait(0.1)
        log = server.log()
    assert resident(path) >= os.path.getsize(path)
    assert "empresas-1.lmdb read into memory" in log


def test_unpublished_store_has_no_preload(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, "empresas")
    assert store.live_index() is None
    assert store.preloading is None
    store.close()


def test_a_file_cut_short_under_its_mapping_is_an_error(tmp_path: Path) -> None:
    """The kernel cannot read pages past the end of a file that shrank after it was mapped
    (EFAULT): the error is raised, not taken for a kernel without the advice."""
    path = _file(tmp_path, 4 * MB)
    fd = os.open(path, os.O_RDWR)
    address = pagecache._mmap(None, 4 * MB, pagecache.PROT_READ, pagecache.MAP_SHARED, fd, 0)
    try:
        os.ftruncate(fd, MB)
        with pytest.raises(OSError, match="Bad address"):
            pagecache._advise(fd, address, 4 * MB, None, MB)
    finally:
        pagecache._munmap(address, 4 * MB)
        os.close(fd)
