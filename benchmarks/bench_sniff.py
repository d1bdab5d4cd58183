"""Format sniffing memory on a hostile input (issue 12): one 5 GB line inside a ~5 MB ``.jsonl.gz``.

    python -m benchmarks.bench_sniff [--gib 5]

Builds the file from concatenated gzip members (seconds, ~1 KB per MiB of text), then runs in
fresh processes (a) format detection alone and (b) ``auditor inspect`` until the record is refused
(``max_record_chars``), and prints each one's peak RSS and time.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time

PROBE = """
import resource, sys, time
from auditor.adapters import explain
t = time.perf_counter()
adapter, why = explain(sys.argv[1])
print(f"{adapter.name}|{why}|{time.perf_counter() - t:.2f}|{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
"""


def build(path: str, gib: float) -> None:
    chunk = gzip.compress(b"a" * (1 << 20), compresslevel=9, mtime=0)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"text": "', mtime=0))
        for _ in range(int(gib * 1024)):
            f.write(chunk)
        f.write(gzip.compress(b'"}\n', mtime=0))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=5.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "one_line.jsonl.gz")
        build(path, args.gib)
        print(f"file: {os.path.getsize(path) / 1e6:.1f} MB compressed, {args.gib:g} GiB in one line")
        out = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True, text=True, check=True).stdout
        name, why, secs, rss = out.strip().split("|")
        print(f"detect: {name} ({why}) in {secs} s, peak RSS {rss} MB")
        t = time.perf_counter()
        res = subprocess.run(
            ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "auditor", "inspect", path],
            capture_output=True,
            text=True,
        )
        peak = res.stderr.strip().splitlines()[-1]
        refused = "max_record_chars" in res.stdout
        print(
            f"inspect: exit {res.returncode} in {time.perf_counter() - t:.1f} s, peak RSS {int(peak) / 1024:.0f} MB, "
            f"record refused for max_record_chars: {refused}"
        )


if __name__ == "__main__":
    main()
