"""run_audit in phases over one AuditRun (auditor/audit/run.py): each phase takes the run, the findings
are read back from the store once, and the phases run one by one give run_audit's report."""

from __future__ import annotations

import pytest

from auditor.audit import run as phases
from auditor.audit.checks import prepare_checks, scan
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.decide import decide_check
from auditor.datasets.dataset import DatasetSpec
from auditor.store.findings_db import DuckDBFindingStore

TIMINGS = ("started", "seconds", "caller_cpu_s", "worker_cpu_s", "records_per_s", "mb_per_s", "scan")


def _config() -> AuditConfig:
    return AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:300"], role="eval"),
            "tau": DatasetSpec("tau", ["tau2-retail:test"], role="eval"),
            "train": DatasetSpec("train", ["webshop:300:1500"], role="train"),
            "tau_train": DatasetSpec("tau_train", ["tau2-retail:train"], role="train"),
        },
        checks=[
            CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact", "ngram", "minhash"]),
            CheckSpec("tau", train=["tau_train", "train"], eval=["tau"], methods=["exact", "ngram", "id"]),
        ],
        workers=1,
    )


def _comparable(report) -> dict:
    doc = report.to_dict()
    doc["run"] = {k: v for k, v in doc["run"].items() if k not in TIMINGS and not k.startswith("peak")}
    return doc


def test_findings_are_read_back_from_the_store_once(monkeypatch):
    calls = []
    real = DuckDBFindingStore.findings

    def counted(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(DuckDBFindingStore, "findings", counted)
    report = phases.run_audit(_config())
    assert len(report.checks) == 2 and report.checks[0].contaminated_items > 0
    assert len(calls) == 1  # one read for both checks and the report (there were 1 + one per check)


@pytest.fixture(scope="module")
def whole():
    return phases.run_audit(_config())


def test_the_phases_one_by_one_give_run_audits_report(whole):
    run = phases.prepare(_config())
    try:
        prepare_checks(run)
        assert [s.check.name for s in run.checks] == ["webshop", "tau"] and run.findings == []
        scan(run)
        assert run.findings and run.findings_total >= len(run.findings)
        run.results = [decide_check(run, state) for state in run.checks]
        phases.attribute(run)
        report = phases.assemble(run)
    finally:
        run.store.close()
    assert _comparable(report) == _comparable(whole)
    assert report.decisions is None and report.clean is None and set(report.error_types or {}) >= {"train", "test"}


def test_fixed_thresholds_are_in_the_method_stats(whole):
    """The report says exact's fixed threshold itself, so its plot needs no method class to draw it."""
    stats = {ms["method"]: ms for c in whole.checks for ms in c.method_stats}
    assert stats["exact"]["fixed_threshold"] == 1.0 and "fixed_threshold" not in stats["ngram"]
