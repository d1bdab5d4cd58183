"""Events a test waits for instead of sleeping (``from events import Markers, ...``).

A child process says where it is by writing lines to a pipe (:class:`Markers`); the test reads them
and acts (a signal, a kill) right after the moment it names. :func:`marked_cli` runs ``auditor`` as
``python -m auditor`` does, with three marks added: ``forkserver`` once the multiprocessing
forkserver runs, ``worker`` each time a scan pool starts a worker process, and ``records N`` each time
the calling process has merged a work unit's results (N records scanned so far). A process's end is
an event too (:func:`wait_gone`, through ``pidfd_open``). Every wait has a deadline: a failure bound,
never the synchronisation itself.
"""

from __future__ import annotations

import os
import select
import sys
import time

#: runs ``auditor`` with its command-line arguments after the pipe's fd, as ``python -m auditor`` does
_MARKED_CLI = """
import os, runpy, signal, sys
from concurrent.futures import process
from multiprocessing import forkserver

fd = int(sys.argv.pop(1))
# as a shell starts a command in the foreground: Ctrl-C at its default, even when the tests run where
# it is ignored (a non-interactive shell's background job inherits SIGINT ignored, and Python then
# installs no handler: the run would never see the test's Ctrl-C)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def mark(text):
    try:
        os.write(fd, (text + "\\n").encode())
    except OSError:  # the test stopped reading
        pass


def wrap(cls, name, after):
    real = getattr(cls, name)

    def wrapped(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        after(self)
        return result

    setattr(cls, name, wrapped)


from auditor.scan import progress

wrap(forkserver.ForkServer, "ensure_running", lambda self: mark("forkserver"))
wrap(process.ProcessPoolExecutor, "_spawn_process", lambda self: mark("worker"))
wrap(progress.ScanProgress, "advance", lambda self: mark(f"records {self.records}"))
sys.argv[0] = "auditor"
runpy.run_module("auditor", run_name="__main__", alter_sys=True)
"""


class Markers:
    """A pipe a child process writes marker lines to; the test reads them as they come.

    >>> m = Markers()
    >>> _ = os.write(m.fd, b"ready\\nrecords 10\\n")
    >>> m.wait_for(lambda line: line.startswith("records"), 5, "no records")
    'records 10'
    >>> m.seen
    ['ready', 'records 10']
    >>> m.close()
    """

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()  # the child writes to fd (pass_fds=(markers.fd,))
        self._buffer = b""
        self.seen: list[str] = []

    def started(self) -> None:
        """Close this process's copy of the write end once the child has it (so that EOF means it ended)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def next(self, deadline: float) -> str | None:
        """The next line, or None when the writer has ended; fails past ``deadline`` (time.monotonic)."""
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no mark before the deadline (marks so far: {self.seen[-5:]})"
            ready, _, _ = select.select([self._read], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._read, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.seen.append(line.decode())
        return self.seen[-1]

    def wait_for(self, wanted, timeout: float, what: str) -> str:
        """The first line for which ``wanted(line)`` is true; fails with ``what`` when the writer ends first."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(deadline)
            assert line is not None, f"{what} (the child ended; marks: {self.seen[-5:]})"
            if wanted(line):
                return line

    def close(self) -> None:
        self.started()
        os.close(self._read)


def marked_cli(*args: str, fd: int) -> list[str]:
    """The command line of ``auditor *args`` writing its marks to ``fd`` (see the module doc)."""
    return [sys.executable, "-c", _MARKED_CLI, str(fd), *args]


def records_mark(at_least: int):
    """A :meth:`Markers.wait_for` test: ``records N`` with N ≥ ``at_least``."""
    return lambda line: line.startswith("records ") and int(line.split()[1]) >= at_least


def wait_gone(pids, timeout: float, what: str) -> None:
    """Wait until every process of ``pids`` has ended (each one's pidfd becomes readable)."""
    fds = []
    try:
        for pid in pids:
            try:
                fds.append(os.pidfd_open(pid))
            except ProcessLookupError:
                continue  # already gone
        deadline = time.monotonic() + timeout
        while fds:
            left = deadline - time.monotonic()
            assert left > 0, f"{what} ({len(fds)} still running)"
            ready, _, _ = select.select(fds, [], [], left)
            for fd in ready:
                fds.remove(fd)
                os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)


def wait_any_gone(pids, timeout: float) -> int | None:
    """The first of ``pids`` to end (None when none has within ``timeout``)."""
    fds = {}
    try:
        for pid in pids:
            try:
                fds[os.pidfd_open(pid)] = pid
            except ProcessLookupError:
                return pid
        ready, _, _ = select.select(list(fds), [], [], timeout)
        return fds[ready[0]] if ready else None
    finally:
        for fd in fds:
            os.close(fd)


def live_processes():
    """``(pid, stat fields after the command name)`` of every live process (from /proc; zombies and
    processes that end while being read are left out)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if fields[0] != "Z":
            yield int(entry), fields


def children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (from /proc)."""
    return [child for child, fields in live_processes() if int(fields[1]) == pid]
