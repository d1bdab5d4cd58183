"""Honest evaluation of the ``embedding`` decision: fitted on some files, reported on the others.

Run from the repository root (about 6–9 minutes on 2 shared cores with a cold embedding cache,
~2 minutes warm)::

    python -m benchmarks.bench_paraphrase            # every figure of issue 14's targets
    python -m benchmarks.bench_paraphrase --only webshop bfcl_simple_python   # a subset while developing
    python -m benchmarks.bench_paraphrase --fit      # also print the grid fit on the default fit files

Files: the three frozen held-out **fit** sets (``tests/data/heldout``: StableToolBench, BFCL
simple_python, WebShop; 50 hand-written paraphrases and 50 same-topic negatives each), the six
llm-decontaminator rephrasing files (originals = eval, line-aligned English rephrasings = training),
and the **untouched test set** ``nestful`` (:data:`TEST_SETS`: written and frozen after the others,
46 of its 50 negatives keep every number and name of their item and ask another operation). No fit ever sees a test set.

Every candidate a training record gets (its nearest eval item, with the decision switched off) is
scored once; decisions are then applied to the stored parts, so the fits are cheap. Printed:

1. **Shipped defaults** (:class:`auditor.methods.embedding.decision.Decision`): ``in-sample`` on the nine fit
   files, because they were chosen by grids over them while the decision was designed
   (:data:`DEFAULT_FIT`); ``OUT-OF-SAMPLE`` on the test set.
2. **Leave-one-file-out** over the fit files: for each file, the grid is fitted on the other fit files
   and the file is scored with that fit (all ``OUT-OF-SAMPLE``). For the llm-decontaminator files this
   is the issue's protocol. The test set is scored with the grid fitted on all fit files run
   (``OUT-OF-SAMPLE``).
3. With ``--features``: how well each evidence part alone separates right matches from negatives
   (held-out sets) or wrong-item matches (llm-decontaminator), as a ROC AUC per file (descriptive,
   nothing fitted).

Metrics. Held-out sets: recall (a paraphrase matched to its own item — or one listed in ``same_as`` —
conclusive or suspected), conclusive recall, and the share of negatives with a conclusive / a
suspected finding (any eval item). llm-decontaminator: precision over all findings (a finding pairing
different items is false; a twin with the same text counts as right), recall, F1 — for conclusive +
suspected, and for conclusive alone. The WebShop audit targets (``0:500`` vs ``500:2000`` and ``0:100``
vs ``100:200``) are run with ``--webshop`` through the CLI path (:func:`auditor.audit.run.run_audit`).

Embeddings are cached in ``$AUDITOR_EMBED_CACHE`` (default ``/tmp/auditor-bench-embeddings``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from typing import cast

import numpy as np

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods.embedding import EmbeddingIndex
from auditor.methods.embedding.decision import Decision
from auditor.methods.embedding.evidence import Parts
from benchmarks.paraphrase_data import (
    DECON_FILES,
    HELDOUT_SETS,
    TEST_SETS,
    TSV_SETS,
    decon_case,
    gsm8k_case,
    heldout_case,
)

DECON_NAMES = [d[0] for d in DECON_FILES]
#: the shipped defaults were chosen by grids over all nine files while the decision was designed, so
#: every shipped-default figure is in-sample; the out-of-sample figures are the leave-one-file-out ones
DEFAULT_FIT = (*HELDOUT_SETS, *DECON_NAMES)
#: never fitted on (the shipped defaults predate them): every figure on them is out-of-sample
UNTOUCHED = TEST_SETS
#: the embedding cache shared by the runs (``cache_dir``)
CACHE = os.environ.get("AUDITOR_EMBED_CACHE", "/tmp/auditor-bench-embeddings")
PART_KEYS: tuple[str, ...] = ("cosine", "lexical", "margin", "mutual", "overlap", "entities", "conflict")
PART_KEYS += ("align_recall", "align_precision", "align_f1", "values")


def case(name: str):
    if name == "gsm8k":
        return gsm8k_case()
    if name in TSV_SETS:
        return heldout_case(name)
    orig, reph, kind = next(d[1:] for d in DECON_FILES if d[0] == name)
    return decon_case(orig, reph, kind)


def collect(name: str) -> dict:
    """Every candidate of every training record (its parts, whether it is right), as arrays."""
    ev, tr, truth = case(name)
    t0 = time.perf_counter()
    index = cast(EmbeddingIndex, EmbeddingIndex(cache_dir=CACHE).build(ev))
    evk = {(e.dataset, e.ordinal): e for e in ev}
    trk = {t.ordinal: t for t in tr}
    rows = []
    for i in range(0, len(tr), 256):
        for f in index.search_scored(tr[i : i + 256], decide=False):
            e, t = evk[(f.eval_dataset, f.eval_ordinal)], trk[f.train_ordinal]
            parts = Parts(**{k: f.evidence[k] for k in PART_KEYS})
            rows.append((t, e, parts, bool(f.evidence["code"]), truth(e, t)))
    kinds = [t.meta.get("kind") for t in tr]
    return {
        "name": name,
        "rows": rows,
        "cos": np.array([r[2].cosine for r in rows]),
        "f1": np.array([r[2].align_f1 for r in rows]),
        "margin": np.array([r[2].margin for r in rows]),
        "values_ok": np.array([r[3] or (r[2].values >= 1.0 and not r[2].conflict) for r in rows], dtype=bool),
        "code": np.array([r[3] for r in rows], dtype=bool),
        "right": np.array([r[4] for r in rows], dtype=bool),
        "negative": np.array([r[0].meta.get("kind") == "negative" for r in rows], dtype=bool),
        "train": np.array([r[0].ordinal for r in rows], dtype=np.int64),
        "pos": kinds.count("paraphrase"),
        "neg": kinds.count("negative"),
        "seconds": time.perf_counter() - t0,
    }


def tiers(x: dict, d: Decision) -> tuple[np.ndarray, np.ndarray]:
    """(conclusive, suspected) masks over a file's candidates under ``d`` (as Decision.classify)."""
    score = x["cos"] + d.w_align * x["f1"] + d.w_margin * np.clip(x["margin"], 0.0, d.margin_cap)
    tc = np.where(x["code"], d.conclusive_code, d.conclusive)
    ts = np.where(x["code"], d.suspected_code, d.suspected)
    conclusive = (score >= tc) & x["values_ok"]
    return conclusive, ~conclusive & (score >= ts)


def evaluate(x: dict, d: Decision) -> dict:
    """Figures of one file under decision ``d``."""
    c, s = tiers(x, d)
    a = c | s

    def found(mask) -> int:
        return len(np.unique(x["train"][mask & x["right"]]))

    neg_c = set(x["train"][c & x["negative"]].tolist())
    neg_s = set(x["train"][s & x["negative"]].tolist()) - neg_c
    pos = x["pos"] or 1

    def prf(mask) -> tuple[float, float, float]:
        n = int(mask.sum())
        p = float((mask & x["right"]).sum() / n) if n else 1.0
        r = found(mask) / pos
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    return {
        "recall": found(a) / pos,
        "recall_c": found(c) / pos,
        "neg_c": len(neg_c) / x["neg"] if x["neg"] else 0.0,
        "neg_s": len(neg_s) / x["neg"] if x["neg"] else 0.0,
        "prf": prf(a),
        "prf_c": prf(c),
        "neg": x["neg"],
    }


def objective(m: dict) -> float:
    """What a fit maximizes per file: F1 of conclusive + suspected where there are no negatives (the
    llm-decontaminator target); else recall + conclusive recall − 4 · negatives conclusive − 1.5 ·
    negatives suspected (the held-out targets: ≤ 3 % and ≤ 10 %)."""
    if not m["neg"]:
        return m["prf"][2]
    return m["recall"] + m["recall_c"] - 4 * m["neg_c"] - 1.5 * m["neg_s"]


def _group_mean(datas: list[dict], d: Decision) -> float:
    """Mean objective per group (files with negatives, files without), summed: neither kind outvotes the other."""
    groups: dict[bool, list[float]] = {}
    for x in datas:
        groups.setdefault(bool(x["neg"]), []).append(objective(evaluate(x, d)))
    return sum(float(np.mean(v)) for v in groups.values())


def _best(datas: list[dict], make) -> tuple[float, Decision | None]:
    best, best_v = None, -np.inf
    for tc in np.arange(0.8, 2.6, 0.05):
        for ts in np.arange(tc - 0.6, tc + 1e-9, 0.05):
            d = make(round(float(tc), 3), round(float(ts), 3))
            v = _group_mean(datas, d)
            if v > best_v + 1e-12:
                best, best_v = d, v
    return best_v, best


def fit(datas: list[dict]) -> Decision:
    """Grid fit: weights shared; text thresholds on the text files, code thresholds on the code files."""
    base = Decision()
    text = [x for x in datas if not x["code"].any()]
    code = [x for x in datas if x["code"].any()]
    best, best_v = base, -np.inf
    for wa, wm in itertools.product((0.5, 1.0), (1.0, 2.0)):
        vt, dt = (
            _best(text, lambda c, s: Decision(w_align=wa, w_margin=wm, conclusive=c, suspected=s))
            if text
            else (0, None)
        )
        vc, dc = (
            _best(code, lambda c, s: Decision(w_align=wa, w_margin=wm, conclusive_code=c, suspected_code=s))
            if code
            else (0, None)
        )
        if vt + vc > best_v:
            best_v = vt + vc
            best = Decision(
                w_align=wa,
                w_margin=wm,
                conclusive=dt.conclusive if dt else base.conclusive,
                suspected=dt.suspected if dt else base.suspected,
                conclusive_code=dc.conclusive_code if dc else base.conclusive_code,
                suspected_code=dc.suspected_code if dc else base.suspected_code,
            )
    return best


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """ROC AUC of a score separating ``pos`` from ``neg`` (ties count one half)."""
    if not len(pos) or not len(neg):
        return float("nan")
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def feature_aucs(x: dict) -> str:
    """Per evidence part: AUC of right matches against negatives (or, without negatives, wrong-item matches)."""
    bad = x["negative"] if x["neg"] else ~x["right"]
    out = []
    for k in ("cosine", "align_f1", "align_recall", "align_precision", "margin", "lexical", "overlap", "values"):
        v = np.array([getattr(r[2], k) for r in x["rows"]], dtype=float)
        out.append(f"{k} {auc(v[x['right']], v[bad]):.3f}")
    d = Decision()
    score = np.array([d.score(r[2]) for r in x["rows"]])
    out.append(f"score {auc(score[x['right']], score[bad]):.3f}")
    return ", ".join(out)


def oracle_bound(x: dict) -> str:
    """The best one threshold on the shipped score could do on this very file (in-sample by construction):
    recall at <= 10 % of negatives with a finding, and conclusive recall (values agreeing) at <= 3 %."""
    if not x["neg"]:
        return ""
    d = Decision()
    score = np.array([d.score(r[2]) for r in x["rows"]])
    out = []
    for cap, gate, what in (
        (0.10, np.ones_like(x["values_ok"]), "recall"),
        (0.03, x["values_ok"], "conclusive recall"),
    ):
        best = 0.0
        for t in np.unique(score):
            m = (score >= t) & gate
            if len(set(x["train"][m & x["negative"]].tolist())) <= cap * x["neg"]:
                best = max(best, len(np.unique(x["train"][m & x["right"]])) / x["pos"])
        out.append(f"{what} {best:.2f} at <= {cap:.0%} negatives")
    return "best single threshold on this file (oracle, in-sample by construction): " + "; ".join(out)


def label(name: str) -> str:
    return "in-sample" if name in DEFAULT_FIT else "OUT-OF-SAMPLE"


def line(name: str, m: dict, label: str) -> str:
    if m["neg"]:
        return (
            f"  {name:<22} {label:<14} recall {m['recall']:.3f}  conclusive recall {m['recall_c']:.3f}  "
            f"negatives conclusive {m['neg_c']:.3f}  suspected {m['neg_s']:.3f}"
        )
    p, r, f = m["prf"]
    pc, rc, fc = m["prf_c"]
    return (
        f"  {name:<22} {label:<14} conclusive+suspected P {p:.3f} R {r:.3f} F1 {f:.3f}   "
        f"conclusive P {pc:.3f} R {rc:.3f} F1 {fc:.3f}"
    )


def webshop_audits() -> None:
    from auditor.audit.config import AuditConfig, CheckSpec
    from auditor.audit.run import run_audit

    for ev, tr in (("webshop:0:100", "webshop:100:200"), ("webshop:0:500", "webshop:500:2000")):
        cfg = AuditConfig(
            datasets={
                "test": DatasetSpec("test", [ev], role="eval"),
                "train": DatasetSpec("train", [tr], role="train"),
            },
            checks=[CheckSpec("w", train=["train"], eval=["test"], methods=["embedding"])],
            method_params={"embedding": {"cache_dir": CACHE}},
            findings_store="memory",
            index_dir=None,
        )
        rep = run_audit(cfg)
        c = rep.checks[0]
        print(f"  {ev} vs {tr}: {c['contaminated_items']} conclusive items, {c['suspected']} suspected (OUT-OF-SAMPLE)")
        goals: dict[str | int, str] = {
            r.id: r.view("query") for r in Dataset(DatasetSpec("w", ["webshop:0:2000"], role="eval")).records()
        }
        for f in rep.findings:
            if f["conclusive"]:
                e, t = goals.get(f["eval_id"]), goals.get(f["train_id"])
                print(f"    {f['score']:.3f} goal {f['eval_id']} / {f['train_id']}: {e!r} / {t!r}")


def near_duplicates() -> None:
    """Planted light-edit near-duplicates against the default methods: the fit set this benchmark always
    ran (StableToolBench + tau2, seed 0; ``IN-SAMPLE``) and the frozen held-out set
    (``OUT-OF-SAMPLE``). The whole benchmark, with its other fit sets and controls, is
    ``benchmarks/bench_near_dups.py``."""
    from bench_near_dups import fit_case, heldout_cases, score

    score("stabletoolbench+tau2", *fit_case("stabletoolbench+tau2"), "IN-SAMPLE")
    for name, (indexed, rows) in heldout_cases().items():
        score(name, indexed, rows, "OUT-OF-SAMPLE")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="files to run (held-out set or llm-decontaminator names)")
    ap.add_argument("--fit", action="store_true", help="print the grid fit on the default fit files")
    ap.add_argument("--no-lofo", action="store_true", help="skip leave-one-file-out")
    ap.add_argument("--no-near-dups", action="store_true", help="skip the planted near-duplicate run")
    ap.add_argument("--webshop", action="store_true", help="also run the WebShop audits")
    ap.add_argument("--show-negatives", action="store_true", help="print the negatives with a finding")
    ap.add_argument("--near-dups", action="store_true", help="only the planted light-edit near-duplicate run")
    ap.add_argument("--features", action="store_true", help="print each evidence part's AUC per file")
    args = ap.parse_args()
    if args.near_dups:
        near_duplicates()
        return
    names = args.only or [*HELDOUT_SETS, *UNTOUCHED, *DECON_NAMES]
    t0 = time.perf_counter()
    datas = []
    for n in names:
        x = collect(n)
        datas.append(x)
        print(f"[{n}: {len(x['rows'])} candidates scored in {x['seconds']:.1f}s]", flush=True)
    d0 = Decision()
    print(f"\nShipped defaults ({d0.describe()['rule']}), chosen on: {', '.join(DEFAULT_FIT)}")
    print(f"(untouched test sets, never fitted on: {', '.join(UNTOUCHED)})")
    for x in datas:
        print(line(x["name"], evaluate(x, d0), label(x["name"])))
    if args.features:
        print("\nEvidence parts alone, ROC AUC of right matches vs negatives / wrong-item matches (descriptive):")
        for x in datas:
            print(f"  {x['name']:<22} {label(x['name']):<14} {feature_aucs(x)}")
            if x["neg"]:
                print(f"  {'':<22} {'':<14} {oracle_bound(x)}")
    if args.show_negatives:
        for x in datas:
            for t, e, parts, code, right in x["rows"]:
                tier = d0.classify(parts, code)
                if tier and not right:
                    print(
                        f"    {x['name']} {tier} {d0.score(parts):.3f} {t.meta.get('kind')}: "
                        f"{(t.view('query') or t.view('text'))[:110]!r} -> {e.id}: {e.view('query')[:110]!r}"
                    )
    fit_datas = [x for x in datas if x["name"] not in UNTOUCHED]
    if args.fit and fit_datas:
        fitted = fit(fit_datas)
        print(f"\nGrid fit on all fit files run: {fitted.describe()['rule']}")
    if not args.no_lofo and len(fit_datas) > 1:
        print(
            "\nLeave-one-file-out (fit on the other fit files (all of them for an untouched test set), score the one left out; all OUT-OF-SAMPLE):"
        )
        for x in datas:
            d = fit([y for y in fit_datas if y is not x])
            print(line(x["name"], evaluate(x, d), "OUT-OF-SAMPLE") + f"   [fit: w_align {d.w_align:g} w_margin "
                  f"{d.w_margin:g}; text {d.conclusive:g}/{d.suspected:g}; code {d.conclusive_code:g}/{d.suspected_code:g}]")  # fmt: skip
    if args.webshop:
        print("\nWebShop audits with --method embedding (shipped defaults):")
        webshop_audits()
    if not args.no_near_dups:
        print("\nNear-duplicates:")
        near_duplicates()
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
