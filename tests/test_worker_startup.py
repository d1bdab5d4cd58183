"""Local workers forked from a calling process running threads start from a forkserver that has
imported their modules, and what they spend starting is counted in the run's worker CPU (forked from
one running a single thread, they start with what it loaded: tests/test_start_method.py); a Ctrl-C
is held back where it would abort the process."""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys

import pytest

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.lifecycle import held_interrupts
from auditor.engines.local import WORKER_MODULES, _context, worker_modules

needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads process CPU from /proc")


def test_every_preloaded_module_exists():
    # the forkserver ignores a module it cannot import: a renamed one would silently stop preloading
    for name in WORKER_MODULES:
        assert importlib.import_module(name).__name__ == name


def test_the_modules_a_job_is_unpickled_from_are_preloaded_without_being_named():
    """The audit's stages and the methods it uses are preloaded because they subclass Stage and Index
    (the engine names no module of the audit's: it once listed them as strings)."""
    import auditor.audit.run  # noqa: F401 (defines the audit's stages)
    from auditor import methods

    methods.get("exact")
    preload = worker_modules()
    assert set(WORKER_MODULES) <= set(preload) and len(preload) == len(set(preload))
    for name in ("auditor.audit.errortypes", "auditor.audit.unchecked", "auditor.store.texts", "auditor.methods.exact"):
        assert name in preload
    assert "__main__" not in preload


@pytest.mark.skipif(sys.platform != "linux", reason="the forkserver start method is Linux's")
def test_the_forkserver_preloads_the_worker_modules():
    from multiprocessing import forkserver

    ctx = _context("forkserver")
    assert ctx.get_start_method() == "forkserver"
    assert set(WORKER_MODULES) <= set(forkserver._forkserver._preload_modules)


_SCAN = """
import sys
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats
from auditor.engines.lifecycle import forkserver_cpu_s
from auditor.engines.local import LocalEngine
from auditor.methods import create

if __name__ == "__main__":
    ev = list(Dataset(DatasetSpec("ev", ["webshop:0:50"], role="eval")).records())
    job = ScanJob.of([create("exact").build(ev)])
    found = {}
    for workers in (2, 1):
        ds = Dataset(DatasetSpec("tr", [sys.argv[1]], role="train"))
        engine = LocalEngine(workers=workers, min_parallel_bytes=0, split_bytes=50_000, start_method="forkserver")
        engine.warm_up([ds])
        stats = ScanStats()
        found[workers] = [f.train_id for f in engine.scan(job, ds, stats)]
        print(workers, engine.workers_used, stats.units, stats.records, engine.startup_cpu_s, forkserver_cpu_s())
    print(found[1] == found[2] and len(found[1]) > 0)
"""


@needs_proc
def test_worker_start_up_is_counted_in_the_run_cpu(tmp_path):
    # in a fresh process, so that this scan is the one that starts the forkserver
    import subprocess

    goals = [r.view("text") for r in Dataset(DatasetSpec("ev", ["webshop:0:50"], role="eval")).records()]
    train = tmp_path / "train.jsonl"
    rows = [
        {"id": str(i), "text": goals[i % 50] if i % 97 == 0 else f"an unrelated request number {i}"}
        for i in range(4000)
    ]
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = tmp_path / "scan.py"
    script.write_text(_SCAN)
    out = subprocess.run([sys.executable, str(script), str(train)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    two, one, same = out.stdout.splitlines()
    w, used, units, records, startup, forkserver = two.split()
    assert (used, records) == ("2", "4000") and int(units) > 2
    # the forkserver imported the workers' modules (numpy among them): well over 0.05 s, counted once
    assert float(startup) > 0.05 and float(startup) <= float(forkserver) + 0.02
    w, used, units1, records, startup, _ = one.split()
    assert (used, units1, records, float(startup)) == ("1", units, "4000", 0.0)
    assert same == "True"


def test_a_ctrl_c_inside_held_interrupts_is_raised_when_the_block_ends():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with held_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("end of block")  # not interrupted half-way
    assert reached == ["end of block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_ngram_kernel_is_built_once_and_shipped_with_its_index():
    """Each worker used to build the n-gram kernel again (every eval item tokenized, every vocabulary
    token hashed: ~0.2 CPU-s a worker for WebShop's 12,087 items); the index now carries the kernel it
    built, and the copy a worker unpickles finds what the index finds, on real text."""
    import pickle

    from auditor.methods import create

    ev = list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())
    train = [r for r in Dataset(DatasetSpec("tr", ["stabletoolbench"], role="eval")).records()][:200]
    index = create("ngram").build(ev)
    assert index._kernel is None  # built on the first search, or when the index is shipped
    shipped = pickle.loads(pickle.dumps(index))
    assert index._kernel is not None and shipped._kernel is not None
    assert shipped._kernel.tables is shipped.tables  # one copy of the tables, so the kernel is not rebuilt
    assert shipped._scanner() is shipped._kernel
    found = [(f.train_ordinal, f.eval_ordinal, f.score, f.conclusive) for f in index.search(train)]
    assert found and [(f.train_ordinal, f.eval_ordinal, f.score, f.conclusive) for f in shipped.search(train)] == found


def test_a_restored_ngram_index_keeps_the_kernel_its_verification_built(tmp_path):
    """Verifying a restored index searched it (its kernel built) and then put its statistics back as
    copies, tables included: the kernel no longer matched them and was built a second time when the
    index was shipped. Now what the search kept is refilled in place; the statistics are still those
    of an index nobody searched."""
    from auditor.audit.indexes import build_index

    ev = list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())
    build_index("ngram", None, ev, str(tmp_path))  # built and saved
    index = build_index("ngram", None, ev, str(tmp_path))  # restored and verified
    kernel = index._kernel
    assert kernel is not None and kernel.tables is index.tables
    assert index._scanner() is kernel
    assert not index.take_counts() and not index._items  # the probes left no trace
