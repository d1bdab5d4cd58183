"""Calibrate the ``embedding`` decision on your own data: precision and recall per threshold.

Two ways to get labelled pairs:

* **automatic** (:func:`auto_pairs`): the eval set is split in two halves by a seeded shuffle. Half A
  is indexed. The training side holds a *rewrite* of every A item (positives; deterministic edits:
  drop ~15% of the words, swap two sentences, keep only the final question line of a passage, recase)
  and every B item unchanged (hard negatives: items of the same set and template that are not in the
  index — any finding for them is false). Synthetic rewrites are easier than an LLM's paraphrases, so
  prefer a labelled file when you have one.
* **labelled** (:func:`load_pairs`): a JSON Lines file of ``{"eval": TEXT, "train": TEXT, "label": 1|0}``;
  label 1 means the training text is a rewrite of the eval text. Every distinct eval text is
  indexed; every distinct training text is searched.

Every finding whose pair is not labelled 1 counts as a false positive; recall is the share of
label-1 pairs found. :func:`calibrate` runs the index once with the decision switched off and sweeps
the threshold over the combined scores.

>>> rows = sweep([(0.9, True), (0.7, False), (0.6, True)], positives=2, thresholds=[0.5, 0.8])
>>> [(r.threshold, r.precision, r.recall) for r in rows]
[(0.5, 0.6667, 1.0), (0.8, 1.0, 0.5)]

Errors: :class:`~auditor.errors.InputError` (bad pairs file), :class:`~auditor.errors.ConfigError`
(too few eval items, bad parameters).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, InputError
from ..io.jsonread import iter_jsonl
from ..methods.embedding import EmbeddingIndex
from ..records.record import QUERY, Record


@dataclass
class Row:
    threshold: float
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


@dataclass
class Calibration:
    rows: list[Row]
    positives: int
    negatives: int
    candidates: int
    mode: str
    decision: dict[str, Any] | None = None  # the decision rule (auditor.methods.embedding.decision)
    at_decision: Row | None = None  # precision/recall of its conclusive findings

    def best(self) -> Row:
        return max(self.rows, key=lambda r: (r.f1, -r.threshold))

    def manifest_lines(self, params: dict[str, Any] | None = None) -> list[str]:
        """The manifest table that makes the best-F1 threshold the ``embedding`` method's conclusive one:
        ``conclusive`` at that threshold, ``suspected`` lowered to it when it was above (a suspected
        threshold above the conclusive one is refused), and the calibration's own ``params`` that shape
        the score (not its cache folders), so the pasted table decides as the sweep measured.

        >>> c = Calibration([Row(1.3, 0.9, 0.8, 0.85, 8, 1, 2)], 10, 10, 9, "labelled", {"suspected": 1.45})
        >>> print("\\n".join(c.manifest_lines({"w_margin": 1.5, "cache_dir": "/tmp/e"})))
        [methods.embedding]
        w_margin = 1.5
        conclusive = 1.3
        suspected = 1.3
        """
        threshold = self.best().threshold
        table = {
            k: v for k, v in (params or {}).items() if k not in _NOT_MANIFEST and k not in ("conclusive", "suspected")
        }
        table["conclusive"] = threshold
        given = (params or {}).get("suspected")
        suspected = given if given is not None else (self.decision or {}).get("suspected")
        if suspected is not None and (given is not None or float(suspected) > threshold):
            table["suspected"] = min(float(suspected), threshold)
        return ["[methods.embedding]"] + [f"{k} = {_toml(v)}" for k, v in table.items()]


#: calibrate parameters left out of the advice: folders the CLI sets (``--embed-cache``, ``--model-cache``)
_NOT_MANIFEST = frozenset({"cache_dir", "model_cache"})


def _toml(value: Any) -> str:
    """``value`` written as a TOML value (``1.5``, ``true``, ``"text"``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string


def rewrite(text: str, rng: random.Random) -> str:
    """A deterministic (given ``rng``) surface rewrite of ``text`` that keeps its meaning mostly intact."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2 and len(lines[-1].split()) >= 3 and rng.random() < 0.5:
        text = lines[-1]
    sentences = [s for s in text.replace("? ", "?\n").replace(". ", ".\n").splitlines() if s.strip()]
    if len(sentences) >= 2:
        i = rng.randrange(len(sentences) - 1)
        sentences[i], sentences[i + 1] = sentences[i + 1], sentences[i]
        text = " ".join(sentences)
    words = text.split()
    if len(words) > 6:
        words = [w for w in words if rng.random() > 0.15] or words
    out = " ".join(words)
    return out.lower() if rng.random() < 0.3 else out


def auto_pairs(eval_records: Sequence[Record], seed: int = 0, view: str = QUERY):
    """``(indexed eval records, training records, positive (eval ordinal, train ordinal) pairs)``."""
    usable = [r for r in eval_records if r.view(view).strip()]
    if len(usable) < 4:
        raise ConfigError(f"calibration needs at least 4 eval items with text, got {len(usable)}")
    rng = random.Random(seed)
    order = list(range(len(usable)))
    rng.shuffle(order)
    half = len(order) // 2
    a, b = sorted(order[:half]), sorted(order[half:])
    indexed = [
        Record("eval", usable[i].id, usable[i].source, {QUERY: usable[i].view(view)}, ordinal=n)
        for n, i in enumerate(a)
    ]
    train: list[Record] = []
    positives: set[tuple[int, int]] = set()
    for n, i in enumerate(a):
        train.append(
            Record(
                "train",
                f"rewrite:{usable[i].id}",
                usable[i].source,
                {"text": rewrite(usable[i].view(view), rng)},
                ordinal=len(train),
            )
        )
        positives.add((n, len(train) - 1))
    for i in b:
        train.append(
            Record(
                "train", f"other:{usable[i].id}", usable[i].source, {"text": usable[i].view(view)}, ordinal=len(train)
            )
        )
    return indexed, train, positives


def load_pairs(path: str):
    """Read a labelled pairs file; same return shape as :func:`auto_pairs`."""
    evals: dict[str, int] = {}
    trains: dict[str, int] = {}
    positives: set[tuple[int, int]] = set()
    for lineno, obj, err in iter_jsonl(path):
        if err:
            raise InputError(path, f"line {lineno}", err)
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("eval"), str)
            or not isinstance(obj.get("train"), str)
            or obj.get("label") not in (0, 1, True, False)
        ):
            raise InputError(path, f"line {lineno}", 'expected {"eval": text, "train": text, "label": 0 or 1}')
        e = evals.setdefault(obj["eval"], len(evals))
        t = trains.setdefault(obj["train"], len(trains))
        if obj["label"]:
            positives.add((e, t))
    if not evals:
        raise InputError(path, None, "no pairs")
    indexed = [Record("eval", str(i), f"{path}#eval{i}", {QUERY: t}, ordinal=i) for t, i in evals.items()]
    train = [Record("train", str(i), f"{path}#train{i}", {"text": t}, ordinal=i) for t, i in trains.items()]
    return indexed, train, positives


def sweep(scored: Iterable[tuple[float, bool]], positives: int, thresholds: Sequence[float]) -> list[Row]:
    """Precision/recall per threshold from ``(score, is_true)`` candidates (one per found pair)."""
    scored = list(scored)
    rows = []
    for t in thresholds:
        tp = sum(1 for s, ok in scored if s >= t and ok)
        fp = sum(1 for s, ok in scored if s >= t and not ok)
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / positives if positives else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        rows.append(Row(round(t, 4), round(p, 4), round(r, 4), round(f1, 4), tp, fp, positives - tp))
    return rows


def calibrate(
    eval_records: Sequence[Record],
    pairs_file: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    thresholds: Sequence[float] | None = None,
) -> Calibration:
    """Run the ``embedding`` index on labelled pairs and tabulate precision/recall per threshold."""
    params = dict(params or {})
    base = params.pop("conclusive", None)
    view = params.get("eval_view", QUERY)
    if pairs_file:
        indexed, train, positives = load_pairs(pairs_file)
        mode = f"labelled pairs from {pairs_file}"
    else:
        indexed, train, positives = auto_pairs(eval_records, seed, view)
        mode = f"automatic: {len(indexed)} indexed items, their rewrites and {len(train) - len(indexed)} held-out items (seed {seed})"
    extra = {} if base is None else {"conclusive": base}  # the sweep ignores it; the decision rule uses it
    index = EmbeddingIndex(**extra, **{k: v for k, v in params.items() if k != "eval_view"})
    index.build(indexed)
    best: dict[tuple[int, int], float] = {}
    accepted: dict[tuple[int, int], float] = {}
    for f in index.search_scored(train, decide=False):
        key = (f.eval_ordinal, f.train_ordinal)
        best[key] = max(best.get(key, float("-inf")), f.score)
        if f.evidence["tier"] == "conclusive":
            accepted[key] = 1.0
    scored = [(s, key in positives) for key, s in best.items()]
    if thresholds is None:
        thresholds = [round(1.0 + 0.05 * i, 2) for i in range(31)]
    rows = sweep(scored, len(positives), thresholds)
    decision = index.rule.describe()
    at = sweep([(float("inf"), key in positives) for key in accepted], len(positives), [decision["conclusive"]])[0]
    return Calibration(
        rows, len(positives), len(train) - len({t for _, t in positives}), len(scored), mode, decision, at
    )
