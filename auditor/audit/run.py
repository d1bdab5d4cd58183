"""Run an audit, in phases over one run (:class:`~auditor.audit.state.AuditRun`): :func:`prepare`
(datasets, engine, store, decisions), :func:`~auditor.audit.checks.prepare_checks` (indexes, masking),
:func:`~auditor.audit.checks.scan` (each training set once), :func:`~auditor.audit.decide.decide_check`
(each check's verdict), :func:`attribute` (``[[provenance]]``), :func:`assemble` (the report, built
once) and, with ``write_clean``, :func:`clean` (the cleaned training sets).

>>> from auditor.audit.config import AuditConfig, CheckSpec
>>> from auditor.datasets.dataset import DatasetSpec
>>> cfg = AuditConfig(
...     datasets={"test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
...               "train": DatasetSpec("train", ["webshop:500:2000"], role="train")},
...     checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])])
>>> report = run_audit(cfg)
>>> report.verdict, report.checks[0].contaminated_items > 0
('fail', True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from .._version import __version__
from ..datasets.dataset import Dataset
from ..engines import get_engine
from ..errors import ConfigError, OutputError
from ..methods.base import Finding
from ..report.results import CleanSummary, DecisionsRead, FindingRow, RunStats
from ..scan.progress import peak_rss_mb
from ..store.texts import collect_texts
from .attribution import run_provenance
from .checks import prepare_checks, scan
from .clean import check_apart, clean_hits, plan_clean, write_clean
from .clean_manifest import write_clean_manifest
from .config import AuditConfig, make_store
from .decide import decide_check
from .decisions import Decisions, annotate
from .state import AuditRun, Clock
from .verdict import combine

if TYPE_CHECKING:
    from ..report.model import Report


def run_audit(config: AuditConfig, before_clean: Callable[[Report], None] | None = None) -> Report:
    """Run every check of ``config`` and return the :class:`~auditor.report.Report` (not written).

    With ``write_clean``, ``before_clean(report)`` (e.g. writing it) runs before the cleaned data is
    written, so a failure there (a full disk) does not lose the report; the returned report then
    carries the ``clean`` section too.
    """
    run = prepare(config)
    try:
        prepare_checks(run)
        scan(run)
        run.results = [decide_check(run, state) for state in run.checks]
        attribute(run)
        report = assemble(run)
        if config.output.write_clean:
            if before_clean is not None:
                before_clean(report)
            report.clean = clean(run, config.output.write_clean)
    finally:
        run.store.close()
    return report


def prepare(config: AuditConfig) -> AuditRun:
    """The run of a validated ``config``: its datasets resolved, an unsafe clean folder or a bad
    decisions file refused before any work, the engine started and the findings store opened."""
    config.validate()
    if config.index_dir and os.path.exists(config.index_dir) and not os.path.isdir(config.index_dir):
        raise OutputError(config.index_dir, "is a file, not a folder (give a folder for the indexes)")
    clock = Clock()  # the run's seconds and CPU count from here, the engine's start included
    datasets = {name: Dataset(spec) for name, spec in config.datasets.items()}
    train_sets = [datasets[n] for n in sorted({n for c in config.checks for n in c.train})]
    if config.output.write_clean:  # refuse an unsafe folder before any work (never write over an input)
        plan_clean(config.output.write_clean, train_sets, datasets.values(), [config.manifest_path])
        if config.output.report_dir:
            check_apart(config.output.write_clean, config.output.report_dir)
    engine = get_engine(
        config.engine,
        batch_size=config.batch_size,
        workers=config.workers,
        split_bytes=config.split_bytes,
        **config.engine_options.get(config.engine, {}),
    )
    decisions = Decisions.load(config.review.decisions)  # a bad file: an error before any work
    engine.warm_up(train_sets)
    return AuditRun(config, datasets, engine, make_store(config), decisions, clock=clock)


def attribute(run: AuditRun) -> None:
    """Each ``[[provenance]]`` entry's derived records traced to their sources (``run.provenance``)."""
    config = run.config
    run.provenance = [
        run_provenance(
            p,
            run.datasets,
            method_params=config.method_params,
            index_dir=config.index_dir,
            batch_size=config.batch_size,
            engine=run.engine,
        )
        for p in config.provenance
    ]


def assemble(run: AuditRun) -> Report:
    """The run's :class:`Report`, every section filled here: verdict, datasets, checks, findings
    (review decisions applied), the decisions read, error types, provenance, run statistics, texts."""
    from ..report.model import Report  # the model and its checks: loaded when the report is made, not at start-up

    config, engine, datasets = run.config, run.engine, run.datasets
    rows = [_row(f, datasets) for f in run.findings]
    read = None
    if config.review.decisions is not None:
        applied = annotate(rows, run.decisions)
        read = DecisionsRead(file=config.review.decisions, read=len(run.decisions.entries), applied=applied)
    encoding = [
        {"check": c.name, "method": ms["method"], **ms["encoding"]}
        for c in run.results
        for ms in c.method_stats
        if "encoding" in ms
    ]
    scan_stats = run.scan_stats.as_dict()
    stats = RunStats(
        tool="auditor",
        version=__version__,
        engine=engine.name,
        started=run.clock.started.isoformat(timespec="seconds"),
        seconds=run.clock.seconds(),
        # CPU of the calling process (planning, merging, indexes, report) and of the workers
        # (scanning units; detecting boilerplate: Engine.offload; starting: Engine.startup_cpu_s)
        caller_cpu_s=run.clock.cpu_s(),
        worker_cpu_s=round(run.scan_stats.worker_cpu_s + engine.offload_cpu_s + engine.startup_cpu_s, 3),
        scan=scan_stats,
        encoding=encoding or None,
        workers=engine.workers_used,
        findings_store=config.findings_store,
        findings_total=run.findings_total,
        records_per_s=scan_stats["records_per_s"],
        mb_per_s=scan_stats["mb_per_s"],
        peak_rss_mb=peak_rss_mb(),
        peak_worker_rss_mb=engine.peak_worker_rss_mb,
    )
    return Report(
        verdict=combine([c.verdict for c in run.results] + [p.verdict for p in run.provenance]),
        datasets={n: datasets[n].describe() for n in run.used()},
        checks=run.results,
        findings=rows,
        run=stats,
        texts=collect_texts(_shown(run.findings), datasets, run.capture.texts, limit=TEXTS_LIMIT + REVIEW_LIMIT),
        decisions=read,
        error_types=run.error_types.report() if config.checks else None,
        provenance=run.provenance,
    )


def clean(run: AuditRun, folder: str) -> CleanSummary:
    """Write the training sets without the records behind findings into ``folder`` (``write_clean``) and the
    manifest that re-audits them; the report's ``clean`` section."""
    config = run.config
    summary = write_clean(
        folder,
        run.train_sets(),
        clean_hits(run.store.train_hits, run.findings, run.decisions),
        run.datasets.values(),
        [config.manifest_path],
    )
    used = {n: run.datasets[n] for n in run.used()}
    summary["manifest"] = str(write_clean_manifest(config, used, summary))
    return CleanSummary.from_dict(summary)


TEXTS_LIMIT = 200  # findings whose texts the report keeps ...
REVIEW_LIMIT = 1000  # ... plus this many suspected ones beyond them (the review list; auditor review shows them)


def _shown(findings: list[Finding]) -> list[Finding]:
    """The findings whose texts go into the report: the first ``TEXTS_LIMIT`` and the best suspected ones after them."""
    later = sorted((f for f in findings[TEXTS_LIMIT:] if f.suspected), key=lambda f: -f.score)
    return findings[:TEXTS_LIMIT] + later[:REVIEW_LIMIT]


def _row(f: Finding, datasets: dict[str, Dataset]) -> FindingRow:
    """A finding as ``report.json`` holds it, its records named for a reader (``eval_ref`` /
    ``train_ref``: dataset, id and, for a dataset of several files, the file; see :meth:`Dataset.ref`)."""
    return {
        **f.to_dict(),
        "eval_ref": datasets[f.eval_dataset].ref(f.eval_id, f.eval_source),
        "train_ref": datasets[f.train_dataset].ref(f.train_id, f.train_source),
    }


def audit_provenance(config: AuditConfig) -> Report:
    """Run only the provenance entries of an :class:`AuditConfig` (its checks are not run).

    Raises ConfigError when the configuration has no provenance entry.
    """
    if not config.provenance:
        raise ConfigError("no [[provenance]] entry to run")
    return run_audit(replace(config, checks=[]))
