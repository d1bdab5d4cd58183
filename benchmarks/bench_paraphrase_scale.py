"""The embedding tier at corpus scale: MB/s with the lexical gate against encoding every segment, on
a realistic agent corpus of >= 100 MB with planted paraphrases, side by side in one run, findings compared.

Run from the repository root (2 shared cores: ~3 min at the default sample, ~8 at 1.5 %)::

    python -m benchmarks.bench_paraphrase_scale                  # 110 MB, sample 0.4 % + planted records
    python -m benchmarks.bench_paraphrase_scale --full           # also encode what the gate passes (hours)
    python -m benchmarks.bench_paraphrase_scale --mb 5 --sample 0.05   # a quick look
    python -m benchmarks.bench_paraphrase_scale --gate-only      # the shipped gate alone, no model (~1.5 min)
    python -m benchmarks.bench_paraphrase_scale --corpus heldout # the held-out corpus

**Eval set**: the eval items of the three frozen held-out fit sets together — StableToolBench's 765
solvable test queries, BFCL v4 simple_python's 400 questions, WebShop goals 0:500 (1,665 items).

**Corpus** (``--mb``, default 110; built in memory, seeded): agent data from ``../shared/data`` —
StepTool trajectories (SFT conversations, step-grained PPO and RFT rows), Tool-MVR samples (training
samples, RefineToolBench, output cases), Glaive function-calling demos (LLaMA-Factory), ToolBench and
StableToolBench ``data_example`` answer trees: each top-level record one training record, its strings
joined — padded with real filler read from this machine, in this order until the size is reached:
Debian package changelogs (``/usr/share/doc/*/changelog*.gz``), Markdown / reST / text documentation
and package metadata of the installed Python packages, and Python source files of the standard
library and the installed packages. Filler files are cut into records of at most 2,000 words. Planted:
the 150 held-out paraphrases of the three sets (``tests/data/heldout``) — a third alone as a record,
a third appended as a user turn to an agent record, a third as a paragraph in the middle of a
documentation record. StepTool and Tool-MVR have no licence: read from ``../shared/data`` only, and
left out (saying so) where absent.

**Held-out corpus** (``--corpus heldout``, built after the gate's rules were chosen on the one above, to
report on text none of them was looked at on): ToolAlpaca, tau-bench trajectories, API-Bank and APIBench
questions from ``../shared/data``, padded with Debian copyright files, manual pages, Perl modules and
the system Python's packages (:func:`filler_sources`); the same eval set and planted paraphrases
(doc paragraphs go into manual pages).

**Runs** (one process, in-process search, batches of 256 records, embedding cache in memory for
each run): per batch the exact and n-gram tiers search first (so the gate finds the batch's token
batch built, as in a scan), then the gate (``gate = "lexical"``, the default) alone over the whole corpus (its decisions and cost; with
``--full`` the gated tier also encodes and decides what it passes).
Encoding every segment of 100 MB on 2 shared cores takes hours, so the **ungated** tier
(``gate = "none"``) runs on a random sample of the corpus's records (``--sample``, seed 25) and on
every record holding a planted paraphrase; its MB/s is the sample's bytes over its seconds
(extrapolated to the corpus), and the gated tier is timed on the same sample too; the gated
tier's whole-corpus time is extrapolated as every-segment time × the share of segments the gate
passed over the whole corpus, plus the gate's measured time. Findings of both
are compared exactly on the sample and the planted records: every finding the ungated tier makes
there that the gated one does not is printed (a regression), and so is every planted paraphrase.
"""

from __future__ import annotations

import argparse
import csv
import glob
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import cast

from auditor.records.record import Record
from benchmarks.common import HELDOUT, SHARED
from benchmarks.paraphrase_data import HELDOUT_SETS, heldout_eval

SEED = 25
MAX_WORDS = 2000
AGENT = {
    "StepTool trajectories": ["steptool/data_train/**/*.json", "steptool/data_train/**/*.csv", "steptool/data/**/*.json"],
    "Tool-MVR samples": ["tool-mvr/data/**/*.json"],
    "Glaive demos (LLaMA-Factory)": ["llama-factory/data/glaive_toolcall_en_demo.json"],
    "ToolBench answers": ["toolbench/data_example/answer/**/*.json", "stabletoolbench/data_example/answer/**/*.json"],
}  # fmt: skip
#: the held-out corpus's agent data (``--corpus heldout``): function-calling and agent sets the gate's rule
#: was never looked at on, none of them an eval set here
AGENT_HELDOUT = {
    "ToolAlpaca": ["toolalpaca/data/*.json"],
    "tau-bench trajectories": ["tau-bench/historical_trajectories/*.json", "tau-bench/few_shot_data/*.jsonl"],
    "API-Bank": ["damo-convai/api-bank/**/*.json"],
    "APIBench questions": ["gorilla/gorilla/eval/eval-data/questions/**/*.jsonl"],
}  # fmt: skip


def _strings(obj, out: list[str]) -> None:
    if isinstance(obj, str):
        if obj.strip():
            out.append(obj.strip())
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _strings(v, out)


def agent_texts(sources: dict[str, list[str]] = AGENT) -> tuple[dict[str, list[str]], list[str]]:
    """Agent records by source (each top-level record's strings joined), and the sources absent here."""
    out: dict[str, list[str]] = {}
    absent = []
    for name, patterns in sources.items():
        texts: list[str] = []
        for pattern in patterns:
            for path in sorted(glob.glob(str(SHARED / pattern), recursive=True)):
                if path.endswith(".jsonl"):
                    for line in Path(path).read_text(encoding="utf-8").splitlines():
                        parts: list[str] = []
                        _strings(json.loads(line) if line.strip() else "", parts)
                        if parts:
                            texts.append("\n\n".join(dict.fromkeys(parts)))
                    continue
                if path.endswith(".csv"):
                    with open(path, newline="", encoding="utf-8") as f:
                        rows = list(csv.reader(f, delimiter="\t"))[1:]
                    texts += ["\n\n".join(c for c in row if c.strip()) for row in rows]
                    continue
                doc = json.loads(Path(path).read_text(encoding="utf-8"))
                items = doc if isinstance(doc, list) else list(doc.values()) if len(doc) > 3 else [doc]
                for item in items:
                    parts = []
                    _strings(item, parts)
                    if parts:
                        texts.append("\n\n".join(dict.fromkeys(parts)))
        if texts:
            out[name] = texts
        else:
            absent.append(name)
    return out, absent


def _cut(text: str) -> list[str]:
    """A filler file as records of at most MAX_WORDS words, cut at paragraph breaks where it can."""
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for para in text.split("\n\n"):
        w = len(para.split())
        if cur and n + w > MAX_WORDS:
            out.append("\n\n".join(cur))
            cur, n = [], 0
        cur.append(para)
        n += w
    if cur:
        out.append("\n\n".join(cur))
    return [t for t in out if t.strip()]


def filler_sources(which: str = "main") -> list[tuple[str, list[str]]]:
    """The filler files, in the order they are read: this machine's Debian changelogs, the installed
    Python packages' documentation and the Python sources (``main``); or, for the held-out corpus,
    Debian copyright files, manual pages, Perl modules and documentation, and the system Python's
    packages (``/usr/lib/python3/dist-packages``; not the standard library, which the main corpus reads)."""
    if which == "heldout":
        return [
            ("Debian copyright files", sorted(glob.glob("/usr/share/doc/*/copyright"))),
            ("manual pages", sorted(glob.glob("/usr/share/man/man[1-8]/*.gz"))),
            ("Perl modules", sorted(glob.glob("/usr/share/perl/**/*.p[mo]*", recursive=True))),
            ("system Python packages", sorted(glob.glob("/usr/lib/python3/dist-packages/**/*.py", recursive=True))),
        ]  # fmt: skip
    lib = Path(os.__file__).parent
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    return [
        ("Debian changelogs", sorted(glob.glob("/usr/share/doc/*/changelog*.gz"))),
        ("Python package docs", sorted(str(p) for ext in ("*.md", "*.rst", "*.txt", "METADATA") for p in site.rglob(ext))),
        ("Python source", sorted(str(p) for p in lib.glob("*.py")) + sorted(str(p) for p in site.rglob("*.py"))),
    ]  # fmt: skip


def filler(budget: int, which: str = "main"):
    """(source, text) filler records until ``budget`` bytes."""
    seen: set[int] = set()
    used = 0
    for name, paths in filler_sources(which):
        for path in paths:
            try:
                raw = gzip.open(path).read() if path.endswith(".gz") else Path(path).read_bytes()
            except OSError:
                continue
            text = raw.decode("utf-8", "replace")
            if len(text) < 2000 or hash(text) in seen:
                continue
            seen.add(hash(text))
            for piece in _cut(text):
                yield name, piece
                used += len(piece.encode("utf-8"))
                if used >= budget:
                    return


def planted() -> list[tuple[str, str, str]]:
    """(set, item id, paraphrase) of the three held-out fit sets."""
    out = []
    for name in HELDOUT_SETS:
        with open(HELDOUT / f"{name}.tsv", newline="", encoding="utf-8") as f:
            out += [
                (name, r["item_id"], r["text"]) for r in csv.DictReader(f, delimiter="\t") if r["kind"] == "paraphrase"
            ]
    return out


def corpus(mb: float, which: str = "main") -> tuple[list[Record], dict[str, int], list[str]]:
    rng = random.Random(SEED)
    agents, absent = agent_texts(AGENT_HELDOUT if which == "heldout" else AGENT)
    texts: list[tuple[str, str]] = [(name, t) for name, ts in agents.items() for t in ts]
    agent_bytes = sum(len(t.encode()) for _, t in texts)
    texts += list(filler(max(0, int(mb * 1e6) - agent_bytes), which))
    order = list(range(len(texts)))
    rng.shuffle(order)
    texts = [texts[i] for i in order]
    plants = planted()
    rng.shuffle(plants)
    agent_pos = [i for i, (s, _) in enumerate(texts) if s in agents]
    doc_pos = [i for i, (s, _) in enumerate(texts) if s in ("Python package docs", "manual pages")] or agent_pos
    meta: dict[int, dict] = {}
    extra = []
    for j, (name, item, para) in enumerate(plants):
        how = ("alone", "agent turn", "doc paragraph")[j % 3]
        if how == "alone":
            extra.append(("planted", para))
            meta[len(texts) + len(extra) - 1] = {"set": name, "item": item, "how": how}
            continue
        pos = rng.choice(agent_pos if how == "agent turn" else doc_pos)
        src, text = texts[pos]
        if how == "agent turn":
            text = f"{text}\n\nuser: {para}"
        else:
            paras = text.split("\n\n")
            k = len(paras) // 2
            text = "\n\n".join([*paras[:k], para, *paras[k:]])
        texts[pos] = (src, text)
        meta[pos] = {"set": name, "item": item, "how": how}
    texts += extra
    records = [
        Record("corpus", f"r{i}", f"corpus.jsonl:{i + 1}", {"text": t}, meta=meta.get(i, {"source": s}), ordinal=i)
        for i, (s, t) in enumerate(texts)
    ]
    by_source: dict[str, int] = {}
    for s, t in texts:
        by_source[s] = by_source.get(s, 0) + len(t.encode("utf-8"))
    return records, by_source, absent


def eval_items() -> list[Record]:
    out: list[Record] = []
    for name in HELDOUT_SETS:
        for r in heldout_eval(name):
            out.append(Record(name, r.id, r.source, dict(r.views), ordinal=len(out)))
    return out


def run(index, records, batch: int, others=()) -> tuple[list, float, float]:
    """Findings of ``index`` over ``records``; its seconds, and the other tiers' seconds (searched first)."""
    found, t_emb, t_other = [], 0.0, 0.0
    for i in range(0, len(records), batch):
        b = records[i : i + batch]
        t0 = time.perf_counter()
        for o in others:
            o.search(b)
        t1 = time.perf_counter()
        found += index.search(b)
        t_emb += time.perf_counter() - t1
        t_other += t1 - t0
    return found, t_emb, t_other


def key(f) -> tuple:
    """A finding as the two runs are compared: its pair, tier and segment (the score apart: a batch of
    other texts pads differently, which moves the int8 encoder's scores by ~1e-6)."""
    return (f.eval_dataset, f.eval_id, f.train_ordinal, f.evidence["tier"], f.evidence["train_segment"])


#: scores of one finding in the two runs further apart than this are printed (RE-SCORED)
RESCORED = 1e-4


def gate_only(args) -> None:
    """The shipped gate alone (no model): its stop share over the whole corpus and the planted
    paraphrases it stops (no passed unit of the record holds the paraphrase's first or last six words:
    the tier could then not find it)."""
    from auditor.methods.embedding import EmbeddingIndex
    from auditor.methods.embedding.gate import LexicalGate, keep_units
    from auditor.methods.embedding.reach import ModelReach
    from auditor.methods.embedding.segment import segments

    records, by_source, _absent = corpus(args.mb, args.corpus)
    total = sum(by_source.values())
    ev = eval_items()
    index = EmbeddingIndex(gate="none")
    c = index.config
    segs = [segments(e.view(c.eval_view), c.max_words) for e in ev]
    gate = LexicalGate().fit(
        [s.text for g in segs for s in g], [any(s.kind == "doc" for s in g) for g in segs for _ in g]
    )
    gate.reach = ModelReach.bundled()  # as the index's gate: segments judged as far as the model reads them
    t0 = time.perf_counter()
    para = {(n, i): " ".join(p.split()) for n, i, p in planted()}
    stopped_plants = []
    for i in range(0, len(records), args.batch):
        b = records[i : i + args.batch]
        units = [
            (t, (t.views[v], [s.text for s in g], g[0].kind == "window"), any(s.kind == "doc" for s in g))
            for t in b
            for v, g in index.train_units(t)
        ]
        keep = keep_units(gate, [u for _, u, _ in units], c.max_words, [x for _, _, x in units])
        for t in b:
            if "set" not in t.meta:
                continue
            words = para[(t.meta["set"], t.meta["item"])].split()
            ends = (" ".join(words[:6]), " ".join(words[-6:]))
            held = [" ".join(x.split()) for (r, u, _), k in zip(units, keep) if k and r is t for x in u[1]]
            if not any(e in h for h in held for e in ends):
                stopped_plants.append(t)
    t_gate = time.perf_counter() - t0
    st = gate.describe()
    plants = sum(1 for r in records if "set" in r.meta)
    print(
        f"The shipped gate alone over {len(records)} records, {total / 1e6:.1f} MB [OUT-OF-SAMPLE: never fitted on this corpus]:"
    )
    print(f"  segments {st['segments_seen']}, passed {st['segments_passed']}, stopped {st['segments_stopped']} "
          f"({st['stopped_share']:.3f}); units {st['units_seen']} / {st['units_passed']} / {st['units_stopped']}; "
          f"{t_gate:.0f} s ({total / 1e6 / t_gate:.1f} MB/s)")  # fmt: skip
    print(f"  planted paraphrases stopped (no passed unit holds them): {len(stopped_plants)} of {plants}")
    for t in stopped_plants:
        print(f"  PLANTED STOPPED {t.meta}: {' '.join(t.view('text').split())[:140]!r}")
    if st["segments_seen"]:
        share = st["segments_passed"] / st["segments_seen"]
        print(f"  upper bound on the speed-up of encoding (passed share {share:.3f}): x{1 / max(share, 1e-9):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=110.0, help="corpus size in MB (default 110)")
    ap.add_argument("--sample", type=float, default=0.004, help="share of records the ungated tier encodes")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--full", action="store_true", help="also encode what the gate passes on the whole corpus")
    ap.add_argument("--gate-only", action="store_true",
                    help="no model: only the shipped gate over the whole corpus, its stop share, and the planted "
                    "records it stops entirely")  # fmt: skip
    ap.add_argument("--corpus", choices=("main", "heldout"), default="main",
                    help="main: the corpus above; heldout: other agent sets and other filler (filler_sources), "
                    "for figures on text no rule was chosen on")  # fmt: skip
    args = ap.parse_args()
    if args.gate_only:
        gate_only(args)
        return

    from auditor import methods
    from auditor.methods.embedding import EmbeddingIndex

    t0 = time.perf_counter()
    records, by_source, absent = corpus(args.mb, args.corpus)
    total = sum(by_source.values())
    print(f"Corpus: {len(records)} records, {total / 1e6:.1f} MB, built in {time.perf_counter() - t0:.0f} s; by source (MB): "
          + ", ".join(f"{s} {b / 1e6:.1f}" for s, b in by_source.items()), flush=True)  # fmt: skip
    if absent:
        print(f"  absent here (not in ../shared/data), left out: {', '.join(absent)}")
    ev = eval_items()
    print(f"Eval: {len(ev)} items (StableToolBench 765, BFCL simple_python 400, WebShop 0:500); "
          f"{sum(1 for r in records if 'set' in r.meta)} planted paraphrases; load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    exact, ngram = methods.create("exact").build(ev), methods.create("ngram").build(ev)
    gated = cast(EmbeddingIndex, EmbeddingIndex(cache_dir="none").build(ev))  # the default: gate = "lexical"
    plain = cast(EmbeddingIndex, EmbeddingIndex(cache_dir="none", gate="none").build(ev))
    assert gated.gate is not None, "the default embedding index has a lexical gate"
    rng = random.Random(SEED)
    sample = sorted(rng.sample(range(len(records)), max(1, int(len(records) * args.sample))))
    plants = [r.ordinal for r in records if "set" in r.meta]
    sample_recs = [records[i] for i in sample]
    sample_bytes = sum(len(r.view("text").encode("utf-8")) for r in sample_recs)

    # 1. the whole corpus: exact and n-gram, then the gate alone (its decisions and cost); with --full
    #    the gated tier encodes and decides what it passes (hours where the gate passes most units)
    from auditor.methods.embedding.gate import keep_units

    t_other = t_gate = 0.0
    found_g: list = []
    t_g = 0.0
    for i in range(0, len(records), args.batch):
        b = records[i : i + args.batch]
        t0 = time.perf_counter()
        exact.search(b)
        ngram.search(b)
        t1 = time.perf_counter()
        if args.full:
            found_g += gated.search(b)
            t_g += time.perf_counter() - t1
        else:
            tu = [g for t in b for v, g in gated.train_units(t)]
            units = [
                (t.views[v], [s.text for s in g], g[0].kind == "window") for t in b for v, g in gated.train_units(t)
            ]
            keep_units(gated.gate, units, gated.config.max_words, [any(s.kind == "doc" for s in g) for g in tu])
            t_gate += time.perf_counter() - t1
        t_other += t1 - t0
    gst = gated.stats()["gate"]
    # 2. the sample, gated and ungated (same records, same batches; other tiers first for both)
    forget = gated.encoder.cache.__class__
    gated.encoder.cache = forget(gated.encoder.cache.dim, gated.encoder.cache.model)  # cold again
    gated.gate.take_counts()
    fs_g, ts_g, _ = run(gated, sample_recs, args.batch, (exact, ngram))
    sst = gated.gate.describe()
    fs_p, ts_p, _ = run(plain, sample_recs, args.batch, (exact, ngram))
    segs_p = plain.stats()["encoding"]["encoded"] - plain._built_counts["encoded"]
    # 3. the planted records outside the sample, both ways (not timed into MB/s)
    planted_recs = [records[i] for i in plants if i not in set(sample)]
    fp_p, _, _ = run(plain, planted_recs, args.batch)
    fp_g, _, _ = run(gated, planted_recs, args.batch)
    if not args.full:
        found_g = fs_g + fp_g

    mbs_gs, mbs_p = sample_bytes / 1e6 / ts_g, sample_bytes / 1e6 / ts_p
    mbs_g = total / 1e6 / t_g if args.full else mbs_gs
    print(
        f"\nEmbedding tier MB/s (the exact and n-gram tiers took {t_other:.0f} s, {total / 1e6 / t_other:.1f} MB/s, not counted):"
    )
    print(f"  {'':<44} {'gated':>16} {'every segment':>16}")
    if args.full:
        print(
            f"  {'whole corpus (' + format(total / 1e6, '.0f') + ' MB), measured':<44} {mbs_g:>11.3f} MB/s {'(not run)':>16}"
        )
    else:
        print(f"  whole corpus ({total / 1e6:.0f} MB): the gate alone {total / 1e6 / t_gate:.1f} MB/s ({t_gate:.0f} s); "
              f"encoding not run on it (--full)")  # fmt: skip
    print(f"  {'random sample (' + str(len(sample)) + ' records, ' + format(sample_bytes / 1e6, '.2f') + ' MB), measured':<44} "
          f"{mbs_gs:>11.3f} MB/s {mbs_p:>11.3f} MB/s   -> gated x{mbs_gs / mbs_p:.2f}")  # fmt: skip
    print(f"  gate on the sample: {sst['segments_seen']} segments, {sst['segments_stopped']} stopped ({sst['stopped_share']:.3f}); "
          f"every segment: {segs_p} encoded in {ts_p:.0f} s")  # fmt: skip
    print(f"  gate over the whole corpus: {gst['segments_seen']} segments, {gst['segments_passed']} passed, "
          f"{gst['segments_stopped']} stopped ({gst['stopped_share']:.3f}); units {gst['units_seen']} / "
          f"{gst['units_passed']} / {gst['units_stopped']}")  # fmt: skip
    if gst["segments_seen"]:
        share = gst["segments_passed"] / gst["segments_seen"]
        print(f"  extrapolated to the whole corpus: every segment {total / 1e6 / mbs_p / 3600:.1f} h; gated ~{total / 1e6 / mbs_p * share / 3600 + t_gate / 3600:.1f} h "
              f"(encoding time x passed share {share:.3f}, plus the gate's measured {t_gate:.0f} s) -> x{1 / (share + t_gate * mbs_p / (total / 1e6)):.2f}")  # fmt: skip

    # findings compared
    sample_set = set(sample)
    want = {key(f): f.score for f in [*fs_p, *fp_p]}
    got = {key(f): f.score for f in found_g if f.train_ordinal in sample_set or f.train_ordinal in set(plants)}
    lost = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    print(f"\nFindings on the sample + planted records: every segment {len(want)}, gated {len(got)}; "
          f"lost to the gate {len(lost)}, only gated {len(extra)} [OUT-OF-SAMPLE: the gate never saw this corpus]")  # fmt: skip
    for k in lost:
        print(f"  LOST {k}: {' '.join(records[k[2]].view('text').split())[:140]!r}")
    for k in extra:
        print(f"  ONLY GATED {k}")
    for k in sorted(set(want) & set(got)):
        if abs(want[k] - got[k]) > RESCORED:
            print(f"  RE-SCORED {k}: every segment {want[k]:.6f}, gated {got[k]:.6f}")

    def right(fs, o):
        m = records[o].meta
        return any(f.train_ordinal == o and f.eval_dataset == m["set"] and f.eval_id == m["item"] for f in fs)

    rows = {"plain": 0, "gated": 0}
    print("\nPlanted paraphrases (found matched to their own item, conclusive or suspected):")
    by_how: dict[str, list[int]] = {}
    for o in plants:
        by_how.setdefault(records[o].meta["how"], []).append(o)
    for how, os_ in by_how.items():
        p = sum(right(fs_p + fp_p, o) for o in os_)
        g = sum(right(found_g, o) for o in os_)
        rows["plain"] += p
        rows["gated"] += g
        print(f"  {how:<14} {len(os_):>3} planted: every segment finds {p}, gated {g}")
    for o in plants:
        if right(fs_p + fp_p, o) and not right(found_g, o):
            print(f"  PLANTED LOST {records[o].meta}: {records[o].view('text')[:120]!r}")
    print(f"  total: every segment {rows['plain']}, gated {rows['gated']} of {len(plants)}")
    print(f"\nTargets: gated >= 10x (sample): {mbs_gs / mbs_p >= 10} (x{mbs_gs / mbs_p:.2f}); stops >= 90 %: {gst['stopped_share'] >= 0.9}; "
          f"no planted paraphrase lost: {rows['gated'] >= rows['plain'] and not any(right(fs_p + fp_p, o) and not right(found_g, o) for o in plants)}")  # fmt: skip
    print(f"1 GB at these rates: gated {1000 / mbs_g / 3600:.1f} h; every segment {1000 / mbs_p / 3600:.1f} h "
          f"(this machine: 2 shared cores, load {os.getloadavg()[0]:.1f}; one process)")  # fmt: skip


if __name__ == "__main__":
    main()
