"""CPU per MB of boilerplate masking on real agent training data (StepTool, Tool-MVR trajectories).

Reads the training files from ``../shared/data`` (no licence: never copied into the repo; a
temporary JSONL of their texts, repeated, is written under ``--tmp`` for the CLI run), detects
their boilerplate against StableToolBench's bundled eval items, and prints

* masking alone: CPU ms per MB of text for ``Masker.premask`` record by record (the old path) and
  ``Masker.premask_batch`` (the batch path), and whether both give the same views;
* a whole ``auditor audit --method exact --method ngram --workers 1`` run over the repeated corpus:
  the report's ``scan.worker_cpu_s`` per MB and the run's CPU.

    python -m benchmarks.bench_masking --mb 20
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
from auditor.masking.base import BoilerplateConfig
from auditor.masking.detect import detect
from auditor.masking.masker import Masker
from auditor.records.record import TEXT
from benchmarks.common import children_cpu, shared_records

FILES = [
    "steptool/data_train/qwen2/gpt4_dfs_G123_for_sft_example.json",
    "steptool/data_train/rft/rft_data_example.json",
    "tool-mvr/data/training_data/selected_Toolbench_V.json",
    "tool-mvr/data/training_data/selected_Toolbench_R.json",
]


def eval_texts() -> list[str]:
    ds = Dataset(DatasetSpec("eval", ["stabletoolbench"]))
    return [r.view(TEXT) for r in ds.records()]


def cpu() -> float:
    return time.process_time()


def bench_masking(mb: float, evals: list[str], batch: int) -> None:
    for rel in FILES:
        recs = shared_records(rel)
        bp = detect(recs, evals, BoilerplateConfig(min_records=min(10, len(recs))))
        masker = Masker(bp, [], views=(TEXT,), methods=["ngram"])
        # a scan batch holds 512 records (ScanJob.batch_size); repeated records flatter the batch
        # path (each distinct line is normalized once per batch): --batch 0 masks each file's
        # distinct records as a batch of their own
        recs = recs * max(1, batch // len(recs))
        chars = sum(len(r.view(TEXT)) for r in recs)
        reps = max(1, int(mb * 1e6 / max(1, chars)))
        old_s = new_s = 0.0
        same = True
        for _ in range(reps):
            for r in recs:
                Masker.unmask(r)
            t = cpu()
            for r in recs:
                masker.premask(r)
            old_s += cpu() - t
            old = [r.meta.get("_masked_views") for r in recs]
            for r in recs:
                Masker.unmask(r)
            t = cpu()
            premask_batch = getattr(masker, "premask_batch", None)
            if premask_batch is not None:
                premask_batch(recs)
            new_s += cpu() - t
            same = same and (premask_batch is None or old == [r.meta.get("_masked_views") for r in recs])
        total_mb = reps * chars / 1e6
        print(
            f"{rel}: batches of {len(recs)} records x {reps}, {total_mb:.1f} MB; lines {len(bp.lines)} spared "
            f"{len(bp.spared)} ngrams {len(bp.ngrams)}; masked {bp.masked_chars / max(1, bp.scanned_chars):.0%}; "
            f"premask {1000 * old_s / total_mb:.1f} ms/MB, premask_batch {1000 * new_s / total_mb:.1f} ms/MB, "
            f"identical {same}"
        )


def bench_audit(mb: float, tmp: Path) -> None:
    texts = [r.view(TEXT) for rel in FILES[:2] for r in shared_records(rel)]
    chars = sum(map(len, texts))
    reps = max(1, int(mb * 1e6 / chars))
    train = tmp / "steptool_repeated.jsonl"
    with open(train, "w") as f:
        for i in range(reps):
            for j, t in enumerate(texts):
                f.write(json.dumps({"id": f"{i}-{j}", "text": t}) + "\n")
    size = train.stat().st_size / 1e6
    cmd = [sys.executable, "-m", "auditor", "audit", "--train", str(train), "--eval", "stabletoolbench"]
    cmd += ["--method", "exact", "--method", "ngram", "--workers", "1", "--report-dir", str(tmp / "r")]
    before = children_cpu()
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, capture_output=True, env=os.environ)
    wall = time.perf_counter() - t0
    run_cpu = children_cpu() - before
    report = json.loads((tmp / "r" / "report.json").read_text())
    scan = report["run"]["scan"]
    bp = report["checks"][0]["boilerplate"]
    print(
        f"audit exact+ngram --workers 1 over {size:.1f} MB ({reps} copies of StepTool's trajectories): "
        f"scan.worker_cpu_s {1000 * scan['worker_cpu_s'] / size:.1f} ms/MB, "
        f"run CPU {run_cpu:.2f} s ({1000 * run_cpu / size:.1f} ms/MB), wall {wall:.2f} s; "
        f"masked_share {bp.get('masked_share')}, findings {len(report.get('findings', []))}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="MB of text masked per file (repeated)")
    ap.add_argument("--audit-mb", type=float, default=20.0, help="MB of the repeated corpus audited")
    ap.add_argument("--batch", type=int, default=512, help="records per batch (file repeated); 0: the file's own")
    ap.add_argument("--skip-audit", action="store_true")
    args = ap.parse_args()
    print("load", os.getloadavg())
    bench_masking(args.mb, eval_texts(), args.batch)
    if not args.skip_audit:
        with tempfile.TemporaryDirectory() as tmp:
            bench_audit(args.audit_mb, Path(tmp))
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
