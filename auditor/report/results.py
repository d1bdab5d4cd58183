"""What an audit decides, typed: one :class:`CheckResult` per check and the run's :class:`RunStats`.

Their ``to_dict()`` is the object ``report.json`` holds (``checks[i]``, ``run``), keys in field
order; ``from_dict()`` reads what any version wrote (:class:`~auditor.io.jsonable.JsonObject`: unknown
keys kept, missing ones defaulted, a missing required one a ValueError).

>>> c = CheckResult(name="webshop", train=["train"], eval=["test"], methods=["exact"], eval_items=500,
...                 contaminated_items=43, contaminated_share=0.086, verdict="fail")
>>> c.contaminated_items, c.to_dict()["skipped"]
(43, {'eval': 0, 'train': 0})
>>> CheckResult.from_dict({**c.to_dict(), "matrix": [{"train": "train", "eval": "test", "contaminated_items": 43}]}).matrix
[MatrixCell(train='train', eval='test', contaminated_items=43)]

A finding stays the JSON object ``report.json`` holds (``findings[i]``), typed as :class:`FindingRow`
(a ``TypedDict``: a plain dict at run time, so every renderer and the JSON stay as they were):

>>> sorted(FindingRow.__required_keys__ ^ set(FindingRow.__annotations__))
['decision', 'review_id']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..io.jsonable import OMIT_NONE, JsonObject


class _FindingKeys(TypedDict):
    """The keys every finding of a report written by this version has (in the order written): a
    finding's own (:class:`auditor.methods.base.FindingFields`, what ``Finding.to_dict`` gives; the
    report keeps its own copy of their names so that reading a report needs no detection method) and
    its records' names."""

    check: str
    eval_dataset: str
    eval_id: str | int  # str here; a report of an older version or written by hand may hold a whole number
    eval_source: str
    train_dataset: str
    train_id: str | int
    train_source: str
    method: str
    score: float
    conclusive: bool
    evidence: dict[str, Any]  # method-specific; every tier's has ``field`` and ``span`` (docs/report.md)
    eval_ordinal: int
    train_ordinal: int
    eval_hash: str  # content hashes of the compared texts: what review decisions are keyed on
    train_hash: str
    eval_ref: str  # the record named for a reader (:meth:`auditor.datasets.dataset.Dataset.ref`)
    train_ref: str


class FindingRow(_FindingKeys, total=False):
    """One finding as ``report.json`` holds it (``findings[i]``; keys: docs/report.md). A suspected
    finding also has ``review_id`` and ``decision`` (:func:`auditor.audit.decisions.annotate`). A report
    loaded from an older version may lack keys (:func:`auditor.report.validate.check_report` requires
    only its ``REQUIRED``): renderers read the others with ``.get``."""

    review_id: str
    decision: str  # unreviewed / confirmed / dismissed


@dataclass
class SideCounts(JsonObject):
    """A count per side of a check (records or files skipped)."""

    eval: int = 0
    train: int = 0


@dataclass
class MatrixCell(JsonObject):
    """Eval items of ``eval`` with a conclusive finding in training set ``train``."""

    train: str
    eval: str
    contaminated_items: int = 0


@dataclass
class EvalSubset(JsonObject):
    """Eval items and contaminated ones in one subset of an eval set (its split or group; ``all``)."""

    eval: str
    subset: str
    eval_items: int = 0
    contaminated_items: int = 0


#: what :attr:`NotChecked.status` says: a registered method the check did not run, or one it ran that
#: indexed no eval item, or that read none of a training set's records
NOT_RUN, NOTHING_INDEXED, NOTHING_SEARCHED = "not_run", "nothing_indexed", "nothing_searched"


@dataclass
class NotChecked(JsonObject):
    """A detection method that checked nothing of a check, and why (``checks[].not_checked``;
    :func:`auditor.audit.unchecked.not_checked`): ``status`` :data:`NOT_RUN` (registered, not run:
    not selected, run only when named, not installed), :data:`NOTHING_INDEXED` (run, no eval item
    indexed) or :data:`NOTHING_SEARCHED` (run, none of the records of training set ``dataset`` read).
    ``incomplete``: the check asked for the method, so it is never ``pass`` (at best ``incomplete``)."""

    method: str
    status: str
    reason: str
    dataset: str | None = field(default=None, metadata=OMIT_NONE)
    incomplete: bool = False

    def where(self) -> str:
        """``"embedding"``, ``"embedding on training set t"``: what was not checked."""
        return f"{self.method} on training set {self.dataset}" if self.dataset else self.method


@dataclass(kw_only=True)
class CheckResult(JsonObject):
    """One check's outcome: counts, verdict and why (``notes``), per method and per subset. Keyword
    arguments only; ``name``, ``train``, ``eval``, ``methods``, ``eval_items``, ``contaminated_items``
    and ``verdict`` (``pass`` / ``fail`` / ``incomplete``) are required."""

    name: str
    train: list[str]
    eval: list[str]
    methods: list[str]
    eval_items: int
    contaminated_items: int
    contaminated_share: float = 0.0
    suspected: int = 0  # eval items with only suspected findings (confirmed + unreviewed + dismissed)
    unreviewed: int = 0  # ... with a suspected finding no reviewer decided (auditor.audit.decisions)
    confirmed: int = 0  # ... with one a reviewer confirmed: counted in contaminated_items
    dismissed: int = 0  # ... whose suspected findings were all dismissed
    #: eval items counted against the allowance under fail_on (auditor.audit.verdict.counted)
    counted_items: int = 0
    fail_on: str = "conclusive"
    max_contaminated: float = 0
    allowance: int = 0
    verdict: str
    items_by_method: dict[str, int] = field(default_factory=dict)  # eval items with any finding of the method
    conclusive_by_method: dict[str, int] = field(default_factory=dict)  # ... with a conclusive one
    suspected_by_method: dict[str, int] = field(default_factory=dict)  # ... with only suspected ones
    train_records: int = 0
    skipped: SideCounts = field(default_factory=SideCounts)  # records
    skipped_files: SideCounts = field(default_factory=SideCounts)
    uncovered_items: int = 0  # eval items no conclusive method could check
    #: eval records skipped as bad input (``on_error = "skip"``), each ``{dataset, source, reason}``:
    #: unchecked items (absent when none)
    skipped_eval_items: list[dict[str, str]] | None = field(default=None, metadata=OMIT_NONE)
    method_stats: list[dict[str, Any]] = field(default_factory=list)  # each index's stats() (method-specific)
    #: every registered method that checked nothing here (not run, or nothing indexed / searched), with why
    not_checked: list[NotChecked] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    matrix: list[MatrixCell] = field(default_factory=list)
    eval_subsets: list[EvalSubset] = field(default_factory=list)
    boilerplate: dict[str, Any] = field(default_factory=dict)  # the masker's report (auditor.masking.boilerplate)
    novel_error_types: list[Any] = field(default_factory=list)  # auditor.audit.errortypes


@dataclass
class RunStats(JsonObject):
    """How the run went: tool, engine, timings, throughput, memory. Every field may be absent in an
    older or hand-made report (``None``, and then not written)."""

    tool: str | None = field(default=None, metadata=OMIT_NONE)
    version: str | None = field(default=None, metadata=OMIT_NONE)
    engine: str | None = field(default=None, metadata=OMIT_NONE)
    started: str | None = field(default=None, metadata=OMIT_NONE)  # ISO 8601, UTC
    seconds: float | None = field(default=None, metadata=OMIT_NONE)
    caller_cpu_s: float | None = field(default=None, metadata=OMIT_NONE)  # planning, merging, indexes, report
    worker_cpu_s: float | None = field(default=None, metadata=OMIT_NONE)  # the scan's workers
    scan: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)  # ScanStats.as_dict()
    encoding: list[dict[str, Any]] | None = field(default=None, metadata=OMIT_NONE)  # embedding's, per check
    workers: int | None = field(default=None, metadata=OMIT_NONE)
    findings_store: str | None = field(default=None, metadata=OMIT_NONE)
    findings_total: int | None = field(default=None, metadata=OMIT_NONE)
    records_per_s: float | None = field(default=None, metadata=OMIT_NONE)
    mb_per_s: float | None = field(default=None, metadata=OMIT_NONE)
    peak_rss_mb: float | None = field(default=None, metadata=OMIT_NONE)
    peak_worker_rss_mb: float | None = field(default=None, metadata=OMIT_NONE)

    def header(self) -> tuple[str, str, str, str]:
        """Version, engine, start time and seconds as a reader is shown them (``?`` where not said)."""

        def shown(value: object) -> str:
            return "?" if value is None else str(value)

        return shown(self.version), shown(self.engine), shown(self.started), shown(self.seconds)


@dataclass(kw_only=True)
class ProvenanceResult(JsonObject):
    """One ``[[provenance]]`` entry's outcome: every derived record traced to its source item and split
    (``records``: one row per derived record), the counts per split and per way of matching, and the
    verdict (``fail`` when more than ``allowance`` records trace to a held-out split). ``name`` and
    ``verdict`` are required; the rest default as an older report may lack them."""

    name: str
    derived: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    held_out_splits: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    id_pattern: str | None = None
    records_total: int = 0
    by_split: dict[str, int] = field(default_factory=dict)
    share_by_split: dict[str, float] = field(default_factory=dict)
    source_items_by_split: dict[str, int] = field(default_factory=dict)
    by_how: dict[str, int] = field(default_factory=dict)
    unattributed: int = 0
    conflicts: int = 0
    held_out_records: int = 0
    ambiguous: int = 0
    max_held_out: float = 0
    allowance: int = 0
    verdict: str
    skipped: int = 0
    source_skipped: int = 0
    source_split_sizes: dict[str, int] = field(default_factory=dict)
    per_dataset: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class DecisionsRead(JsonObject):
    """``decisions``: the review decisions file a run read (:mod:`auditor.audit.decisions`), how many
    decisions it holds and how many of them this report's suspected findings took."""

    file: str = ""
    read: int = 0
    applied: int = 0


@dataclass
class CleanSummary(JsonObject):
    """``clean``: where ``--write-clean`` wrote the training sets without the records behind findings
    (:func:`auditor.audit.clean.write_clean`): the folder, the removed records' file, per dataset what
    was kept and removed and each file written, and the manifest that re-audits the cleaned data."""

    dir: str = ""
    removed_file: str = ""
    #: dataset → ``{kept, removed, not_written_skipped, files: [{source, written, format, records}],
    #: not_written_files}``
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    manifest: str | None = field(default=None, metadata=OMIT_NONE)
