"""Scan progress on the terminal and the resource figures of a run.

:class:`ScanProgress` shows a rich progress bar (records, MB, records/s, ETA) on stderr once a scan
has run for more than ``delay`` seconds, and only when stderr is a terminal; it never prints
otherwise. ``advance`` is cheap enough to call per batch. ETA is estimated from the training
files' sizes on disk against the text read so far (a rough guide for compressed files).

>>> p = ScanProgress("train", total_bytes=1000, enabled=False)
>>> p.advance(records=10, chars=500); p.close()
>>> peak_rss_mb() > 0
True
"""

from __future__ import annotations

import resource
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory of this process (or of its largest finished child process), in MB."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    kb = resource.getrusage(who).ru_maxrss
    return round(kb / 1024 / (1024 if sys.platform == "darwin" else 1), 1)


class ScanProgress:
    def __init__(self, label: str, total_bytes: int, enabled: bool | None = None, delay: float = 1.0):
        self.label = label
        self.total = max(total_bytes, 1)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.delay = delay
        self.start = time.perf_counter()
        self.records = 0
        self.chars = 0
        self._bar: tuple[Progress, TaskID] | None = None  # the bar and its task, once shown

    def advance(self, records: int, chars: int) -> None:
        self.records += records
        self.chars += chars
        if not self.enabled:
            return
        if self._bar is None:
            if time.perf_counter() - self.start < self.delay:
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
                console=None,
            )
            bar.start()
            self._bar = bar, bar.add_task(f"scan {self.label}", total=self.total, records=0, mb=0.0, rate=0.0)
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        bar, task = self._bar
        bar.update(
            task,
            completed=min(self.chars, self.total * 0.99),
            records=self.records,
            mb=self.chars / 1e6,
            rate=self.records / elapsed,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None
