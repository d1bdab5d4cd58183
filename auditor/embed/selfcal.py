"""Self-calibration of the ``embedding`` decision from the eval set itself.

Distinct eval items are, by construction, not copies of each other. Scoring every eval item, as if
it were a training record, against the *other* eval items (its own item and items with the same
normalized text left out) therefore samples what "a different item from the same distribution"
scores — on a template-like set (WebShop's "i need a … under 40 dollars", ToolBench's "I'm planning a
trip…") that is far above the default threshold. Two rules come from that sample:

* **threshold** = ``max(configured threshold, quantile_q(null) + pad)``, where ``null`` holds, per eval
  item, the best combined score it gets against another eval item. With ``q = 0.995`` (the default)
  about one training record in 200 drawn from the eval distribution (but not a copy) would reach the
  quantile by chance; the ``pad`` (0.05) moves the line above it.
* **near-copies** (segment cosine ``>= copy_cosine``, 0.98) need only the configured threshold, and
  eval-vs-eval near-copies are left out of the sample (an eval set holding one item twice says nothing
  about different items).
* **rival**: per eval item, the best score any *other* eval item gets against it. A training record
  must beat it by ``rival_margin`` — it must be closer to the item than the item's own nearest
  neighbour in the eval set is (a requirement, where ``mutual`` is only a bonus).

Too few eval items (< ``min_items`` groups) give no estimate: the configured threshold is used and
the rule says so. :meth:`SelfCalibration.describe` goes into the check's ``method_stats``.

>>> import numpy as np
>>> c = SelfCalibration.fit(np.array([0.6, 0.7, 0.8, 1.0] * 30), base=0.5, quantile=0.995, pad=0.05,
...                         rival_margin=0.0, min_items=20)
>>> round(c.threshold, 3), c.accepts(1.2, rival=1.1), c.accepts(1.2, rival=1.25), c.accepts(1.0, rival=0.0)
(1.05, True, False, False)
>>> c.accepts(0.9, rival=1.5, cosine=0.99)
True

Errors: :class:`~auditor.errors.ConfigError` for a quantile outside (0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError


@dataclass
class SelfCalibration:
    base: float
    threshold: float
    rival_margin: float
    rule: str
    stats: dict[str, Any] = field(default_factory=dict)
    copy_cosine: float = 0.98

    @classmethod
    def off(
        cls, base: float, why: str = "configured threshold (self-calibration off)", copy_cosine: float = 0.98
    ) -> SelfCalibration:
        return cls(base, base, float("-inf"), why, copy_cosine=copy_cosine)

    @classmethod
    def fit(
        cls,
        null: np.ndarray,
        base: float,
        quantile: float,
        pad: float,
        rival_margin: float,
        min_items: int,
        copy_cosine: float = 0.98,
    ) -> SelfCalibration:
        """``null``: per eval item, its best score against another eval item (``-inf``: no candidate)."""
        if not 0 < quantile <= 1:
            raise ConfigError(f"method 'embedding': null_quantile must be in (0, 1], not {quantile}")
        null = np.asarray(null, dtype=np.float64)
        if len(null) < min_items:
            return cls(
                base,
                base,
                rival_margin,
                f"configured threshold {base:g} (only {len(null)} eval items: "
                f"too few to self-calibrate, need {min_items})",
                {"eval_items": int(len(null))},
                copy_cosine,
            )
        scored = np.where(np.isfinite(null), null, -1.0)  # no candidate at all: far below any threshold
        q = float(np.quantile(scored, quantile))
        threshold = max(base, q + pad)
        qs = {f"q{p:g}": round(float(np.quantile(scored, p / 100)), 4) for p in (50, 90, 99, 99.5)}
        rule = (
            f"max(configured {base:g}, q{quantile * 100:g} of eval-vs-eval nearest-neighbour scores "
            f"{q:.3f} + {pad:g}) = {threshold:.3f}; and score > the item's best other-eval-item score"
            + (f" + {rival_margin:g}" if rival_margin else "")
            + f"; a near-copy (cosine >= {copy_cosine:g}) needs only the configured threshold"
        )
        stats = {
            "eval_items": int(len(null)),
            "null_quantile": quantile,
            "null_score_at_quantile": round(q, 4),
            "pad": pad,
            "null_scores": qs,
            "null_max": round(float(scored.max()), 4),
            "share_null_above_base": round(float((scored >= base).mean()), 4),
        }
        return cls(base, threshold, rival_margin, rule, stats, copy_cosine)

    def accepts(self, score: float, rival: float, cosine: float = 0.0) -> bool:
        if cosine >= self.copy_cosine:  # the same text: the eval set's neighbourhood does not matter
            return score >= self.base
        if score < self.threshold:
            return False
        return not math.isfinite(rival) or score > rival + self.rival_margin

    def describe(self) -> dict[str, Any]:
        return {
            "threshold": round(self.threshold, 4),
            "configured_threshold": self.base,
            "rival_margin": self.rival_margin if math.isfinite(self.rival_margin) else None,
            "rule": self.rule,
            **self.stats,
        }
