"""CPU of auditor's start-up: imports, ``--help``, and a real audit from the interpreter to its first record.

    python -m benchmarks.bench_startup                       # this checkout, median of 5
    python -m benchmarks.bench_startup --code /tmp/old --label before   # another checkout's auditor/

Each figure is a fresh interpreter's CPU (user + system, from ``getrusage`` of the child, or, for the
audit, the child's own ``time.process_time()`` when the event happens, which counts the interpreter's
start-up too). The audit is the README's quickstart with exact + ngram (``--eval webshop:0:500 --train
webshop:500: --method exact --method ngram``, report and index in a temporary folder, a cold index each
time): *first record* is the first record any adapter makes (the eval set's first item), *first training
record* the first one of the training set, *whole run* the audit to its exit. The modules loaded at the
first record are listed (``loaded_at_first_record``: those of the model tiers, none expected). What is
loaded, not how long it takes, is pinned by ``tests/test_startup.py``. With ``PYTHONDONTWRITEBYTECODE`` set
(``bytecode`` in the result) no ``.pyc`` is written, and each child compiles every auditor module it loads
from source: about 0.1 CPU-s more at the first record than with the bytecode cached (after a first run).

Writes ``benchmarks/results/bench_startup_<date>[_<label>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, RESULTS, children_cpu, write_json

QUICKSTART = ["--eval", "webshop:0:500", "--train", "webshop:500:", "--method", "exact", "--method", "ngram"]
HEAVY = ("numpy", "pyarrow.compute", "duckdb", "torch", "sentence_transformers", "faiss", "ray", "scipy")

#: run in the child: the CLI, noting the CPU at the first record and at the first training record
_PROBE = """
import json, os, runpy, sys, time
from auditor.adapters import base

made, seen = base.Adapter.record, {}

def record(self, *a, **k):
    if not seen:
        seen["first_record"] = time.process_time()
        seen["modules"] = sorted(sys.modules)
        seen["eval"] = self.dataset
    elif "first_training_record" not in seen and self.dataset != seen["eval"]:
        seen["first_training_record"] = time.process_time()
    return made(self, *a, **k)

base.Adapter.record = record
sys.argv = ["auditor", *sys.argv[1:]]
try:
    runpy.run_module("auditor", run_name="__main__")
except SystemExit:
    pass
finally:
    seen["whole_run"] = time.process_time()
    with open(os.environ["BENCH_STARTUP_OUT"], "w") as f:
        json.dump(seen, f)
"""


def child_cpu(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    before = children_cpu()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return round(children_cpu() - before, 3)


def audit_probe(env: dict[str, str], work: Path, k: int) -> dict:
    out = work / f"probe{k}.json"
    args = [*QUICKSTART, "--report-dir", str(work / f"r{k}"), "--index-dir", str(work / f"i{k}")]
    subprocess.run(
        [sys.executable, "-c", _PROBE, "audit", *args],
        env={**env, "BENCH_STARTUP_OUT": str(out)},
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", default=str(REPO), help="the checkout whose auditor/ is measured (default: this one)")
    ap.add_argument("--label", default="", help="added to the result file's name")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": args.code}
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "import auditor": [py, "-c", "import auditor"],
        "import auditor.cli": [py, "-c", "import auditor.cli"],
        "auditor --help": [py, "-m", "auditor", "--help"],
        "auditor --version": [py, "-m", "auditor", "--version"],
    }
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        for name, cmd in commands.items():
            cpu = [child_cpu(cmd, env, tmp) for _ in range(args.reps)]
            runs[name] = {"cmd": cmd[1:], "median_cpu_s": statistics.median(cpu), "all_cpu_s": cpu}
            print(f"{name:40} CPU {runs[name]['median_cpu_s']:.2f} s  {cpu}", flush=True)
        probes = [audit_probe(env, Path(tmp), k) for k in range(args.reps)]
    for event in ("first_record", "first_training_record", "whole_run"):
        cpu = [round(p[event], 3) for p in probes if event in p]
        runs[f"audit quickstart exact+ngram: {event}"] = {
            "cmd": ["auditor", "audit", *QUICKSTART],
            "median_cpu_s": statistics.median(cpu),
            "all_cpu_s": cpu,
        }
        print(f"{'audit exact+ngram, ' + event:40} CPU {statistics.median(cpu):.2f} s  {cpu}", flush=True)
    loaded = probes[0]["modules"]
    heavy = [m for m in HEAVY if m in loaded]
    model_tiers = [m for m in loaded if m.startswith(("auditor.embed", "auditor.methods.embedding"))]
    #: whether the children read cached bytecode or compiled auditor's modules from source
    bytecode = "not written (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "cached"
    print(f"bytecode: {bytecode}")
    print(f"at the first record: {len(loaded)} modules; of {', '.join(HEAVY)}: {heavy}; model tiers: {model_tiers}")
    git = subprocess.run(["git", "-C", args.code, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    result = {
        "bench": "bench_startup",
        "date": time.strftime("%Y-%m-%d"),
        "code": args.code,
        "commit": git.stdout.strip() or None,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "note": "shared with other agents",
        },
        "bytecode": bytecode,
        "reps": args.reps,
        "runs": runs,
        "loaded_at_first_record": {"modules": len(loaded), "heavy": heavy, "model_tiers": model_tiers},
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"bench_startup_{result['date']}{'_' + args.label if args.label else ''}.json"
    write_json(path, result)
    print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
