"""Bounded memory and time on hostile parameters (issue 12 item 5): seconds and peak RSS of one CLI
run per case, each in a child process (``resource.getrusage(RUSAGE_CHILDREN)``), killed at
``TIMEOUT`` seconds.

1. ``num_perm = 1e9`` (and ``1000000000``) in a manifest's ``[methods.minhash]``;
2. one training path listed ``PATHS`` times in a manifest;
3. ``path = "/**"`` in a manifest;
4. an eval set of ``N`` records sharing one id, against ``N`` records with unique ids (same texts):
   memory per eval item, and whether duplicate ids add any;
5. ``N_SAME`` identical eval items (same id and text) found in one training record: every item is
   contaminated, so the report lists ``N_SAME`` × methods findings.

Usage (``--tree`` measures another checkout, e.g. the code before a change)::

    python -m benchmarks.bench_bounds [--tree PATH] [--n 20000] [--n-same 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMEOUT = 60
LEAK = "book a one way flight from boston to denver for two adults next friday morning"


def run(tree: str, args: list[str], cwd: Path) -> str:
    """One ``python -m auditor`` run in a fresh child: exit status, seconds, its own peak RSS (wait4),
    the last line it printed."""
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": tree}
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "auditor", *args], cwd=cwd, env=env, stdout=out, stderr=out)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > TIMEOUT:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        last = out.read().strip().splitlines()[-1:] or [""]
    seconds = time.perf_counter() - t0
    state = f"killed at {TIMEOUT} s" if seconds > TIMEOUT else f"exit {proc.returncode}"
    return f"{state}, {seconds:.1f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MiB: {last[0][:160]}"


def manifest(folder: Path, name: str, train_path: str, extra: str = "") -> Path:
    m = folder / name
    m.write_text(
        f'findings_store = "memory"\n{extra}'
        '[datasets.e]\npath = "webshop:0:100"\nrole = "eval"\n'
        f'[datasets.t]\npath = {train_path}\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\nmethods = ["exact", "minhash"]\n',
        encoding="utf-8",
    )
    return m


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=os.getcwd(), help="checkout whose auditor runs (default: this one)")
    ap.add_argument("--n", type=int, default=20_000, help="eval records for case 4")
    ap.add_argument("--n-same", type=int, default=10_000, help="identical eval items for case 5")
    a = ap.parse_args()
    tree = os.path.abspath(a.tree)
    print(f"auditor from {tree}; each run killed at {TIMEOUT} s")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "t.jsonl").write_text(json.dumps({"id": "1", "text": LEAK}) + "\n", encoding="utf-8")
        methods = "[methods.minhash]\nnum_perm = {}\n"
        for value in ("1e9", "1000000000"):
            m = manifest(d, f"perm{value}.toml", '"t.jsonl"')
            m.write_text(m.read_text(encoding="utf-8") + methods.format(value), encoding="utf-8")
            print(f"1. num_perm = {value}: {run(tree, ['verify', str(m), '--report-dir', str(d / 'r1')], d)}")
        m = manifest(d, "paths.toml", "[" + ", ".join(['"t.jsonl"'] * 200_000) + "]")
        print(f"2. a path listed 200,000 times: {run(tree, ['verify', str(m), '--report-dir', str(d / 'r2')], d)}")
        m = manifest(d, "glob.toml", '"/**"')
        print(f'3. path = "/**": {run(tree, ["verify", str(m), "--report-dir", str(d / "r3")], d)}')
        rng = random.Random(1)
        words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi".split()
        with open(d / "dup.jsonl", "w") as f, open(d / "uniq.jsonl", "w") as g:
            for i in range(a.n):
                text = " ".join(rng.choice(words) for _ in range(12))
                f.write(json.dumps({"id": "same", "text": text}) + "\n")
                g.write(json.dumps({"id": f"u{i}", "text": text}) + "\n")
        for kind in ("dup", "uniq"):
            args = ["audit", "--eval", str(d / f"{kind}.jsonl"), "--train", str(d / "t.jsonl")]
            label = "one shared id" if kind == "dup" else "unique ids"
            print(f"4. {a.n:,} eval records, {label}: {run(tree, [*args, '--report-dir', str(d / kind)], d)}")
        with open(d / "same.jsonl", "w") as f:
            for _ in range(a.n_same):
                f.write(json.dumps({"id": "same", "text": LEAK}) + "\n")
        args = ["audit", "--eval", str(d / "same.jsonl"), "--train", str(d / "t.jsonl"), "--report-dir", str(d / "s")]
        print(f"5. {a.n_same:,} identical eval items, all found: {run(tree, args, d)}")
        report = d / "s" / "report.json"
        if report.exists():
            doc = json.loads(report.read_text(encoding="utf-8"))
            print(f"   report.json {report.stat().st_size / 2**20:.1f} MiB, {len(doc['findings']):,} findings")


if __name__ == "__main__":
    main()
