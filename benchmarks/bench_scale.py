"""Scale benchmark (a script, not a test): this toolkit (local and Ray engines) against lm-eval's
13-gram Janitor and datatrove's NGramsDecontFilter on the same synthetic corpus, then the scale-out
targets (issue 15) and a projection to N nodes.

    python -m benchmarks.bench_scale --sizes 20 100 --peer-python /tmp/peers-venv/bin/python

For each size (MB) it writes a JSONL corpus of 300-word documents with StableToolBench queries
planted verbatim in every 200th document (benchmarks/bench_corpus.py), then runs, as child processes:
``auditor audit --method exact --method ngram`` with ``--engine local --workers 1``, ``--workers N``
and ``--engine ray`` (1 and N workers), and the two peers (benchmarks/bench_peers.py, in their own venv,
each stopped after ``--peer-limit`` seconds and measured on what it scanned). It prints MB/s per
core (scan time only; for auditor the report's ``run.scan``), peak RSS, and planted documents found
(recall) with false positives. Peers absent from --peer-python are reported as skipped.

Then, per size, the targets: CPU of the calling process as a share of the run's CPU (report
``run.caller_cpu_s`` — from the start of ``run_audit``, so interpreter start and imports are left
out — against ``run.worker_cpu_s``), wall time of N local workers against 1, Ray with N workers
against the local engine with N, exact + ngram MB per CPU-second against the Janitor's MB/s, a
manifest of 3 checks over the training set (exact + ngram against each third of the eval set)
against one check (run.scan.units says how many units
were read: once each), and peak RSS of the calling process and of a worker across sizes. Last, a
projection to N nodes from the measured CPU per work unit, the calling process's CPU per unit, and
the bytes a unit's result and the scan job take (pickled, as Ray's object store holds them).
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

from benchmarks.bench_corpus import generate_docs
from benchmarks.common import REPO


def eval_texts() -> list[str]:
    from auditor.datasets.dataset import Dataset, DatasetSpec

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
        str(out.with_name(out.name + "-idx")),  # a report folder holds only a report
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
        "caller_rss_mb": report["run"]["peak_rss_mb"],
        "worker_rss_mb": report["run"].get("peak_worker_rss_mb", 0),
        "workers": workers,
        "caller_cpu_s": report["run"].get("caller_cpu_s", 0.0),
        "worker_cpu_s": report["run"].get("worker_cpu_s", 0.0),
        "in_process": report["run"]["workers"] == 1 and engine == "local",
        "scan_caller_cpu_s": scan.get("caller_cpu_s", 0.0),
        "units": scan.get("units", 0),
        "run_seconds": report["run"]["seconds"],
        "load": _load(),
    }


def run_three_checks(train: Path, eval_file: Path, workers: int, out: Path) -> dict:
    """``auditor verify`` of a manifest with 3 checks over one training set: exact + ngram against
    each third of the eval set (three benchmarks against one corpus)."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "three.toml"
    count = sum(1 for _ in open(eval_file, encoding="utf-8"))
    cuts = [0, count // 3, 2 * count // 3, count]
    text = f'workers = {workers}\n\n[datasets.tr]\npath = "{train}"\nrole = "train"\n\n'
    for k in range(3):
        text += f'[datasets.ev{k}]\npath = "{eval_file}"\nrole = "eval"\nsplit = "{cuts[k]}:{cuts[k + 1]}"\n\n'
    for k in range(3):
        text += f'[[checks]]\nname = "c{k}"\ntrain = ["tr"]\neval = ["ev{k}"]\nmethods = ["exact", "ngram"]\n\n'
    manifest.write_text(text)
    cmd = [sys.executable, "-m", "auditor", "verify", str(manifest), "--report-dir", str(out / "rep")]
    cmd += ["--index-dir", str(out / "idx")]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    report = json.loads((out / "rep" / "report.json").read_text())
    run = report["run"]
    return {
        "wall": wall,
        "seconds": run["scan"]["seconds"],
        "units": run["scan"]["units"],
        "cpu_s": run["caller_cpu_s"] + run["worker_cpu_s"],
        "load": _load(),
    }


def _load() -> str:
    """The 1-minute load average when a run ended (the machine may be shared: say so with each figure)."""
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def unit_costs(train: Path, eval_file: Path, split_bytes: int) -> dict:
    """Bytes of the scan job and of one unit's result (pickled, as the object store holds them),
    measured in-process on the first two units of the corpus."""
    import pickle

    from auditor.audit.indexes import build_index
    from auditor.datasets.dataset import Dataset, DatasetSpec
    from auditor.scan.job import ScanJob, scan_unit

    ev = list(Dataset(DatasetSpec("ev", [str(eval_file)], role="eval")).records())
    job = ScanJob.of([build_index(m, None, ev, None) for m in ("exact", "ngram")])
    ds = Dataset(DatasetSpec("tr", [str(train)]))
    units = ds.plan(split_bytes)[:2]
    sizes, mbs = [], []
    for u in units:
        res = scan_unit(job, ds.reader(), u, None)
        sizes.append(len(pickle.dumps(res)))
        mbs.append(
            ((u.part.end or os.path.getsize(train)) - u.part.start) / 1e6 if u.part else os.path.getsize(train) / 1e6
        )
    return {"job_bytes": len(pickle.dumps(job)), "result_bytes_per_mb": sum(sizes) / max(sum(mbs), 1e-9)}


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
    ap.add_argument(
        "--skip", nargs="*", default=[], help="runs to skip: local1 localN ray1 rayN janitor datatrove checks3"
    )
    ap.add_argument("--workdir", default=None)
    ap.add_argument(
        "--repeat-corpus",
        action="store_true",
        help="make a size that is a multiple of the first one by repeating its corpus (ids repeat; "
        "seconds instead of minutes for a 1 GB corpus)",
    )
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
    measured: dict[int, dict[str, dict]] = {}
    first: tuple[int, Path, set[str]] | None = None
    for mb in args.sizes:
        if args.repeat_corpus and first and mb % first[0] == 0:
            train, planted = work / f"train-{mb}mb.jsonl", first[2]
            with open(train, "wb") as out:
                for _ in range(mb // first[0]):
                    out.write(first[1].read_bytes())
        else:
            train, planted = make_corpus(work, mb, evals)
            first = first or (mb, train, planted)
        measured[mb] = {"train": {"path": train}}
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
            measured[mb][key] = res
            if "error" in res:
                print(f"{mb:>5}M {label:<22} skipped: {res['error']}")
                continue
            # a repeated corpus holds every planted id in each copy of its first corpus
            base_mb = first[0] if args.repeat_corpus and first else mb
            scanned_ids = int(min(res["mb"] / base_mb, 1.0) * len(planted)) if res["mb"] < mb * 0.99 else len(planted)
            hit = len(res["flagged"] & planted)
            false = len(res["flagged"] - planted)
            rate = res["mb"] / res["seconds"] / res["workers"] if res["seconds"] else 0.0
            print(
                f"{mb:>5}M {label:<22} {res['mb']:>10.1f} {res['seconds']:>7.1f} {rate:>9.2f} "
                f"{res['peak_rss_mb']:>11.0f} {hit:>6}/{scanned_ids:<6} {false:>7}",
                flush=True,
            )
        if "checks3" not in args.skip:
            measured[mb]["checks3"] = run_three_checks(train, eval_file, n, work / "r-3")
    print_targets(measured, eval_file, n)


def _ok(res: dict | None) -> bool:
    return bool(res) and res is not None and "error" not in res


def print_targets(measured: dict, eval_file: Path, n: int) -> None:
    """The issue-15 targets from the runs above, and the projection to N nodes."""
    print("\ntargets (measured on this machine, shared with other load unless said otherwise):")
    for mb, runs in measured.items():
        print(f"  {mb} MB:")
        for key in ("localN", "rayN"):
            r = runs.get(key)
            if _ok(r) and not r["in_process"]:
                share = r["caller_cpu_s"] / max(r["caller_cpu_s"] + r["worker_cpu_s"], 1e-9)
                print(
                    f"    calling process CPU, {key}: {r['caller_cpu_s']:.2f} s of "
                    f"{r['caller_cpu_s'] + r['worker_cpu_s']:.2f} s = {share:.0%} (target <= 10%; load {r['load']})"
                )
        l1, ln, rn = runs.get("local1"), runs.get("localN"), runs.get("rayN")
        if _ok(l1) and _ok(ln):
            print(
                f"    local {n} workers vs 1: scan {l1['seconds'] / ln['seconds']:.2f}x, whole run "
                f"{l1['wall'] / ln['wall']:.2f}x faster (target >= 1.7x on an idle machine)"
            )
        if _ok(ln) and _ok(rn):
            same = "same findings" if rn["flagged"] == ln["flagged"] else "DIFFERENT findings"
            print(
                f"    ray {n} workers vs local {n}: {ln['seconds'] / rn['seconds']:.2f}x the throughput "
                f"(scan; whole run {ln['wall'] / rn['wall']:.2f}x), {same} (target >= 0.8x at >= 200 MB)"
            )
        jan = runs.get("janitor")
        if _ok(ln) and _ok(jan):
            ours = ln["mb"] / max(ln["caller_cpu_s"] + ln["worker_cpu_s"], 1e-9)
            print(
                f"    exact + ngram: {ours:.1f} MB per CPU-second vs the Janitor's {jan['mb'] / jan['seconds']:.2f} MB/s: "
                f"{ours / (jan['mb'] / jan['seconds']):.1f}x (target >= 10x)"
            )
        c3 = runs.get("checks3")
        if _ok(ln) and _ok(c3):
            one_cpu = ln["caller_cpu_s"] + ln["worker_cpu_s"]
            print(
                f"    3 checks vs 1: {c3['wall'] / ln['wall']:.2f}x the wall time (scan {c3['seconds'] / ln['seconds']:.2f}x; "
                f"loads {ln['load']} / {c3['load']}), {c3['cpu_s'] / one_cpu:.2f}x the CPU; units read {c3['units']} "
                f"vs {ln['units']} for one check (target: once, <= 1.3x)"
            )
    sizes = [mb for mb in measured if _ok(measured[mb].get("localN"))]
    if len(sizes) > 1:
        for key in ("localN", "rayN"):
            lo, hi = measured[sizes[0]].get(key), measured[sizes[-1]].get(key)
            if _ok(lo) and _ok(hi):
                print(
                    f"  peak RSS {sizes[0]} -> {sizes[-1]} MB ({key}): calling process {lo['caller_rss_mb']:.0f} -> "
                    f"{hi['caller_rss_mb']:.0f} MB, worker {lo['worker_rss_mb']:.0f} -> {hi['worker_rss_mb']:.0f} MB "
                    "(target: flat +-20%)"
                )
    if not sizes:
        return
    biggest = max(sizes)
    run = measured[biggest]["localN"]
    from auditor.engines.base import DEFAULT_SPLIT_BYTES

    costs = unit_costs(measured[biggest]["train"]["path"], eval_file, DEFAULT_SPLIT_BYTES)
    units = max(run["units"], 1)
    unit_mb = run["mb"] / units
    cpu_per_mb = run["worker_cpu_s"] / run["mb"]
    merge_per_unit = run["scan_caller_cpu_s"] / units
    ray_run = measured[biggest].get("rayN")
    if _ok(ray_run) and ray_run["units"] > 1:  # a cluster's driver is Ray's: its merge cost per unit
        merge_per_unit = ray_run["scan_caller_cpu_s"] / ray_run["units"]
    print(
        f"\nprojection (from the {biggest} MB local run, the driver's merge cost from the Ray run when there is one: "
        f"{units} units of {unit_mb:.1f} MB; "
        f"{cpu_per_mb * 1000:.1f} ms worker CPU per MB; {merge_per_unit * 1000:.1f} ms calling-process CPU per unit; "
        f"job {costs['job_bytes'] / 1e6:.2f} MB put once per scan; results {costs['result_bytes_per_mb'] / 1e3:.1f} kB per MB scanned):"
    )
    print("  T(corpus, N nodes x c cores) ~ corpus_MB x cpu_per_MB / (N x c)   [workers, read in parallel]")
    print("                                + job_MB x N / bandwidth             [object store: one copy per node]")
    print("  the calling process merges one unit in merge_per_unit, so it saturates at")
    cap = unit_mb / max(merge_per_unit, 1e-9)
    print(f"  {cap:.0f} MB/s of corpus (= unit_MB / merge_per_unit), i.e. {cap / (1 / cpu_per_mb):.0f} busy cores")
    for nodes, cores in ((1, 2), (4, 16), (16, 16), (64, 16)):
        rate = min(nodes * cores / cpu_per_mb, cap)
        print(
            f"  {nodes:>3} nodes x {cores:>2} cores: ~{rate:,.0f} MB/s, 1 TB in ~{1e6 / rate / 3600:.1f} h (object-store traffic ~{1e6 * costs['result_bytes_per_mb'] / 1e9:.2f} GB of results per TB)"
        )


if __name__ == "__main__":
    main()
