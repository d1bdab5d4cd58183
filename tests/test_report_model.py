"""The report model (auditor/report/model.py): every section typed and filled when the report is
made, the JSON a user already has read back into the same sections, and re-rendering a saved report
loading no detection method."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import REPO, loadable_golden_report

from auditor.errors import InputError
from auditor.methods.base import FindingFields
from auditor.report import Report
from auditor.report.results import CleanSummary, DecisionsRead, FindingRow, ProvenanceResult

#: what a re-render may not load: the method registry (every detection method) and the audit
NOT_LOADED = ("auditor.methods", "auditor.audit", "auditor.engines", "auditor.embed")


@pytest.mark.parametrize("name", ["quickstart", "split"])
def test_rerendering_a_saved_report_loads_no_detection_method(name, tmp_path):
    """A real saved report (the README's audits) rendered again in a fresh interpreter, every format the
    library renders without a network: none of the method registry, the audit or the engines is imported."""
    src = tmp_path / "report.json"
    src.write_text(loadable_golden_report(name), encoding="utf-8")
    code = (
        "import sys\n"
        "from auditor.report import Report, rerender\n"
        f"for fmt in ('json', 'md', 'html', 'junit', 'conda'):\n"
        f"    rerender({str(src)!r}, fmt, {str(tmp_path)!r} + '/out.' + fmt)\n"
        f"Report.load({str(src)!r}).summary_line()\n"
        f"print(sorted(m for m in sys.modules if m.startswith({NOT_LOADED!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert page.count('class="threshold"') >= 1  # exact's fixed threshold, read from the report alone


def test_the_probe_sees_an_import_of_the_registry(tmp_path):
    """The check above can fail: a process that touches the registry lists it."""
    code = f"import sys, auditor.report, auditor.methods\nprint('auditor.methods' in [m for m in sys.modules if m.startswith({NOT_LOADED!r})])\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.stdout.strip() == "True", out.stdout + out.stderr


def test_sections_are_typed_and_write_back_in_place():
    doc = json.loads(loadable_golden_report("split"))
    report = Report.from_dict(doc)
    assert isinstance(report.decisions, DecisionsRead) and report.decisions.read == 0
    assert report.error_types is not None and set(report.error_types) == set(doc["error_types"])
    assert all(isinstance(p, ProvenanceResult) for p in report.provenance) and report.provenance
    assert report.clean is None and report.extra == {}
    assert list(report.to_dict()) == list(doc) and report.to_dict() == doc


def test_clean_section_is_typed_and_a_later_versions_section_is_kept():
    clean = {
        "dir": "c",
        "removed_file": "c/removed.jsonl",
        "datasets": {"t": {"kept": 3, "removed": 1}},
        "manifest": "c/split.toml",
    }
    doc = {"verdict": "fail", "checks": [], "datasets": {}, "findings": [], "clean": clean, "later": {"x": 1}}
    report = Report.from_dict(doc)
    assert isinstance(report.clean, CleanSummary) and report.clean.manifest == "c/split.toml"
    assert report.extra == {"later": {"x": 1}}
    assert report.to_dict()["clean"] == clean and list(report.to_dict())[-4:] == ["clean", "later", "run", "texts"]
    assert "Re-audit with: auditor verify c/split.toml" in report.render("md")
    page = report.render("html")
    assert "auditor verify c/split.toml" in page and "<h2 id='later'>Later</h2>" in page


def test_a_section_given_through_extra_is_taken_into_its_field():
    """Code that built a report with ``extra={...}`` before the sections were typed still gets them typed."""
    r = Report("pass", {}, [], [], extra={"decisions": {"file": "d.json", "read": 1, "applied": 1}})
    assert r.decisions == DecisionsRead(file="d.json", read=1, applied=1) and r.extra == {}


def test_the_reports_finding_keys_are_the_findings_own_plus_the_refs():
    """The report keeps its own copy of a finding's keys (so reading one needs no method): the same ones."""
    own = list(FindingFields.__annotations__)
    assert list(FindingRow.__required_keys__ - {"eval_ref", "train_ref"}) and set(own) <= FindingRow.__required_keys__
    assert FindingRow.__required_keys__ - set(own) == {"eval_ref", "train_ref"}


def test_a_bad_decisions_value_is_named_when_read(tmp_path):
    src = tmp_path / "report.json"
    doc = {"verdict": "pass", "checks": [], "datasets": {}, "findings": [], "decisions": {"file": "d", "read": "<b>"}}
    src.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match="decisions.read: a whole number expected, not a string"):
        Report.load(src)
