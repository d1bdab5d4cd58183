"""The ``embedding`` decision: conclusive, suspected, or nothing, from evidence beyond the cosine
(docs/methods.md#paraphrase-tier-embedding).

``score = cosine + w_align · align_f1 + w_margin · clip(margin, 0, margin_cap)`` (the parts:
:class:`~auditor.methods.embedding.evidence.Parts`): the sentence cosine, BERTScore-style token
alignment (a same-topic request that asks for something else leaves its distinguishing tokens
unmatched), and how much closer the training segment is to this item than to any other.
**Conclusive**: ``score >= conclusive`` with the slot values agreeing (every number of the eval
segment in the training segment, no conflict of names / numbers) or, for code, a function of the eval
code defined by name (:func:`~auditor.methods.embedding.evidence.same_signature`); ``conclusive_code``
when both sides are code. **Suspected**: otherwise ``score >= suspected``, kept for review. The numbers
are fixed (no calibration on the eval set), chosen by grids over nine fit files, in-sample there
(``benchmarks/bench_paraphrase.py`` prints them and the leave-one-file-out figures); the code bars sit
just above the highest wrong-item code match seen (1.37) and at the 2nd percentile of right ones.

>>> from auditor.methods.embedding.evidence import Parts
>>> d = Decision()
>>> p = Parts(cosine=0.95, lexical=0.5, margin=0.3, mutual=1, overlap=0.7, entities=1.0, conflict=0,
...           align_f1=0.9, values=1.0)
>>> d.classify(p)
'conclusive'
>>> d.classify(Parts(cosine=0.95, lexical=0.5, margin=0.3, mutual=1, overlap=0.7, entities=0.5,
...                  conflict=0, align_f1=0.9, values=0.5))
'suspected'

Errors: :class:`~auditor.errors.ConfigError` when ``suspected`` is above ``conclusive``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ...errors import ConfigError
from .evidence import Parts

CONCLUSIVE = "conclusive"
SUSPECTED = "suspected"


@dataclass(frozen=True)
class Decision:
    w_align: float = 1.0
    w_margin: float = 1.0
    margin_cap: float = 0.2
    conclusive: float = 1.95
    suspected: float = 1.45
    conclusive_code: float = 1.4  # code on both sides (HumanEval-style rewrites) scores lower throughout
    suspected_code: float = 1.0

    def __post_init__(self) -> None:
        for s, c in ((self.suspected, self.conclusive), (self.suspected_code, self.conclusive_code)):
            if all(isinstance(x, (int, float)) for x in (s, c)) and s > c:  # else: check_numbers says it
                raise ConfigError(
                    f"method 'embedding': a suspected threshold ({s:g}) is above its conclusive one ({c:g})"
                )

    def score(self, p: Parts) -> float:
        return p.cosine + self.w_align * p.align_f1 + self.w_margin * max(0.0, min(self.margin_cap, p.margin))

    def classify(self, p: Parts, code: bool = False, signature: bool = False) -> str | None:
        """``"conclusive"``, ``"suspected"`` or None for one candidate (``code``: both sides are code;
        ``signature``: the training code defines a function the eval code defines, by name)."""
        s = self.score(p)
        conclusive, suspected = (
            (self.conclusive_code, self.suspected_code) if code else (self.conclusive, self.suspected)
        )
        values = p.values >= 1.0 and not p.conflict
        # code needs the same evidence as text: its values, or (a rewrite renames the example values) its
        # signature; a high score alone is a function of the same kind (``string_xor`` / ``xor(a, b)``)
        if s >= conclusive and (values or (code and signature)):
            return CONCLUSIVE
        if s >= suspected:
            return SUSPECTED
        return None

    def describe(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "rule": (
                f"score = cosine + {self.w_align:g}*align_f1 + {self.w_margin:g}*clip(margin, 0, {self.margin_cap:g}); "
                f"conclusive: score >= {self.conclusive:g} with every eval number present and no entity conflict; "
                f"suspected: score >= {self.suspected:g}; code on both sides: {self.conclusive_code:g} / "
                f"{self.suspected_code:g}, conclusive with every eval number present or the eval function's name defined"
            ),
        }
