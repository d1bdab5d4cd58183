"""Scale benchmark (a script, not a test): this toolkit (local and Ray engines) against lm-eval's
13-gram Janitor and datatrove's NGramsDecontFilter on the same synthetic corpus.

    python benchmarks/bench_scale.py --sizes 20 100 --peer-python /tmp/peers-venv/bin/python

For each size (MB) it writes a JSONL corpus of 300-word documents with StableToolBench queries
planted verbatim in every 200th document (benchmarks/bench_corpus.py), then runs, as child processes:
``auditor audit --method exact --method ngram`` with ``--engine local --workers 1``, ``--workers N``
and ``--engine ray`` (1 and N workers), and the two peers (benchmarks/bench_peers.py, in their own venv,
each stopped after ``--peer-limit`` seconds and measured on what it scanned). It prints MB/s per
core (scan time only; for auditor the report's ``run.scan``), peak RSS, and planted documents found
(recall) with false positives. Peers absent from --peer-python are reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_corpus import generate_docs  # noqa: E402


def eval_texts() -> list[str]:
    from auditor.datasets import Dataset, DatasetSpec

    recs = Dataset(DatasetSpec("stb", ["stabletoolbench"], role="eval")).records()
    return [r.view("query") for r in recs]


def make_corpus(folder: Path, mb: int, evals: list[str]) -> tuple[Path, set[str]]:
    path = folder / f"train-{mb}mb.jsonl"
    long_evals = [t for t in evals if len(t.split()) >= 15]  # every peer can see 13-grams in these
    planted, size = set(), 0
    with open(path, "w", encoding="utf-8") as f:
        for i, doc in enumerate(generate_docs(long_evals, count=10**9, plant_every=200, seed=mb)):
            line = json.dumps(doc) + "\n"
            f.write(line)
            size += len(line)
            if i % 200 == 199:
                planted.add(doc["id"])
            if size >= mb * 1_000_000:
                break
    return path, planted


def run_auditor(train: Path, eval_file: Path, engine: str, workers: int, out: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "auditor",
        "audit",
        "--train",
        str(train),
        "--eval",
        str(eval_file),
        "--method",
        "exact",
        "--method",
        "ngram",
        "--engine",
        engine,
        "--workers",
        str(workers),
        "--report-dir",
        str(out),
        "--index-dir",
        str(out / "idx"),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    report = json.loads((out / "report.json").read_text())
    scan = report["run"]["scan"]
    flagged = {f["train_id"] for f in report["findings"]}
    rss = max(report["run"]["peak_rss_mb"], report["run"].get("peak_worker_rss_mb", 0))
    return {
        "seconds": scan["seconds"],
        "wall": wall,
        "mb": scan["bytes"] / 1e6,
        "flagged": flagged,
        "peak_rss_mb": rss,
        "workers": workers,
    }


def run_peer(python: str, tool: str, eval_file: Path, train: Path, limit: float) -> dict:
    proc = subprocess.run(
        [python, str(REPO / "benchmarks" / "bench_peers.py"), tool, str(eval_file), str(train), str(limit)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["flagged"] = set(res["flagged"])
    res["workers"] = 1
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 100], help="corpus sizes in MB")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--peer-python", default="/tmp/peers-venv/bin/python")
    ap.add_argument("--peer-limit", type=float, default=60.0, help="seconds each peer may scan")
    ap.add_argument("--skip", nargs="*", default=[], help="runs to skip: local1 localN ray1 rayN janitor datatrove")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="auditor-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    evals = eval_texts()
    eval_file = work / "eval.jsonl"
    eval_file.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(evals)))
    n = args.workers
    print(f"eval: {len(evals)} StableToolBench queries; {os.cpu_count()} cores on this machine")
    print(
        f"{'size':>6} {'tool':<22} {'MB scanned':>10} {'s':>7} {'MB/s/core':>9} {'peak RSS MB':>11} "
        f"{'planted found':>13} {'false +':>7}"
    )
    for mb in args.sizes:
        train, planted = make_corpus(work, mb, evals)
        runs = [
            ("local1", "auditor local, 1 worker", lambda: run_auditor(train, eval_file, "local", 1, work / "r-l1")),
            ("localN", f"auditor local, {n} workers", lambda: run_auditor(train, eval_file, "local", n, work / "r-ln")),
            ("ray1", "auditor ray, 1 worker", lambda: run_auditor(train, eval_file, "ray", 1, work / "r-r1")),
            ("rayN", f"auditor ray, {n} workers", lambda: run_auditor(train, eval_file, "ray", n, work / "r-rn")),
            (
                "janitor",
                "lm-eval Janitor (py)",
                lambda: run_peer(args.peer_python, "janitor", eval_file, train, args.peer_limit),
            ),
            (
                "datatrove",
                "datatrove NGramsDecont",
                lambda: run_peer(args.peer_python, "datatrove", eval_file, train, args.peer_limit),
            ),
        ]
        for key, label, fn in runs:
            if key in args.skip:
                continue
            res = fn()
            if "error" in res:
                print(f"{mb:>5}M {label:<22} skipped: {res['error']}")
                continue
            scanned_ids = int(res["mb"] / mb * len(planted)) if res["mb"] < mb * 0.99 else len(planted)
            hit = len(res["flagged"] & planted)
            false = len(res["flagged"] - planted)
            rate = res["mb"] / res["seconds"] / res["workers"] if res["seconds"] else 0.0
            print(
                f"{mb:>5}M {label:<22} {res['mb']:>10.1f} {res['seconds']:>7.1f} {rate:>9.2f} "
                f"{res['peak_rss_mb']:>11.0f} {hit:>6}/{scanned_ids:<6} {false:>7}",
                flush=True,
            )


if __name__ == "__main__":
    main()
