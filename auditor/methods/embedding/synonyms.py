"""Word-stem neighbours for the lexical gate's dice rule (:mod:`auditor.methods.embedding.gate`): a rewording
replaces an item's words with near-synonyms ("a car accident" → "a vehicle collision", "farmland" →
"agricultural land"), so the gate counts a text's stem as one of an item's when the two are
neighbours in the bundled table and their cosine is at least the gate's ``synonyms`` bar.

**Table** (``auditor/data/gate_synonyms.json``, built by ``scripts/build_gate_synonyms.py``; notice in
``gate_synonyms.NOTICE``): the whole words of the bundled model's own vocabulary, each encoded alone by
the model (all-MiniLM-L6-v2); two stems are neighbours when two of their words have a cosine of at least
the table's ``min_cosine`` (0.7). No benchmark or corpus text went into it. A word outside the
vocabulary has no neighbours: it is matched as itself only.

**Credit** (:class:`auditor.methods.embedding.gate.LexicalGate`): a text stem standing in for an item stem earns the
item stem's weight scaled down to the text stem's own where that is lower — a common word standing in
for a rare one earns what the common word weighs —; what the text's stems earn for one item stem is
capped at its weight (it counts once, as when the text holds it).

>>> table = load_synonyms()
>>> table["highwa"]["freewa"], "farmla" in table["agricu"]
(0.83, True)
>>> syn = neighbours({"highwa": 0, "city": 1}, 0.75, lambda s: 1.0)
>>> sorted(syn["freewa"].tolist()), sorted(syn["urban"].tolist())
([0], [1])

Errors: :class:`~auditor.errors.IndexFileError` (a damaged table), :class:`~auditor.errors.ConfigError`
(a bar below the table's ``min_cosine``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...errors import ConfigError, IndexFileError

SYNONYMS = Path(__file__).resolve().parents[2] / "data" / "gate_synonyms.json"
SYNONYMS_FORMAT = "auditor-gate-synonyms"
#: the lowest cosine the bundled table keeps (``scripts/build_gate_synonyms.py`` builds it with this):
#: a ``synonyms`` bar may not be lower
MIN_COSINE = 0.7


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[float, dict[str, dict[str, float]]]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if doc.get("format") != SYNONYMS_FORMAT:
            raise ValueError(f"format is not {SYNONYMS_FORMAT}")
        table = {str(s): {str(t): float(c) for t, c in v.items()} for s, v in doc["synonyms"].items()}
        return float(doc["min_cosine"]), table
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise IndexFileError(f"{path}: not a gate synonyms file ({e})") from None


def min_cosine(path: str | Path = SYNONYMS) -> float:
    """The lowest cosine the table keeps: a ``synonyms`` bar may not be lower."""
    return _load(str(path))[0]


def check_bar(bar: float) -> float:
    """``bar`` when it is 0 (off) or within :data:`MIN_COSINE`..1, else :class:`ConfigError` (no file is
    read: a configuration is checked without loading the table)."""
    if bar and not MIN_COSINE <= bar <= 1:
        raise ConfigError(f"method 'embedding': gate_synonyms must be 0 (off) or in {MIN_COSINE}..1, not {bar}")
    return float(bar)


def load_synonyms(path: str | Path = SYNONYMS) -> dict[str, dict[str, float]]:
    """``{stem: {neighbour stem: cosine}}`` of the table (shared: do not modify)."""
    return _load(str(path))[1]


def neighbours(
    vocab: dict[str, int], bar: float, weight: Callable[[str], float], path: str | Path = SYNONYMS
) -> dict[str, np.ndarray]:
    """For each stem that may stand in for some item stem of ``vocab`` (``{stem: id}``): the ids it
    stands in for — the item stems it neighbours at a cosine of at least ``bar``; a stem of weight 0
    (a stop word) stands in for none."""
    lowest, table = _load(str(path))
    if not lowest <= bar <= 1:
        raise ConfigError(f"method 'embedding': gate_synonyms must be in {lowest}..1, not {bar}")
    out: dict[str, list[int]] = {}
    for s, i in vocab.items():
        for t, c in table.get(s, {}).items():
            if c >= bar and weight(t) > 0:
                out.setdefault(t, []).append(i)
    return {t: np.array(sorted(ids), dtype=np.int64) for t, ids in out.items()}
