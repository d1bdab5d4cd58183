"""junit.xml (common JUnit layout, counts right) and ``auditor report`` re-rendering."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from auditor.cli import main
from auditor.report import Report

# The common JUnit schema (Ant/Jenkins junit-10.xsd): required attributes and allowed children.
SUITE_ATTRS = {"name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id", "package"}
SUITE_CHILDREN = {"properties", "testcase", "system-out", "system-err"}
CASE_ATTRS = {"name", "classname", "time"}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")


def _validate(doc: str) -> ET.Element:
    root = ET.fromstring(doc.encode())
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite" and SUITE_ATTRS <= set(suite.attrib)
        assert TIMESTAMP.match(suite.get("timestamp"))
        children = [c.tag for c in suite]
        assert set(children) <= SUITE_CHILDREN and children[0] == "properties"
        assert children[-2:] == ["system-out", "system-err"]
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("errors")) == sum(len(c.findall("error")) for c in cases)
        for c in cases:
            assert CASE_ATTRS <= set(c.attrib) and float(c.get("time")) >= 0
            assert len(list(c)) <= 1 and all(
                e.tag in ("failure", "error") and e.get("message") and e.get("type") for e in c
            )
    return root


def test_junit_one_case_per_check_and_failure_names_findings(tmp_path):
    manifest = tmp_path / "split.toml"
    manifest.write_text("""
[datasets.test]
path = "webshop:0:500"
role = "eval"
[datasets.train]
path = "webshop:500:3000"
role = "train"
[datasets.far]
path = "webshop:11000:11100"
role = "train"
[datasets.air_test]
path = "tau2-airline:test"
role = "eval"
[[checks]]
name = "leaky"
train = ["train"]
eval = ["test"]
methods = ["exact"]
[[checks]]
name = "tolerated"
train = ["train"]
eval = ["test"]
methods = ["exact"]
max_contaminated = 0.5
[[checks]]
name = "airline"
train = ["far"]
eval = ["air_test"]
methods = ["exact"]
""")
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert res.output.splitlines()[0].startswith("auditor: FAIL — leaky: fail, ")
    root = _validate((tmp_path / "r" / "junit.xml").read_text())
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["leaky", "tolerated", "airline"]
    failure = cases["leaky"].find("failure")
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    leaky = [f for f in report["findings"] if f["check"] == "leaky"]
    message = failure.get("message")
    named = [
        f"{f['eval_dataset']}#{f['eval_id']} in " for f in leaky if f"{f['eval_dataset']}#{f['eval_id']} in " in message
    ]
    assert named and all(message.count(n) == 1 for n in named)  # findings named, each eval item once
    assert cases["tolerated"].find("failure") is None and cases["airline"].find("failure") is None
    assert root.find("testsuite").get("failures") == "1"


def test_junit_incomplete_is_an_error():
    r = Report(
        "incomplete",
        {},
        [
            {
                "name": "c",
                "train": ["t"],
                "eval": ["e"],
                "methods": ["exact"],
                "eval_items": 4,
                "contaminated_items": 0,
                "verdict": "incomplete",
                "notes": ["2 training records were skipped"],
            }
        ],
        [],
        run={"started": "2026-01-02T03:04:05+00:00", "seconds": 1.5},
    )
    root = _validate(r.render("junit"))
    err = root.find("testsuite/testcase/error")
    assert "skipped" in err.get("message") and root.find("testsuite").get("errors") == "1"


def test_report_command_rerenders_without_rerunning(tmp_path):
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            "webshop:0:100",
            "--train",
            "webshop:500:2000",
            "--method",
            "exact",
            "--report-dir",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 1, res.output
    src = tmp_path / "r" / "report.json"
    doc = json.loads(src.read_text())
    doc["attestation"] = {"commit": "abc123", "files": [{"path": "x.json", "sha256": "ff00"}]}
    src.write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["report", str(src), "--format", "html"])
    assert res.exit_code == 0 and res.output.strip() == str(tmp_path / "r" / "report.html")
    page = (tmp_path / "r" / "report.html").read_text()
    assert "Attestation" in page and "abc123" in page and "ff00" in page  # unknown sections rendered generically
    out = tmp_path / "other.md"
    res = CliRunner().invoke(main, ["report", str(src), "--format", "md", "--out", str(out)])
    assert res.exit_code == 0 and out.read_text().startswith("# Contamination audit: **FAIL**")
    (tmp_path / "bad.json").write_text('{"verdict": "pass"}')
    res = CliRunner().invoke(main, ["report", str(tmp_path / "bad.json")])
    assert res.exit_code == 2 and "not an auditor report" in res.output
