"""Workers benchmark (a script, not a test): the local engine's default ``--workers auto`` against one
worker, on a loaded machine and on an idle one (issue 24 item 6).

    python -m benchmarks.bench_workers --mb 165 --repeat 2

The corpus is benchmarks/bench_scale.py's: 300-word documents with StableToolBench's queries (the
bundled eval set, from the public release) planted verbatim in every 200th document, ``--mb`` MB of
JSON Lines. Each run is ``auditor audit --method exact --method ngram`` as a child process, with
``--workers 1``, ``--workers 2`` and no ``--workers`` (the default, auto), the eval indexes built once
beforehand. Two conditions, each run ``--repeat`` times in turn (1, default, 2, 1, default, 2 ...):

* **loaded**: a busy loop pinned to one of this process's CPUs (``os.sched_setaffinity``), started and
  running (it says so) before the runs;
* **idle**: nothing added (on a shared machine, whatever the others run: the load average is printed).

It prints, per run, the scan's seconds (report ``run.scan.seconds``), the whole run's wall time, the
workers the run used and the load average when it ended; then the best of each against the targets:
loaded, default ≥ 0.95× one worker's speed (wall); idle, 2 workers ≥ 1.7× one (scan).
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

from benchmarks.bench_scale import eval_texts, make_corpus
from benchmarks.common import REPO, repo_env

BUSY = "import os, sys\nos.sched_setaffinity(0, {%d})\nprint('busy', flush=True)\nwhile True:\n    pass\n"


def audit(train: Path, eval_file: Path, idx: Path, out: Path, workers: int | None) -> dict:
    cmd = [sys.executable, "-m", "auditor", "audit", "--train", str(train), "--eval", str(eval_file)]
    cmd += ["--method", "exact", "--method", "ngram", "--report-dir", str(out), "--index-dir", str(idx)]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    env = repo_env()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"auditor failed: {proc.stderr.strip()[-2000:]}")
    run = json.loads((out / "report.json").read_text(encoding="utf-8"))["run"]
    return {"scan": run["scan"]["seconds"], "wall": wall, "workers": run["workers"], "load": os.getloadavg()}


def start_busy_loop(cpu: int) -> subprocess.Popen:
    """A process spinning on ``cpu``, returned once it runs there (it prints ``busy``)."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY % cpu], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "busy":
        raise SystemExit("the busy loop did not start")
    return proc


def condition(name: str, train: Path, eval_file: Path, idx: Path, work: Path, repeat: int) -> dict:
    runs: dict[str, list[dict]] = {"1": [], "default": [], "2": []}
    for r in range(repeat):
        for label, workers in (("1", 1), ("default", None), ("2", 2)):
            res = audit(train, eval_file, idx, work / f"r-{name}-{label}-{r}", workers)
            runs[label].append(res)
            load = ", ".join(f"{x:.2f}" for x in res["load"])
            print(
                f"  {name:6} workers={label:7} scan {res['scan']:6.2f} s  wall {res['wall']:6.2f} s  "
                f"used {res['workers']} worker(s)  load average {load}",
                flush=True,
            )
    return {
        label: min(rs, key=lambda x: x["wall"]) | {"scan": min(x["scan"] for x in rs)} for label, rs in runs.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=165, help="corpus size in MB")
    ap.add_argument("--repeat", type=int, default=2, help="runs per setting and condition (the best is kept)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--only", choices=["loaded", "idle"], default=None)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="auditor-bench-workers-"))
    work.mkdir(parents=True, exist_ok=True)
    eval_file = work / "eval.jsonl"
    eval_file.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(eval_texts())))
    train = work / f"train-{args.mb}mb.jsonl"
    if not train.exists():
        train, _ = make_corpus(work, args.mb, eval_texts())
    idx = work / "idx"
    cpus = sorted(os.sched_getaffinity(0))
    print(
        f"corpus {train.stat().st_size / 1e6:.0f} MB, {len(cpus)} usable CPUs {cpus}, os.cpu_count() {os.cpu_count()}, "
        f"load average {os.getloadavg()}"
    )
    audit(eval_file, eval_file, idx, work / "r-warm", 1)  # builds the eval indexes once
    best = {}
    for name in ("loaded", "idle"):
        if args.only not in (None, name):
            continue
        busy = start_busy_loop(cpus[-1]) if name == "loaded" else None
        try:
            best[name] = condition(name, train, eval_file, idx, work, args.repeat)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    print("targets (best of each):")
    if "loaded" in best:
        b = best["loaded"]
        print(
            f"  loaded (one CPU busy): default {b['default']['wall']:.2f} s wall ({b['default']['workers']} worker(s)) "
            f"vs 1 worker {b['1']['wall']:.2f} s: {b['1']['wall'] / b['default']['wall']:.2f}x the speed "
            f"(target >= 0.95x); 2 workers {b['1']['wall'] / b['2']['wall']:.2f}x"
        )
    if "idle" in best:
        b = best["idle"]
        print(
            f"  idle (nothing added): 2 workers scan {b['2']['scan']:.2f} s vs 1 worker {b['1']['scan']:.2f} s: "
            f"{b['1']['scan'] / b['2']['scan']:.2f}x (target >= 1.7x); default used {b['default']['workers']} "
            f"worker(s), {b['1']['scan'] / b['default']['scan']:.2f}x"
        )


if __name__ == "__main__":
    main()
