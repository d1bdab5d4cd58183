"""Reliability figures: memory on a giant single-line record, and a JSON array of many small records.

1. A JSON Lines file with one ``SIZE_MB`` line between two normal records, read with
   ``max_record_chars`` = 1,000,000 (on_error = skip): peak RSS of a child process reading it,
   against the same child reading a two-line file (the bounded reader never holds the long line),
   and with a limit above the line's length (the line is read and kept).
2. A JSON array of ``N`` small records read through :class:`~auditor.datasets.dataset.Dataset`: seconds,
   records/s and peak RSS of the child (the array is parsed whole by the ``json`` adapter today).

Usage::

    python -m benchmarks.bench_reliability [SIZE_MB] [N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys, time
from auditor.datasets.dataset import Dataset, DatasetSpec
t0 = time.perf_counter()
ds = Dataset(DatasetSpec("d", [sys.argv[1]], on_error="skip", max_record_chars=int(sys.argv[2])))
n = sum(1 for _ in ds.records())
s = ds.stats
print(n, s.read, s.skipped, round(time.perf_counter() - t0, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def child(path: Path, limit: int) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(limit)], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def main(size_mb: int = 100, n: int = 1_000_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.jsonl"
        small.write_text('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n')
        big = Path(tmp) / "big.jsonl"
        with open(big, "wb") as f:
            f.write(b'{"id": 1, "text": "a"}\n{"id": 2, "text": "')
            chunk = b"lorem ipsum " * 87382
            for _ in range(size_mb):
                f.write(chunk)
            f.write(b'"}\n{"id": 3, "text": "c"}\n')
        base = child(small, 1_000_000)
        res = child(big, 1_000_000)
        print(
            f"giant line: {big.stat().st_size / 2**20:.0f} MiB line file; records {res[0]}, read {res[1]}, "
            f"skipped {res[2]}; {res[3]} s; peak RSS {res[4]} MiB (two-line file: {base[4]} MiB)"
        )
        res = child(big, 200_000_000)
        print(
            f"same file with max_record_chars=200,000,000 (line kept): records {res[0]}; {res[3]} s; "
            f"peak RSS {res[4]} MiB"
        )
        arr = Path(tmp) / "many.json"
        with open(arr, "w") as f:
            f.write("[" + ",".join('{"id":%d,"text":"record %d says hello"}' % (i, i) for i in range(n)) + "]")
        res = child(arr, 10_000_000)
        print(
            f"JSON array: {n:,} records ({arr.stat().st_size / 2**20:.0f} MiB); records {res[0]}, read {res[1]}; "
            f"{res[3]} s ({int(res[0]) / float(res[3]):,.0f} records/s); peak RSS {res[4]} MiB"
        )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
