"""How the local engine's workers start (``start_method``): ``auto`` forks them from a calling process
that runs one thread (the ``auditor`` command) and starts them from the forkserver where other
threads run; every start method finds what the in-process scan finds, on real text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import get_engine
from auditor.engines.local import START_METHODS
from auditor.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/task"),
    reason="auto forks only on Linux, where /proc counts a process's threads",
)


def _run(code: str, *args: str) -> list[str]:
    """``code`` run by a fresh interpreter with one BLAS thread (as the ``auditor`` command runs): its lines."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[:-1]


_CHOICE = """
import faulthandler, threading
from auditor.engines.local import start_method

print(start_method(), start_method("forkserver"))
faulthandler.dump_traceback_later(3600)  # a thread of C's own, which the threading module does not list
print(threading.active_count(), start_method())
stop = threading.Event()
threading.Thread(target=stop.wait).start()
print(threading.active_count(), start_method())
stop.set()
"""


@linux_only
def test_auto_forks_only_while_the_process_runs_one_thread():
    assert _run(_CHOICE) == ["fork forkserver", "1 forkserver", "2 forkserver"]


_AFTER_POOLS = """
from auditor.engines.local import LocalEngine, start_method

engine = LocalEngine(workers=2, min_parallel_bytes=0)
seen = []
for _ in range(20):  # a pool's threads joined: gone from the process before the next choice
    assert engine.offload(abs, [(-1,), (-2,)], [])() == [1, 2]
    seen.append(start_method())
print(" ".join(sorted(set(seen))))
"""


@linux_only
def test_auto_still_forks_right_after_a_pool_has_shut_down():
    """A pool's manager thread, joined, is listed in /proc a moment longer: the engine waits for it
    to leave, so the next pool forks too (it took the forkserver, now and then, before)."""
    assert _run(_AFTER_POOLS) == ["fork"]


_SCAN = """
import os, sys
from multiprocessing import forkserver
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats
from auditor.engines.local import LocalEngine
from auditor.methods import create

if __name__ == "__main__":
    ev = list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())
    job = ScanJob.of([create(m).build(ev) for m in ("exact", "ngram", "minhash")])
    for method in sys.argv[2:]:
        ds = Dataset(DatasetSpec("tr", [sys.argv[1]], role="train"))
        workers = 1 if method == "in-process" else 2
        engine = LocalEngine(workers=workers, min_parallel_bytes=0, split_bytes=100_000,
                             start_method="auto" if method == "in-process" else method)
        stats = ScanStats()
        found = sorted((f.method, f.train_id, f.eval_id, round(f.score, 6), f.conclusive) for f in engine.scan(job, ds, stats))
        parent = engine.offload(os.getppid, [()], [ds])()[0] if workers > 1 else os.getpid()
        served = forkserver._forkserver._forkserver_pid is not None
        print(method, engine.workers_used, stats.units, stats.records, parent == os.getpid(), served, len(found), hash(repr(found)))
"""


def _training_file(path: Path) -> None:
    """Real text: WebShop's instructions, StableToolBench queries planted in 1 of 8 records, whole
    or inside a longer text (with a word changed in every other one)."""
    goals = [r.view("text") for r in Dataset(DatasetSpec("w", ["webshop:0:3000"], role="eval")).records()]
    queries = [r.view("query") for r in Dataset(DatasetSpec("q", ["stabletoolbench"], role="eval")).records()]
    rows = []
    for i, goal in enumerate(goals):
        text = goal
        if i % 8 == 0:
            q = queries[(i // 8) % len(queries)]
            if i % 16 == 0:
                q = q.replace(" the ", " a ", 1)
            text = q if i % 24 == 0 else f"{goal}\n{q}\nThanks in advance."
        rows.append({"id": f"r{i}", "messages": [{"role": "user", "content": text}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@linux_only
@pytest.mark.slow
def test_every_start_method_finds_what_the_in_process_scan_finds(tmp_path):
    train = tmp_path / "train.jsonl"
    _training_file(train)
    lines = _run(_SCAN, str(train), "in-process", "auto", "fork", "forkserver", "spawn")
    rows = {line.split()[0]: line.split()[1:] for line in lines}
    assert list(rows) == ["in-process", "auto", "fork", "forkserver", "spawn"]
    # the same findings, nonempty, whatever started the workers
    assert len({(r[-2], r[-1]) for r in rows.values()}) == 1 and int(rows["fork"][-2]) > 100
    for method in ("auto", "fork", "forkserver", "spawn"):
        used, units, records = rows[method][:3]
        assert (used, records) == ("2", "3000") and int(units) > 2, (method, rows[method])
    # auto forked the workers from this process, and no forkserver ran until one was asked for
    assert rows["auto"][3:5] == ["True", "False"] and rows["fork"][3:5] == ["True", "False"]
    assert rows["forkserver"][3:5] == ["False", "True"]


def test_a_manifest_names_the_start_method(tmp_path):
    from auditor.audit.manifest import parse_manifest
    from auditor.errors import ManifestError

    doc = {
        "start_method": "forkserver",
        "datasets": {"e": {"path": "stabletoolbench", "role": "eval"}, "t": {"path": "webshop:0:50", "role": "train"}},
        "checks": [{"name": "c", "train": ["t"], "eval": ["e"]}],
    }
    assert parse_manifest(doc, base_dir=tmp_path).engine_options == {"local": {"start_method": "forkserver"}}
    with pytest.raises((ManifestError, ConfigError), match="start_method must be one of"):
        parse_manifest({**doc, "start_method": "thread"}, base_dir=tmp_path).validate()


def test_a_start_method_not_known_is_one_clear_error():
    with pytest.raises(ConfigError, match="start_method must be one of auto, fork, forkserver, spawn, not 'thread'"):
        get_engine("local", start_method="thread")
    assert START_METHODS[0] == "auto" and get_engine("local").start_method == "auto"
    out = CliRunner().invoke(main, ["audit", "--train", "x", "--eval", "y", "--start-method", "thread"])
    assert out.exit_code == 2 and "--start-method" in out.output


def test_what_each_worker_needs_is_built_once_before_workers_fork():
    """A forked worker gets no pickled copy, so nothing builds the n-gram kernel when the index is
    shipped: the engine builds it in the calling process first (``prepare_workers``), through the
    masking wrapper too, so no worker builds it again."""
    from auditor.masking.masker import MaskingIndex
    from auditor.methods import create
    from auditor.scan.job import ScanJob

    ev = list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())
    plain, masked = create("ngram").build(ev), create("ngram").build(ev)
    job = ScanJob.of([plain, MaskingIndex(masked, None), create("exact").build(ev)])  # type: ignore[arg-type]
    assert plain._kernel is None and masked._kernel is None
    job.prepare_workers()
    assert plain._kernel is not None and masked._kernel is not None
    kernel = plain._kernel
    job.prepare_workers()
    assert plain._kernel is kernel  # built once
