"""The lexical gate by unit against by segment (``EmbeddingConfig.gate_by``): real scans of each
paraphrase benchmark file, findings compared one by one with the ungated tier's.

Run from the repository root (~2.5 min on 2 shared cores with a warm embedding cache, longer cold)::

    python benchmarks/bench_gate_by.py                    # the nine fit files and NESTFUL, shipped thresholds
    python benchmarks/bench_gate_by.py --dice 0.16 "mmlu sociology"   # one file at another threshold

By unit the gate only removes units (a passed unit is decided exactly as ungated, so
``bench_gate.py`` scores it from one ungated scan); by segment a passed unit is decided on the
segments that pass, so each mode is scanned for real here. Per file: findings of the ungated tier
lost, findings only the gated tier makes (a re-scored pair counts as one lost and one new), and the
*right* pairs (a paraphrase matched to its own item, short cases and long documents) of which no
right finding is left — each printed. Which files are in-sample: see ``bench_gate.py`` (the shipped
threshold was fitted on all nine fit files; NESTFUL is untouched).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_gate as G  # noqa: E402


def _key(f) -> tuple:
    e = f.evidence
    return (
        f.eval_dataset,
        f.eval_id,
        f.train_ordinal,
        e["tier"],
        round(f.score, 6),
        e["train_segment"],
        e["train_view"],
    )


def scan(name: str, params: dict) -> dict[tuple, bool]:
    """Every finding of one file (short cases and long documents) with whether it is right."""
    from auditor.methods.embedding import EmbeddingIndex

    ev, recs, docs, _stop, truth, by_ord = G._records(name)
    evk = {(e.dataset, e.ordinal): e for e in ev}
    index = EmbeddingIndex(cache_dir=G.CACHE, **params).build(ev)
    out: dict[tuple, bool] = {}
    for part, records, src in (("short", recs, "orig"), ("long", docs, "src")):
        for i in range(0, len(records), 128):
            for f in index.search(records[i : i + 128]):
                t = records[f.train_ordinal]
                out[(part, *_key(f))] = bool(truth(evk[(f.eval_dataset, f.eval_ordinal)], by_ord[t.meta[src]]))
    return out


def main() -> None:
    from auditor.methods.embedding import GATE_DICE, GATE_DICE_CODE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="benchmark files (default: the nine fit files and NESTFUL)")
    ap.add_argument("--dice", type=float, default=GATE_DICE, help="gate_dice (gate_dice_code scaled alike)")
    args = ap.parse_args()
    dice = {"gate_dice": args.dice, "gate_dice_code": round(args.dice * GATE_DICE_CODE / GATE_DICE, 4)}
    total = {"unit": 0, "segment": 0}
    for name in args.files or [*G.FIT, *G.TEST_SETS]:
        t0 = time.perf_counter()
        base = scan(name, {"gate": "none"})
        right = {(k[0], k[2], k[3]) for k, r in base.items() if r}
        cells = []
        for mode in ("unit", "segment"):
            got = scan(name, {"gate": "lexical", "gate_by": mode, **dice})
            kept = {(k[0], k[2], k[3]) for k, r in got.items() if r}
            lost_right = sorted(right - kept)
            total[mode] += len(lost_right)
            lost = sum(1 for k in base if k not in got)
            new = sum(1 for k in got if k not in base)
            cells.append(f"{mode}: right pairs lost {len(lost_right)}, findings lost {lost}, new {new}")
            for k in lost_right:
                print(f"  RIGHT LOST by {mode}: {name} {k}")
        print(f"{name:24s} right pairs {len(right):4d} | " + " | ".join(cells) + f" ({time.perf_counter() - t0:.0f} s)")
    print(f"right pairs lost at gate_dice {args.dice}: by unit {total['unit']}, by segment {total['segment']}")


if __name__ == "__main__":
    main()
