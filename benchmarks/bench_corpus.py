"""Synthetic training corpora with planted eval items, for the scale benchmark and tests.

Documents are ``words`` words drawn Zipf-like from a vocabulary that mixes the eval set's own
tokens with pseudo-words (so common eval words do occur in unrelated text, as in real corpora).
Every ``plant_every``-th document has one eval item pasted verbatim in its middle.

>>> docs = list(generate_docs(["alpha beta gamma delta"], count=3, words=5, plant_every=2, seed=1))
>>> sum("alpha beta gamma delta" in d["text"] for d in docs)
2
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence


def _vocabulary(eval_texts: Sequence[str], extra: int, rng: random.Random) -> list[str]:
    seen: dict[str, None] = {}
    for t in eval_texts:
        for w in t.lower().split():
            seen.setdefault(w.strip(".,!?;:\"'()"), None)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [w for w in seen if w] + [
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(extra)
    ]
    rng.shuffle(words)
    return words


def generate_docs(
    eval_texts: Sequence[str],
    count: int,
    words: int = 300,
    plant_every: int = 200,
    seed: int = 0,
    extra_vocab: int = 20000,
) -> Iterator[dict]:
    """Yield ``{"id", "text"}`` documents; the i-th planted document holds ``eval_texts[i % len]``."""
    rng = random.Random(seed)
    vocab = _vocabulary(eval_texts, extra_vocab, rng)
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    planted = 0
    for i in range(count):
        body = rng.choices(vocab, weights=weights, k=words)
        if plant_every and i % plant_every == plant_every - 1:
            body.insert(words // 2, eval_texts[planted % len(eval_texts)])
            planted += 1
        yield {"id": f"doc{i}", "text": " ".join(body)}


def write_jsonl(path: str, docs: Iterator[dict], target_bytes: int | None = None) -> int:
    """Write documents as JSON lines (stopping past ``target_bytes``); return the bytes written."""
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            line = json.dumps(d) + "\n"
            f.write(line)
            size += len(line)
            if target_bytes and size >= target_bytes:
                break
    return size
