"""Detector in Hugging Face ``datasets`` against ``auditor audit`` on the same corpus (issue 39).

    python -m benchmarks.bench_detector_hf --run /tmp/bench_real/run-100mb-s0

Reads the corpus and the ``auditor audit`` report (default methods, ``--workers 2``) that
``python -m benchmarks.bench_real --mb 100`` left in ``--run`` (``train.jsonl``,
``auditor-default-report/report.json``), then in one child process: builds a :class:`auditor.Detector`
over the bundled StableToolBench queries (default methods), saves and loads it, loads the corpus with
``datasets.load_dataset("json")`` and runs ``Dataset.map(detector.findings_batch, batched=True,
with_indices=True, num_proc=2)`` and ``Dataset.filter(detector.keep_batch, batched=True,
num_proc=2)``. CPU is the child's own plus its reaped children's (the ``num_proc`` workers), user +
system, split into loading the corpus into Arrow (``load_dataset``, which the CLI does not do), the
detector (build, save, load) and each pass. Compared: the set of (eval item, training record, method,
conclusive) and the eval items and training records with conclusive findings, and CPU per MB of the
``map`` pass (and of ``filter``) against the CLI's ``caller_cpu_s + worker_cpu_s``.

Writes benchmarks/results/bench_detector_hf_<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from benchmarks.common import RESULTS, write_json


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def child(run: str, work: str, fmt: str | None) -> None:
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    t0 = _cpu()
    import datasets

    from auditor import Detector

    out: dict = {"import_cpu_s": _cpu() - t0}
    c = _cpu()
    w = time.perf_counter()
    detector = Detector.load(Detector("stabletoolbench", format=fmt).save(Path(work) / "detector"))
    out["detector_cpu_s"], out["detector_wall_s"] = _cpu() - c, time.perf_counter() - w
    c = _cpu()
    w = time.perf_counter()
    ds = datasets.load_dataset(
        "json", data_files=str(Path(run) / "train.jsonl"), split="train", cache_dir=str(Path(work) / "hf")
    )
    out["load_cpu_s"], out["load_wall_s"] = _cpu() - c, time.perf_counter() - w
    out["rows"] = len(ds)
    c = _cpu()
    w = time.perf_counter()
    tagged = ds.map(
        detector.findings_batch,
        batched=True,
        with_indices=True,
        num_proc=2,
        input_columns=None,
        remove_columns=ds.column_names,
        load_from_cache_file=False,
    )
    out["map_cpu_s"], out["map_wall_s"] = _cpu() - c, time.perf_counter() - w
    findings = [f for cell in tagged["auditor_findings"] for f in json.loads(cell)]
    c = _cpu()
    w = time.perf_counter()
    kept = ds.filter(detector.keep_batch, batched=True, num_proc=2, load_from_cache_file=False)
    out["filter_cpu_s"], out["filter_wall_s"] = _cpu() - c, time.perf_counter() - w
    out["kept_rows"] = len(kept)
    out["pickle_bytes"] = len(__import__("pickle").dumps(detector))
    out["findings"] = findings
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", default="/tmp/bench_real/run-100mb-s0")
    ap.add_argument("--work-dir", default="/tmp/bench_detector_hf")
    ap.add_argument("--format", default=None, help="the training rows' format (default: what the CLI detected)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child:
        child(args.run, args.work_dir, args.format)
        return
    from auditor.adapters import explain

    run = Path(args.run)
    report = json.loads((run / "auditor-default-report" / "report.json").read_text())
    fmt = args.format or explain(run / "train.jsonl")[0].name
    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_detector_hf",
        "--child",
        "--run",
        str(run),
        "--work-dir",
        args.work_dir,
        "--format",
        fmt,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    key = lambda f: (f["eval_id"], f["train_id"], f["method"], f["conclusive"])  # noqa: E731
    cli_findings = report["findings"]
    mb = (run / "train.jsonl").stat().st_size / 1e6
    cli_cpu = report["run"]["caller_cpu_s"] + report["run"]["worker_cpu_s"]
    mine = res.pop("findings")
    items = lambda fs: {(f["eval_dataset"], f["eval_id"]) for f in fs if f["conclusive"]}  # noqa: E731
    records = lambda fs: {f["train_ordinal"] for f in fs if f["conclusive"]}  # noqa: E731
    result = {
        "corpus_mb": round(mb, 1),
        "format": fmt,
        "cli": {
            "cpu_s": round(cli_cpu, 2),
            "cpu_s_per_mb": round(cli_cpu / mb, 4),
            "wall_s": report["run"]["seconds"],
            "findings": len(cli_findings),
            "findings_total": report["run"]["findings_total"],
            "contaminated_items": report["checks"][0]["contaminated_items"],
        },
        "detector": {
            **{k: round(v, 3) if isinstance(v, float) else v for k, v in res.items()},
            "map_cpu_s_per_mb": round(res["map_cpu_s"] / mb, 4),
            "filter_cpu_s_per_mb": round(res["filter_cpu_s"] / mb, 4),
            "findings": len(mine),
        },
        "same_findings": {key(f) for f in mine} == {key(f) for f in cli_findings},
        "only_cli": sorted(map(list, {key(f) for f in cli_findings} - {key(f) for f in mine}))[:20],
        "only_detector": sorted(map(list, {key(f) for f in mine} - {key(f) for f in cli_findings}))[:20],
        "same_eval_items": items(mine) == items(cli_findings),
        "same_training_records": records(mine) == records(cli_findings),
        "removed_rows_match": res["rows"] - res["kept_rows"] == len(records(cli_findings)),
        "map_cpu_ratio": round(res["map_cpu_s"] / cli_cpu, 3),
        "filter_cpu_ratio": round(res["filter_cpu_s"] / cli_cpu, 3),
        "load": os.getloadavg(),
    }
    out = Path(args.out or RESULTS / f"bench_detector_hf_{date.today().isoformat()}.json")
    write_json(out, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
