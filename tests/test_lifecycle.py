"""Stopping worker processes (auditor.engines.lifecycle): an interrupted scan's workers stop their
tasks at once, and stopping one while it writes its result never hangs the run.

The hang this guards against (seen about once in 40–80 interrupted scans under load): the parent
killed its workers (SIGTERM) on Ctrl-C; one killed in the middle of writing a large result left half
a message in the pool's result pipe, the pool's manager thread waited in ``recv`` for the rest
forever (the parent holds the pipe's write end, so no end-of-file comes), and
``ProcessPoolExecutor.shutdown(wait=True)`` never returned. Each scenario runs in a child process
(the real local engine; its workers forked from the scenario's process and started from the
forkserver, each) with a deadline, so a hang is a failure, not a stuck suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.engines import lifecycle

REPO = Path(__file__).resolve().parent.parent

needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads process states from /proc")

#: run by each scenario: helpers the workers import (a module beside the script), then the scenario
_HELPERS = '''
import os, time


def spin(mark_path):
    """A task that computes until it is stopped (a Python loop: the stop signal's handler runs in it)."""
    with open(mark_path, "a") as f:
        f.write(f"{os.getpid()}\\n")
    n = 0
    while True:
        n += 1


def writing(pids):
    """The first of ``pids`` blocked writing to a pipe (its kernel wait channel), or None."""
    for p in pids:
        try:
            with open(f"/proc/{p}/wchan") as f:
                if f.read().strip().endswith("pipe_write"):
                    return p
        except OSError:
            pass
    return None


def wait_until(test, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = test()
        if found:
            return found
    return None
'''


#: how the scenarios' workers start (the local engine's ``start_method``; the command forks them)
STARTS = ["fork", "forkserver"]


def _run(tmp_path: Path, body: str, start: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``body`` run as a script's main block, ``LocalEngine`` there making engines whose workers
    start by ``start``; the process runs one BLAS thread, as the ``auditor`` command does."""
    (tmp_path / "helpers.py").write_text(_HELPERS, encoding="utf-8")
    script = tmp_path / "scenario.py"
    script.write_text(
        "import functools, os, signal, sys, time\n"
        "from auditor.engines import local\n"
        "from auditor.engines.lifecycle import started_children\n"
        "from helpers import spin, wait_until, writing\n\n"
        f"LocalEngine = functools.partial(local.LocalEngine, start_method={start!r})\n\n"
        "if __name__ == '__main__':\n" + textwrap.indent(textwrap.dedent(body), "    "),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the scenario did not end within {timeout:g} s (a hang)\nstdout:\n{out}\nstderr:\n{err[-4000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kernel_names_pipe_waits() -> bool:
    """Whether /proc/PID/wchan names the wait of a process blocked writing to a full pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        os.write(w, b"x" * (1 << 20))  # blocks: nobody reads
        os._exit(0)
    os.close(w)
    try:
        for _ in range(200_000):
            try:
                with open(f"/proc/{pid}/wchan") as f:
                    if f.read().strip().endswith("pipe_write"):
                        return True
            except OSError:
                return False
        return False
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)


@needs_proc
@pytest.mark.parametrize("start", STARTS)
def test_stopping_a_worker_while_it_writes_its_result_never_hangs(tmp_path, start):
    """Cancel offloaded calls while a worker is blocked writing a 256 MB result into the pool's
    result pipe: the cancel returns (the worker finishes its write, then stops) and every worker
    ends. Before the fix (SIGTERM), this hung every time."""
    if not _kernel_names_pipe_waits():
        pytest.skip("this kernel does not name a process's wait channel (/proc/PID/wchan): no way to catch a write")
    p = _run(
        tmp_path,
        """
        engine = LocalEngine(workers=2, min_parallel_bytes=0)
        before = started_children()
        results = engine.offload(bytes, [(256 << 20,)] * 6, [])
        caught = wait_until(lambda: writing(started_children() - before), 60)
        if not caught:
            sys.exit("no worker was seen writing its result")
        workers = started_children() - before
        assert results(cancel=True) == []
        print("stopped", caught in workers, flush=True)
        """,
        start,
    )
    assert (p.returncode, p.stdout.split()) == (0, ["stopped", "True"]), p.stderr[-4000:]
    assert p.stderr == ""


@needs_proc
@pytest.mark.parametrize("start", STARTS)
def test_a_cancel_stops_tasks_that_are_computing(tmp_path, start):
    """Tasks that would compute forever: a cancel stops them inside the task (the stop signal's
    handler raises there) and the pool shuts down."""
    p = _run(
        tmp_path,
        """
        engine = LocalEngine(workers=2, min_parallel_bytes=0)
        before = started_children()
        mark = os.path.abspath("started")
        results = engine.offload(spin, [(mark,)] * 4, [])
        running = lambda: os.path.exists(mark) and len(open(mark).read().split()) == 2 and 2
        if not wait_until(running, 60):
            sys.exit("the two workers did not start their tasks")
        assert results(cancel=True) == []
        print("left", len(started_children() - before), flush=True)
        """,
        start,
    )
    assert (p.returncode, p.stdout.split()) == (0, ["left", "0"]), p.stderr[-4000:]


@needs_proc
@pytest.mark.parametrize("start", STARTS)
def test_a_stop_from_elsewhere_is_one_clear_error(tmp_path, start):
    """Workers told to stop by some other process (the stop signal, not from their parent): the run
    fails with one ScanError line, no traceback of the workers'."""
    p = _run(
        tmp_path,
        f"""
        from auditor.errors import ScanError
        engine = LocalEngine(workers=2, min_parallel_bytes=0)
        mark = os.path.abspath("started")
        results = engine.offload(spin, [(mark,)] * 2, [])
        both = wait_until(lambda: os.path.exists(mark) and len(open(mark).read().split()) == 2 and 2, 60)
        if not both:
            sys.exit("the two workers did not start their tasks")
        for pid in open(mark).read().split():  # each task would compute forever
            os.kill(int(pid), {int(lifecycle.STOP_SIGNAL)})
        try:
            results()
        except ScanError as e:
            print(e, flush=True)
        """,
        start,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.strip().startswith("a worker process was told to stop its task by another process"), p.stdout
    assert "Traceback" not in p.stderr


def test_the_stop_is_raised_only_inside_a_task():
    """In this process, as in a worker: a stop outside a task is remembered and raised when the next
    task begins; inside one it is raised at once; a worker that was stopped stays stopped."""
    previous = signal.signal(lifecycle.STOP_SIGNAL, lifecycle._on_stop)
    try:
        os.kill(os.getpid(), lifecycle.STOP_SIGNAL)  # outside a task: only remembered
        with pytest.raises(lifecycle.WorkerStopped):
            with lifecycle.stoppable_task():
                pass
        lifecycle._TASK["stopping"] = False
        with pytest.raises(lifecycle.WorkerStopped):
            with lifecycle.stoppable_task():
                os.kill(os.getpid(), lifecycle.STOP_SIGNAL)
                for _ in range(10_000_000):  # the handler runs between bytecodes
                    pass
        assert lifecycle._TASK == {"running": False, "stopping": True}
    finally:
        signal.signal(lifecycle.STOP_SIGNAL, previous)
        lifecycle._TASK.update(running=False, stopping=False)
