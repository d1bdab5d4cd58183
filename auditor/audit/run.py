"""Run an audit: build each check's eval indexes, stream its training sets, decide verdicts.

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
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from .. import methods
from .._version import __version__
from ..datasets.dataset import Dataset
from ..datasets.sameness import require_distinct_items
from ..datasets.summary import DatasetSummary
from ..engines import Engine, get_engine
from ..errors import ConfigError, OutputError
from ..methods.base import Finding
from ..report import Report
from ..report.results import CheckResult, EvalSubset, FindingRow, MatrixCell, RunStats, SideCounts
from ..scan.job import ScanJob, ScanStats
from ..scan.progress import peak_rss_mb
from ..scan.stage import Stage
from ..scan.stages import MaskStage, SearchStage
from ..store.findings import FindingStore
from ..store.texts import TEXTS_PER_UNIT, CaptureStage, TextCapture, collect_texts
from ..text import boilerplate, masking
from .clean import check_apart, clean_hits, plan_clean, write_clean, write_clean_manifest
from .config import AuditConfig, CheckSpec, make_store
from .decisions import CONFIRMED, DISMISSED, UNREVIEWED, Decisions, annotate, classify
from .errortypes import ErrorTypes, ErrorTypeStage
from .indexes import build_index
from .provenance import run_provenance
from .unchecked import SearchedStage, not_checked, skipped_eval, skipped_eval_note
from .verdict import ItemCounts, combine, counted, decide, suspected_note


def run_audit(config: AuditConfig, before_clean: Callable[[Report], None] | None = None) -> Report:
    """Run every check of ``config`` and return the :class:`~auditor.report.Report` (not written).

    With ``write_clean``, ``before_clean(report)`` (e.g. writing it) runs before the cleaned data is
    written, so a failure there (a full disk) does not lose the report; the returned report then
    carries the ``clean`` section too.
    """
    config.validate()
    if config.index_dir and os.path.exists(config.index_dir) and not os.path.isdir(config.index_dir):
        raise OutputError(config.index_dir, "is a file, not a folder (give a folder for the indexes)")
    started = datetime.now(timezone.utc)
    t0, cpu0 = time.perf_counter(), time.process_time()
    datasets = {name: Dataset(spec) for name, spec in config.datasets.items()}
    train_names = sorted({n for c in config.checks for n in c.train})
    if config.write_clean:  # refuse an unsafe folder before any work (never write over an input)
        plan_clean(config.write_clean, [datasets[n] for n in train_names], datasets.values(), [config.manifest_path])
        if config.report_dir:
            check_apart(config.write_clean, config.report_dir)
    engine = get_engine(
        config.engine,
        batch_size=config.batch_size,
        workers=config.workers,
        split_bytes=config.split_bytes,
        **config.engine_options.get(config.engine, {}),
    )
    engine.warm_up([datasets[n] for n in train_names])
    store = make_store(config)
    checks: list[CheckResult] = []
    scan_stats = ScanStats()
    error_types = ErrorTypes()
    # texts for the report, sent back by the workers with their findings (no second pass)
    capture = TextCapture(window=4 * TEXTS_PER_UNIT)
    extra: dict[str, Any] = {}
    decisions = Decisions.load(config.decisions)  # a bad file: an error before any work
    try:
        states = _prepare_checks(config, datasets, engine, error_types)
        _scan_training_sets(states, config, datasets, engine, store, scan_stats, error_types, capture)
        checks.extend(_finish_check(state, config, datasets, store, error_types, decisions) for state in states)
        findings = store.findings()
        findings_total = store.total
        if config.decisions is not None:
            extra["decisions"] = {"file": config.decisions, "read": len(decisions.entries), "applied": 0}
        if config.checks:
            extra["error_types"] = error_types.report()
        if config.provenance:
            extra["provenance"] = [
                run_provenance(
                    p,
                    datasets,
                    method_params=config.method_params,
                    index_dir=config.index_dir,
                    batch_size=config.batch_size,
                    engine=engine,
                )
                for p in config.provenance
            ]
        used = {n for c in config.checks for n in c.train + c.eval}
        used |= {n for p in config.provenance for n in p.derived + p.sources}
        described = {n: datasets[n].describe() for n in sorted(used)}
        timing = {
            "started": started.isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - t0, 3),
            # CPU of the calling process (planning, merging, indexes, report) and of the workers
            # (scanning units; detecting boilerplate: Engine.offload; starting: Engine.startup_cpu_s)
            "caller_cpu_s": round(time.process_time() - cpu0, 3),
            "worker_cpu_s": round(scan_stats.worker_cpu_s + engine.offload_cpu_s + engine.startup_cpu_s, 3),
        }
        report = _report(
            config, engine, checks, findings, findings_total, described, extra, timing, scan_stats, datasets
        )
        if "decisions" in extra:
            extra["decisions"]["applied"] = annotate(report.findings, decisions)
        report.texts = collect_texts(_shown(findings), datasets, capture.texts, limit=TEXTS_LIMIT + REVIEW_LIMIT)
        if config.write_clean:
            if before_clean is not None:
                before_clean(report)
            report.extra["clean"] = write_clean(
                config.write_clean,
                [datasets[n] for n in train_names],
                clean_hits(store.train_hits, findings, decisions),
                datasets.values(),
                [config.manifest_path],
            )
            used_datasets = {n: datasets[n] for n in sorted(used)}
            report.extra["clean"]["manifest"] = str(write_clean_manifest(config, used_datasets, report.extra["clean"]))
    finally:
        store.close()
    return report


def _report(
    config: AuditConfig,
    engine: Engine,
    checks: list[CheckResult],
    findings: list[Finding],
    findings_total: int,
    described: dict[str, DatasetSummary],
    extra: dict[str, Any],
    timing: dict[str, Any],
    scan_stats: ScanStats,
    datasets: dict[str, Dataset],
) -> Report:
    """The run's :class:`Report` from its parts (texts are added by the caller)."""
    verdict = combine([c.verdict for c in checks] + [p.verdict for p in extra.get("provenance", [])])
    encoding = [
        {"check": c.name, "method": ms["method"], **ms["encoding"]}
        for c in checks
        for ms in c.method_stats
        if "encoding" in ms
    ]
    scan = scan_stats.as_dict()
    return Report(
        verdict=verdict,
        datasets=described,
        checks=checks,
        findings=[_row(f, datasets) for f in findings],
        run=RunStats(
            tool="auditor",
            version=__version__,
            engine=engine.name,
            **timing,
            scan=scan,
            encoding=encoding or None,
            workers=engine.workers_used,
            findings_store=config.findings_store,
            findings_total=findings_total,
            records_per_s=scan["records_per_s"],
            mb_per_s=scan["mb_per_s"],
            peak_rss_mb=peak_rss_mb(),
            peak_worker_rss_mb=engine.peak_worker_rss_mb,
        ),
        extra=extra,
    )


TEXTS_LIMIT = 200  # findings whose texts the report keeps ...
REVIEW_LIMIT = 1000  # ... plus this many suspected ones beyond them (the review list; auditor review shows them)


def _shown(findings: list[Finding]) -> list[Finding]:
    """The findings whose texts go into the report: the first ``TEXTS_LIMIT`` and the best suspected ones after them."""
    later = sorted((f for f in findings[TEXTS_LIMIT:] if f.suspected), key=lambda f: -f.score)
    return findings[:TEXTS_LIMIT] + later[:REVIEW_LIMIT]


@dataclass
class _CheckState:
    """One check between preparing (indexes, masking) and its verdict."""

    check: CheckSpec
    method_names: list[str]
    eval_records: list
    eval_skipped: int
    indexes: list
    masker: Any
    pairs: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    #: training set → method → its records the method read (:class:`~auditor.audit.unchecked.SearchedStage`)
    searched: dict[str, Counter] = field(default_factory=dict)


def _prepare_checks(config: AuditConfig, datasets: dict[str, Dataset], engine: Engine, error_types: ErrorTypes):
    """Every check's eval records, indexes and boilerplate masking.

    Boilerplate is detected on the engine's workers (:meth:`Engine.offload`), one task per
    training-set list reading its sample once for every check that scans it, while the calling
    process builds (or loads) the indexes."""
    evals = []
    for check in config.checks:
        eval_records = [r for name in check.eval for r in datasets[name].records()]
        require_distinct_items(eval_records)  # most items reading as one text: an error, not a pass
        eval_skipped = sum(datasets[n].stats.skipped for n in check.eval)
        method_names = check.methods or methods.default_methods()
        unbuilt = [methods.create(m, config.method_params.get(m)) for m in method_names]
        evals.append((method_names, eval_records, eval_skipped, masking.masked_eval_texts(unbuilt, eval_records)))
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, (check, ev) in enumerate(zip(config.checks, evals)):
        if ev[3] is not None:
            groups.setdefault(tuple(check.train), []).append(i)
    calls, train_sets = [], []
    for train, members in groups.items():
        train_ds = [datasets[n] for n in train]
        for ds in train_ds:
            ds.plan()  # each file's state from now on (the workers' sample read checks it)
        train_sets.extend(train_ds)
        calls.append((train_ds, [evals[i][3] for i in members]))
    pending = engine.offload(boilerplate.detect_sample, calls, train_sets)
    try:
        built = [
            [build_index(m, config.method_params.get(m), eval_records, config.index_dir) for m in method_names]
            for method_names, eval_records, _, _ in evals
        ]
    except BaseException:  # a bad index, Ctrl-C: the detection tasks are stopped, not waited for
        pending(cancel=True)
        raise
    detected: dict[int, Any] = {}
    for members, found in zip(groups.values(), pending()):
        detected.update(zip(members, found))
    states = []
    for i, (check, (method_names, eval_records, eval_skipped, _)) in enumerate(zip(config.checks, evals)):
        train_ds = [datasets[n] for n in check.train]
        masker = masking.prepare(built[i], train_ds, eval_records, detected=detected.get(i))
        for name in check.eval:
            error_types.count_dataset(name, (r for r in eval_records if r.dataset == name))
        states.append(_CheckState(check, method_names, eval_records, eval_skipped, built[i], masker))
    return states


def _scan_training_sets(
    states: list[_CheckState],
    config: AuditConfig,
    datasets: dict[str, Dataset],
    engine: Engine,
    store: FindingStore,
    scan_stats: ScanStats,
    error_types: ErrorTypes,
    capture: TextCapture,
) -> None:
    """One pass over each training dataset serves every check that reads it."""
    order = list(dict.fromkeys(n for st in states for n in st.check.train))
    for name in order:
        users = [st for st in states if name in st.check.train]
        stages: list[Stage[Any]] = []
        if name not in error_types.counts:  # each training dataset's error types once per run
            stages.append(ErrorTypeStage(error_types, name))
        for st in users:
            stages += [MaskStage(st.masker), SearchStage(st.check.name, st.masker.indexes)]
            stages.append(SearchedStage(st.searched.setdefault(name, Counter()), st.indexes))
        stages.append(CaptureStage(capture, name))
        job = ScanJob(stages, batch_size=config.batch_size)
        error_types.counts.setdefault(name, Counter())
        by_check = {st.check.name: st for st in users}
        eval_by_key = {st.check.name: {(r.dataset, r.ordinal): r for r in st.eval_records} for st in users}
        for f in engine.scan(job, datasets[name], scan_stats):
            store.add(f)
            if capture.keep(f.train_dataset, f.train_ordinal):
                capture.keep_eval([eval_by_key[f.check][(f.eval_dataset, f.eval_ordinal)]])
            if f.conclusive:
                by_check[f.check].pairs.setdefault((name, f.eval_dataset), set()).add(f.eval_ordinal)


def _finish_check(
    state: _CheckState,
    config: AuditConfig,
    datasets: dict[str, Dataset],
    store: FindingStore,
    error_types: ErrorTypes,
    decisions: Decisions,
) -> CheckResult:
    check, eval_records, indexes, masker = state.check, state.eval_records, state.indexes, state.masker
    method_names, eval_skipped, pairs = state.method_names, state.eval_skipped, state.pairs
    train_skipped = sum(datasets[n].stats.skipped for n in check.train)
    files_skipped = SideCounts(
        eval=sum(len(datasets[n].stats.skipped_files) for n in check.eval),
        train=sum(len(datasets[n].stats.skipped_files) for n in check.train),
    )
    conclusive = store.contaminated(check.name)
    mine = [f for f in store.findings() if f.check == check.name]
    review = classify(mine, conclusive, decisions)  # items with only suspected findings
    by_class = {c: {k for k, v in review.items() if v == c} for c in (CONFIRMED, UNREVIEWED, DISMISSED)}
    for f in mine:  # confirmed findings are contamination: the matrix counts them too
        if (f.eval_dataset, f.eval_ordinal) in by_class[CONFIRMED] and decisions.decision_of(f) == CONFIRMED:
            pairs.setdefault((f.train_dataset, f.eval_dataset), set()).add(f.eval_ordinal)
    contaminated = conclusive | by_class[CONFIRMED]
    counts = ItemCounts(
        eval_items=len(eval_records),
        conclusive=len(conclusive),
        confirmed=len(by_class[CONFIRMED]),
        suspected=len(review),
        unreviewed=len(by_class[UNREVIEWED]),
        dismissed=len(by_class[DISMISSED]),
    )
    allowance = check.allowance(len(eval_records))
    per_method: dict[str, set[tuple[str, int]]] = {}  # eval items with findings, per method
    conclusive_by: dict[str, set[tuple[str, int]]] = {}  # ... with a conclusive finding of the method
    suspected_by: dict[str, set[tuple[str, int]]] = {}  # ... with a suspected one only
    for f in mine:
        item = (f.eval_dataset, f.eval_ordinal)
        per_method.setdefault(f.method, set()).add(item)
        if f.conclusive:
            conclusive_by.setdefault(f.method, set()).add(item)
        elif f.suspected:
            suspected_by.setdefault(f.method, set()).add(item)
    notes = []
    files_unread = files_skipped.eval or files_skipped.train
    unchecked = eval_skipped or train_skipped or files_unread
    if unchecked:
        notes.append(
            f"{eval_skipped} eval and {train_skipped} training records were skipped and not checked"
            + (
                f"; {files_skipped.eval} eval and {files_skipped.train} training files were not read"
                if files_unread
                else ""
            )
        )
    skipped_eval_items = skipped_eval(check.eval, datasets)
    if skipped_eval_items or files_skipped.eval:
        notes.append(skipped_eval_note(check.eval, datasets, skipped_eval_items, eval_skipped))
    # eval items no conclusive method could check (too short for every text tier, no calls ...)
    uncovered = [ev for ev in eval_records if not any(ix.covers(ev) for ix in indexes)]
    if uncovered:
        shown = ", ".join(f"{ev.dataset}#{ev.id}" for ev in uncovered[:10])
        notes.append(
            f"{len(uncovered)} eval items could not be checked by any conclusive method "
            f"(e.g. too short for every text tier): {shown}{' …' if len(uncovered) > 10 else ''}"
        )
    if review:
        notes.append(
            suspected_note(
                counts,
                config.fail_on,
                methods=(f.method for f in mine if f.suspected and (f.eval_dataset, f.eval_ordinal) in review),
                report_json=os.path.join(config.report_dir, "report.json") if config.report_dir else "REPORT.json",
            )
        )
    for ix in indexes:  # how a method read the eval side (e.g. template text left out of the items)
        notes.extend(ix.notes())
    method_stats = [ix.stats() for ix in indexes]
    for ms in method_stats:  # the records of each training set the method read
        ms["train_records_read"] = {n: state.searched.get(n, Counter())[ms["method"]] for n in check.train}
    train_records = {n: datasets[n].stats.yielded for n in check.train}
    gaps = not_checked(check.methods, indexes, state.searched, train_records, method_stats)
    # never a plain pass when something was not checked (a method asked for that checked nothing too)
    verdict = decide(
        counts, allowance, config.fail_on, unchecked=bool(unchecked or uncovered or any(g.incomplete for g in gaps))
    )
    if not eval_records:
        notes.append("the eval side has no records")
    return CheckResult(
        name=check.name,
        train=check.train,
        eval=check.eval,
        methods=method_names,
        eval_items=len(eval_records),
        contaminated_items=len(contaminated),
        contaminated_share=round(len(contaminated) / len(eval_records), 6) if eval_records else 0.0,
        suspected=counts.suspected,
        unreviewed=counts.unreviewed,
        confirmed=counts.confirmed,
        dismissed=counts.dismissed,
        counted_items=counted(counts, config.fail_on),
        fail_on=config.fail_on,
        max_contaminated=check.max_contaminated,
        allowance=allowance,
        verdict=verdict,
        items_by_method={m: len(v) for m, v in sorted(per_method.items())},
        conclusive_by_method={m: len(conclusive_by.get(m, ())) for m in sorted(per_method)},
        suspected_by_method={
            m: len(suspected_by.get(m, set()) - conclusive_by.get(m, set())) for m in sorted(per_method)
        },
        train_records=sum(datasets[n].stats.yielded for n in check.train),
        skipped=SideCounts(eval=eval_skipped, train=train_skipped),
        skipped_files=files_skipped,
        uncovered_items=len(uncovered),
        skipped_eval_items=skipped_eval_items or None,
        method_stats=method_stats,
        not_checked=gaps,
        notes=notes,
        matrix=[
            MatrixCell(train=t, eval=e, contaminated_items=len(pairs.get((t, e), ())))
            for t in check.train
            for e in check.eval
        ],
        eval_subsets=_subsets(eval_records, contaminated),
        boilerplate=masker.report(),
        novel_error_types=error_types.novel(check.eval, check.train),
    )


def _row(f: Finding, datasets: dict[str, Dataset]) -> FindingRow:
    """A finding as ``report.json`` holds it, its records named for a reader (``eval_ref`` /
    ``train_ref``: dataset, id and, for a dataset of several files, the file; see :meth:`Dataset.ref`)."""
    return {
        **f.to_dict(),
        "eval_ref": datasets[f.eval_dataset].ref(f.eval_id, f.eval_source),
        "train_ref": datasets[f.train_dataset].ref(f.train_id, f.train_source),
    }


def _subsets(eval_records: list, contaminated: set[tuple[str, int]]) -> list[EvalSubset]:
    """Eval items and contaminated items per eval subset (dataset and the record's split or group)."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in eval_records:
        label = r.split or r.meta.get("group") or "all"
        c = counts.setdefault((r.dataset, str(label)), [0, 0])
        c[0] += 1
        c[1] += (r.dataset, r.ordinal) in contaminated
    return [
        EvalSubset(eval=ds, subset=label, eval_items=n, contaminated_items=k)
        for (ds, label), (n, k) in sorted(counts.items())
    ]


def audit_provenance(config: AuditConfig) -> Report:
    """Run only the provenance entries of an :class:`AuditConfig` (its checks are not run).

    Raises ConfigError when the configuration has no provenance entry.
    """
    if not config.provenance:
        raise ConfigError("no [[provenance]] entry to run")
    return run_audit(replace(config, checks=[]))
