"""Scan progress on the terminal and the resource figures of a run.

:class:`ScanProgress` shows a rich progress bar (records, MB, records/s, ETA) on stderr once a scan
has run for more than ``delay`` seconds, and only when stderr is a terminal; it never prints
otherwise. It moves per batch of records, not per work unit: :func:`~auditor.scan.job.scan_unit`
adds each batch to a :class:`LiveCounts` (in shared memory when the scan runs in worker processes),
which the bar reads four times a second, so the ETA is known within a second of the first records.
An engine whose workers cannot share memory (Ray) advances it per unit instead (``advance``). ETA is
estimated from the training files' sizes on disk against the text read so far (a rough guide for
compressed files).

>>> p = ScanProgress("train", total_bytes=1000, enabled=False)
>>> p.advance(records=10, chars=500); p.close()
>>> peak_rss_mb() > 0
True
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console
    from rich.progress import Progress, TaskID


def progress_shown(enabled: bool | None) -> bool:
    """Whether a scan shows its bar: as asked, else when stderr is a terminal."""
    return sys.stderr.isatty() if enabled is None else enabled


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory of this process (or of its largest finished child process), in MB."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    kb = resource.getrusage(who).ru_maxrss
    return round(kb / 1024 / (1024 if sys.platform == "darwin" else 1), 1)


class LiveCounts:
    """Records and characters scanned so far, added per batch (``add``) wherever the scan runs.

    ``shared``: the two counts live in shared memory (``multiprocessing.Value``), so worker processes
    that got this object when they started (a pool's initializer arguments) add to the caller's;
    otherwise plain integers, for a scan in this process.
    """

    def __init__(self, shared: bool = False, context: Any = None):
        self._shared = shared
        if shared:
            ctx = context or mp.get_context()
            self._records, self._chars = ctx.Value("q", 0), ctx.Value("q", 0)
        self.records = 0
        self.chars = 0

    def add(self, records: int, chars: int) -> None:
        if not self._shared:
            self.records += records
            self.chars += chars
            return
        with self._records.get_lock():
            self._records.value += records
        with self._chars.get_lock():
            self._chars.value += chars

    def read(self) -> tuple[int, int]:
        if self._shared:
            return self._records.value, self._chars.value
        return self.records, self.chars


class ScanProgress:
    #: how often the bar reads its LiveCounts (seconds)
    POLL_S = 0.25

    def __init__(
        self,
        label: str,
        total_bytes: int,
        enabled: bool | None = None,
        delay: float = 1.0,
        live: LiveCounts | None = None,
        clock: Callable[[], float] = time.perf_counter,
        console: Console | None = None,
    ):
        self.label = label
        self.total = max(total_bytes, 1)
        self.enabled = progress_shown(enabled)
        self.delay = delay
        self.clock, self.console = clock, console
        self.start = clock()
        self.records = 0
        self.chars = 0
        self._bar: tuple[Progress, TaskID] | None = None  # the bar and its task, once shown
        self.live = live
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        if live is not None and self.enabled:
            self._poller = threading.Thread(target=self._poll_loop, name="auditor-progress", daemon=True)
            self._poller.start()

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.POLL_S):
            self.poll()

    def poll(self) -> None:
        """Show what the live counts say now."""
        if self.live is not None:
            self.records, self.chars = self.live.read()
            self._show()

    def advance(self, records: int, chars: int) -> None:
        """One work unit done (the per-unit steps of an engine without live counts)."""
        self.records += records
        self.chars += chars
        self._show()

    def _show(self) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            if self.clock() - self.start < self.delay:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn(
                    "{task.fields[records]:,} records  {task.fields[mb]:.1f} MB  {task.fields[rate]:,.0f} rec/s"
                ),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=self.console,
                get_time=self.clock,
            )
            bar.start()
            self._bar = bar, bar.add_task(f"scan {self.label}", total=self.total, records=0, mb=0.0, rate=0.0)
        elapsed = max(self.clock() - self.start, 1e-9)
        bar, task = self._bar
        bar.update(
            task,
            completed=min(self.chars, self.total * 0.99),
            records=self.records,
            mb=self.chars / 1e6,
            rate=self.records / elapsed,
        )

    def close(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join()
            self._poller = None
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None
