"""One audit between its phases: :class:`AuditRun` (the config, the resolved datasets, the engine,
the findings store, the checks' state and the run's counts and timings) and :class:`CheckState` (one
check between preparing its indexes and deciding its verdict).

:func:`auditor.audit.run.run_audit` makes the run (``prepare``), and each phase takes it:
:func:`auditor.audit.checks.prepare_checks` (eval records, indexes, masking),
:func:`auditor.audit.checks.scan` (one pass per training set; the findings read back from the store
once), :func:`auditor.audit.decide.decide_check` (a check's counts and verdict) and ``assemble``
(the :class:`~auditor.report.Report`, built once).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..datasets.dataset import Dataset
from ..engines import Engine
from ..methods.base import Finding, Index
from ..records.record import Record
from ..report.results import CheckResult, ProvenanceResult
from ..scan.job import ScanStats
from ..store.findings import FindingStore
from ..store.texts import TEXTS_PER_UNIT, TextCapture
from .config import AuditConfig, CheckSpec
from .decisions import Decisions
from .errortypes import ErrorTypes


@dataclass
class CheckState:
    """One check between preparing (indexes, masking) and its verdict."""

    check: CheckSpec
    method_names: list[str]
    eval_records: list[Record]
    eval_skipped: int
    indexes: list[Index]
    masker: Any  # auditor.text.masking.Masker
    #: (training set, eval set) → eval ordinals with a conclusive finding there (the matrix)
    pairs: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    #: training set → method → its records the method read (:class:`~auditor.audit.unchecked.SearchedStage`)
    searched: dict[str, Counter] = field(default_factory=dict)


@dataclass(frozen=True)
class Clock:
    """When a run started (UTC), and its wall-clock and CPU counters then."""

    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    wall0: float = field(default_factory=time.perf_counter)
    cpu0: float = field(default_factory=time.process_time)

    def seconds(self) -> float:
        return round(time.perf_counter() - self.wall0, 3)

    def cpu_s(self) -> float:
        """CPU seconds of the calling process since the start."""
        return round(time.process_time() - self.cpu0, 3)


def _capture() -> TextCapture:
    # texts for the report, sent back by the workers with their findings (no second pass)
    return TextCapture(window=4 * TEXTS_PER_UNIT)


@dataclass
class AuditRun:
    """What the phases of one run share (see the module doc)."""

    config: AuditConfig
    datasets: dict[str, Dataset]
    engine: Engine
    store: FindingStore
    decisions: Decisions
    clock: Clock = field(default_factory=Clock)  # made by prepare() before any work
    scan_stats: ScanStats = field(default_factory=ScanStats)
    error_types: ErrorTypes = field(default_factory=ErrorTypes)
    capture: TextCapture = field(default_factory=_capture)
    checks: list[CheckState] = field(default_factory=list)
    #: every finding the store kept, read back once after the scan, in the store's order
    findings: list[Finding] = field(default_factory=list)
    findings_total: int = 0
    results: list[CheckResult] = field(default_factory=list)
    provenance: list[ProvenanceResult] = field(default_factory=list)

    def train_sets(self) -> list[Dataset]:
        """The training datasets of the run's checks, by name."""
        return [self.datasets[n] for n in sorted({n for c in self.config.checks for n in c.train})]

    def used(self) -> list[str]:
        """The datasets a check or a provenance entry reads, by name (the report describes these)."""
        used = {n for c in self.config.checks for n in c.train + c.eval}
        used |= {n for p in self.config.provenance for n in p.derived + p.sources}
        return sorted(used)
