"""Where the lexical gate's stop share ends, and what a first stage after it could still stop: the
ceilings behind issue 25's targets (the gate stopping >= 90 % of a 100 MB corpus's segments, the tier
>= 10x faster than encoding every segment), measured on both corpora of ``bench_paraphrase_scale.py``.

Run from the repository root (~20 min on 2 shared cores)::

    python benchmarks/bench_gate.py               # once: the ungated scans of the ten files (saved)
    python benchmarks/bench_gate_ceiling.py       # both parts, both corpora
    python benchmarks/bench_gate_ceiling.py --part tighten --corpus main

**Part 1, tightening the dice rule** (``--part tighten``; no model): the shipped rule (its dice threshold and synonyms, by
segment) and two ways to ask more of a pair, each alone: ``cover C`` (the text holds at least ``C`` of
the item's weight: :class:`auditor.embed.gate.LexicalGate` ``cover``) and ``common N`` (they share at
least ``N`` distinct content stems, ``common``). Per setting: the right findings (a paraphrase matched
to its own item, conclusive or suspected, ungated tier) each fit file and NESTFUL would lose, scored
as ``bench_gate.py`` scores a setting (IN-SAMPLE: no threshold is fitted here), and the share of each
corpus's segments stopped.

**Part 2, a first stage after the gate** (``--part first-stage``): a seeded random sample of the
segments the shipped gate passes on each corpus; each encoder's best cosine of a sampled segment to
the corpus's eval set (1,665 items), and of each right finding's unit of the nine fit files to its
file's eval set. A first stage may stop only what is below every right finding: its threshold is the
lowest right score on the fit files (text files and code files apart; a code segment is held to the
code one) minus :data:`MARGIN` (IN-SAMPLE threshold on the fit files; the corpora are
OUT-OF-SAMPLE). Encoders: MiniLM itself (the oracle — a first stage as good as the model; free of
cost it is not), its first 1, 2 and 3 layers (the same weights, fewer layers: the cheapest model
this machine has that is not a bag of words), and the model2vec static model of the prefilter
(extra ``prefilter``; left out, saying so, where absent). Printed per encoder: the share of the
passed sample stopped; its encoding seconds on the sample relative to the 6 layers' (torch, same
run); and the tier's speed-up bound over encoding every segment at the whole corpus's passed share
``p``: ``1 / (p * (cost + (1 - stopped)))`` (the gate's own seconds left out).

The bound is optimistic: a right finding's score here is its unit's best (under ``gate_by =
"segment"`` only some of a unit's segments may be read), and a pair of which one side only is code is
held to the code bar. Built with both corrected (commit a25f5d5, reverted in 780bcf5), the first
layer stopped 18.5 % of what the gate passes on the main corpus and made the tier no faster
(benchmarks/results/HISTORY.md, "The gate's ceiling: a one-layer prefilter, built, measured end to end, reverted").
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_prefilter import MARGIN  # noqa: E402

SEED = 11
#: part 1's settings: (label, cover, common), each at the shipped dice thresholds
TIGHTEN = [
    ("shipped", 0, 1),
    ("cover 0.1", 0.1, 1),
    ("cover 0.2", 0.2, 1),
    ("cover 0.3", 0.3, 1),
    ("common 2", 0, 2),
]
LAYERS = (1, 2, 3)


def _gate():
    """The shipped dice gate."""
    from auditor.embed.gate import LexicalGate
    from auditor.methods.embedding import GATE_DICE, GATE_DICE_CODE, GATE_SYNONYMS

    return LexicalGate(rule="dice", dice=GATE_DICE, dice_code=GATE_DICE_CODE, synonyms=GATE_SYNONYMS)


def _eval_segments(ev, config):
    from auditor.embed.segment import segments

    segs = [segments(e.view(config.eval_view), config.max_words) for e in ev]
    return [s.text for g in segs for s in g], [any(s.kind == "doc" for s in g) for g in segs for _ in g]


def corpus_segments(which: str, mb: float):
    """Every segment of the corpus as the encoder would read it (its first ``max_words`` words), with
    its record's source and whether its unit is code; and the eval segments."""
    from bench_paraphrase_scale import corpus, eval_items

    from auditor.methods.embedding import EmbeddingIndex

    records, _by_source, _ = corpus(mb, which)
    index = EmbeddingIndex(gate="none")
    c = index.config
    flat, src, code = [], [], []
    for t in records:
        for _v, g in index.train_units(t):
            is_code = any(s.kind == "doc" for s in g)
            for s in g:
                flat.append(" ".join(s.text.split()[: c.max_words]))
                src.append(t.meta.get("source", "planted"))
                code.append(is_code)
    return flat, src, code, _eval_segments(eval_items(), c)


def passes(gate, flat, code) -> np.ndarray:
    out = np.zeros(len(flat), dtype=bool)
    for i in range(0, len(flat), 4096):
        out[i : i + 4096] = gate.passes(flat[i : i + 4096], code=code[i : i + 4096])
    return out


def tighten(corpora: list[str], mb: float) -> None:
    import bench_gate as bg

    saved = json.loads(Path(bg.SAVED).read_text())
    print("Part 1: tightening the dice rule (right findings lost: IN-SAMPLE, nothing fitted; corpora: by segment)")
    print("  files: " + ", ".join(x["name"] for x in saved))
    segs = {w: corpus_segments(w, mb) for w in corpora}
    from auditor.methods.embedding import GATE_DICE, GATE_DICE_CODE, GATE_SYNONYMS

    for label, cover, common in TIGHTEN:
        setting = f"dice:{GATE_DICE},{GATE_DICE_CODE},{cover},{common},{GATE_SYNONYMS}"  # bench_gate's setting string
        lost = []
        for x in saved:
            bg.gate_grid(x, [setting])
            lost.append(len(bg.score(x, "short", setting)["lost"]) + len(bg.score(x, "long", setting)["lost"]))
        stops = []
        for w, (flat, _src, code, (etexts, ecode)) in segs.items():
            ok = passes(bg.make_gate(setting).fit(etexts, ecode), flat, code)
            stops.append(f"{w} {1 - ok.mean():.3f}")
        print(f"  {label:<20} right findings lost {' '.join(map(str, lost))} (total {sum(lost)}); "
              f"segments stopped: {', '.join(stops)}", flush=True)  # fmt: skip


# -- part 2 ----------------------------------------------------------------------------------------
def encoders() -> dict:
    """name -> encode(texts) of L2-normalized vectors: MiniLM (6 layers), its first layers, static."""
    import torch

    from auditor.embed.model import load_model

    torch.set_num_threads(2)
    full = load_model("bundled")
    out = {}

    def st(model):
        def enc(texts):
            return model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

        return enc

    for k in LAYERS:
        m = copy.deepcopy(full)
        m[0].auto_model.encoder.layer = m[0].auto_model.encoder.layer[:k]
        out[f"MiniLM first {k} layer{'s' if k > 1 else ''}"] = st(m)
    out["MiniLM (6 layers, the oracle)"] = st(full)
    try:
        from auditor.embed.prefilter import load_static_encoder

        static = load_static_encoder()

        def senc(texts):
            v = static.encode(list(texts))
            return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

        out["model2vec static (prefilter)"] = senc
    except Exception as e:  # an absent extra (MissingDependencyError) or a failed build: said, left out
        print(f"  (model2vec static model left out: {e})")
    return out


def right_scores(encs: dict) -> dict:
    """name -> {file: [best cosine of each right finding's unit to the file's eval set]} (nine fit files)."""
    import bench_gate as bg

    from auditor.methods.embedding import EmbeddingIndex

    saved = {x["name"]: x for x in json.loads(Path(bg.SAVED).read_text())}
    out: dict = {n: {} for n in encs}
    for name in bg.FIT:
        ev, recs, _docs, _stop, _truth, _ = bg._records(name)
        index = EmbeddingIndex(gate="none")
        etexts, _ = _eval_segments(ev, index.config)
        units = {u[0]: u for u in bg._units(index, recs)}
        right = list(dict.fromkeys(bg._key(r["unit"]) for r in saved[name]["short"]["rows"] if r["right"]))
        flat = [t for k in right for t in units[k][2]]
        owner = np.array([i for i, k in enumerate(right) for _ in units[k][2]])
        for n, enc in encs.items():
            best = (enc(flat) @ enc(etexts).T).max(axis=1)
            per = np.full(len(right), -1.0)
            np.maximum.at(per, owner, best)
            out[n][name] = per.tolist()
    return out


def first_stage(corpora: list[str], mb: float, sample: int) -> None:
    print(f"\nPart 2: a first stage after the gate (a sample of {sample} passed segments per corpus; "
          f"threshold = lowest right score on the nine fit files - {MARGIN}: IN-SAMPLE there, corpora OUT-OF-SAMPLE)")  # fmt: skip
    encs = encoders()
    rights = right_scores(encs)
    bars = {}
    for n, files in rights.items():
        text = min(min(v) for f, v in files.items() if not f.startswith("humaneval"))
        code = min(min(v) for f, v in files.items() if f.startswith("humaneval"))
        bars[n] = (text - MARGIN, code - MARGIN)
        print(f"  {n:<32} lowest right score: text files {text:.3f}, code files {code:.3f}")
    for w in corpora:
        flat, src, code, (etexts, ecode) = corpus_segments(w, mb)
        ok = passes(_gate().fit(etexts, ecode), flat, code)
        share = float(ok.mean())
        picked = [i for i in range(len(flat)) if ok[i]]
        random.Random(SEED).shuffle(picked)
        picked = sorted(picked[:sample])
        texts = [flat[i] for i in picked]
        is_code = np.array([code[i] for i in picked])
        print(f"\n  {w} corpus: {len(flat)} segments, the gate passes {ok.sum()} ({share:.3f}); "
              f"every segment encoded = x1, the gate alone bounds x{1 / share:.1f}")  # fmt: skip
        secs = {}
        for n, enc in encs.items():
            e = enc(etexts)
            t0 = time.perf_counter()
            v = enc(texts)
            secs[n] = time.perf_counter() - t0
            best = (v @ e.T).max(axis=1)
            bar = np.where(is_code, bars[n][1], bars[n][0])
            stopped = float((best < bar).mean())
            secs[n, "stopped"] = stopped
        base = secs["MiniLM (6 layers, the oracle)"]
        for n in encs:
            cost = secs[n] / base
            stopped = secs[n, "stopped"]
            bound = 1 / (share * ((cost if "oracle" not in n else 0) + (1 - stopped)))
            note = " (cost not counted: the model itself)" if "oracle" in n else ""
            print(f"    {n:<32} stops {stopped:.3f} of the passed sample; cost {cost:.2f} of MiniLM's; "
                  f"tier bound x{bound:.1f}{note}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("tighten", "first-stage", "both"), default="both")
    ap.add_argument("--corpus", nargs="*", choices=("main", "heldout"), default=["main", "heldout"])
    ap.add_argument("--mb", type=float, default=110.0)
    ap.add_argument("--sample", type=int, default=1200, help="passed segments encoded per corpus (part 2)")
    args = ap.parse_args()
    if args.part in ("tighten", "both"):
        tighten(args.corpus, args.mb)
    if args.part in ("first-stage", "both"):
        first_stage(args.corpus, args.mb, args.sample)


if __name__ == "__main__":
    main()
