"""The ``embedding`` tier's static prefilter: its threshold chosen leave-one-file-out on the paraphrase
benchmarks, the findings it loses out-of-sample, the share of negatives it stops, and the whole
scan's sentences/s with and without it on a corpus of mostly unrelated text.

Run from the repository root::

    python benchmarks/bench_prefilter.py --recall        # ~1 min with a warm embedding cache (5–9 cold): LOFO thresholds
    python benchmarks/bench_prefilter.py --unrelated     # seconds: unrelated real texts stopped
    python benchmarks/bench_prefilter.py --throughput --docs 300   # ~2 min: texts/s, cold and warm, with/without

**Recall.** Files: the frozen held-out sets (``tests/data/heldout``: StableToolBench, BFCL
simple_python, WebShop — the *fit* files — and NESTFUL, the untouched test set) and the six
llm-decontaminator rephrasing files (:mod:`paraphrase_data`). Each file is scanned once with the
prefilter off (today's path, shipped decision); every training unit also gets its static score (best
static cosine of its segments to any eval segment). A finding survives threshold ``t`` iff its
unit's score is ``>= t`` (the units that pass are decided exactly as without the prefilter — that is
what ``tests/test_embed_prefilter.py`` checks), so one scan gives every threshold's figures.

Threshold rule: the largest threshold that keeps every *right* finding (a paraphrase matched to its
own item, conclusive or suspected) of the fit files, minus :data:`MARGIN`. Leave-one-file-out: for
each file, the rule is applied to the other fit files and the file is scored (OUT-OF-SAMPLE);
NESTFUL is scored with the rule applied to all nine fit files (OUT-OF-SAMPLE); the shipped default
is the rule on all nine fit files (IN-SAMPLE on them).

**Unrelated texts** (``--unrelated``): the share of units of real texts about something else (MMLU
questions, HumanEval prompts, this repository's doc paragraphs, 3 of them joined) that the shipped
threshold stops, per held-out eval set (static model only).

**Throughput** (``--throughput``): eval ``--eval`` (a held-out set, default WebShop 0:500); training:
``--docs`` documents each joining 3 unrelated real texts (or, with ``--synthetic``, documents of
``bench_corpus.generate_docs``: Zipf-drawn words mixing the eval vocabulary with pseudo-words), a
held-out paraphrase of an eval item in every 25th (alone or between two documents). A fresh process
per mode (``none``, ``static``): model load + build + scan (cold), then the scan again with an empty
embedding cache (warm). The machine's load average is printed next to each figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from paraphrase_data import DECON_FILES, HELDOUT_SETS, TEST_SETS  # noqa: E402

CACHE = os.environ.get("AUDITOR_EMBED_CACHE", "/tmp/auditor-bench-embeddings")
SCORES = os.environ.get("AUDITOR_PREFILTER_SCORES", "/tmp/auditor-prefilter-scores.json")
DECON_NAMES = [d[0] for d in DECON_FILES]
FIT = (*HELDOUT_SETS, *DECON_NAMES)
#: subtracted from the fitted threshold (the lowest static score of a right finding on the fit files)
MARGIN = 0.05


def load() -> str:
    return os.getloadavg().__repr__()


def collect(name: str) -> dict:
    """One scan with the prefilter off: per finding its tier, rightness and unit score; per negative
    record its best unit score."""
    from bench_paraphrase import case

    from auditor.embed.prefilter import Prefilter, load_static_encoder
    from auditor.methods.embedding import EmbeddingIndex

    ev, tr, truth = case(name)
    t0 = time.perf_counter()
    index = EmbeddingIndex(cache_dir=CACHE, prefilter="none").build(ev)
    pre = Prefilter(load_static_encoder(), -1.0).fit(index.seg_text)
    evk = {(e.dataset, e.ordinal): e for e in ev}
    trk = {t.ordinal: t for t in tr}
    unit_score: dict[tuple[int, str, str], float] = {}
    best: dict[int, float] = {}
    for t in tr:
        units = index.train_units(t)
        scores = pre.scores([[s.text for s in segs] for _, segs in units]).tolist()
        for (view, segs), sc in zip(units, scores):
            for s in segs:
                unit_score[(t.ordinal, view, s.label())] = sc
        best[t.ordinal] = max(scores, default=-1.0)
    rows = []
    for i in range(0, len(tr), 256):
        for f in index.search(tr[i : i + 256]):
            e, t = evk[(f.eval_dataset, f.eval_ordinal)], trk[f.train_ordinal]
            sc = unit_score[(t.ordinal, f.evidence["train_view"], f.evidence["train_segment"])]
            rows.append({"train": t.ordinal, "tier": f.evidence["tier"], "right": bool(truth(e, t)), "score": sc})
    kinds = {t.ordinal: t.meta.get("kind") for t in tr}
    return {
        "name": name,
        "rows": rows,
        "pos": sum(k == "paraphrase" for k in kinds.values()),
        "neg_best": [best[o] for o, k in kinds.items() if k == "negative"],
        "all_best": list(best.values()),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def recall(x: dict, t: float) -> tuple[float, float]:
    """(recall of conclusive+suspected right findings, share of all findings kept) at threshold ``t``."""
    rows = [r for r in x["rows"] if r["score"] >= t]
    found = len({r["train"] for r in rows if r["right"]})
    kept = len(rows) / len(x["rows"]) if x["rows"] else 1.0
    return found / (x["pos"] or 1), kept


def fitted(datas: list[dict]) -> float:
    lowest = min(r["score"] for x in datas for r in x["rows"] if r["right"])
    return round(float(lowest) - MARGIN, 3)


def line(x: dict, t: float, label: str) -> str:
    r0, _ = recall(x, -2.0)
    r1, kept = recall(x, t)
    neg = np.array(x["neg_best"])
    allb = np.array(x["all_best"])
    negf = f"negatives stopped {float((neg < t).mean()):.2f}" if len(neg) else "(no negatives)"
    return (
        f"  {x['name']:<22} {label:<14} t={t:.3f}  recall {r0:.3f} -> {r1:.3f} (lost {r0 - r1:.3f}); "
        f"findings kept {kept:.3f}; {negf}; training records stopped {float((allb < t).mean()):.2f}"
    )


def run_recall(only: list[str] | None) -> None:
    names = only or [*FIT, *TEST_SETS]
    datas = []
    for n in names:
        x = collect(n)
        datas.append(x)
        lows = sorted(r["score"] for r in x["rows"] if r["right"])[:3]
        print(f"[{n}: {len(x['rows'])} findings, {x['pos']} paraphrases, {x['seconds']}s; lowest right "
              f"unit scores {[round(v, 3) for v in lows]}]", flush=True)  # fmt: skip
    Path(SCORES).write_text(json.dumps(datas))
    report(datas)


def report(datas: list[dict]) -> None:
    fit = [x for x in datas if x["name"] in FIT]
    if len(fit) > 1:
        print(f"\nLeave-one-file-out (threshold = lowest right-finding score of the other fit files - {MARGIN}):")
        for x in datas:
            others = [y for y in fit if y is not x]
            print(line(x, fitted(others), "OUT-OF-SAMPLE"))
    if fit:
        t = fitted(fit)
        print(f"\nRule on all {len(fit)} fit files run: threshold {t} (IN-SAMPLE on them):")
        for x in datas:
            print(line(x, t, "IN-SAMPLE" if x in fit else "OUT-OF-SAMPLE"))
    from auditor.methods.embedding import PREFILTER_THRESHOLD

    print(f"\nShipped default {PREFILTER_THRESHOLD}:")
    for x in datas:
        print(line(x, PREFILTER_THRESHOLD, "IN-SAMPLE" if x in fit else "OUT-OF-SAMPLE"))


# -- throughput ------------------------------------------------------------------------------------
def unrelated_sources() -> dict[str, list[str]]:
    """Real texts unrelated to the agent/shopping eval sets, by source: MMLU questions (us_history,
    sociology, abstract_algebra), HumanEval prompts, the paragraphs of this repository's docs."""
    import csv
    import glob

    from paraphrase_data import DECON, REPO

    out: dict[str, list[str]] = {"MMLU questions": [], "HumanEval prompts": [], "docs paragraphs": []}
    for name in ("high_school_us_history_test.csv", "sociology_test.csv", "abstract_algebra_test.csv"):
        with open(DECON / "rephrase" / name, newline="", encoding="utf-8") as f:
            out["MMLU questions"] += [row[0] for row in csv.reader(f) if row]
    out["HumanEval prompts"] = [
        json.loads(x)["text"] for x in open(DECON / "test" / "HumanEval.jsonl", encoding="utf-8")
    ]
    for path in sorted(glob.glob(str(REPO / "docs" / "*.md"))):
        out["docs paragraphs"] += [
            p for p in Path(path).read_text(encoding="utf-8").split("\n\n") if len(p.split()) >= 20
        ]
    return out


def unrelated_pool() -> list[str]:
    return [t for texts in unrelated_sources().values() for t in texts]


def run_unrelated() -> None:
    """Share of unrelated real texts' units the shipped threshold stops, per held-out eval set (static
    model only; OUT-OF-SAMPLE: none of these texts was used to choose the threshold)."""
    import random

    from paraphrase_data import heldout_eval

    from auditor.embed.prefilter import Prefilter, load_static_encoder
    from auditor.embed.segment import segments
    from auditor.methods.embedding import PREFILTER_THRESHOLD, EmbeddingIndex
    from auditor.records.record import Record

    sources = unrelated_sources()
    pool = unrelated_pool()
    rng = random.Random(1)
    sources["3 of them joined"] = ["\n\n".join(rng.sample(pool, 3)) for _ in range(300)]
    enc, ix = load_static_encoder(), EmbeddingIndex()
    t = PREFILTER_THRESHOLD
    print(f"Unrelated real texts: share of units stopped at threshold {t} (OUT-OF-SAMPLE)")
    for name in (*HELDOUT_SETS, *TEST_SETS):
        ev = heldout_eval(name)
        pre = Prefilter(enc, t).fit([s.text for e in ev for s in segments(e.view("query"), 160)])
        row = f"  {name:<20}"
        for label, texts in sources.items():
            recs = [Record("x", str(i), "x", {"text": x}) for i, x in enumerate(texts)]
            units = [[s.text for s in u] for r in recs for _, u in ix.train_units(r)]
            row += f" | {label} ({len(units)} units) {float((pre.scores(units) < t).mean()):.2f}"
        print(row, flush=True)


def _corpus(eval_set: str, n_docs: int, synthetic: bool = False) -> tuple[list, list, int]:
    """Eval records, training records, planted count: each training document joins 3 texts of the
    unrelated pool (or is a synthetic ``bench_corpus`` document); every 25th holds a held-out
    paraphrase of an eval item, alone or between two pool texts (alternately)."""
    import csv
    import random

    from bench_corpus import generate_docs
    from paraphrase_data import HELDOUT, heldout_eval

    from auditor.records.record import Record

    ev = heldout_eval(eval_set)
    ids = {r.id for r in ev}
    with open(HELDOUT / f"{eval_set}.tsv", newline="", encoding="utf-8") as f:
        para = [
            r["text"] for r in csv.DictReader(f, delimiter="\t") if r["kind"] == "paraphrase" and r["item_id"] in ids
        ]
    rng = random.Random(5)
    if synthetic:
        docs = [d["text"] for d in generate_docs([e.view("query") for e in ev], n_docs, words=120, plant_every=0)]
    else:
        pool = unrelated_pool()
        docs = ["\n\n".join(rng.sample(pool, 3)) for _ in range(n_docs)]
    tr, planted = [], 0
    for i, text in enumerate(docs):
        if i % 25 == 24:
            p = para[planted % len(para)]
            text = p if planted % 2 == 0 else "\n\n".join([rng.choice(docs), p, rng.choice(docs)])
            planted += 1
        tr.append(Record("corpus", f"doc{i}", f"corpus.jsonl:{i + 1}", {"text": text}, ordinal=i))
    return ev, tr, planted


def _scan(prefilter: str, n_docs: int, eval_set: str, synthetic: bool) -> dict:
    """One process: build + scan (cold), then a second scan with a fresh embedding cache (warm)."""
    from auditor.embed.cache import EmbeddingCache
    from auditor.methods.embedding import EmbeddingIndex

    t0 = time.perf_counter()
    ev, tr, planted = _corpus(eval_set, n_docs, synthetic)
    index = EmbeddingIndex(cache_dir="none", prefilter=prefilter).build(ev)
    n_units = 0
    found = []
    for i in range(0, len(tr), 256):
        found += index.search(tr[i : i + 256])
    cold = time.perf_counter() - t0
    n_units = sum(len(index.train_units(t)) for t in tr)
    n_texts = sum(len(segs) for t in tr for _, segs in index.train_units(t))
    stats = index.stats()
    scanned = stats["encoding"]["encoded"] - index._built_counts["encoded"]
    enc = index.encoder
    enc.cache = EmbeddingCache(enc.cache.dim, enc.cache.model)  # warm: model loaded, nothing cached
    if index.prefilter is not None:
        index.prefilter.take_counts()
    t1 = time.perf_counter()
    for i in range(0, len(tr), 256):
        index.search(tr[i : i + 256])
    warm = time.perf_counter() - t1
    return {
        "prefilter": prefilter,
        "docs": len(tr),
        "planted": planted,
        "units": n_units,
        "texts": n_texts,
        "findings": sorted((f.eval_id, f.train_id, f.evidence["tier"]) for f in found),
        "cold_s": round(cold, 2),
        "warm_s": round(warm, 2),
        "pre": stats.get("prefilter"),
        "encoded": scanned,
    }


def run_throughput(n_docs: int, eval_set: str, synthetic: bool) -> None:
    what = "synthetic bench_corpus documents (120 words)" if synthetic else "documents of 3 unrelated real texts"
    print(f"Throughput: eval {eval_set}; {n_docs} {what}, a held-out paraphrase in every 25th; "
          f"default encoder (int8 ONNX); fresh process per mode", flush=True)  # fmt: skip
    results = {}
    for mode in ("none", "static"):
        la = load()
        cmd = [sys.executable, __file__, "--_scan", mode, "--docs", str(n_docs), "--eval", eval_set]
        out = subprocess.run(
            [*cmd, *(["--synthetic"] if synthetic else [])], capture_output=True, text=True, check=True
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results[mode] = r
        print(f"  prefilter {mode:<6}: cold {r['texts'] / r['cold_s']:7.1f} texts/s ({r['cold_s']} s with model "
              f"load + build), warm {r['texts'] / r['warm_s']:7.1f} texts/s ({r['warm_s']} s); {r['texts']} texts "
              f"in {r['units']} units, {r['encoded']} MiniLM-encoded, {len(r['findings'])} findings "
              f"({sum(1 for f in r['findings'] if f[2] == 'conclusive')} conclusive); load {la} -> {load()}", flush=True)  # fmt: skip
        if r["pre"]:
            p = r["pre"]
            print(f"      prefilter: {p['passed']}/{p['units']} units passed ({p['filtered']} stopped, "
                  f"{p['filtered'] / max(1, p['units']):.2f}), static {p['texts_per_s']} texts/s, threshold {p['threshold']}")  # fmt: skip
    a, b = results["none"], results["static"]
    lost = sorted(set(map(tuple, a["findings"])) - set(map(tuple, b["findings"])))
    print(f"  speed-up: cold x{a['cold_s'] / b['cold_s']:.2f}, warm x{a['warm_s'] / b['warm_s']:.2f}; same findings: "
          f"{a['findings'] == b['findings']} (lost {len(lost)}: {lost[:5]}) [OUT-OF-SAMPLE: the threshold never saw this corpus]")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recall", action="store_true", help="LOFO thresholds and recall on the paraphrase files")
    ap.add_argument("--report", action="store_true", help="reprint the recall figures from the saved scores")
    ap.add_argument("--only", nargs="*", default=None, help="files for --recall")
    ap.add_argument("--throughput", action="store_true", help="sentences/s with and without the prefilter")
    ap.add_argument("--unrelated", action="store_true", help="share of unrelated real texts stopped")
    ap.add_argument("--docs", type=int, default=1000, help="training documents for --throughput")
    ap.add_argument("--eval", default="webshop", help="eval set for --throughput (a held-out set's name)")
    ap.add_argument("--synthetic", action="store_true", help="--throughput on bench_corpus's synthetic documents")
    ap.add_argument("--_scan", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._scan:
        print(json.dumps(_scan(args._scan, args.docs, args.eval, args.synthetic)))
        return
    if args.recall:
        run_recall(args.only)
    if args.report:
        report(json.loads(Path(SCORES).read_text()))
    if args.unrelated:
        run_unrelated()
    if args.throughput:
        run_throughput(args.docs, args.eval, args.synthetic)


if __name__ == "__main__":
    main()
