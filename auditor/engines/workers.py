"""How many workers a local scan gets (``--workers auto``, the default) and how its work is cut.

A second worker only pays where a core is free for it: on a machine where another process keeps a core
busy, two workers (plus the calling process merging their results) share one core and the scan is
slower than in one process. So, as ``make -l`` does, the scan looks at the load before it starts workers:

* **usable cores**: the CPUs this process may run on (``os.sched_getaffinity``), at most the cgroup's
  CPU quota (``cpu.max``, a container's ``--cpus``);
* **busy cores**: the CPU time *other* processes used on those CPUs while this run read its eval sets
  and built its indexes (``/proc/stat`` less this process tree's own time, a window of at least
  :data:`MIN_WINDOW_S`): what is happening now. Only where that cannot be read (no ``/proc/stat``, or
  a guess before the window, ``sample=False``) the 1-minute load average (``os.getloadavg``, less this
  process's share) stands in: it lags by a minute, so a run that just ended elsewhere would still hold a
  core it no longer uses;
* **workers** = usable − busy, rounded, from 1 to the usable cores; 1 runs the scan in-process, exactly
  as ``--workers 1`` does, so the default never loses to one worker by more than the measurement.

:func:`balanced_split` then cuts the work into a multiple of the workers, at least
:data:`UNITS_PER_WORKER` each and none larger than ``split_bytes``, so that the last unit does not
leave one worker running alone while the others idle.

>>> meter = CoreMeter()
>>> 1 <= meter.free_cores() <= usable_cores()
True
>>> balanced_split(165_000_000, 2, 16 * 1024 * 1024)  # 10 units of 16.5 MB: 5 per worker
16500000
>>> balanced_split(20_000_000, 2, 16 * 1024 * 1024)  # 8 units of 2.5 MB, not one of 16 MiB and one of 3.2
2500000

Never raises: what cannot be read (no ``/proc``, no load average) counts as idle.
"""

from __future__ import annotations

import math
import os
import time

#: shortest window over which other processes' CPU use is measured (waited for when a run is quicker)
MIN_WINDOW_S = 0.25
#: fewest units each worker gets, so that one slow unit (a busy core) cannot leave a long tail
UNITS_PER_WORKER = 4
#: smallest unit worth a task of its own
MIN_UNIT_BYTES = 1 << 20


def usable_cores() -> int:
    """The CPUs this process may run on, capped by its cgroup's CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _busy_ticks(cpus: set[int]) -> int | None:
    """Non-idle clock ticks of ``cpus`` since boot (``/proc/stat``; steal counts as busy), or None."""
    total = 0
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                name, *values = line.split()
                if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
                    continue
                user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in values[:8])
                total += user + nice + system + irq + softirq + steal
    except (OSError, ValueError):
        return None
    return total


def _tree_ticks() -> int:
    """CPU clock ticks of this process and its live descendants (with the children each has reaped):
    the forkserver, its workers, pools that already finished."""
    stats: dict[int, tuple[int, int]] = {}  # pid -> (parent, ticks)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            stats[int(entry)] = (int(fields[1]), sum(int(v) for v in fields[11:15]))  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0))[1]
        todo.extend(children.get(pid, ()))
    return total


class CoreMeter:
    """Measures, from its creation (then from the last measure) to :meth:`free_cores`, how much of the
    usable CPUs other processes use."""

    def __init__(self) -> None:
        self.cores = usable_cores()
        try:
            self._cpus = os.sched_getaffinity(0)
        except (AttributeError, OSError):
            self._cpus = set(range(os.cpu_count() or 1))
        self._t0 = time.monotonic()
        self._busy0 = _busy_ticks(self._cpus)
        self._own0 = _tree_ticks()

    def busy_cores(self, sample: bool = True) -> float:
        """Cores' worth of CPU that other processes use now: measured over the window where ``/proc/stat``
        can be read; otherwise, and without ``sample``, the load average (a guess that waits for nothing)."""
        waited = time.monotonic() - self._t0
        if sample and waited < MIN_WINDOW_S:
            time.sleep(MIN_WINDOW_S - waited)
        busy1, own1, t1 = _busy_ticks(self._cpus), _tree_ticks(), time.monotonic()
        hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        window = max(t1 - self._t0, 1e-3)
        own = (own1 - self._own0) / hz / window  # this process tree's cores, over the window
        if sample and busy1 is not None and self._busy0 is not None:
            sampled = max(0.0, (busy1 - self._busy0) / hz / window - own)
            self._t0, self._busy0, self._own0 = t1, busy1, own1  # the next scan's window starts now
            return sampled
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
        # the 1-minute average holds this process too, as far as it has run in the last minute
        loaded = max(0.0, load - min(own, 1.0) * (1 - math.exp(-_age_s() / 60)))
        return loaded

    def free_cores(self, sample: bool = True) -> int:
        """Workers for a scan starting now: the usable cores less the busy ones, rounded, at least 1."""
        return max(1, min(self.cores, math.floor(self.cores - self.busy_cores(sample) + 0.5)))


def _age_s() -> float:
    """Seconds since this process started (0 where /proc cannot say)."""
    try:
        with open("/proc/self/stat", encoding="ascii", errors="replace") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - started / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def balanced_split(total_bytes: int, workers: int, split_bytes: int) -> int:
    """A unit size of at most ``split_bytes`` that cuts ``total_bytes`` into a multiple of ``workers``
    units, at least :data:`UNITS_PER_WORKER` each (not below :data:`MIN_UNIT_BYTES`)."""
    if workers <= 1 or total_bytes <= 0:
        return split_bytes
    rounds = max(UNITS_PER_WORKER, math.ceil(total_bytes / (workers * split_bytes)))
    return min(split_bytes, max(MIN_UNIT_BYTES, math.ceil(total_bytes / (workers * rounds))))
