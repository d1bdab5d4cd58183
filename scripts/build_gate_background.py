"""Maintainer script: build ``auditor/data/gate_background.json``, the document frequencies of word
stems that the embedding tier's lexical gate (:mod:`auditor.methods.embedding.gate`) takes rarity from.

Run from the repository root (reads ``../shared/data``; a few seconds)::

    python scripts/build_gate_background.py

Sources: real agent / tool-use texts under permissive licences (notice in
``auditor/data/gate_background.NOTICE``) that are **neither** a set the gate is fitted or scored on
(held-out StableToolBench, BFCL simple_python, WebShop 0:500, NESTFUL, MMLU, HumanEval) **nor** part
of ``benchmarks/bench_paraphrase_scale.py``'s corpus (StepTool, Tool-MVR, Glaive, ToolBench answers):
API-Bank (Apache-2.0), ToolAlpaca (Apache-2.0), tau-bench (MIT), the BFCL v4 categories other than
simple_python (Apache-2.0) and WebShop goals 1500: (MIT). A *document* is one string of three or more
words anywhere in a JSON file (a query, a turn, an API description); its distinct stems count once.
Stems seen in fewer than :data:`MIN_DF` documents are left out (the gate treats an unseen stem as
rarest).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from auditor.io.atomic import atomic_write_text
from auditor.methods.embedding.gate import BACKGROUND, BACKGROUND_FORMAT, _distinct_stems
from auditor.text.batch import TokenBatch

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
MIN_DF = 3
SOURCES = {
    "API-Bank (AlibabaResearch/DAMO-ConvAI api-bank, Apache-2.0)": ("damo-convai", "*.json*"),
    "ToolAlpaca (tangqiaoyu/ToolAlpaca, Apache-2.0)": ("toolalpaca", "*.json"),
    "tau-bench (sierra-research/tau-bench, MIT)": ("tau-bench", "*.json*"),
    "BFCL v4 except simple_python (ShishirPatil/gorilla, Apache-2.0)": (
        "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data",
        "BFCL_v4_*.json",
    ),
}
EXCLUDE = ("BFCL_v4_simple_python.json",)


def strings(obj, out: list[str]) -> None:
    if isinstance(obj, str):
        if len(obj.split()) >= 3:
            out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            strings(v, out)
    elif isinstance(obj, list):
        for v in obj:
            strings(v, out)


def read(path: Path) -> list:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(x) for x in text.splitlines() if x.strip()]


def documents() -> tuple[list[str], dict[str, int]]:
    docs: list[str] = []
    per_source = {}
    for name, (folder, pattern) in SOURCES.items():
        before = len(docs)
        for path in sorted((SHARED / folder).rglob(pattern)):
            if path.name in EXCLUDE or not path.is_file():
                continue
            for obj in read(path):
                strings(obj, docs)
        per_source[name] = len(docs) - before
    goals = json.loads((SHARED / "webshop/baseline_models/data/human_goals.json").read_text(encoding="utf-8"))
    docs += [g for g in goals[1500:] if len(g.split()) >= 3]
    per_source["WebShop human goals 1500: (princeton-nlp/WebShop, MIT)"] = len(docs) - sum(per_source.values())
    return list(dict.fromkeys(docs)), per_source


def main() -> None:
    docs, per_source = documents()
    df: Counter = Counter()
    for i in range(0, len(docs), 2000):
        batch = TokenBatch(docs[i : i + 2000])
        distinct, index = _distinct_stems(batch)
        starts = batch.token_starts
        for j in range(len(batch)):
            df.update({distinct[k] for k in index[starts[j] : starts[j + 1] - 1].tolist()} - {""})
    kept = {s: c for s, c in sorted(df.items()) if c >= MIN_DF}
    doc = {
        "format": BACKGROUND_FORMAT,
        "version": 1,
        "documents": len(docs),
        "min_df": MIN_DF,
        "sources": per_source,
        "df": kept,
    }
    atomic_write_text(BACKGROUND, json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{BACKGROUND}: {len(docs)} documents, {len(kept)} stems (df >= {MIN_DF}); {per_source}")


if __name__ == "__main__":
    main()
