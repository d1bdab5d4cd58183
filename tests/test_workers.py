"""``--workers auto`` (the local engine's default): as many workers as cores are free when the scan
starts, measured on this machine's real CPU counters; units cut so that no worker is left alone at the
end. (Speed is measured in benchmarks/bench_workers.py, not here.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from events import wait_gone

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats
from auditor.engines.local import LocalEngine
from auditor.engines.workers import CoreMeter, balanced_split, usable_cores
from auditor.methods import create

needs_proc = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads the CPU counters from /proc/stat")
BUSY = "import os, sys\nos.sched_setaffinity(0, {%d})\nprint('busy', flush=True)\nwhile True:\n    pass\n"


@pytest.fixture
def every_cpu_busy():
    """A busy loop pinned to each CPU this process may use, each one running (it says so). The loops
    are not descendants of this process (a shell starts each in the background and exits, so it is
    re-parented): the meter counts this process tree's own CPU as its own, as it should count an
    auditor run's own workers, and another program's load is what it has to see."""
    pids = []
    try:
        for cpu in sorted(os.sched_getaffinity(0)):
            sh = subprocess.Popen(
                ["sh", "-c", '"$0" -c "$1" & echo "pid $!"', sys.executable, BUSY % cpu],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert sh.stdout is not None
            lines = {sh.stdout.readline().strip(), sh.stdout.readline().strip()}  # either order
            sh.wait()
            sh.stdout.close()
            pid = next(int(line.split()[1]) for line in lines if line.startswith("pid "))
            pids.append(pid)
            assert "busy" in lines, lines
        yield len(pids)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_gone(pids, 30, "busy loops killed")


def test_units_are_a_multiple_of_the_workers_and_never_larger_than_asked():
    split = 16 * 1024 * 1024
    for total in (9_000_000, 20_000_000, 165_000_000, 1_000_000_000, 5_000_000_000):
        for workers in (2, 3, 8):
            cut = balanced_split(total, workers, split)
            units = -(-total // cut)
            assert cut <= split, (total, workers, cut)
            if cut > 1 << 20:  # not held at the smallest unit: whole rounds of at least 4 units per worker
                assert units % workers == 0 and units >= 4 * workers, (total, workers, units)
    assert balanced_split(165_000_000, 1, split) == split  # one worker: nothing to balance


@needs_proc
def test_busy_cores_are_not_counted_as_free(every_cpu_busy):
    meter = CoreMeter()
    assert usable_cores() == every_cpu_busy or usable_cores() < every_cpu_busy  # a cgroup quota may cap it
    assert meter.busy_cores() >= 0.7 * usable_cores()  # others (this machine is shared) only add to it
    assert meter.free_cores() == 1


@needs_proc
def test_the_default_scans_in_process_when_no_core_is_free(tmp_path, every_cpu_busy):
    train = tmp_path / "train.jsonl"
    goals = [r.view("query") for r in Dataset(DatasetSpec("w", ["webshop:0:2000"], role="eval")).records()]
    train.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(goals)))
    job = ScanJob.of([create("exact").build(list(Dataset(DatasetSpec("e", ["webshop:0:50"], role="eval")).records()))])
    found = {}
    for workers in (None, 2):
        engine = LocalEngine(workers=workers, min_parallel_bytes=0, split_bytes=20_000)
        stats = ScanStats()
        found[workers] = [f.train_id for f in engine.scan(job, Dataset(DatasetSpec("t", [str(train)])), stats)]
        assert stats.units > 2
        assert engine.workers_used == (1 if workers is None else 2)
    assert found[None] == found[2] and len(found[None]) >= 50


def test_workers_auto_or_a_positive_number_on_the_command_line():
    r = CliRunner().invoke(main, ["audit", "--train", "webshop:500:1500", "--eval", "webshop:0:200", "--workers", "0"])
    assert r.exit_code == 2 and "'0' is not a positive integer or 'auto'" in r.output
    args = ["audit", "--train", "webshop:500:1500", "--eval", "webshop:0:200", "--method", "exact", "--workers", "auto"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output  # webshop 500:1500 repeats goals of 0:200: FAIL, as with any worker count
