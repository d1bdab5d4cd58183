"""Typed results: report.json loads into CheckResult / DatasetSummary / RunStats and writes back the same
bytes; a report an older version wrote (keys missing, keys unknown) still loads and renders; the dict
form (``check["contaminated_items"]``) still reads as before."""

from __future__ import annotations

import json

import pytest
from helpers import read_golden

from auditor.datasets.summary import DatasetSummary
from auditor.errors import InputError
from auditor.report import Report, rerender
from auditor.report.provenance_text import statement
from auditor.report.results import CheckResult, EvalSubset, MatrixCell, ProvenanceResult, RunStats


@pytest.mark.parametrize("name", ["quickstart", "split"])
def test_written_report_loads_typed_and_writes_back_byte_for_byte(name):
    text = read_golden(name, "report.json")  # as the code before typed results wrote it (timings masked)
    report = Report.from_dict(json.loads(text))
    assert all(isinstance(c, CheckResult) for c in report.checks)
    assert all(isinstance(d, DatasetSummary) for d in report.datasets.values())
    assert isinstance(report.run, RunStats) and report.run.findings_store == "duckdb"
    c = report.checks[0]
    assert isinstance(c.matrix[0], MatrixCell) and isinstance(c.eval_subsets[0], EvalSubset)
    assert c.contaminated_items == 43 and c.verdict == "fail" and c.skipped.eval == 0
    assert report.to_json() == text


def test_older_report_with_missing_and_unknown_keys_loads_and_renders(tmp_path):
    old = {
        "verdict": "fail",
        "checks": [
            {
                "name": "c",
                "train": ["t"],
                "eval": ["e"],
                "methods": ["exact"],
                "eval_items": 4,
                "contaminated_items": 1,
                "verdict": "fail",
                "legacy_count": 7,  # a key this version does not know: kept
            }
        ],
        "datasets": {"e": {"role": "eval", "records": 4}, "t": {"role": "train", "records": 9, "sha": "x"}},
        "findings": [],
        "run": {"started": "2020-01-01T00:00:00+00:00", "seconds": 2.0, "host": "old"},
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    report = Report.load(path)
    c = report.checks[0]
    assert (c.allowance, c.notes, c.matrix, c.fail_on) == (0, [], [], "conclusive")  # defaults for missing keys
    assert c.extra == {"legacy_count": 7} and c.to_dict()["legacy_count"] == 7
    assert report.datasets["t"].extra == {"sha": "x"} and report.run.extra == {"host": "old"}
    assert report.run.header() == ("?", "?", "2020-01-01T00:00:00+00:00", "2.0")
    doc = report.to_dict()
    assert doc["run"] == old["run"]  # run keys absent before stay absent
    for fmt in ("md", "html", "junit"):
        out = rerender(path, fmt)
        assert "c" in out.read_text(encoding="utf-8")
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "auditor ?, engine ?, started 2020-01-01T00:00:00+00:00, 2.0 s." in md


def test_check_without_required_keys_is_named():
    with pytest.raises(ValueError, match=r"checks\[1\]: CheckResult: missing verdict"):
        Report.from_dict(
            {
                "verdict": "pass",
                "datasets": {},
                "findings": [],
                "checks": [
                    {"name": "a", "train": [], "eval": [], "methods": [], "eval_items": 0, "contaminated_items": 0}
                    | {"verdict": "pass"},
                    {"name": "b", "train": [], "eval": [], "methods": [], "eval_items": 0, "contaminated_items": 0},
                ],
            }
        )


def test_bad_dataset_entry_is_one_input_error(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"verdict": "pass", "checks": [], "datasets": {"e": 3}, "findings": []}))
    with pytest.raises(InputError, match=r"datasets\.e: DatasetSummary must be an object, not int"):
        Report.load(path)


def test_dict_form_reads_as_before():
    text = read_golden("quickstart", "report.json")
    doc = json.loads(text)
    report = Report.from_dict(doc)
    c, d = report.checks[0], report.datasets["webshop:0:500"]
    for key, value in doc["checks"][0].items():
        assert c[key] == value, key
    assert d["records"] == 500 and report.run["scan"]["records"] == 11587
    with pytest.raises(KeyError):
        c["no_such_key"]
    assert "encoding" not in report.run.to_dict()
    with pytest.raises(KeyError):
        report.run["encoding"]  # not written when None, so not in the dict form either


def test_provenance_entries_are_typed_and_write_back_unchanged():
    doc = json.loads(read_golden("split", "report.json"))
    report = Report.from_dict(doc)
    (entry,) = report.provenance
    assert isinstance(entry, ProvenanceResult)
    assert (entry.verdict, entry.held_out_records, entry.records_total) == ("fail", 43, 11587)
    assert entry.by_split == {"test": 43} and len(entry.records) == 11587
    assert entry["held_out_records"] == 43  # the dict form still reads
    assert report.to_json() == read_golden("split", "report.json")
    assert statement(entry) == statement(doc["provenance"][0])  # a JSON object is read the same
    bad = dict(doc, provenance=[{"records_total": 3}])
    with pytest.raises(ValueError, match="provenance\\[0\\].*missing name, verdict"):
        Report.from_dict(bad)


def test_findings_of_a_real_audit_have_exactly_the_finding_rows_keys(tmp_path):
    """The README quick start through the library (every default method, a decisions file): each finding
    in report.json has every required key of FindingRow, no key it lacks, and review_id / decision
    exactly on the suspected ones; the JSON keys follow the TypedDict's order."""
    from auditor.audit.config import AuditConfig, CheckSpec, ReviewOptions
    from auditor.audit.run import run_audit
    from auditor.datasets.dataset import DatasetSpec
    from auditor.report.results import FindingRow
    from auditor.report.validate import FINDING

    config = AuditConfig(
        datasets={
            "eval": DatasetSpec("eval", ["webshop:0:500"], role="eval"),
            "train": DatasetSpec("train", ["webshop:500:"], role="train"),
        },
        checks=[CheckSpec("webshop", train=["train"], eval=["eval"])],
        review=ReviewOptions(decisions=str(tmp_path / "auditor-decisions.json")),  # absent: all unreviewed
    )
    report = run_audit(config)
    findings = json.loads(report.to_json())["findings"]
    required, optional = FindingRow.__required_keys__, FindingRow.__optional_keys__
    assert optional == {"review_id", "decision"} and set(FINDING) <= required  # what check_report reads
    suspected = [f for f in findings if not f["conclusive"] and f["evidence"].get("tier") == "suspected"]
    assert findings and suspected and len(suspected) < len(findings)  # both kinds are checked
    for f in findings:
        extra = optional if f in suspected else set()
        assert list(f) == [k for k in FindingRow.__annotations__ if k in required | extra]
        assert f.get("decision", "unreviewed") == "unreviewed"
