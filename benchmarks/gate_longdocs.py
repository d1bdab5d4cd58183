"""Frozen held-out long documents for the lexical gate (``tests/data/heldout/gate_longdocs.jsonl``).

Each document plants one paraphrase of a paraphrase-benchmark file (:mod:`paraphrase_data`: the
three held-out fit sets, NESTFUL and the six llm-decontaminator files; at most :data:`PER_FILE` per
file, the first ones in file order) between multi-paragraph real filler: 2–5 paragraphs before and
2–5 after, drawn with ``random.Random(SEED)`` from the ToolBench and StableToolBench ``data_example``
answer trees (every string of 12+ words; Apache-2.0) and the tau2-bench airline/retail policy
paragraphs (MIT). So every document is several MiniLM windows long and the paraphrase sits in the
middle of one of them: the case where the static prefilter failed (docs/methods.md).

Made once, before any gate parameter was chosen, and committed (``python benchmarks/gate_longdocs.py
--write``); the bench only reads the file. Fields: ``file`` (the benchmark file), ``src`` (ordinal of
the planted paraphrase's training record in that file's case), ``text``.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from paraphrase_data import DECON_FILES, HELDOUT, HELDOUT_SETS, SHARED, TEST_SETS  # noqa: E402

PATH = HELDOUT / "gate_longdocs.jsonl"
SEED = 25
PER_FILE = 60
FILES = (*HELDOUT_SETS, *TEST_SETS, *[d[0] for d in DECON_FILES])


def filler() -> list[str]:
    out: list[str] = []

    def walk(o) -> None:
        if isinstance(o, str):
            if len(o.split()) >= 12:
                out.append(o.strip())
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for pattern in ("toolbench/data_example/answer/**/*.json", "stabletoolbench/data_example/answer/**/*.json"):
        for p in sorted(glob.glob(str(SHARED / pattern), recursive=True)):
            walk(json.loads(Path(p).read_text(encoding="utf-8")))
    for dom in ("airline", "retail"):
        text = (SHARED / f"tau2-bench/data/tau2/domains/{dom}/policy.md").read_text(encoding="utf-8")
        out += [p.strip() for p in text.split("\n\n") if len(p.split()) >= 12]
    return list(dict.fromkeys(out))


def make() -> list[dict]:
    from bench_paraphrase import case

    pool = filler()
    rng = random.Random(SEED)
    docs = []
    for name in FILES:
        _ev, tr, _truth = case(name)
        planted = [t for t in tr if t.meta.get("kind") == "paraphrase"][:PER_FILE]
        for t in planted:
            before = rng.sample(pool, rng.randint(2, 5))
            after = rng.sample(pool, rng.randint(2, 5))
            text = "\n\n".join([*before, t.view("text") or t.view("query"), *after])
            docs.append({"file": name, "src": t.ordinal, "text": text})
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"(re)write {PATH.name}; it is frozen: only once")
    args = ap.parse_args()
    docs = make()
    if args.write:
        PATH.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    words = sorted(len(d["text"].split()) for d in docs)
    print(f"{len(docs)} documents; words min {words[0]} median {words[len(words) // 2]} max {words[-1]}")


if __name__ == "__main__":
    main()
