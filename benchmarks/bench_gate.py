"""The ``embedding`` tier's lexical gate: its threshold chosen leave-one-file-out on the paraphrase
benchmarks, the findings it loses out-of-sample (every one printed), and the share of units it stops.

Run from the repository root::

    python -m benchmarks.bench_gate                   # ~10 min cold on 2 shared cores, ~2 warm (embedding cache)
    python -m benchmarks.bench_gate --report          # reprint from the saved scans
    python -m benchmarks.bench_gate --report --table  # every threshold of GRID: losses and stop shares
    python -m benchmarks.bench_gate --only gsm8k      # one file

**Files.** The nine *fit* files the tier's decision was calibrated on (frozen held-out StableToolBench,
BFCL simple_python, WebShop, and the six llm-decontaminator rephrasing files), NESTFUL (the untouched
test set: scored once, with the parameters fitted on all nine), and the frozen long documents
(``tests/data/heldout/gate_longdocs.jsonl``, made before any gate parameter was chosen: each plants
one paraphrase of one of those ten files in multi-paragraph real filler), and GSM8K (:data:`paraphrase_data.LATE_SETS`: 250 test questions and their
llm-decontaminator rephrasings, added after the synonyms were fitted and scored once, like NESTFUL;
no long documents), and two sets written blind by helper agents in session 8 (``bfcl_irrelevance``,
``bfcl_live_irrelevance``: tests/data/heldout/README.md), each scored once as that file says.

**Method.** Each file is scanned once with the gate off (the ungated tier, shipped decision). The
gate only removes units — a unit it passes is decided exactly as without it
(``tests/test_embed_gate.py`` checks this through ``search``) — so a finding survives a gate setting
iff its unit passes, and one scan scores every threshold of the grid :data:`GRID` (the shipped rule:
synonyms at the table's floor 0.7 and whole texts of at most 8 content stems passing, neither fitted;
``dice_code`` the threshold × 2/3).

**Rule.** Among the settings that lose no *right* finding (a paraphrase matched to its own item,
conclusive or suspected) on the files fitted on, the one that stops the most units of unrelated
real text (this repository's doc paragraphs, three joined: :func:`stop_corpus`) against those files'
eval sets; ties: the lower threshold. Leave-one-file-out: each fit file (and the long
documents of its paraphrases) is scored with the rule applied to the eight others
(OUT-OF-SAMPLE); NESTFUL and its long documents with the rule on all nine (OUT-OF-SAMPLE); the
shipped default is the rule on all nine (IN-SAMPLE on them). A right finding lost to the gate is a
regression: each is printed with its text.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import time
from pathlib import Path

from benchmarks.common import HELDOUT, REPO
from benchmarks.paraphrase_data import DECON_FILES, HELDOUT_SETS, LATE_SETS, TEST_SETS

CACHE = os.environ.get("AUDITOR_EMBED_CACHE", "/tmp/auditor-bench-embeddings")
SAVED = os.environ.get("AUDITOR_GATE_SCANS", "/tmp/auditor-gate-scans.json")
FIT = (*HELDOUT_SETS, *[d[0] for d in DECON_FILES])
#: the dice thresholds scored
GRID = ["0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.2", "0.22", "0.25"]


def make_gate(setting: str):
    """The shipped gate at threshold ``setting`` (``dice_code`` scaled as shipped), judging segments as
    far as the bundled model reads them (:mod:`auditor.methods.embedding.reach`), as the embedding index's gate does."""
    from auditor.methods.embedding.gate import DICE, DICE_CODE, LexicalGate
    from auditor.methods.embedding.reach import ModelReach

    gate = LexicalGate(dice=float(setting), dice_code=float(setting) * DICE_CODE / DICE)
    gate.reach = ModelReach.bundled()
    return gate


def stop_corpus() -> list[str]:
    """Unrelated real text for the rule's stop share: this repository's doc paragraphs (20+ words),
    three joined (seeded)."""
    import random

    paras = []
    for path in sorted((REPO / "docs").glob("*.md")):
        paras += [p for p in path.read_text(encoding="utf-8").split("\n\n") if len(p.split()) >= 20]
    rng = random.Random(7)
    return ["\n\n".join(rng.sample(paras, 3)) for _ in range(200)]


def longdocs(name: str, tr: list) -> list:
    from auditor.records.record import Record

    by_ord = {t.ordinal: t for t in tr}
    out: list[Record] = []
    for line in (HELDOUT / "gate_longdocs.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["file"] == name:
            src = by_ord[d["src"]]
            meta = {**src.meta, "src": d["src"]}
            out.append(Record("longdoc", f"doc:{src.id}", f"gate_longdocs.jsonl:{name}:{d['src']}",
                              {"text": d["text"]}, meta=meta, ordinal=len(out)))  # fmt: skip
    return out


def _units(index, records) -> list[tuple]:
    """(key, view text, segment texts, is window, is code) of every unit; key = (ordinal, view, segment labels)."""
    out = []
    for t in records:
        for view, segs in index.train_units(t):
            out.append(((t.ordinal, view, tuple(s.label() for s in segs)), t.views[view],
                        [s.text for s in segs], segs[0].kind == "window", any(s.kind == "doc" for s in segs)))  # fmt: skip
    return out


def _scan(index, records, truth_of) -> tuple[list[dict], list[tuple]]:
    units = _units(index, records)
    where = {(k[0], k[1], lab): k for k, *_ in units for lab in k[2]}
    rows = []
    for i in range(0, len(records), 128):
        for f in index.search(records[i : i + 128]):
            t = records[f.train_ordinal]
            key = where[(f.train_ordinal, f.evidence["train_view"], f.evidence["train_segment"])]
            rows.append({"train": f.train_ordinal, "tier": f.evidence["tier"], "right": bool(truth_of(f, t)),
                         "unit": [key[0], key[1], list(key[2])], "eval": f.eval_id, "score": f.score})  # fmt: skip
    return rows, units


def _records(name: str):
    """(eval, renumbered training records, long documents, stop corpus, truth) of one file."""
    from bench_paraphrase import case

    from auditor.records.record import Record

    ev, tr, truth = case(name)
    tr = sorted(tr, key=lambda t: t.ordinal)
    # re-numbered so records[ordinal] is the record (the decon files skip blank lines)
    recs = [Record(t.dataset, t.id, t.source, dict(t.views), meta={**t.meta, "orig": t.ordinal}, ordinal=i)
            for i, t in enumerate(tr)]  # fmt: skip
    stop = [Record("docs", str(i), "docs", {"text": x}, ordinal=i) for i, x in enumerate(stop_corpus())]
    return ev, recs, longdocs(name, tr), stop, truth, {t.ordinal: t for t in tr}


def collect(name: str) -> dict:
    """One ungated scan of a file's short cases and long documents: every finding with its unit."""
    from auditor.methods.embedding import EmbeddingIndex

    ev, recs, docs, _stop, truth, by_ord = _records(name)
    t0 = time.perf_counter()
    index = EmbeddingIndex(cache_dir=CACHE, gate="none").build(ev)
    evk = {(e.dataset, e.ordinal): e for e in ev}
    short_rows, _ = _scan(
        index, recs, lambda f, t: truth(evk[(f.eval_dataset, f.eval_ordinal)], by_ord[t.meta["orig"]])
    )
    long_rows, _ = _scan(index, docs, lambda f, t: truth(evk[(f.eval_dataset, f.eval_ordinal)], by_ord[t.meta["src"]]))
    return {
        "name": name,
        "short": {"rows": short_rows, "pos": sum(t.meta.get("kind") == "paraphrase" for t in recs),
                  "texts": {str(r.ordinal): r.view("text") or r.view("query") for r in recs}},
        "long": {"rows": long_rows, "pos": len(docs), "texts": {str(d.ordinal): d.view("text") for d in docs}},
        "seconds": round(time.perf_counter() - t0, 1),
    }  # fmt: skip


def gate_grid(x: dict, settings=None) -> None:
    """Every grid setting's gate decisions on the file's units (no model: the gate alone)."""
    from auditor.methods.embedding import EmbeddingIndex
    from auditor.methods.embedding.gate import keep_units

    ev, recs, docs, stop, _truth, _ = _records(x["name"])
    index = EmbeddingIndex(gate="none")
    from auditor.methods.embedding.segment import segments

    c = index.config
    segs = [segments(e.view(c.eval_view), c.max_words) for e in ev]
    texts = [s.text for g in segs for s in g]  # as the index's seg_text
    code = [any(s.kind == "doc" for s in g) for g in segs for _ in g]  # the items the decision treats as code
    parts = {"short": _units(index, recs), "long": _units(index, docs), "stop": _units(index, stop)}
    grid = {}
    for setting in settings or GRID:
        gate = make_gate(setting).fit(texts, code)
        grid[setting] = {
            label: {"kept": {u[0] for u, ok in zip(units, keep_units(gate, [u[1:4] for u in units], c.max_words,
                                                                     [u[4] for u in units])) if ok},
                    "units": len(units)}
            for label, units in parts.items()
        }  # fmt: skip
    x["grid"] = grid


# -- scoring ---------------------------------------------------------------------------------------
def score(x: dict, part: str, setting: str) -> dict:
    """Recall (right conclusive+suspected / planted) ungated and gated, the lost right findings, the
    findings kept and the units stopped."""
    kept = x["grid"][setting][part]["kept"]
    units = x["grid"][setting][part]["units"] or 1
    if part == "stop":
        return {"stopped": 1 - len(kept) / units}
    rows = x[part]["rows"]
    right = {r["train"] for r in rows if r["right"]}
    right_kept = {r["train"] for r in rows if r["right"] and _key(r["unit"]) in kept}
    pos = x[part]["pos"] or 1
    lost = sorted(right - right_kept)
    return {
        "recall": len(right) / pos,
        "gated": len(right_kept) / pos,
        "lost": lost,
        "findings_kept": sum(_key(r["unit"]) in kept for r in rows),
        "findings": len(rows),
        "stopped": 1 - len(kept) / units,
    }


def _key(unit: list) -> tuple:
    """A saved finding's unit as the key :func:`_units` gives it."""
    labels = ast.literal_eval(unit[2]) if isinstance(unit[2], str) else unit[2]
    return (int(unit[0]), unit[1], tuple(labels))


def fitted(datas: list[dict]) -> str:
    """The rule (module doc) over ``datas``: short cases only."""
    ok = [s for s in GRID if all(not score(x, "short", s)["lost"] for x in datas)]
    if not datas:
        return GRID[0]
    if not ok:  # no setting loses nothing: the one that loses the fewest (reported as a loss)
        return min(GRID, key=lambda s: (sum(len(score(x, "short", s)["lost"]) for x in datas), float(s)))
    return max(ok, key=lambda s: (sum(score(x, "stop", s)["stopped"] for x in datas) / len(datas), -float(s)))


def line(x: dict, part: str, s: str, label: str) -> str:
    r = score(x, part, s)
    stop = score(x, "stop", s)["stopped"]
    return (
        f"  {x['name'] + (' [long docs]' if part == 'long' else ''):<34} {label:<14} dice={s}"
        f" recall {r['recall']:.3f} -> {r['gated']:.3f} (lost {len(r['lost'])}); findings kept "
        f"{r['findings_kept']}/{r['findings']}; units stopped {r['stopped']:.2f} (docs paragraphs {stop:.2f})"
    )


def lost_lines(x: dict, part: str, s: str) -> list[str]:
    out = []
    for o in score(x, part, s)["lost"]:
        text = x[part]["texts"][str(o)]
        out.append(f"      LOST {x['name']} {part} #{o}: {' '.join(text.split())[:160]!r}")
    return out


def report(datas: list[dict]) -> None:
    fit = [x for x in datas if x["name"] in FIT]
    print("\nLeave-one-file-out (each file scored with the rule fitted on the other fit files; OUT-OF-SAMPLE):")
    for x in datas:
        if x["name"] in TEST_SETS or x["name"] in LATE_SETS:
            continue
        s = fitted([y for y in fit if y is not x])
        for part in ("short", "long"):
            print(line(x, part, s, "OUT-OF-SAMPLE"))
            print("\n".join(lost_lines(x, part, s)) or "      (no right finding lost)")
    s = fitted(fit)
    print(f"\nRule on all {len(fit)} fit files: setting {s} (IN-SAMPLE on them):")
    for x in datas:
        label = "IN-SAMPLE" if x in fit else "OUT-OF-SAMPLE"
        for part in ("short", "long"):
            print(line(x, part, s, label if part == "short" else "OUT-OF-SAMPLE"))
            print("\n".join(lost_lines(x, part, s)) or "      (no right finding lost)")
    from auditor.methods.embedding.gate import DICE, DICE_CODE, SHORT, SYNONYMS

    print(f"\nShipped defaults: dice={DICE} dice_code={DICE_CODE} synonyms={SYNONYMS} short={SHORT}.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", action="store_true", help="score the gate on the saved scans (no model)")
    ap.add_argument("--only", nargs="*", default=None, help="files to scan (default: all ten)")
    ap.add_argument("--setting", default="", help="score only this threshold (e.g. the shipped 0.2)")
    ap.add_argument("--table", action="store_true", help="also print every threshold's losses and stop shares")
    args = ap.parse_args()
    names = args.only or [*FIT, *TEST_SETS, *LATE_SETS]
    saved = {x["name"]: x for x in json.loads(Path(SAVED).read_text())} if Path(SAVED).exists() else {}
    if not args.report:
        for n in names:
            x = saved[n] = collect(n)
            print(
                f"[{n}: {len(x['short']['rows'])} findings short, {len(x['long']['rows'])} long; {x['seconds']} s]",
                flush=True,
            )
        Path(SAVED).write_text(json.dumps(list(saved.values())))
    datas = [saved[n] for n in names if n in saved]
    one = [args.setting] if args.setting else None
    for x in datas:
        x.pop("grid", None)
        gate_grid(x, one or GRID)
    if one:
        print(f"Setting {args.setting} (fitted on the nine fit files: IN-SAMPLE on them, OUT-OF-SAMPLE elsewhere):")
        for x in datas:
            for part in ("short", "long"):
                label = "IN-SAMPLE" if x["name"] in FIT and part == "short" else "OUT-OF-SAMPLE"
                print(line(x, part, args.setting, label))
                print("\n".join(lost_lines(x, part, args.setting)) or "      (no right finding lost)")
        return
    if args.table:
        table(datas)
    report(datas)


def table(datas: list[dict]) -> None:
    """Every grid setting: right findings lost per fit file (IN-SAMPLE: no fit) and units stopped."""
    print("Every threshold: right findings lost (short / long docs) per file, units stopped (docs paragraphs):")
    for s in GRID:
        lost = [f"{len(score(x, 'short', s)['lost'])}/{len(score(x, 'long', s)['lost'])}" for x in datas]
        stop = sum(score(x, "stop", s)["stopped"] for x in datas) / len(datas)
        own = sum(score(x, "short", s)["stopped"] for x in datas) / len(datas)
        print(f"  {s:<18} lost {' '.join(lost)}; stopped: docs {stop:.2f}, the files' own records {own:.2f}")
    print("  files: " + ", ".join(x["name"] for x in datas))


if __name__ == "__main__":
    main()
