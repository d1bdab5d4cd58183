"""Word-stem neighbours for the lexical gate (:mod:`.gate`): a rewording replaces an item's words with
near-synonyms ("a car accident" → "a vehicle collision"), so the gate counts a text's stem as one of an
item's when the two neighbour in the bundled table at a cosine of at least the ``synonyms`` bar.

The table (``auditor/data/gate_synonyms.json``, built by ``scripts/build_gate_synonyms.py``): the whole
words of the bundled model's vocabulary, each encoded alone by it; two stems neighbour when two of
their words reach ``min_cosine`` (0.7). No benchmark or corpus text went into it.

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
MIN_COSINE = 0.7  # the lowest cosine the bundled table keeps: a ``synonyms`` bar may not be lower


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
    """``bar`` when it is 0 (off) or within :data:`MIN_COSINE`..1 (no file read), else :class:`ConfigError`."""
    if bar and not MIN_COSINE <= bar <= 1:
        raise ConfigError(f"method 'embedding': gate_synonyms must be 0 (off) or in {MIN_COSINE}..1, not {bar}")
    return float(bar)


def load_synonyms(path: str | Path = SYNONYMS) -> dict[str, dict[str, float]]:
    """``{stem: {neighbour stem: cosine}}`` of the table (shared: do not modify)."""
    return _load(str(path))[1]


def neighbours(
    vocab: dict[str, int], bar: float, weight: Callable[[str], float], path: str | Path = SYNONYMS
) -> dict[str, np.ndarray]:
    """Each stem that may stand in for item stems of ``vocab`` (``{stem: id}``) → their ids: the item
    stems it neighbours at ``bar`` or more (a stem of weight 0 for none)."""
    lowest, table = _load(str(path))
    if not lowest <= bar <= 1:
        raise ConfigError(f"method 'embedding': gate_synonyms must be in {lowest}..1, not {bar}")
    out: dict[str, list[int]] = {}
    for s, i in vocab.items():
        for t, c in table.get(s, {}).items():
            if c >= bar and weight(t) > 0:
                out.setdefault(t, []).append(i)
    return {t: np.array(sorted(ids), dtype=np.int64) for t, ids in out.items()}
