"""The scan's progress bar moves per batch of records, not per work unit (16 MiB), and shows an ETA as
soon as a rate is known: scan_unit adds each batch to LiveCounts (shared memory for worker
processes), which the bar reads four times a second."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import pytest
from helpers import REPO
from rich.console import Console

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods import create
from auditor.scan.job import ScanJob, scan_unit
from auditor.scan.progress import LiveCounts, ScanProgress


class Steps(LiveCounts):
    """The real counts, keeping each step added to them."""

    def __init__(self):
        super().__init__()
        self.steps: list[tuple[int, int]] = []

    def add(self, records: int, chars: int) -> None:
        self.steps.append((records, chars))
        super().add(records, chars)


def test_scan_unit_adds_each_batch_to_the_live_counts():
    """A bundled file (WebShop's 12,087 goals, one unit) in batches of 64: 189 steps, each a batch."""
    ev = list(Dataset(DatasetSpec("ev", ["webshop:0:500"], role="eval")).records())
    train = Dataset(DatasetSpec("tr", ["webshop"], role="train"))
    job = ScanJob.of([create("exact").build(ev), create("ngram").build(ev)], batch_size=64)
    (unit,) = train.plan()
    live = Steps()
    res = scan_unit(job, train.reader(), unit, 0, live=live)
    assert res.records == 12087 and len(live.steps) == -(-12087 // 64)
    assert all(r == 64 for r, _ in live.steps[:-1]) and max(c for _, c in live.steps) < 1_000_000
    assert live.read() == (res.records, res.chars)
    counting = Steps()
    scan_unit(job, train.reader(), unit, 0, count_only=True, live=counting)
    assert counting.steps == []  # the counting pass of a position split is no progress


def _add_in_worker(n: int) -> None:
    _LIVE["live"].add(n, 10 * n)


_LIVE: dict = {}


def _init(live: LiveCounts) -> None:
    _LIVE["live"] = live


def test_worker_processes_add_to_the_callers_shared_counts():
    import multiprocessing as mp

    ctx = mp.get_context("forkserver")
    live = LiveCounts(shared=True, context=ctx)
    with ProcessPoolExecutor(2, mp_context=ctx, initializer=_init, initargs=(live,)) as pool:
        list(pool.map(_add_in_worker, range(1, 101)))
    assert live.read() == (5050, 50500)


def test_the_bar_shows_an_eta_once_a_rate_is_known():
    """Two reads of the counts 0.25 s apart (a clock the test turns) are a rate: the ETA is shown."""
    now = [0.0]
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    live = LiveCounts()
    bar = ScanProgress("train", 10_000_000, enabled=True, delay=1.0, live=live, clock=lambda: now[0], console=console)
    bar._stop.set()  # the test polls itself: no reading thread
    for step in range(1, 8):
        now[0] = 1.0 + 0.25 * step
        live.add(1000, 250_000)
        bar.poll()
    task = bar._bar[1] if bar._bar else None
    assert task is not None and bar._bar[0].tasks[0].time_remaining is not None
    assert bar._bar[0].tasks[0].completed == 7 * 250_000
    bar.close()


@pytest.mark.slow
def test_a_terminal_sees_the_bar_move_per_megabyte_with_an_eta(tmp_path):
    """auditor audit under a pseudo-terminal on 40 MB of JSON Lines (WebShop's training goals, repeated):
    the bar's MB figure moves in steps of about one batch, and the ETA is shown within a second of the bar."""
    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop:500:"])).records()]
    train = tmp_path / "train.jsonl"
    with open(train, "w") as f:
        i = 0
        while f.tell() < 40_000_000:
            f.write(json.dumps({"id": i, "text": f"{goals[i % len(goals)]} ({i // len(goals)})"}) + "\n")
            i += 1
    cmd = [sys.executable, "-m", "auditor", "audit", "--train", str(train), "--eval", "webshop:0:500"]
    cmd += ["--method", "exact", "--method", "ngram", "--workers", "1", "--report-dir", str(tmp_path / "r")]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(PYTHONPATH=str(REPO), COLUMNS="160")
        os.execv(sys.executable, cmd)
    start, frames = time.perf_counter(), []
    ansi = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 5.0)
            data = os.read(fd, 65536) if ready else b""
        except OSError:
            break
        if not data and not ready:
            continue
        if not data:
            break
        text = ansi.sub("", data.decode("utf-8", "replace"))
        for m in re.finditer(r"([\d.]+) MB\s+[\d,]+ rec/s\s+\d+:\d\d:\d\d\s+(\d+:\d\d:\d\d|-:--:--)", text):
            frames.append((time.perf_counter() - start, float(m.group(1)), m.group(2)))
    os.waitpid(pid, 0)
    mbs = sorted({mb for _, mb, _ in frames})
    assert len(mbs) >= 20, mbs
    assert max(b - a for a, b in zip(mbs[1:], mbs[2:])) < 2.0  # after the first read, steps of a batch or so
    first = frames[0][0]
    eta_at = next(t for t, _, eta in frames if eta != "-:--:--")
    assert eta_at - first < 3.0  # two reads 0.25 s apart make a rate; 3 s leaves room for a busy machine
