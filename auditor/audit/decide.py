"""A check's result from what the scan found (:func:`decide_check`): conclusive and suspected items
(review decisions applied: :mod:`auditor.audit.decisions`), per method and per eval subset, the
training × eval matrix, what could not be checked and why, and the verdict (:mod:`auditor.audit.verdict`)."""

from __future__ import annotations

import os
from collections import Counter

from ..records.record import Record
from ..report.results import CheckResult, EvalSubset, MatrixCell, SideCounts
from .decisions import CONFIRMED, DISMISSED, UNREVIEWED, classify
from .state import AuditRun, CheckState
from .unchecked import not_checked, skipped_eval, skipped_eval_note
from .verdict import ItemCounts, counted, decide, suspected_note


def decide_check(run: AuditRun, state: CheckState) -> CheckResult:
    """Check ``state``'s result: its counts (conclusive, suspected by review state), notes, what it
    could not check, and its verdict, from the findings the run read back (``run.findings``)."""
    config, datasets, decisions = run.config, run.datasets, run.decisions
    check, eval_records, indexes, masker = state.check, state.eval_records, state.indexes, state.masker
    method_names, eval_skipped, pairs = state.method_names, state.eval_skipped, state.pairs
    train_skipped = sum(datasets[n].stats.skipped for n in check.train)
    files_skipped = SideCounts(
        eval=sum(len(datasets[n].stats.skipped_files) for n in check.eval),
        train=sum(len(datasets[n].stats.skipped_files) for n in check.train),
    )
    mine = [f for f in run.findings if f.check == check.name]
    # eval items with a conclusive kept finding (what FindingStore.contaminated gives, without a second read)
    conclusive = {(f.eval_dataset, f.eval_ordinal) for f in mine if f.conclusive}
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
    uncovered = list(eval_records)
    for ix in indexes:  # each index asked only of the items no earlier one covers
        if uncovered:
            uncovered = [ev for ev, ok in zip(uncovered, ix.covered(uncovered)) if not ok]
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
                config.review.fail_on,
                methods=(f.method for f in mine if f.suspected and (f.eval_dataset, f.eval_ordinal) in review),
                report_json=os.path.join(config.output.report_dir, "report.json")
                if config.output.report_dir
                else "REPORT.json",
            )
        )
    for ix in indexes:  # how a method read the eval side (e.g. template text left out of the items)
        notes.extend(ix.notes())
    method_stats = [ix.stats() for ix in indexes]
    for ix, ms in zip(indexes, method_stats):  # the records of each training set the method read
        ms["train_records_read"] = {n: state.searched.get(n, Counter())[ms["method"]] for n in check.train}
        if ix.fixed_threshold is not None:  # the report's plots mark it without the method's class
            ms["fixed_threshold"] = ix.fixed_threshold
    train_records = {n: datasets[n].stats.yielded for n in check.train}
    gaps = not_checked(check.methods, indexes, state.searched, train_records, method_stats)
    # never a plain pass when something was not checked (a method asked for that checked nothing too)
    verdict = decide(
        counts,
        allowance,
        config.review.fail_on,
        unchecked=bool(unchecked or uncovered or any(g.incomplete for g in gaps)),
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
        counted_items=counted(counts, config.review.fail_on),
        fail_on=config.review.fail_on,
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
        novel_error_types=run.error_types.novel(check.eval, check.train),
    )


def _subsets(eval_records: list[Record], contaminated: set[tuple[str, int]]) -> list[EvalSubset]:
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
