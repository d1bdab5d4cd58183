"""How often does a short item stand whole inside unrelated training text? Per token length k.

The ``ngram`` tier checks an item shorter than ``min_n`` tokens by containment of its whole
normalized token sequence (docs/methods.md, "Short items"). Whether such a match is proof depends on
how often a k-token item occurs inside training text it did not come from. This script measures that
on clean pairs (training text that holds none of the eval items) from ../shared/data and the bundled
Seal-Tools slice:

* probes: every sentence (split at ``.!?`` and line breaks) of every eval item, and every whole item,
  normalized exactly as the tiers normalize (:func:`auditor.text.normalize.tokens`), grouped by length;
* a probe counts as found when its whole token sequence occurs, word-aligned, in one training text
  (no boilerplate masking: masking only removes text, so this over-counts, the safe side);
* a probe identical to a whole training item is left out (an item repeated in both splits is a
  duplicate, not a chance occurrence; WebShop repeats 525 of its goals).

Pairs are labelled ``fit`` (the defaults were chosen on them) or ``held-out`` (looked at only after the
defaults were frozen). Run: ``python -m benchmarks.bench_short_items`` (about 15 s); prints one
table per pair and the pooled ``fit`` / ``held-out`` rows.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

from auditor.text.normalize import tokens
from benchmarks.common import FOREIGN
from benchmarks.common import SHARED as DATA

SEAL = FOREIGN / "seal-tools"
KMAX = 12
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")


def _json(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        if path.name.endswith((".jsonl", ".jsonl.gz")) or path.name.startswith("BFCL") or "openfunctions" in path.name:
            return [json.loads(line) for line in f if line.strip()]
        return json.load(f)


def webshop(eval_range: tuple[int, int | None], train_range: tuple[int, int | None]) -> tuple[list[str], list[str]]:
    goals = _json(DATA / "webshop/baseline_models/data/human_goals.json")
    return goals[slice(*eval_range)], goals[slice(*train_range)]


def stb_vs_toolmvr() -> tuple[list[str], list[str]]:
    base = DATA / "stabletoolbench/solvable_queries/test_instruction"
    evals = [r["query"] for f in sorted(base.glob("*.json")) for r in _json(f)]
    texts = []
    for f in sorted((DATA / "tool-mvr/data/training_data").glob("*.json")):
        texts += ["\n".join(str(m.get("content") or "") for m in r["messages"]) for r in _json(f)]
    for f in sorted((DATA / "tool-mvr/data/RefineToolBench").glob("*.json")):
        texts += [json.dumps(r, ensure_ascii=False) for r in _json(f)]
    return evals, texts


def stb_vs_toolbench_evalset() -> tuple[list[str], list[str]]:
    """StableToolBench queries vs ToolBench's default_evalset answers (the 6 shared ids dropped)."""
    base = DATA / "stabletoolbench/solvable_queries/test_instruction"
    evals = [r["query"] for f in sorted(base.glob("*.json")) for r in _json(f)]
    shared = set(evals)
    texts = []
    for f in sorted(
        (DATA / "stabletoolbench/toolbench/tooleval/results/default_evalset/gpt-3.5-turbo_CoT").glob("*.json")
    ):
        for r in _json(f).values():
            if r["query"] not in shared:
                texts.append(json.dumps(r, ensure_ascii=False))
    return evals, texts


def tau2(domain: str) -> tuple[list[str], list[str]]:
    base = DATA / f"tau2-bench/data/tau2/domains/{domain}"
    tasks = {t["id"]: t for t in _json(base / "tasks.json")}
    split = _json(base / "split_tasks.json")

    def text(t):
        ins = t["user_scenario"]["instructions"]
        return "\n".join(str(v) for v in ins.values() if isinstance(v, str))

    return [text(tasks[i]) for i in split["test"]], [json.dumps(tasks[i], ensure_ascii=False) for i in split["train"]]


def bfcl_live_vs_v1() -> tuple[list[str], list[str]]:
    """BFCL v4's live (user-contributed) questions vs the v1 test questions (the synthetic ones)."""
    v4 = DATA / "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data"
    evals = []
    for name in ("live_simple", "live_multiple", "live_parallel", "live_irrelevance"):
        for r in _json(v4 / f"BFCL_v4_{name}.json"):
            evals += [m["content"] for turn in r["question"] for m in turn if m.get("role") == "user"]
    v1 = DATA / "gorilla/bfcl_v1_7bef000/berkeley-function-call-leaderboard/data"
    texts = []
    for f in sorted(v1.glob("gorilla_openfunctions_v1_test_*.json")):
        texts += [json.dumps(r, ensure_ascii=False) for r in _json(f)]
    return evals, texts


def seal_out_vs_in() -> tuple[list[str], list[str]]:
    """Seal-Tools out-of-domain test queries vs the in-domain fine-tuning prompts (held-out)."""
    evals = [r["query"] for r in _json(SEAL / "test_out_domain.jsonl.gz")]
    texts = [c["value"] for r in _json(SEAL / "finetune_test_in_domain.json.gz") for c in r["conversations"]]
    return evals, texts


PAIRS = {
    "webshop goals 0:500 vs 500:12087": ("fit", lambda: webshop((0, 500), (500, None))),
    "stabletoolbench vs tool-mvr samples": ("fit", stb_vs_toolmvr),
    "stabletoolbench vs toolbench default_evalset": ("fit", stb_vs_toolbench_evalset),
    "tau2 airline test vs train": ("held-out", lambda: tau2("airline")),
    "tau2 retail test vs train": ("held-out", lambda: tau2("retail")),
    "bfcl v4 live vs v1": ("held-out", bfcl_live_vs_v1),
    "webshop goals 0:100 vs 100:200": ("held-out", lambda: webshop((0, 100), (100, 200))),
    "seal-tools out-of-domain vs in-domain prompts": ("held-out", seal_out_vs_in),
}


def probes(items: list[str]) -> dict[tuple[str, ...], str]:
    """Every whole item and every sentence of one, as token tuples of length 1..KMAX → 'item' / 'sentence'."""
    out: dict[tuple[str, ...], str] = {}
    for item in items:
        whole = tuple(tokens(item))
        if 0 < len(whole) <= KMAX:
            out[whole] = "item"
        for sentence in _SENT.split(item):
            t = tuple(tokens(sentence))
            if 0 < len(t) <= KMAX:
                out.setdefault(t, "sentence")
    return out


def measure(items: list[str], texts: list[str], only: str | None = None) -> dict[int, tuple[int, int]]:
    """k → (probes of k tokens, of them found inside a training text); ``only="item"``: whole items only."""
    whole_train = {tuple(tokens(t)) for t in texts}
    # word-aligned containment: every token window of every text, for each k
    windows: dict[int, set[tuple[str, ...]]] = {k: set() for k in range(1, KMAX + 1)}
    for t in texts:
        toks = tokens(t)
        for k in range(1, KMAX + 1):
            windows[k].update(tuple(toks[i : i + k]) for i in range(len(toks) - k + 1))
    total: Counter = Counter()
    found: Counter = Counter()
    for p, what in probes(items).items():
        if p in whole_train or (only and what != only):
            continue  # a duplicate item, not a chance occurrence
        total[len(p)] += 1
        found[len(p)] += p in windows[len(p)]
    return {k: (total[k], found[k]) for k in range(1, KMAX + 1)}


def _row(label: str, m: dict[int, tuple[int, int]]) -> str:
    cells = [f"{f}/{n}" + (f" ({100 * f / n:.1f}%)" if n else "") for n, f in (m[k] for k in range(1, KMAX + 1))]
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> None:
    head = "| pair | " + " | ".join(f"k={k}" for k in range(1, KMAX + 1)) + " |"
    loaded = {name: (kind, *load()) for name, (kind, load) in PAIRS.items()}
    for only in (None, "item"):
        print(f"\n{'whole items only' if only else 'whole items and their sentences'}\n")
        print(head)
        print("|---" * (KMAX + 1) + "|")
        pooled: dict[str, Counter] = {"fit": Counter(), "held-out": Counter()}
        pooled_n: dict[str, Counter] = {"fit": Counter(), "held-out": Counter()}
        for name, (kind, items, texts) in loaded.items():
            m = measure(items, texts, only)
            print(_row(f"{name} ({kind})", m))
            for k, (n, f) in m.items():
                pooled_n[kind][k] += n
                pooled[kind][k] += f
        for kind in ("fit", "held-out"):
            print(_row(f"**pooled {kind}**", {k: (pooled_n[kind][k], pooled[kind][k]) for k in range(1, KMAX + 1)}))


if __name__ == "__main__":
    main()
