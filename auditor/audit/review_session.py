"""``auditor review``: a reviewer's decisions on a report's suspected findings, into the decisions file.

Two ways in, one file out (:mod:`auditor.audit.decisions`):

- scripted (:func:`decide_findings`): ``--confirm ID`` / ``--dismiss ID`` (review ids as reports
  show them, or a unique prefix of at least :data:`MIN_PREFIX` characters), or every unreviewed
  suspected finding at once, with one note for all;
- interactive (:func:`walk`): each suspected finding in turn, both texts and the evidence, then
  confirm / dismiss / skip / note / quit; the answers are read through a callable (the terminal's
  stdin in the CLI), and the file is written after every decision, so quitting loses nothing.

Decisions do not change the report they were made on: the next ``auditor audit`` / ``verify`` reads
the file and counts confirmed findings as contamination, dismissed ones as dismissed.

>>> import tempfile, os
>>> from auditor.report import Report
>>> f = {"check": "c", "eval_dataset": "e", "eval_id": "1", "eval_source": "e#0", "eval_ordinal": 0,
...      "train_dataset": "t", "train_id": "9", "train_source": "t:10", "train_ordinal": 9,
...      "method": "embedding", "score": 1.6, "conclusive": False, "evidence": {"tier": "suspected"},
...      "eval_hash": "aa", "train_hash": "bb"}
>>> report = Report("pass", {}, [], [f], texts={"e#0": "a red mug", "t#9": "one red mug"})
>>> path = os.path.join(tempfile.mkdtemp(), "auditor-decisions.json")
>>> decide_findings(report, path, dismiss=[review_id(f)[:6]], note="another product").counts
{'dismissed': 1}
>>> answers = iter(["c"])
>>> lines = []
>>> walk(report, path, ask=lambda prompt: next(answers), say=lines.append, revisit=True).counts
{'confirmed': 1}
>>> "a red mug" in "\\n".join(lines)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..report._items import record_label
from ..report.proof import proof_texts, where
from .decisions import CONFIRMED, DISMISSED, UNREVIEWED, Decisions, review_id, reviewable

if TYPE_CHECKING:
    from ..report import Report
    from ..report.results import FindingRow

MIN_PREFIX = 4  # shortest review-id prefix taken
SNIPPET = 1200  # characters of each text shown in the terminal
MAX_ASKS = 20  # answers that are not one of the choices before the walk stops


@dataclass
class ReviewResult:
    """What a review session did: decisions made (per kind), the file written, findings skipped."""

    path: Path
    counts: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    written: bool = False

    def add(self, decision: str) -> None:
        self.counts[decision] = self.counts.get(decision, 0) + 1


def suspected(report: Report, decisions: Decisions, revisit: bool = False) -> list[FindingRow]:
    """The report's reviewable suspected findings, one per review id (its best score), best first;
    only the unreviewed ones unless ``revisit``. Raises ConfigError when the report has suspected
    findings but none carries the content hashes decisions are keyed on (an older report)."""
    all_suspected = [
        f
        for f in report.findings
        if not f.get("conclusive", True) and (f.get("evidence") or {}).get("tier") == "suspected"
    ]
    usable = [f for f in all_suspected if reviewable(f)]
    if all_suspected and not usable:
        raise ConfigError(
            "the report's suspected findings carry no content hashes (written by an older auditor): re-run the audit"
        )
    best: dict[str, FindingRow] = {}
    for f in sorted(
        usable, key=lambda f: (-float(f["score"]), f["check"], f["eval_dataset"], f.get("eval_ordinal", 0))
    ):
        best.setdefault(review_id(f), f)
    return [f for f in best.values() if revisit or decisions.decision_of(f) == UNREVIEWED]


def _match(ids: Iterable[str], findings: list[FindingRow]) -> list[FindingRow]:
    """The findings named by review ids or unique prefixes; ConfigError for an unknown or ambiguous one."""
    by_id = {review_id(f): f for f in findings}
    out = []
    for given in ids:
        want = given.strip().lower()
        if len(want) < MIN_PREFIX:
            raise ConfigError(f"review id '{given}' is too short (give at least {MIN_PREFIX} characters)")
        hits = [rid for rid in by_id if rid.startswith(want)]
        if not hits:
            raise ConfigError(
                f"no suspected finding with review id '{given}' in this report (see auditor review --list)"
            )
        if len(hits) > 1:
            raise ConfigError(f"review id '{given}' is ambiguous ({', '.join(sorted(hits)[:5])}); give more characters")
        out.append(by_id[hits[0]])
    return out


def decide_findings(
    report: Report,
    decisions_path: str | Path,
    confirm: Iterable[str] = (),
    dismiss: Iterable[str] = (),
    unreviewed: str | None = None,
    note: str = "",
) -> ReviewResult:
    """Record decisions without asking: ``confirm`` / ``dismiss`` review ids, and ``unreviewed``
    (``"confirmed"`` / ``"dismissed"``) for every suspected finding still unreviewed. Writes the file
    once. Raises ConfigError for an unknown id, an id given both ways, or nothing to decide;
    OutputError when the file cannot be written (or is not auditor's)."""
    decisions = Decisions.load(decisions_path)
    every = suspected(report, decisions, revisit=True)
    plan: dict[str, tuple[FindingRow, str]] = {}
    for decision, ids in ((CONFIRMED, confirm), (DISMISSED, dismiss)):
        for f in _match(ids, every):
            rid = review_id(f)
            if rid in plan and plan[rid][1] != decision:
                raise ConfigError(f"review id {rid} is both confirmed and dismissed; give it once")
            plan[rid] = (f, decision)
    if unreviewed is not None:
        if unreviewed not in (CONFIRMED, DISMISSED):
            raise ConfigError(f"unreviewed findings can be confirmed or dismissed, not {unreviewed!r}")
        for f in every:
            if decisions.decision_of(f) == UNREVIEWED:
                plan.setdefault(review_id(f), (f, unreviewed))
    result = ReviewResult(Path(decisions_path))
    if not plan:
        if unreviewed is not None:
            return result  # nothing left unreviewed: nothing to write
        raise ConfigError(
            "nothing to decide: give --confirm ID, --dismiss ID or --dismiss-unreviewed / --confirm-unreviewed"
        )
    for f, decision in plan.values():
        decisions.set(f, decision, note)
        result.add(decision)
    decisions.save()
    result.written = True
    return result


def describe(report: Report, f: FindingRow, decisions: Decisions, n: int, total: int) -> list[str]:
    """The lines shown for one finding: which records, score, decision, both texts, the evidence."""
    ev, tr = proof_texts(report.texts, f)
    evidence = ", ".join(
        f"{k}={v}" for k, v in (f.get("evidence") or {}).items() if isinstance(v, (int, float, str)) and k != "tier"
    )
    current = decisions.get(f)
    spot = where(f)
    return [
        "",
        f"[{n}/{total}] review id {review_id(f)} — check {f['check']}: {f['method']} score {float(f['score']):.3f}, "
        f"{decisions.decision_of(f)}" + (f" ({current.note})" if current and current.note else ""),
        f"  eval item      {record_label(f, 'eval')}",
        f"    {_shown(ev, f['eval_source'])}",
        f"  training record {record_label(f, 'train')}" + (f", {spot}" if spot else ""),
        f"    {_shown(tr, f['train_source'])}",
        f"  evidence: {evidence or '(none recorded)'}",
    ]


def _shown(text: str | None, source: str) -> str:
    if text is None:
        return f"(text not kept in report.json: open {source})"
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET else text[:SNIPPET] + " …"


LIST_SNIPPET = 160  # characters of the eval text on a --list line


def list_snippet(shown: str) -> str:
    """A shown text (:func:`describe`'s line) cut to :data:`LIST_SNIPPET` characters for ``--list``."""
    shown = shown.strip()
    return shown if len(shown) <= LIST_SNIPPET else shown[:LIST_SNIPPET].rstrip(" …") + " …"


PROMPT = "[c]onfirm (it is contamination) / [d]ismiss (it is not) / [s]kip / [n]ote / [q]uit"


def walk(
    report: Report,
    decisions_path: str | Path,
    ask: Callable[[str], str],
    say: Callable[[str], None],
    revisit: bool = False,
) -> ReviewResult:
    """Walk the suspected findings (unreviewed ones; all with ``revisit``), asking for each.

    ``ask(prompt)`` returns the answer (``c`` / ``d`` / ``s`` / ``n`` / ``q`` or the word; ``q`` also
    when input ends); ``say(line)`` shows a line. The file is written after each decision.
    Raises OutputError when the file cannot be written (or is not auditor's)."""
    decisions = Decisions.load(decisions_path)
    todo = suspected(report, decisions, revisit=revisit)
    result = ReviewResult(Path(decisions_path))
    if not todo:
        say("nothing to review: no unreviewed suspected findings in this report")
        return result
    for n, f in enumerate(todo, 1):
        for line in describe(report, f, decisions, n, len(todo)):
            say(line)
        note, answer = "", ""
        for _ in range(MAX_ASKS):
            answer = (ask(PROMPT) or "").strip().lower()[:1]
            if answer == "n":
                note = ask("note").strip()
            elif answer in ("c", "d", "s", "q"):
                break
            else:
                say("answer c, d, s, n or q")
        else:
            answer = "q"  # input that never answers: stop, keeping what was decided
        if answer in ("c", "d"):
            decisions.set(f, CONFIRMED if answer == "c" else DISMISSED, note)
            decisions.save()
            result.written = True
            result.add(CONFIRMED if answer == "c" else DISMISSED)
        elif answer == "q":
            result.skipped += len(todo) - n + 1
            break
        else:
            result.skipped += 1
    return result
