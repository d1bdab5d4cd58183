"""One BLAS thread in the processes an audit runs (:mod:`auditor.io.blas`): numpy's OpenBLAS threads
spin when idle, so a process per core that also starts a BLAS thread per core burns CPU for nothing.
The ``auditor`` command limits its own process (and so every process it starts); the local engine
limits the processes it starts, whoever calls it, and leaves the caller's environment as it was."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.io.blas import BLAS_THREADS_VAR

#: after a matrix product, the threads of the process that Python did not start (OpenBLAS's)
_BLAS_THREADS = """
import os, threading, numpy
a = numpy.ones((512, 512))
a @ a
print(len(os.listdir("/proc/self/task")) - threading.active_count())
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (BLAS_THREADS_VAR, "OMP_NUM_THREADS", "GOTO_NUM_THREADS")}
    return {**env, **extra}


def test_the_command_sets_one_blas_thread_unless_the_user_chose_a_count(monkeypatch):
    monkeypatch.delenv(BLAS_THREADS_VAR, raising=False)
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0
    assert os.environ[BLAS_THREADS_VAR] == "1"
    monkeypatch.setenv(BLAS_THREADS_VAR, "3")
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0
    assert os.environ[BLAS_THREADS_VAR] == "3"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc (Linux only)")
def test_the_commands_process_runs_no_blas_thread_of_its_own():
    # the command's entry point runs first, then numpy is imported, as in `auditor audit`
    run_cli = "from auditor.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
    code = run_cli + _BLAS_THREADS
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "0", out.stderr  # after the version line
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenBLAS starts no thread of its own, so the count cannot tell (checked above)")
    # the count sees OpenBLAS's threads where it runs them: a count the user chose is kept
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(**{BLAS_THREADS_VAR: "2"}), capture_output=True, text=True, check=True
    )
    assert int(out.stdout.split()[-1]) >= 1, out.stderr


def test_the_local_engines_workers_run_one_blas_thread_and_the_caller_keeps_its_environment(tmp_path):
    # in a fresh process: this one's forkserver may have been started before (by a test of its own)
    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "a record"}\n')
    script = tmp_path / "offload.py"
    script.write_text(
        "import os\n"
        "from auditor.datasets.dataset import Dataset, DatasetSpec\n"
        "from auditor.engines.base import get_engine\n"
        "if __name__ == '__main__':\n"
        f"    ds = Dataset(DatasetSpec('tr', [{str(path)!r}]))\n"
        "    engine = get_engine('local', workers=2, min_parallel_bytes=0)\n"
        f"    pid, value = engine.offload(os.getpid, [()], [ds])(), engine.offload(os.getenv, [({BLAS_THREADS_VAR!r},)], [ds])()\n"
        f"    print(pid[0] != os.getpid(), value[0], os.environ.get({BLAS_THREADS_VAR!r}))\n"
    )
    out = subprocess.run([sys.executable, str(script)], env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # a worker process, run with one BLAS thread; the caller's environment as it was
    assert out.stdout.split() == ["True", "1", "None"], out.stdout + out.stderr
