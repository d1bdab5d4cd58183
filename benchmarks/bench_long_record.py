"""CPU seconds of 2 MB as one record vs the same 2 MB as short records, per default method.

Issue 22: "a 2 MB record costs what 2 MB of short records cost". Two corpora, each written twice as
JSON Lines under a temporary folder (never into the repository: StepTool has no licence):

* ``trajectory``: StepTool's SFT trajectories (``../shared/data/steptool``; tau-bench's historical
  trajectories when it is absent), their messages joined into ONE ShareGPT record of ``--mb`` MB, and
  the trajectories themselves repeated to the same size as short records;
* ``long-tokens``: the same text with long tokens between the messages, as tool results hold them
  (30,000-character runs, hex dumps, an e-mail address), one record vs 2,000-character records.

For each corpus and shape it runs :func:`auditor.run_audit` (local engine, one worker, StableToolBench
as the eval side) once per default method and once with all of them, and prints the run's CPU (the
calling process plus the worker: reading, boilerplate detection and masking, normalization, the
search); then boilerplate masking alone (``Masker.premask_batch``, in this process).

    python -m benchmarks.bench_long_record            # 2 MB
    python -m benchmarks.bench_long_record --mb 2 --methods entities
    python -m benchmarks.bench_long_record --real 100 # 100 MB of real text: 2 MB records vs short ones

``--real MB`` (issue 36 item 3): bench_real's corpus of real text (:func:`benchmarks.bench_real.build_corpus`,
seed 0, its plants), as the peers read it (every record flattened to ``{"text"}``), once as it is (short
records) and once with consecutive records joined by blank lines into records of ``--record-mb`` MB
(default 2). Each is audited with the default methods by the CLI (``--workers 2``, a fresh index),
the CPU of every process counted and the peak RSS of the whole process tree polled
(:func:`benchmarks.common.measure`); the table gives CPU per MB, the long run's ratios to the short
one's and the eval items found conclusively by each (the long records must lose none). Writes
``benchmarks/results/bench_long_record_real_<date>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from auditor import methods
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.masking.base import BoilerplateConfig
from auditor.masking.detect import detect
from auditor.masking.masker import Masker
from auditor.records.record import TEXT
from benchmarks.common import RESULTS, SHARED, become_subreaper, measure, write_json

STEPTOOL = SHARED / "steptool/data_train/qwen2/gpt4_dfs_G123_for_sft_example.json"
TAU = SHARED / "tau-bench/historical_trajectories/gpt-4o-airline.json"


def trajectories() -> list[list[dict[str, str]]]:
    """Lists of ShareGPT messages ``{from, value}``: StepTool's, else tau-bench's trajectories."""
    if STEPTOOL.exists():
        doc = json.loads(STEPTOOL.read_text(encoding="utf-8"))
        return [i["conversations"] for v in doc.values() for i in v["instances"]]
    doc = json.loads(TAU.read_text(encoding="utf-8"))
    return [[{"from": m["role"], "value": str(m.get("content") or "")} for m in t["traj"]] for t in doc]


def long_tokens(rng: random.Random) -> str:
    pieces = [
        "x" * rng.randint(5_000, 30_000),
        os.urandom(rng.randint(1_000, 4_000)).hex().upper(),
        "contact: support@example.com " + "ab_" * 3_000,
    ]
    return rng.choice(pieces)


def corpora(mb: float, tmp: Path) -> dict[str, tuple[Path, Path]]:
    """corpus → (one-record file, short-records file), each about ``mb`` MB of text."""
    target, rng = int(mb * 1e6), random.Random(22)
    trajs = trajectories()
    out = {}
    for name in ("trajectory", "long-tokens"):
        messages, size, k = [], 0, 0
        while size < target:
            for m in trajs[k % len(trajs)]:
                messages.append(dict(m))
                if name == "long-tokens" and rng.random() < 0.2:
                    messages.append({"from": "function", "value": long_tokens(rng)})
                size += len(messages[-1]["value"])
            k += 1
        one, short = tmp / f"{name}-one.jsonl", tmp / f"{name}-short.jsonl"
        one.write_text(json.dumps({"id": "one", "conversations": messages}) + "\n", encoding="utf-8")
        with open(short, "w", encoding="utf-8") as f:
            if name == "trajectory":  # the trajectories as they are, one record each
                for i in range(k):
                    f.write(json.dumps({"id": f"s{i}", "conversations": trajs[i % len(trajs)]}) + "\n")
            else:  # the same messages, 2,000 characters a record
                for i, m in enumerate(messages):
                    v = m["value"]
                    for j in range(0, max(1, len(v)), 2_000):
                        f.write(json.dumps({"id": f"s{i}-{j}", "conversations": [{**m, "value": v[j : j + 2_000]}]}))
                        f.write("\n")
        out[name] = (one, short)
    return out


def run_cpu(train: Path, method_names: list[str] | None, tmp: Path) -> tuple[float, int, int]:
    """(CPU seconds of the caller and the worker, training records, findings) of one audit."""
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["stabletoolbench"], role="eval"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=method_names)],
        workers=1,
        index_dir=str(tmp / "indexes"),
    )
    report = run_audit(cfg)
    run = report.run
    return (run.caller_cpu_s or 0.0) + (run.worker_cpu_s or 0.0), report.checks[0].train_records, len(report.findings)


def records(path: Path) -> list:
    return list(Dataset(DatasetSpec("tr", [str(path)])).records())


def eval_records() -> list:
    return list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())


def masking_cpu(sample: Path, train: Path) -> tuple[float, int]:
    """(CPU seconds, characters masked) of boilerplate masking alone: detected on ``sample``'s records
    (the short ones: a single record repeats nothing), ``train``'s records masked in batches of 512."""
    evals = [r.view(TEXT) for r in eval_records()]
    bp = detect(records(sample), evals, BoilerplateConfig())
    masker = Masker(bp, [], views=(TEXT,), methods=["ngram"])
    recs = records(train)
    t = time.process_time()
    for i in range(0, len(recs), 512):
        masker.premask_batch(recs[i : i + 512])
    masked = sum(len(r.view(TEXT)) - len(r.meta["_masked_views"][TEXT]) for r in recs if r.meta.get("_masked_views"))
    return time.process_time() - t, masked


def search_cpu(index, recs: list) -> tuple[float, int]:
    """(CPU seconds, findings) of ``index.search`` alone over ``recs`` in batches of 512."""
    t, n = time.process_time(), 0
    for i in range(0, len(recs), 512):
        n += len(index.search(recs[i : i + 512]))
    return time.process_time() - t, n


def entities_before(index):
    """``index`` (entities) searching every pattern with plain ``re.finditer``: the code before issue 22."""
    ref = type(index)(index.config)
    ref.run_starts = [None] * len(ref.regexes)
    return ref.build(index.eval_records)


def joined_records(short: Path, long: Path, record_mb: float) -> int:
    """``short``'s ``{"text"}`` records joined by blank lines, in order, into records of about
    ``record_mb`` MB (of UTF-8), written to ``long``; returns how many."""
    n, texts, size = 0, [], 0
    with open(short, encoding="utf-8") as src, open(long, "w", encoding="utf-8") as out:
        for line in src:
            text = json.loads(line)["text"]
            texts.append(text)
            size += len(text.encode("utf-8"))
            if size >= record_mb * 1e6:
                out.write(json.dumps({"text": "\n\n".join(texts)}, ensure_ascii=False) + "\n")
                n, texts, size = n + 1, [], 0
        if texts:
            out.write(json.dumps({"text": "\n\n".join(texts)}, ensure_ascii=False) + "\n")
            n += 1
    return n


def real_text(args: argparse.Namespace) -> dict:
    """The ``--real`` comparison (see the module doc)."""
    from benchmarks import bench_real

    work = Path(args.work_dir)
    evals = bench_real.eval_queries()
    pool = bench_real.load_pools(work, evals)
    run = work / f"long-{args.real:g}mb-s{args.seed}"
    run.mkdir(parents=True, exist_ok=True)
    corpus = bench_real.build_corpus(run, args.real, args.seed, pool, evals, 50)
    short, long = run / "peers" / "train.jsonl", run / f"train-{args.record_mb:g}mb-records.jsonl"
    long_records = joined_records(short, long, args.record_mb)
    become_subreaper()
    rows = {}
    for name, path in (("short records", short), (f"{args.record_mb:g} MB records", long)):
        tag = name.split()[0]
        cmd = [*bench_real.auditor_cmd(), "audit", "--train", str(path), "--eval", "stabletoolbench"]
        cmd += ["--report-dir", str(run / f"{tag}-report"), "--index-dir", str(run / f"{tag}-index-{time.time_ns()}")]
        row = measure([*cmd, "--workers", str(args.workers)], run / f"{tag}.log")
        findings = json.loads((run / f"{tag}-report" / "report.json").read_text())["findings"]
        mb = path.stat().st_size / 1e6
        row.update(mb=round(mb, 2), records=sum(1 for _ in open(path, encoding="utf-8")))
        row["cpu_s_per_mb"] = round(row["cpu_s"] / mb, 4)
        row["conclusive_eval_ids"] = sorted({f["eval_id"] for f in findings if f.get("conclusive")})
        rows[name] = row
        print(f"  -> {name}: {json.dumps({k: v for k, v in row.items() if k != 'conclusive_eval_ids'})}", flush=True)
    (s, ls), (_, lr) = rows.items()
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "command": f"python -m benchmarks.bench_long_record --real {args.real:g} --record-mb {args.record_mb:g}",
        "corpus": corpus,
        "long_records": long_records,
        "runs": rows,
        "cpu_per_mb_ratio": round(lr["cpu_s_per_mb"] / ls["cpu_s_per_mb"], 2),
        "peak_rss_ratio": round(lr["peak_tree_rss_mb"] / ls["peak_tree_rss_mb"], 2),
        "same_items_found": lr["conclusive_eval_ids"] == ls["conclusive_eval_ids"],
    }
    print(f"{'run':<16}{'MB':>7}{'records':>9}{'CPU-s':>8}{'CPU-s/MB':>10}{'peak MB':>9}{'items found':>13}")
    for name, r in rows.items():
        found = len(r["conclusive_eval_ids"])
        print(
            f"{name:<16}{r['mb']:>7}{r['records']:>9}{r['cpu_s']:>8}{r['cpu_s_per_mb']:>10}{r['peak_tree_rss_mb']:>9}{found:>13}"
        )
    print(f"long / short: CPU per MB x{res['cpu_per_mb_ratio']}, peak tree RSS x{res['peak_rss_ratio']}, "
          f"same items found: {res['same_items_found']}")  # fmt: skip
    write_json(Path(args.out or RESULTS / f"bench_long_record_real_{res['date']}.json"), res)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0, help="MB of text per file (default 2)")
    ap.add_argument("--methods", nargs="*", default=None, help="methods to time one by one (default: the defaults)")
    ap.add_argument("--real", type=float, help="MB of bench_real's real-text corpus: long vs short records")
    ap.add_argument("--record-mb", type=float, default=2.0, help="--real: MB per long record (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work-dir", default="/tmp/bench_real")
    ap.add_argument("--out", help="--real: JSON to write")
    args = ap.parse_args()
    if args.real:
        real_text(args)
        return
    names = args.methods or methods.default_methods()
    print("load", os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        run_cpu(corpora(0.05, tmp)["trajectory"][1], None, tmp)  # warm the indexes and imports
        for corpus, (one, short) in corpora(args.mb, tmp).items():
            print(
                f"\n{corpus}: one record {one.stat().st_size / 1e6:.2f} MB vs short records {short.stat().st_size / 1e6:.2f} MB"
            )
            print(f"{'method':<16}{'one record s':>14}{'short s':>10}{'ratio':>8}   findings one/short")
            for label, chosen in [*((m, [m]) for m in names), ("all defaults", None)]:
                one_s, _, one_f = run_cpu(one, chosen, tmp)
                short_s, n, short_f = run_cpu(short, chosen, tmp)
                print(
                    f"{label:<16}{one_s:>14.2f}{short_s:>10.2f}{one_s / max(short_s, 1e-9):>8.2f}   {one_f}/{short_f} ({n} short records)"
                )
            (one_m, one_c), (short_m, short_c) = masking_cpu(short, one), masking_cpu(short, short)
            print(
                f"{'masking alone':<16}{one_m:>14.2f}{short_m:>10.2f}{one_m / max(short_m, 1e-9):>8.2f}   chars masked {one_c}/{short_c}"
            )
            print("search alone, in this process (index.search over the records as read):")
            evals, one_r, short_r = eval_records(), records(one), records(short)
            for m in names:
                index = methods.create(m).build(evals)
                rows = [(m, index)] + ([("entities before", entities_before(index))] if m == "entities" else [])
                for label, ix in rows:
                    (one_s, one_f), (short_s, short_f) = search_cpu(ix, one_r), search_cpu(ix, short_r)
                    print(
                        f"  {label:<16}{one_s:>12.2f}{short_s:>10.2f}{one_s / max(short_s, 1e-9):>8.2f}   {one_f}/{short_f}"
                    )
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
