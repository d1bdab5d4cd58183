"""Review decisions on suspected findings, kept in a file committed beside the manifest.

A suspected finding (a possible paraphrase) cannot be settled by the tool; a reviewer settles it
once (``auditor review``) and the answer is remembered: later audits read the file, count
*confirmed* findings as contamination, list *dismissed* ones as dismissed, and call only the rest
*unreviewed* (what ``fail_on = "unreviewed"`` fails on). This is the baseline file of secret
scanners (detect-secrets' ``.secrets.baseline``, gitleaks' ignore file) for contamination.

A decision is keyed on the eval item's id and the content hashes of the two texts compared (the
eval item's text and the training text that matched: :attr:`Finding.eval_hash` /
:attr:`Finding.train_hash`), never on a record's position, line or file: re-ordered, re-split or
re-numbered training files keep their decisions, and an eval item or training text that changed is
a new question (unreviewed again). Its short id (:func:`review_id`) is what reports show and what
``auditor review --confirm ID`` takes.

The file (:data:`DECISIONS_FILE`, JSON) is written deterministically (decisions sorted by eval
item, then training text; stable key order; no timestamps), so it diffs well in review; it is
written atomically and only over a file that already is a decisions file (a user's other file at
that path is never replaced).

>>> import tempfile, os
>>> f = {"eval_dataset": "test", "eval_id": "7", "eval_hash": "e1", "train_hash": "t1",
...      "train_dataset": "train", "train_id": "12", "method": "embedding", "score": 1.6}
>>> path = os.path.join(tempfile.mkdtemp(), DECISIONS_FILE)
>>> d = Decisions.load(path)
>>> d.decision_of(f)
'unreviewed'
>>> _ = d.set(f, DISMISSED, note="same template, other product")
>>> d.save().name
'auditor-decisions.json'
>>> again = Decisions.load(path)
>>> again.decision_of(f), again.get(f).note, review_id(f) == again.get(f).id
('dismissed', 'same template, other product', True)
>>> again.decision_of({**f, "train_ordinal": 99, "train_id": "other"})  # the same text elsewhere
'dismissed'
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, OutputError
from ..io.atomic import atomic_write_text
from ..io.jsonread import load_json
from ..methods.base import content_hash

if TYPE_CHECKING:
    from ..methods.base import Finding
    from ..report.results import FindingRow

#: the decisions file's default name, beside the manifest (``verify``) or in the current folder (``audit``)
DECISIONS_FILE = "auditor-decisions.json"
FORMAT = "auditor-decisions"
VERSION = 1
CONFIRMED, DISMISSED, UNREVIEWED = "confirmed", "dismissed", "unreviewed"
DECIDED = (CONFIRMED, DISMISSED)
_ABOUT = (
    "Review decisions on suspected findings (auditor review); commit this file beside the manifest. "
    "Keyed on the eval item id and the content hashes of both texts, not on record positions."
)


def key_of(f: FindingRow | Finding | Decision) -> tuple[str, str, str]:
    """The decision key of a finding (a report.json finding dict or a :class:`Finding`) or of a decision."""
    get = f.get if isinstance(f, dict) else lambda k, d=None: getattr(f, k, d)
    return str(get("eval_id", "")), str(get("eval_hash", "") or ""), str(get("train_hash", "") or "")


def reviewable(f: FindingRow | Finding | Decision) -> bool:
    """Does the finding carry the content hashes a decision is keyed on (a report of this version)?"""
    _, eh, th = key_of(f)
    return bool(eh and th)


def review_id(f: FindingRow | Finding | Decision) -> str:
    """The short id of a finding's decision key (10 hex digits), shown in reports and taken by
    ``auditor review --confirm`` / ``--dismiss``."""
    return content_hash(*key_of(f))[:10]


@dataclass(frozen=True)
class Decision:
    """One reviewer's answer for one (eval item, training text) pair; ``eval`` / ``train`` name the
    records it was made on (for a reader: the key is ``eval_id``, ``eval_hash``, ``train_hash``)."""

    id: str
    decision: str
    eval_id: str
    eval_hash: str
    train_hash: str
    eval: str = ""
    train: str = ""
    method: str = ""
    note: str = ""

    def key(self) -> tuple[str, str, str]:
        return self.eval_id, self.eval_hash, self.train_hash

    def to_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class Decisions:
    """The decisions of one file (empty when the file does not exist yet)."""

    def __init__(self, path: str | Path | None, entries: dict[tuple[str, str, str], Decision] | None = None):
        self.path = Path(path) if path is not None else None
        self.entries: dict[tuple[str, str, str], Decision] = dict(entries or {})
        self.exists = bool(self.path and self.path.exists())

    @classmethod
    def load(cls, path: str | Path | None) -> Decisions:
        """Read ``path``; a missing file is no decisions. Raises InputError (naming the file and the
        problem) for a file that is not a decisions file or holds a bad entry."""
        if path is None or not (Path(path).exists() or Path(path).is_symlink()):
            return cls(path)
        doc = load_json(path)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InputError(str(path), None, f'not an auditor decisions file (no "format": "{FORMAT}")')
        if doc.get("version") != VERSION:
            raise InputError(
                str(path), None, f"decisions file version {doc.get('version')!r}; this auditor reads {VERSION}"
            )
        rows = doc.get("decisions")
        if not isinstance(rows, list):
            raise InputError(str(path), None, "'decisions' must be a list")
        entries: dict[tuple[str, str, str], Decision] = {}
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise InputError(str(path), f"decisions[{i}]", "must be an object")
            fields = Decision.__dataclass_fields__
            unknown = sorted(set(row) - set(fields))
            if unknown:
                raise InputError(str(path), f"decisions[{i}]", f"unknown key '{unknown[0]}'")
            if not all(isinstance(v, str) for v in row.values()):
                raise InputError(str(path), f"decisions[{i}]", "every value must be a string")
            missing = [k for k in ("decision", "eval_id", "eval_hash", "train_hash") if not row.get(k)]
            if missing:
                raise InputError(str(path), f"decisions[{i}]", f"missing '{missing[0]}'")
            if row["decision"] not in DECIDED:
                raise InputError(
                    str(path), f"decisions[{i}]", f"decision must be {' or '.join(DECIDED)}, not '{row['decision']}'"
                )
            d = Decision(**{"id": "", **row})
            d = Decision(**{**d.to_dict(), "id": review_id(d)})  # the id follows the key
            entries[d.key()] = d
        return cls(path, entries)

    def get(self, f: FindingRow | Finding) -> Decision | None:
        return self.entries.get(key_of(f)) if reviewable(f) else None

    def decision_of(self, f: FindingRow | Finding) -> str:
        """``confirmed``, ``dismissed`` or ``unreviewed`` for a suspected finding."""
        d = self.get(f)
        return d.decision if d else UNREVIEWED

    def set(self, f: FindingRow, decision: str, note: str = "") -> Decision:
        """Record ``decision`` for finding ``f`` (replacing an earlier one). Raises ValueError for a
        finding without content hashes (written by an older auditor) or an unknown decision."""
        if decision not in DECIDED:
            raise ValueError(f"decision must be {' or '.join(DECIDED)}, not {decision!r}")
        if not reviewable(f):
            raise ValueError("this finding has no content hashes (a report of an older auditor): re-run the audit")
        old = self.get(f)
        d = Decision(
            id=review_id(f),
            decision=decision,
            eval_id=key_of(f)[0],
            eval_hash=key_of(f)[1],
            train_hash=key_of(f)[2],
            eval=f"{f.get('eval_dataset', '')} {f.get('eval_id', '')}".strip(),
            train=str(f.get("train_ref") or f"{f.get('train_dataset', '')} {f.get('train_id', '')}".strip()),
            method=str(f.get("method", "")),
            note=note or (old.note if old else ""),
        )
        self.entries[d.key()] = d
        return d

    def to_json(self) -> str:
        rows = [d.to_dict() for _, d in sorted(self.entries.items(), key=lambda kv: (_natural(kv[0][0]), kv[0]))]
        doc = {"format": FORMAT, "version": VERSION, "about": _ABOUT, "decisions": rows}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def save(self) -> Path:
        """Write the file atomically. Raises OutputError when no path is set, or the path holds
        something that is not a decisions file (never written over) or is not a regular file."""
        if self.path is None:
            raise OutputError("", "no decisions file given")
        path = self.path
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise OutputError(str(path), "is not a regular file; give another --decisions path")
        if path.exists():
            try:
                Decisions.load(path)
            except InputError as e:
                raise OutputError(
                    str(path), f"exists and is not an auditor decisions file ({e.problem}); not written over"
                ) from None
        try:
            atomic_write_text(path, self.to_json())
        except OSError as e:
            raise OutputError(str(path), f"cannot write: {e.strerror or e}") from None
        self.exists = True
        return path


def _natural(eval_id: str) -> tuple:
    """Numeric ids in number order (``2`` before ``10``), others after them in text order."""
    return (0, int(eval_id), "") if eval_id.isdigit() else (1, 0, eval_id)


def default_path(folder: str | Path | None = None) -> str:
    """The decisions file in ``folder`` (the manifest's; the current folder when None)."""
    return os.path.join(folder, DECISIONS_FILE) if folder is not None else DECISIONS_FILE


def classify(
    findings: list[Finding], conclusive_items: set[tuple[str, int]], decisions: Decisions
) -> dict[tuple[str, int], str]:
    """The review class of each eval item (``(eval_dataset, eval_ordinal)``) of one check that has only
    suspected findings: ``confirmed`` when a reviewer confirmed one of them, else ``unreviewed`` when
    one has no decision, else ``dismissed``. ``findings`` are :class:`Finding` objects of the check.

    >>> from auditor.methods.base import Finding
    >>> def s(ordinal, train_hash):
    ...     return Finding("e", str(ordinal), "", "t", "", "", "embedding", 1.5, conclusive=False,
    ...                    evidence={"tier": "suspected"}, eval_ordinal=ordinal, eval_hash="h", train_hash=train_hash)
    >>> d = Decisions(None)
    >>> _ = d.set(s(1, "a").to_dict(), DISMISSED)
    >>> classify([s(1, "a"), s(2, "b"), s(3, "c")], {("e", 3)}, d)
    {('e', 1): 'dismissed', ('e', 2): 'unreviewed'}
    """
    classes: dict[tuple[str, int], str] = {}
    rank = {DISMISSED: 0, UNREVIEWED: 1, CONFIRMED: 2}
    for f in findings:
        item = (f.eval_dataset, f.eval_ordinal)
        if not f.suspected or item in conclusive_items:
            continue
        mine = decisions.decision_of(f)
        if item not in classes or rank[mine] > rank[classes[item]]:
            classes[item] = mine
    return dict(sorted(classes.items()))


def annotate(findings: list[FindingRow], decisions: Decisions) -> int:
    """Mark every suspected finding of a report (dicts, in place) with its ``review_id`` and
    ``decision``; returns how many carry a decision from the file."""
    used = 0
    for f in findings:
        if f.get("conclusive", True) or (f.get("evidence") or {}).get("tier") != "suspected":
            continue
        if reviewable(f):
            f["review_id"] = review_id(f)
        f["decision"] = decisions.decision_of(f)
        used += f["decision"] != UNREVIEWED
    return used
