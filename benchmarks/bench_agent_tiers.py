"""Throughput of the agent-aware pieces on real tool-calling transcripts; prints figures, asserts nothing.

    python -m benchmarks.bench_agent_tiers [--copies 10]

Reads tau-bench's gpt-4o airline trajectories (../shared/data, 200 records, 4 MB) ``--copies`` times
as the training side, tau2-airline (50 tasks) as the eval side, and reports records/s and MB/s for:
adapter reading, boilerplate detection (sample pre-pass) and masking, the ``calls`` and ``entities``
scans, and the ``ngram`` scan with and without masking.
"""

from __future__ import annotations

import argparse
import sys
import time

from auditor import methods
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.masking import detect
from benchmarks.common import SHARED


def timed(label: str, fn, n: int, chars: int):
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    print(f"{label:<34} {dt:7.3f} s  {n / dt:10.0f} records/s  {chars / dt / 1e6:7.1f} MB/s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args()
    path = SHARED / "tau-bench/historical_trajectories/gpt-4o-airline.json"
    if not path.exists():
        sys.exit(f"needs {path}")
    ds = Dataset(DatasetSpec("train", [str(path)] * args.copies))
    t = time.perf_counter()
    train = list(ds.records())
    chars = sum(len(r.view("text")) for r in train)
    dt = time.perf_counter() - t
    print(
        f"{'read (chat adapter)':<34} {dt:7.3f} s  {len(train) / dt:10.0f} records/s  {chars / dt / 1e6:7.1f} MB/s"
        f"   [{len(train)} records, {chars / 1e6:.1f} MB text]"
    )
    ev = list(Dataset(DatasetSpec("eval", ["tau2-airline"], role="eval")).records())
    bp = timed(
        "boilerplate detect (2000 sample)",
        lambda: detect.detect(train[:2000], [e.view("query") for e in ev]),
        min(2000, len(train)),
        sum(len(r.view("text")) for r in train[:2000]),
    )
    print(f"  -> {len(bp.lines)} lines, {len(bp.ngrams)} n-grams")
    masked = timed(
        "boilerplate mask (text view)", lambda: [bp.mask_record(r, ("text",)) for r in train], len(train), chars
    )
    print(f"  -> masked share {bp.masked_chars / max(1, bp.scanned_chars):.3f}")
    for name in ("calls", "entities"):
        ix = methods.create(name).build(ev)
        found = timed(f"{name} scan", lambda: ix.search(train), len(train), chars)
        print(f"  -> {len(found)} findings, {sum(f.conclusive for f in found)} conclusive")
    ng = methods.create("ngram").build(ev)
    timed("ngram scan, unmasked", lambda: ng.search(train), len(train), chars)
    timed("ngram scan, masked", lambda: ng.search(masked), len(train), chars)


if __name__ == "__main__":
    main()
