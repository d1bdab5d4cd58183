"""Worker processes that start quietly, ignore Ctrl-C, stop when told, and die with the run that started them.

A terminal's Ctrl-C sends SIGINT to the whole process group; ``kill`` sends SIGTERM or SIGKILL to
the main process only. Whichever it is, only the main process reacts (one line on stderr, exit
130); worker processes never print a traceback and never outlive the main process:

* :func:`spawning_guard` wraps, in the parent, whatever may start a process (creating the pool,
  ``submit``, which starts workers and the multiprocessing forkserver on demand). SIGINT (and
  :data:`STOP_SIGNAL`) is blocked in the calling thread meanwhile, so every process started inside
  is *born* with it blocked — the forkserver (the mask survives ``exec``, so a Ctrl-C while its
  interpreter starts no longer kills it with ``Fatal Python error: init_import_site``) and every
  worker forked from it or from the main process (no ``KeyboardInterrupt`` traceback before the worker's initializer has
  run). A Ctrl-C arriving inside the guard is held and raised in the parent when the guard ends, so
  no process is left half-started with a truncated start-up message. They start with one BLAS
  thread too (:mod:`auditor.io.blas`: numpy's idle OpenBLAS threads spin, burning CPU).
* :func:`init_worker` is the workers' initializer: SIGINT ignored (the parent shuts the pool
  down), :data:`STOP_SIGNAL` handled (below), then a parent-death signal
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux: the worker's parent is the main process, or the
  forkserver, which exits when the main process does) and a watchdog thread on the main process's
  pid (a pidfd where the kernel has them, else polling), so a SIGKILL or SIGTERM of the main process
  takes its workers with it.
* :func:`stop_children_since` stops the workers' tasks at once when the scan is interrupted or
  fails (the parent, not Ctrl-C, stops them): it sends :data:`STOP_SIGNAL`, and a worker inside a
  task (:func:`stoppable_task`) raises :class:`WorkerStopped` there; one outside a task (sending a
  result, waiting for the next) finishes what it does and raises at its next task's start. The
  workers are not killed: a worker killed while it writes its result leaves half a message in the
  pool's result pipe, and CPython's ``ProcessPoolExecutor`` then waits for the rest forever (its
  manager thread blocks in ``recv``; ``shutdown(wait=True)`` never returns — the rare hang of an
  interrupted scan, ``tests/test_lifecycle.py``).

>>> import signal
>>> before = signal.getsignal(signal.SIGINT)
>>> with spawning_guard():
...     pass  # start processes here
>>> signal.getsignal(signal.SIGINT) is before  # the handler is left as it was
True
>>> with stoppable_task():  # in a worker: the task's body
...     pass

The engines call these; any engine that starts its own processes should do the same.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..io.blas import children_blas_limited
from .memory import tune_allocator, tune_collector

#: seconds between checks of the parent where no pidfd is available
WATCHDOG_POLL_S = 0.5
#: exit status of a worker whose parent has gone
ORPHAN_EXIT = 1
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_CAN_MASK = hasattr(signal, "pthread_sigmask")
#: what the parent sends its workers to stop their tasks (:func:`stop_children_since`); not SIGTERM,
#: which still ends a worker as it always did (the pool then reports it broken)
STOP_SIGNAL = signal.SIGUSR1
_BLOCKED = {signal.SIGINT, STOP_SIGNAL}
#: this process's task state, in a worker: inside a task, told to stop
_TASK = {"running": False, "stopping": False}


class WorkerStopped(BaseException):
    """Raised in a worker's task when its parent stops the workers (:func:`stop_children_since`).

    A ``BaseException``, like ``KeyboardInterrupt``: no ``except Exception`` of the task catches it;
    the pool sends it back as the task's outcome, whole."""

    def __init__(self) -> None:
        super().__init__("the worker was told to stop")

    def __reduce__(self):
        return (WorkerStopped, ())


@contextlib.contextmanager
def held_interrupts() -> Iterator[None]:
    """Hold a Ctrl-C back until the block ends, then raise it (KeyboardInterrupt, through the handler
    that was installed before). For code that a signal must not interrupt half-way, such as a C
    extension module's initialization (DuckDB's aborts the process). Only the main thread can hold a
    Ctrl-C back (signal handlers live there); elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: Any = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


@contextlib.contextmanager
def spawning_guard(tracker: bool = True) -> Iterator[None]:
    """Block SIGINT while processes may be started; a Ctrl-C meanwhile is raised when the block ends.

    Only the main thread can hold a Ctrl-C back (:func:`held_interrupts`); from another thread the
    mask alone is applied. Nothing is raised but what the body raises, or KeyboardInterrupt (through
    the handler that was installed before) for a Ctrl-C that arrived inside. Processes started inside
    run with one BLAS thread (:func:`auditor.io.blas.children_blas_limited`: a worker is one of a
    process per core). With ``tracker`` (processes started other than by ``fork``), multiprocessing's
    resource tracker is started first, SIGINT blocked too.
    """
    with held_interrupts(), children_blas_limited():
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED) if _CAN_MASK else None
        if mask is not None and tracker:
            # multiprocessing's resource tracker unblocks SIGINT after starting itself (CPython 3.11's
            # resource_tracker.ensure_running): start it first, then block again, or the forkserver
            # started next (when a pool is the run's first) would be born with SIGINT deliverable
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        try:
            yield
        finally:
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a held SIGINT is delivered here


def started_children() -> set[int]:
    """Pids of the live child processes this process has started through multiprocessing."""
    import multiprocessing as mp

    return {p.pid for p in mp.active_children() if p.pid is not None}


def stop_children_since(before: set[int]) -> None:
    """Tell the multiprocessing children started since :func:`started_children` gave ``before`` to stop
    their tasks (:data:`STOP_SIGNAL`; see the module doc).

    For an interrupted or failed scan: its workers end the units they hold at once instead of
    finishing them; each sends back :class:`WorkerStopped` whole, and the pool's shutdown then ends
    them as usual.
    """
    import multiprocessing as mp

    for p in mp.active_children():
        if p.pid is not None and p.pid not in before:
            try:
                os.kill(p.pid, STOP_SIGNAL)
            except ProcessLookupError:
                pass  # ended meanwhile


@contextlib.contextmanager
def stoppable_task() -> Iterator[None]:
    """The body of a worker's task: :class:`WorkerStopped` is raised inside when the parent stops
    the workers (at once if it did before the task began)."""
    if _TASK["stopping"]:
        raise WorkerStopped
    _TASK["running"] = True
    try:
        yield
    finally:
        _TASK["running"] = False


def _on_stop(signum: int, frame: Any) -> None:
    _TASK["stopping"] = True
    if _TASK["running"]:  # only inside a task: never while the pool's own code sends a result
        _TASK["running"] = False
        raise WorkerStopped


def forkserver_cpu_s() -> float:
    """CPU seconds (user + system) that this process's multiprocessing forkserver has used so far,
    its preloaded imports included; 0.0 when none runs or the platform does not say (only Linux's
    ``/proc`` does). Its forked workers are not included: they count their own."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)  # private, stable since 3.4
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def init_worker(parent_pid: int, initializer: Callable[..., Any] | None = None, initargs: tuple = ()) -> None:
    """Initializer of a worker process: ignore Ctrl-C, die with ``parent_pid``, keep freed memory for the
    next batch (:func:`~auditor.engines.memory.tune_allocator`), ``initializer(*initargs)``, then
    freeze what is loaded (:func:`~auditor.engines.memory.tune_collector`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also drops a SIGINT held since the worker was born
    signal.signal(STOP_SIGNAL, _on_stop)  # a stop held since the worker was born is taken here
    if _CAN_MASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _BLOCKED)
    die_with(parent_pid)
    tune_allocator()
    if initializer is not None:
        initializer(*initargs)
    tune_collector()  # after the initializer: the job and its indexes are never traced again


def die_with(pid: int) -> None:
    """Make this process exit (status :data:`ORPHAN_EXIT`, silently) as soon as process ``pid`` ends."""
    _set_parent_death_signal()
    threading.Thread(target=_watch, args=(pid, os.getppid()), name="auditor-parent-watchdog", daemon=True).start()


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watchdog still covers it


def _watch(pid: int, ppid: int) -> None:
    fd = None
    try:
        fd = os.pidfd_open(pid)  # Linux ≥ 5.3: readable once the process has ended
    except ProcessLookupError:
        os._exit(ORPHAN_EXIT)
    except (AttributeError, OSError):
        pass
    if fd is not None:
        select.select([fd], [], [])
        os._exit(ORPHAN_EXIT)
    while True:
        time.sleep(WATCHDOG_POLL_S)
        if os.getppid() != ppid:  # the parent (forkserver or main process) has gone
            os._exit(ORPHAN_EXIT)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(ORPHAN_EXIT)
        except PermissionError:
            pass
