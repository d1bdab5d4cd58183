"""What reading training records whole (the ``fields`` view) costs, on real agent training data.

Writes a JSON Lines corpus of the *raw* records of StepTool's and Tool-MVR's training files (from
``../shared/data``; no licence: never copied into the repo, the corpus lives under a temporary
folder), repeated to ``--mb`` MB with fresh ids, and audits it against StableToolBench with
``--workers 1`` through the CLI of each source tree given (``--corpus tools``: ToolBench queries with their tool schemas and Glaive tool-call
conversations from ``../shared/data`` instead) (``--tree``: this checkout by default;
pass the tree before the change too, e.g. ``--tree /work/main``), for the default methods and for
``exact`` + ``ngram``. Prints the characters of the ``text`` and ``fields`` views this checkout
reads, then per run the scan's worker CPU per MB, the run's CPU per MB, wall time, the verdict and
the findings.

    python -m benchmarks.bench_whole --mb 20 --tree /work/main --tree .
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

from auditor.datasets.dataset import Dataset
from auditor.datasets.spec import DatasetSpec
from benchmarks.common import children_cpu, shared_records

FILES = [
    "steptool/data_train/qwen2/gpt4_dfs_G123_for_sft_example.json",
    "steptool/data_train/rft/rft_data_example.json",
    "tool-mvr/data/training_data/selected_Toolbench_V.json",
    "tool-mvr/data/training_data/selected_Toolbench_R.json",
]
#: ``--corpus tools``: records that carry tool schemas (ToolBench queries with their ``api_list``,
#: Glaive tool-call conversations with their ``tools`` JSON string)
TOOL_FILES = [
    "toolbench/data_example/instruction/G3_query.json",
    "llama-factory/data/glaive_toolcall_en_demo.json",
]


def corpus(folder: Path, mb: float, files: list[str]) -> tuple[list[Path], float]:
    """One JSON Lines file per source file, its raw records repeated to ``mb / len(files)`` MB."""
    out = []
    for k, rel in enumerate(files):
        raws = [r.raw for r in shared_records(rel) if isinstance(r.raw, dict)]
        size = sum(len(json.dumps(raw, ensure_ascii=False).encode()) + 1 for raw in raws)
        reps = max(1, int(mb / len(files) * 1e6 / size))
        path = folder / f"raw{k}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for i in range(reps):
                for j, raw in enumerate(raws):
                    f.write(json.dumps({**raw, "id": f"{i}-{j}"}, ensure_ascii=False) + "\n")
        out.append(path)
    return out, sum(p.stat().st_size for p in out) / 1e6


def audit(tree: Path, train: list[Path], out: Path, methods: list[str]) -> dict:
    cmd = [sys.executable, "-m", "auditor", "audit", "--eval", "stabletoolbench"]
    cmd += [a for p in train for a in ("--train", str(p))]
    cmd += [a for m in methods for a in ("--method", m)] + ["--workers", "1", "--report-dir", str(out)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = children_cpu()
    t = time.perf_counter()
    done = subprocess.run(cmd, check=False, capture_output=True, env=env, cwd=tree, text=True)
    if done.returncode not in (0, 1):  # 1: contamination found
        raise SystemExit(f"{tree}: audit failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    wall = time.perf_counter() - t
    cpu = children_cpu() - before
    report = json.loads((out / "report.json").read_text())
    return {
        "cpu": cpu,
        "wall": wall,
        "scan": report["run"]["scan"],
        "findings": len(report.get("findings", [])),
        "verdict": report.get("verdict"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=20.0, help="MB of raw records audited (repeated)")
    ap.add_argument("--tree", action="append", type=Path, help="source tree to run (repeatable)")
    ap.add_argument("--corpus", choices=("trajectories", "tools"), default="trajectories")
    ap.add_argument("--only-default", action="store_true", help="the default methods only")
    args = ap.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(".")])]
    print("load", os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        train, size = corpus(Path(tmp), args.mb, TOOL_FILES if args.corpus == "tools" else FILES)
        text = fields = 0
        for path in train:  # what this checkout's reader hands the text tiers
            for r in Dataset(DatasetSpec(path.name, [str(path)])).records():
                text, fields = text + len(r.view("text")), fields + len(r.views.get("fields", ""))
        print(f"{size:.1f} MB of records: text views {text / 1e6:.2f} M chars, fields views {fields / 1e6:.2f} M chars")
        for methods in [[]] if args.only_default else ([], ["exact", "ngram"]):
            for k, tree in enumerate(trees):
                res = audit(tree, train, Path(tmp) / f"r{k}-{len(methods)}", methods)
                scan = res["scan"]
                print(
                    f"{tree} {'+'.join(methods) or 'default methods'} over {size:.1f} MB: "
                    f"scan.worker_cpu_s {1000 * scan['worker_cpu_s'] / size:.1f} ms/MB, "
                    f"run CPU {res['cpu']:.2f} s ({1000 * res['cpu'] / size:.1f} ms/MB), wall {res['wall']:.2f} s, "
                    f"verdict {res['verdict']}, findings {res['findings']}"
                )
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
