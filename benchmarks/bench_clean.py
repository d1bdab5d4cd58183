"""Memory of ``--write-clean``: peak RSS of an audit with and without it, on a generated JSONL.

The training file holds ``SIZE_MB`` of ~1 KB records (words of no eval item) with the first 20
WebShop test goals planted verbatim; the audit is ``--eval webshop:0:500 --method exact
--workers 1``. Each run is a child process; its own peak RSS (``ru_maxrss``) is printed with the run
time. Streaming keeps the ``--write-clean`` run's memory at the scan's, whatever the file's size.

Usage::

    python -m benchmarks.bench_clean [SIZE_MB]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_train(path: Path, size_mb: int) -> int:
    from auditor.datasets.dataset import Dataset, DatasetSpec

    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop:0:20"], role="eval")).records()]
    filler = " ".join(f"w{i % 997}x" for i in range(180))
    n = 0
    with open(path, "w") as f:
        while f.tell() < size_mb * 2**20:
            text = goals[n // 1000] if n % 1000 == 0 and n // 1000 < len(goals) else f"{filler} {n}"
            f.write(json.dumps({"id": n, "text": text}) + "\n")
            n += 1
    return n


CHILD = """
import resource, sys
from auditor.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print("peak_rss_mib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)
"""


def run(args: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True)
    peak = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("peak_rss_mib")]
    if not peak:
        raise SystemExit(proc.stderr)
    return time.perf_counter() - t0, int(peak[-1])


def main(size_mb: int = 200) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.jsonl"
        n = make_train(train, size_mb)
        base = ["audit", "--eval", "webshop:0:500", "--train", str(train), "--method", "exact", "--workers", "1"]
        secs, rss = run([*base, "--report-dir", str(Path(tmp) / "r1")])
        print(f"{size_mb} MiB, {n:,} records, audit only: {secs:.1f} s, peak RSS {rss} MiB")
        out = Path(tmp) / "clean"
        secs, rss = run([*base, "--report-dir", str(Path(tmp) / "r2"), "--write-clean", str(out)])
        written = out / "train" / "train.jsonl"
        kept = sum(1 for _ in open(written))
        print(
            f"{size_mb} MiB, with --write-clean: {secs:.1f} s, peak RSS {rss} MiB; kept {kept:,} of {n:,} records, "
            f"{os.path.getsize(written) / 2**20:.0f} MiB written"
        )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
