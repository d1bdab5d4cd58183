"""Benchmark of the ``minhash`` tier (a script, not collected by pytest): ``python -m benchmarks.bench_minhash``.

1. Signature speed: docs/s of :func:`auditor.methods._minhash_sketch.signatures` against datasketch
   ``MinHash.bulk`` in the same run, on the bundled eval queries plus WebShop goals (word 3-gram
   shingles), after checking that both give identical hash values.
2. Quality: eval = half of the bundled StableToolBench + tau2 queries; train = chat records (the
   query wrapped as ``Task: ... Begin!``) holding planted near-duplicates of those eval items (word
   drops, swaps, insertions, case and punctuation changes at several edit rates) and, as hard
   negatives, the same edits of the *other* half (same templates, same domains). Prints recall on
   planted pairs with true Jaccard >= 0.8 and >= the threshold, precision against the planted labels,
   rejected candidates, and the number of findings whose exact Jaccard (recomputed here with Python
   sets) is below the threshold, which must be 0.

Options: ``--threshold``, ``--num-perm``, ``--shingle-size``, ``--lsh-threshold``, ``--shingle``.
Runs in well under two minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import cast

import numpy as np

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods import _minhash_sketch as sk
from auditor.methods._shingles import shingle_hashes
from auditor.methods.minhash import MinHashIndex
from auditor.records.record import Record

RATES = (0.02, 0.05, 0.1, 0.2, 0.3)


def load(name: str) -> list:
    return list(Dataset(DatasetSpec(name, [name], role="eval")).records())


def edit(text: str, rate: float, rng: random.Random) -> str:
    """Word drops, swaps, insertions and case/punctuation changes, each at rate/4 per word."""
    words = text.split()
    out: list[str] = []
    for w in words:
        r = rng.random()
        if r < rate / 4:
            continue  # drop
        if r < rate / 2:
            out += [w, rng.choice(words)]  # insertion
        elif r < 3 * rate / 4 and out:
            out.insert(len(out) - 1, w)  # swap with the previous word
        elif r < rate:
            out.append(w.upper() + rng.choice(",.;!?"))  # case + punctuation
        else:
            out.append(w)
    return " ".join(out)


def bench_speed(texts: list[str], num_perm: int, size: int) -> None:
    import xxhash
    from datasketch import MinHash

    shingles = [shingle_hashes(t, "word", size) for t in texts]
    keep = [i for i, s in enumerate(shingles) if len(s)]
    uniq = [np.unique(sk.fold(shingles[i])) for i in keep]
    offs = np.concatenate(([0], np.cumsum([len(u) for u in uniq])[:-1]))
    flat = np.concatenate(uniq)
    perms = sk.permutations(num_perm, 1)
    n = len(uniq)
    print(f"signatures: {n} docs, {len(flat)} shingles, num_perm={num_perm}")

    t = time.perf_counter()
    ours = sk.signatures(flat, offs, perms)
    t_ours = time.perf_counter() - t
    ints = [u.tolist() for u in uniq]
    t = time.perf_counter()
    ds = MinHash.bulk(ints, num_perm=num_perm, seed=1, hashfunc=int)
    t_ds_int = time.perf_counter() - t
    same = all((m.hashvalues == ours[i]).all() for i, m in enumerate(ds))
    words = [
        [w.encode() for w in (" ".join(ws[j : j + size]) for j in range(len(ws) - size + 1))]
        for ws in (texts[i].lower().split() for i in keep)
    ]
    t = time.perf_counter()
    MinHash.bulk(words, num_perm=num_perm, seed=1, hashfunc=xxhash.xxh32_intdigest)
    t_ds_xxh = time.perf_counter() - t
    t = time.perf_counter()
    sh = [np.unique(sk.fold(shingle_hashes(texts[i], "word", size))) for i in keep]
    o2 = np.concatenate(([0], np.cumsum([len(u) for u in sh])[:-1]))
    sk.signatures(np.concatenate(sh), o2, perms)
    t_ours_text = time.perf_counter() - t
    print(f"  auditor signatures (precomputed shingle hashes) {n / t_ours:10.0f} docs/s")
    print(
        f"  datasketch MinHash.bulk (same hashes, hashfunc=int) {n / t_ds_int:7.0f} docs/s   identical hashvalues: {same}"
    )
    print(f"  datasketch MinHash.bulk (xxh32 on shingle bytes) {n / t_ds_xxh:9.0f} docs/s")
    print(f"  auditor from raw text (normalize + shingle + sign) {n / t_ours_text:8.0f} docs/s")
    print(
        f"  speed-up vs bulk xxh32: {t_ds_xxh / t_ours:.1f}x (precomputed), {t_ds_xxh / t_ours_text:.1f}x (from text)"
    )


def bench_quality(args) -> None:
    rng = random.Random(0)
    items: dict[str, Record] = {}
    for name in ("stabletoolbench", "tau2-airline", "tau2-retail"):
        for r in load(name):
            items.setdefault(r.view("query"), r)  # one record per distinct text
    pool = list(items.values())
    rng.shuffle(pool)
    evals, others = pool[::2], pool[1::2]
    lines, truth = [], {}
    for label, group in (("pos", evals), ("neg", others)):
        for r in group:
            for rate in RATES:
                tid = f"{label}-{r.dataset}-{r.id}-{rate}"
                q = edit(r.view("query"), rate, rng)
                truth[tid] = (label, r.view("query"), q)
                lines.append(
                    {
                        "id": tid,
                        "messages": [
                            {"role": "system", "content": "You are an AutoGPT, capable of utilizing numerous APIs."},
                            {"role": "user", "content": f"Task:\n{q}\nBegin!"},
                            {"role": "assistant", "content": "Thought: I will call the API."},
                        ],
                    }
                )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines))
        train = list(Dataset(DatasetSpec("train", [str(path)], format="chat")).records())
    params = {
        "threshold": args.threshold,
        "num_perm": args.num_perm,
        "shingle_size": args.shingle_size,
        "shingle": args.shingle,
    }
    if args.lsh_threshold:
        params["lsh_threshold"] = args.lsh_threshold
    t = time.perf_counter()
    index = cast(MinHashIndex, MinHashIndex(**params).build(evals))
    t_build = time.perf_counter() - t
    t = time.perf_counter()
    findings = [f for i in range(0, len(train), 512) for f in index.search(train[i : i + 512])]
    t_search = time.perf_counter() - t

    def jacc(a: str, b: str) -> float:
        sa = set(shingle_hashes(a, args.shingle, args.shingle_size).tolist())
        sb = set(shingle_hashes(b, args.shingle, args.shingle_size).tolist())
        return len(sa & sb) / len(sa | sb) if sa | sb else 0.0

    by_text = {r.view("query"): r for r in evals}
    found = {(f.eval_id, f.eval_dataset, f.train_id) for f in findings}
    pos = [(tid, by_text[orig], jacc(orig, q)) for tid, (lab, orig, q) in truth.items() if lab == "pos"]
    st = index.stats()
    print(
        f"quality: {len(evals)} eval items, {len(train)} train records ({len(pos)} planted, "
        f"{len(train) - len(pos)} hard negatives), params {params}, bands x rows {st['bands']}x{st['rows']}, "
        f"lsh_threshold {st['lsh_threshold']:.2f}, eval items not indexed {st['eval_not_indexed']}"
    )
    for lo in (0.8, args.threshold):
        sel = [(tid, r) for tid, r, j in pos if j >= lo]
        hit = sum((r.id, r.dataset, tid) in found for tid, r in sel)
        print(f"  recall on planted pairs with true Jaccard >= {lo}: {hit}/{len(sel)} = {hit / max(1, len(sel)):.4f}")
    for rate in RATES:
        sel = [(tid, r) for tid, r, j in pos if tid.endswith(f"-{rate}")]
        hit = sum((r.id, r.dataset, tid) in found for tid, r in sel)
        print(f"    edit rate {rate:<4}: found {hit}/{len(sel)}")
    planted_ok = sum(
        1 for f in findings if f.train_id.startswith("pos-") and truth[f.train_id][1] == by_text_view(index, f)
    )
    below = sum(1 for f in findings if jacc(by_text_view(index, f), truth[f.train_id][2]) < args.threshold - 1e-9)
    print(
        f"  findings {len(findings)}: {planted_ok} on their planted source; precision vs planted labels "
        f"{planted_ok / max(1, len(findings)):.4f}; below threshold on exact recheck (unverified): {below}"
    )
    off = [f for f in findings if truth[f.train_id][1] != by_text_view(index, f)]
    twins = sum(1 for f in off if jacc(by_text_view(index, f), truth[f.train_id][1]) >= args.threshold * 0.75)
    print(
        f"  off-label findings {len(off)}: {twins} of them pair items whose unedited texts already have "
        f"Jaccard >= {args.threshold * 0.75:.2f} (template siblings inside the benchmarks); conclusive "
        f"{sum(f.conclusive for f in off)}, suspected {sum(not f.conclusive for f in off)}"
    )
    print(
        f"  candidates {st['candidates']}, verified {st['verified']}, rejected {st['rejected']}; "
        f"build {len(evals) / t_build:.0f} items/s, search {len(train) / t_search:.0f} train records/s"
    )


def bench_containment(args) -> None:
    """Short eval items planted (edited) inside long records built from other items' full texts."""
    rng = random.Random(2)
    pool = list(
        {r.view("query"): r for n in ("stabletoolbench", "tau2-airline", "tau2-retail") for r in load(n)}.values()
    )
    rng.shuffle(pool)
    evals, others = pool[::2][:200], pool[1::2]
    filler = [r.view("text") for r in others]
    train: list[Record] = []
    truth: dict[str, tuple[str, Record, str, list[str]]] = {}
    for label, group in (("pos", evals), ("neg", others[:200])):
        for r in group:
            for rate in (0.05, 0.1):
                parts = rng.sample(filler, 12)
                parts.insert(rng.randrange(len(parts)), edit(r.view("query"), rate, rng))
                tid = f"{label}-{r.dataset}-{r.id}-{rate}"
                truth[tid] = (label, r, "\n".join(parts), parts)
                train.append(Record("train", tid, f"bench#{len(train)}", {"text": truth[tid][2]}, ordinal=len(train)))
    params = {"mode": "containment", "train_views": ("text",), "threshold": args.threshold}
    index = cast(MinHashIndex, MinHashIndex(**params).build(evals))
    t = time.perf_counter()
    findings = [f for i in range(0, len(train), 64) for f in index.search(train[i : i + 64])]
    t_search = time.perf_counter() - t
    found = {(f.eval_dataset, f.eval_id, f.train_id) for f in findings}

    def contain(item: str, text: str) -> float:
        a = set(shingle_hashes(item).tolist())
        return len(a & set(shingle_hashes(text).tolist())) / len(a)

    pos = [(tid, r) for tid, (lab, r, text, _) in truth.items() if lab == "pos"]
    words = sum(len(t[2].split()) for t in truth.values()) / len(truth)
    st = index.stats()
    print(
        f"containment: {len(evals)} eval items inside {len(train)} long records (~{words:.0f} words each), "
        f"threshold {args.threshold}, bands x rows {st['bands']}x{st['rows']}, window classes {len(index._window_classes())}"
    )
    for lo in (0.8, args.threshold):
        sel = [(tid, r) for tid, r in pos if contain(r.view("query"), truth[tid][2]) >= lo]
        hit = sum((r.dataset, r.id, tid) in found for tid, r in sel)
        print(
            f"  recall on planted items with true containment >= {lo}: {hit}/{len(sel)} = {hit / max(1, len(sel)):.4f}"
        )
    on_source = sum(
        1 for f in findings if truth[f.train_id][1].id == f.eval_id and truth[f.train_id][1].dataset == f.eval_dataset
    )
    off = [
        f
        for f in findings
        if not (truth[f.train_id][1].id == f.eval_id and truth[f.train_id][1].dataset == f.eval_dataset)
    ]
    item = {(r.dataset, r.id): r.view("query") for r in evals}
    single = sum(
        1 for f in off if max(contain(item[(f.eval_dataset, f.eval_id)], part) for part in truth[f.train_id][3]) >= 0.45
    )
    print(
        f"  findings {len(findings)}: {on_source} on their planted source; of the {len(off)} others, {single} are "
        f"explained by one sibling text in the record (containment >= 0.45 in a single part: tau2 task "
        f"families, look-alike StableToolBench queries), {len(off) - single} by a patchwork of parts"
    )
    print(
        f"  candidates {st['candidates']}, rejected {st['rejected']}; search {len(train) / t_search:.0f} long records/s"
    )


def by_text_view(index: MinHashIndex, f) -> str:
    return next(
        r.view("query") for r in index.eval_records if r.ordinal == f.eval_ordinal and r.dataset == f.eval_dataset
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threshold", type=float, default=MinHashIndex.Config.threshold)
    ap.add_argument("--num-perm", type=int, default=MinHashIndex.Config.num_perm)
    ap.add_argument("--shingle-size", type=int, default=MinHashIndex.Config.shingle_size)
    ap.add_argument("--shingle", default=MinHashIndex.Config.shingle)
    ap.add_argument("--lsh-threshold", type=float, default=None)
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    if not args.skip_speed:
        texts = [
            r.view("query") for n in ("stabletoolbench", "tau2-airline", "tau2-retail", "webshop") for r in load(n)
        ]
        bench_speed(texts, args.num_perm, args.shingle_size)
    bench_quality(args)
    bench_containment(args)


if __name__ == "__main__":
    main()
