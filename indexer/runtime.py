"""Process settings of the indexer's worker processes."""

from __future__ import annotations

import atexit
import contextlib
import gc
import signal
from collections.abc import Iterator

GEN0_THRESHOLD = 50_000


def relax_gc() -> None:
    """Run the cyclic garbage collector rarely, and never over what is alive already.

    Workers allocate millions of short-lived objects (rows, documents) that reference counting
    frees on its own: none of them forms a cycle. With the default thresholds the collector
    scans every tracked object over and over, which doubled the cost of building a document.
    Objects alive at this point (modules, reference tables) are frozen out of the scans;
    cycles made later by libraries are still collected, only less often.
    """
    _freeze()
    gc.set_threshold(GEN0_THRESHOLD, 20, 100)


_held: list[int] = []
"""Signals that came while worker processes were starting (`deaf_to_ctrl_c`)."""
_starting: list[bool] = []


def hold(signum: int) -> bool:
    """Whether the signal must wait (worker processes are starting: one could be half started,
    out of reach of a clean-up); it is raised again once they have started."""
    if _starting:
        _held.append(signum)
    return bool(_starting)


@contextlib.contextmanager
def deaf_to_ctrl_c() -> Iterator[None]:
    """Worker processes started inside never receive SIGINT: they inherit the signal mask of
    the thread that starts them, with SIGINT blocked. A terminal's Ctrl-C signals the whole
    process group; the load's own process takes it and kills its workers (`indexer.cli`), so
    none prints a traceback of its own or writes after the load cleaned up. The load's process
    is not deaf meanwhile: a signal that comes while the workers start (another of its
    threads can take it) is held (`hold`) and raised again once they have started."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    _starting.append(True)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # first: a handler may raise
        _starting.pop()
        if _held and not _starting:
            signum = _held[0]
            forget_held()
            signal.raise_signal(signum)


def forget_held() -> None:
    """Drop the signals held (a command starting afresh in the same process)."""
    _held.clear()


def collect_between_units() -> None:
    """Turn the automatic collector off; the caller runs `end_of_unit` after each unit of work.

    For the builders even rare automatic collections cost about a third of the time spent
    building documents: they keep re-scanning the batches of documents that are alive while
    they are sent. A collection at the end of each bucket, when almost nothing is alive, finds
    the same cycles (those libraries make while sending requests) for a fraction of the cost,
    and memory stays bounded by what one bucket can leave behind.
    """
    _freeze()
    gc.disable()


def end_of_unit() -> None:
    """Collect the cycles one unit of work left behind (see `collect_between_units`)."""
    gc.collect()


def _freeze() -> None:
    """Move what is alive out of the collector's scans, and back in when the process exits:
    frozen objects are never finalised, and DuckDB's bindings (nanobind) report every one of
    their objects left at exit as a leak, a wall of `nanobind: leaked ...` lines after the
    load's report."""
    gc.freeze()
    atexit.register(gc.unfreeze)
