"""A run's checks before their verdicts: each check's eval records, indexes and boilerplate masking
(:func:`prepare_checks`), then the scan of every training set, once for all the checks that read it
(:func:`scan`). Both take the run (:class:`~auditor.audit.state.AuditRun`) and fill it in."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .. import methods
from ..datasets.sameness import require_distinct_items
from ..masking import detect
from ..masking import masker as masking
from ..scan.job import ScanJob
from ..scan.stage import Stage
from ..scan.stages import MaskStage, SearchStage
from ..store.texts import CaptureStage
from .errortypes import ErrorTypeStage
from .indexes import build_index
from .state import AuditRun, CheckState
from .unchecked import SearchedStage


def prepare_checks(run: AuditRun) -> None:
    """Every check's eval records, indexes and boilerplate masking.

    Boilerplate is detected on the engine's workers (:meth:`Engine.offload`), one task per
    training-set list reading its sample once for every check that scans it, while the calling
    process builds (or loads) the indexes. Fills ``run.checks``."""
    config, datasets, engine = run.config, run.datasets, run.engine
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
    pending = engine.offload(detect.detect_sample, calls, train_sets)
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
    for i, (check, (method_names, eval_records, eval_skipped, _)) in enumerate(zip(config.checks, evals)):
        train_ds = [datasets[n] for n in check.train]
        masker = masking.prepare(built[i], train_ds, eval_records, detected=detected.get(i))
        for name in check.eval:
            run.error_types.count_dataset(name, (r for r in eval_records if r.dataset == name))
        run.checks.append(CheckState(check, method_names, eval_records, eval_skipped, built[i], masker))


def scan(run: AuditRun) -> None:
    """One pass over each training dataset serves every check that reads it; then the findings the
    store kept are read back, once (``run.findings``)."""
    states, store, error_types, capture = run.checks, run.store, run.error_types, run.capture
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
        job = ScanJob(stages, batch_size=run.config.batch_size)
        error_types.counts.setdefault(name, Counter())
        by_check = {st.check.name: st for st in users}
        eval_by_key = {st.check.name: {(r.dataset, r.ordinal): r for r in st.eval_records} for st in users}
        for f in run.engine.scan(job, run.datasets[name], run.scan_stats):
            store.add(f)
            if capture.keep(f.train_dataset, f.train_ordinal):
                capture.keep_eval([eval_by_key[f.check][(f.eval_dataset, f.eval_ordinal)]])
            if f.conclusive:
                by_check[f.check].pairs.setdefault((name, f.eval_dataset), set()).add(f.eval_ordinal)
    run.findings = store.findings()
    run.findings_total = store.total
