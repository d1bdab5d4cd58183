"""Planted light-edit near-duplicates against the default methods: a fit set and a frozen held-out set.

Run from the repository root (under a minute on 2 shared cores)::

    python -m benchmarks.bench_near_dups              # fit set (in-sample), held-out set, controls
    python -m benchmarks.bench_near_dups --misses     # also print every missed plant and false finding
    python -m benchmarks.bench_near_dups --freeze     # (re)write the held-out file: done ONCE, before tuning

A *light edit* (:func:`light_edit`, issue 25's definition): 1–2 words dropped, two neighbours swapped,
case and punctuation changed, a courtesy phrase at the start or the end; kept only where the word-set
Jaccard with the item stays >= 0.8, items of >= 8 words. Each case indexes half of a benchmark's items
(shuffled with the seed) and plants, as chat records, light edits of the indexed half (must be found,
conclusively, matched to their own item) and of the other half (**same-topic negatives**: other items
of the same benchmark — other StableToolBench queries, other BFCL items on the same APIs, other WebShop
goals — edited the same way; a conclusive finding for one is false unless the unedited item is itself
within word-set Jaccard 0.8 of the item found, a near-duplicate inside the benchmark, printed apart).

Sets:

- **fit** (``IN-SAMPLE``): StableToolBench + tau2 retail + airline queries, seed 0 (the set
  ``bench_paraphrase.py --near-dups`` always ran), plus BFCL v1, NESTFUL and ToolAlpaca, seed 0: the
  misses of these were read while the change was designed.
- **held-out** (``OUT-OF-SAMPLE``): ``tests/data/heldout/light_edits.jsonl``, written by ``--freeze``
  (seed 25) and committed before any method was changed; never read while tuning. Sources no fit set
  uses: BFCL v4's user-contributed ``live_*`` items (``live_simple``, ``live_multiple``,
  ``live_parallel``, ``live_parallel_multiple``, ``live_relevance``, ``live_irrelevance``: none is in
  BFCL v1) and WebShop goals 3000–12087 (short items: 8–20 words), at most 1,500 items of each.

Controls (must stay at 0 conclusive): Tool-MVR's public training samples (``training_data/*.json``) against StableToolBench, WebShop
goals 0:100 against 100:200 (skipped, saying so, where ``../shared/data`` lacks Tool-MVR).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from pathlib import Path

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.text.normalize import tokens
from benchmarks.common import HELDOUT, SHARED

HELDOUT_FILE = HELDOUT / "light_edits.jsonl"
HELDOUT_SEED = 25
HELDOUT_PER_SOURCE = 1500
BFCL_LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_relevance",
    "live_irrelevance",
)
FIT_SETS = {  # name: (bundled dataset specs, seed)
    "stabletoolbench+tau2": (("stabletoolbench", "tau2-retail", "tau2-airline"), 0),
    "bfcl-v1": (("bfcl-v1",), 0),
    "nestful": (("nestful",), 0),
    "toolalpaca": (("toolalpaca",), 0),
}
COURTESY = ("Thanks a lot!", "Please help.", "Thank you in advance.", "Could you help me?")


def light_edit(text: str, rng: random.Random) -> str:
    """Drop 1–2 words, swap two neighbours, recase and repunctuate, add a courtesy phrase at either end.

    >>> light_edit("Book a table for two at Nopa in San Francisco tonight at 8 pm", random.Random(1))
    'book table a for two at nopa in san tonight at 8 pm Could you help me?'
    """
    words = text.split()
    for _ in range(rng.randint(1, 2)):
        if len(words) > 8:
            del words[rng.randrange(len(words))]
    i = rng.randrange(len(words) - 1)
    words[i], words[i + 1] = words[i + 1], words[i]
    out = " ".join(words)
    out = out.lower() if rng.random() < 0.5 else out.upper() if rng.random() < 0.2 else out
    out = re.sub(r"[,.!?]", lambda m: rng.choice([";", "", m.group()]), out)
    phrase = rng.choice(COURTESY)
    return f"{phrase} {out}" if rng.random() < 0.5 else f"{out} {phrase}"


def word_jaccard(a: str, b: str) -> float:
    x, y = set(tokens(a)), set(tokens(b))
    return len(x & y) / len(x | y) if x | y else 0.0


def eligible(items: list[str]) -> list[str]:
    """Distinct texts of at least 8 words (whitespace words and distinct tokens)."""
    return [t for t in dict.fromkeys(items) if t and len(t.split()) >= 8 and len(set(tokens(t))) >= 8]


def make_case(items: list[str], rng: random.Random, source: str = "") -> tuple[list[str], list[dict]]:
    """Shuffle, index half, plant light edits of both halves: ``(indexed items, plant rows)``; a row is
    ``{"kind": "planted" | "negative", "item": position in its half, "text": edited text, ...}``."""
    items = list(items)
    rng.shuffle(items)
    half = len(items) // 2
    indexed, held = items[:half], items[half:]
    rows = []
    for kind, pool in (("planted", indexed), ("negative", held)):
        for i, t in enumerate(pool):
            e = light_edit(t, rng)
            if word_jaccard(t, e) < 0.8:
                continue
            rows.append({"source": source, "kind": kind, "item": i, "original": t, "text": e})
    return indexed, rows


def bundled_items(specs: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for spec in specs:
        out += [r.view("query") for r in Dataset(DatasetSpec("x", [spec], role="eval")).records()]
    return out


def fit_case(name: str) -> tuple[list[str], list[dict]]:
    specs, seed = FIT_SETS[name]
    return make_case(eligible(bundled_items(specs)), random.Random(seed), name)


def freeze(path: Path = HELDOUT_FILE) -> None:
    """Write the held-out set: one JSON line per eval item (``{"eval": ...}``) and per plant."""
    rng = random.Random(HELDOUT_SEED)
    bfcl = [r for r in Dataset(DatasetSpec("x", ["bfcl"], role="eval")).records() if r.id.rsplit("_", 1)[0].split("-")[0] in BFCL_LIVE]  # fmt: skip
    pools = {
        "bfcl-v4-live": eligible([r.view("query") for r in bfcl]),
        "webshop-3000-12087": eligible(bundled_items(("webshop:3000:12087",))),
    }
    lines = []
    for source, pool in pools.items():
        pool = rng.sample(pool, min(HELDOUT_PER_SOURCE, len(pool)))
        indexed, rows = make_case(pool, rng, source)
        lines += [{"source": source, "eval": i, "text": t} for i, t in enumerate(indexed)]
        lines += [{k: r[k] for k in ("source", "kind", "item", "text", "original")} for r in rows]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    print(f"wrote {path} ({len(lines)} lines, seed {HELDOUT_SEED})")


def heldout_cases(path: Path = HELDOUT_FILE) -> dict[str, tuple[list[str], list[dict]]]:
    cases: dict[str, tuple[list[str], list[dict]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        x = json.loads(line)
        indexed, rows = cases.setdefault(x["source"], ([], []))
        if "eval" in x:
            indexed.append(x["text"])
        else:
            rows.append(x)
    return cases


def audit(indexed: list[str], rows: list[dict]):
    """Run the default methods: eval = ``indexed`` (jsonl), train = one chat record per plant row."""
    with tempfile.TemporaryDirectory() as tmp:
        ev, tr = Path(tmp) / "eval.jsonl", Path(tmp) / "train.jsonl"
        ev.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(indexed)))
        chats = [{"messages": [{"role": "user", "content": r["text"]}, {"role": "assistant", "content": "ok"}]} for r in rows]  # fmt: skip
        tr.write_text("".join(json.dumps(c) + "\n" for c in chats))
        cfg = AuditConfig(
            datasets={
                "e": DatasetSpec("e", [str(ev)], role="eval", format="jsonl", text_field="text", id_field="id"),
                "t": DatasetSpec("t", [str(tr)], role="train", format="chat"),
            },
            checks=[CheckSpec("nd", train=["t"], eval=["e"])],
            findings_store="memory",
            index_dir=None,
        )
        return run_audit(cfg)


def score(name: str, indexed: list[str], rows: list[dict], label: str, misses: bool = False) -> dict:
    rep = audit(indexed, rows)
    conclusive = {(f["train_ordinal"], int(f["eval_id"])) for f in rep.findings if f["conclusive"]}
    anyf = {(f["train_ordinal"], int(f["eval_id"])): f for f in rep.findings}
    planted = [(j, r["item"]) for j, r in enumerate(rows) if r["kind"] == "planted"]
    negs = {j for j, r in enumerate(rows) if r["kind"] == "negative"}
    found = [p for p in planted if p in conclusive]
    either = [p for p in planted if p in anyf]
    neg_hits: dict[int, list[int]] = {}
    for j, e in conclusive:
        if j in negs:
            neg_hits.setdefault(j, []).append(e)
    # a negative whose edit is within word-set Jaccard 0.8 of the item found is a near-duplicate of it
    twins = {j for j, es in neg_hits.items() if max(word_jaccard(rows[j]["text"], indexed[e]) for e in es) >= 0.8}
    false = sorted(set(neg_hits) - twins)
    print(
        f"  {name:<22} {label:<14} recall {len(found)}/{len(planted)} = {len(found) / max(1, len(planted)):.3f} conclusive "
        f"({len(either)} with any finding); negatives {len(negs)}: conclusive {len(neg_hits)} "
        f"(near-duplicates of the item found {len(twins)}, false {len(false)})"
    )
    if misses:
        for j, i in planted:
            if (j, i) not in conclusive:
                f = anyf.get((j, i))
                how = f"{f['method']} {f['score']:.3f} suspected" if f else "no finding"
                print(f"      MISS [{how}] {indexed[i][:110]!r}\n           -> {rows[j]['text'][:110]!r}")
        for j in sorted(neg_hits):
            kind = "twin " if j in twins else "FALSE"
            e = neg_hits[j][0]
            print(f"      {kind} negative {rows[j]['text'][:100]!r}\n           -> eval {e}: {indexed[e][:100]!r}")
    return {"recall": len(found) / max(1, len(planted)), "false": len(false), "planted": len(planted)}


def same_topic() -> None:
    """The hand-written same-topic negatives of ``tests/data/heldout/*.tsv`` (same persona, template or
    values, another request) against their eval sets, default methods: conclusive findings for them
    (any eval item; the paraphrases, rewordings, are the embedding tier's and are counted apart)."""
    from benchmarks.paraphrase_data import HELDOUT_SETS, TEST_SETS, heldout_case

    for name in (*HELDOUT_SETS, *TEST_SETS):
        ev, tr, truth = heldout_case(name)
        with tempfile.TemporaryDirectory() as tmp:
            evf, trf = Path(tmp) / "eval.jsonl", Path(tmp) / "train.jsonl"
            evf.write_text(
                "".join(json.dumps({"id": str(i), "text": e.view("query")}) + "\n" for i, e in enumerate(ev))
            )
            trf.write_text(
                "".join(json.dumps({"messages": [{"role": "user", "content": t.view("query")}]}) + "\n" for t in tr)
            )
            cfg = AuditConfig(
                datasets={
                    "e": DatasetSpec("e", [str(evf)], role="eval", format="jsonl", text_field="text", id_field="id"),
                    "t": DatasetSpec("t", [str(trf)], role="train", format="chat"),
                },
                checks=[CheckSpec("st", train=["t"], eval=["e"])],
                findings_store="memory",
                index_dir=None,
            )
            rep = run_audit(cfg)
        kinds = {"negative": [0, 0], "paraphrase": [0, 0]}
        own: set[int] = set()
        for f in rep.findings:
            t = tr[f["train_ordinal"]]
            right = truth(ev[int(f["eval_id"])], t)
            if not right:
                kinds[t.meta["kind"]][0 if f["conclusive"] else 1] += 1
            elif t.meta["kind"] == "paraphrase":
                own.add(f["train_ordinal"])
        n = sum(t.meta["kind"] == "negative" for t in tr)
        print(f"  {name:<20} negatives {n}: wrong findings conclusive {kinds['negative'][0]}, suspected {kinds['negative'][1]}; "
              f"paraphrases matched to another item: conclusive {kinds['paraphrase'][0]}, suspected {kinds['paraphrase'][1]} "
              f"(to their own item: {len(own)}, the embedding tier's job)")  # fmt: skip


def bfcl_versions() -> None:
    """BFCL v4 (every category) against BFCL v1, both ways, default methods: the counts, and every
    finding of the minhash suspected band (a rewording that keeps the item's values), for inspection."""
    for ev, tr in (("bfcl", "bfcl-v1"), ("bfcl-v1", "bfcl")):
        cfg = AuditConfig(
            datasets={"t": DatasetSpec("t", [tr], role="train"), "e": DatasetSpec("e", [ev], role="eval")},
            checks=[CheckSpec("c", train=["t"], eval=["e"])],
            findings_store="memory",
            index_dir=None,
        )
        rep = run_audit(cfg)
        c = rep.checks[0]
        band = [f for f in rep.findings if f["method"] == "minhash" and f["evidence"].get("tier") == "suspected" and f["evidence"]["measure"] == "jaccard"]  # fmt: skip
        print(f"  eval {ev} / train {tr}: {c['contaminated_items']} conclusive items, {c['suspected']} suspected only; "
              f"minhash suspected-band findings {len(band)}:")  # fmt: skip
        for f in band:
            print(f"    {f['eval_id']} / {f['train_id']} (3-gram Jaccard {f['score']:.3f})")


def controls() -> None:
    mvr = sorted((SHARED / "tool-mvr" / "data" / "training_data").glob("*.json"))
    pairs = [("webshop 0:100 vs 100:200", ["webshop:100:200"], "webshop:0:100", None)]
    if mvr:
        pairs.insert(0, ("Tool-MVR vs StableToolBench", [str(p) for p in mvr], "stabletoolbench", None))
    else:
        print("  Tool-MVR control skipped: ../shared/data/tool-mvr/data/training_data is absent")
    for name, train, ev, fmt in pairs:
        cfg = AuditConfig(
            datasets={
                "t": DatasetSpec("t", train, role="train", format=fmt),
                "e": DatasetSpec("e", [ev], role="eval"),
            },
            checks=[CheckSpec("c", train=["t"], eval=["e"])],
            findings_store="memory",
            index_dir=None,
        )
        rep = run_audit(cfg)
        c = rep.checks[0]
        ids = sorted({f["eval_id"] for f in rep.findings if f["conclusive"]})
        print(f"  {name}: {c['contaminated_items']} conclusive items {ids[:8]}, {c['suspected']} suspected")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--freeze", action="store_true", help="write the held-out file (once, before tuning)")
    ap.add_argument("--misses", action="store_true", help="print every miss and every negative found")
    ap.add_argument("--no-controls", action="store_true")
    ap.add_argument("--fit-only", action="store_true", help="only the fit sets (while tuning)")
    args = ap.parse_args()
    if args.freeze:
        freeze()
        return
    t0 = time.perf_counter()
    print("Planted light edits, default methods (recall = conclusive finding for the plant's own item):")
    for name in FIT_SETS:
        score(name, *fit_case(name), "IN-SAMPLE", args.misses)
    for name, (indexed, rows) in ({} if args.fit_only else heldout_cases()).items():
        score(name, indexed, rows, "OUT-OF-SAMPLE", args.misses)
    print("Same-topic negatives written by hand (tests/data/heldout/*.tsv), default methods (OUT-OF-SAMPLE):")
    same_topic()
    if not args.no_controls:
        print("BFCL v4 against v1 (default methods):")
        bfcl_versions()
        print("Clean controls (default methods):")
        controls()
    print(f"total {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
