"""The CLI through click's CliRunner: exit codes 0/1/2, manifest errors, documentation."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from helpers import shared_file

from auditor.cli import main
from auditor.report import Report

runner = CliRunner()


def invoke(*args):
    return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_audit_clean_exits_0(tmp_path):
    train = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    r = invoke("audit", "--train", train, "--eval", "stabletoolbench", "--report-dir", tmp_path / "r")
    assert r.exit_code == 0, r.output
    report = Report.load(tmp_path / "r" / "report.json")
    assert report.verdict == "pass" and report.checks[0]["eval_items"] == 765
    assert "PASS" in r.output and (tmp_path / "r" / "report.md").exists()


def test_audit_contaminated_exits_1(tmp_path):
    r = invoke(
        "audit",
        "--eval",
        "webshop:0:500",
        "--train",
        "webshop:500:",
        "--method",
        "exact",
        "--report-dir",
        tmp_path / "r",
    )
    assert r.exit_code == 1
    report = Report.load(tmp_path / "r" / "report.json")
    assert report.verdict == "fail" and report.checks[0]["contaminated_items"] > 0
    assert set(report.datasets) == {"webshop:0:500", "webshop:500:"}


def test_report_json_schema(tmp_path):
    invoke("audit", "--eval", "webshop:0:500", "--train", "webshop:500:", "--report-dir", tmp_path / "r")
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["verdict"] in ("pass", "fail", "incomplete")
    for ds in doc["datasets"].values():
        assert {"records", "skipped", "sha256"} <= set(ds)
    for check in doc["checks"]:
        assert {"name", "train", "eval", "methods", "eval_items", "contaminated_items", "verdict"} <= set(check)
    for f in doc["findings"]:
        assert {
            "check",
            "eval_dataset",
            "eval_id",
            "eval_source",
            "train_dataset",
            "train_id",
            "train_source",
            "method",
            "score",
        } <= set(f)
    md = (tmp_path / "r" / "report.md").read_text()
    assert md.startswith("# Contamination audit: **FAIL**")
    assert "| eval item | training record |" in md


def test_missing_input_exits_2_with_one_line(tmp_path):
    r = runner.invoke(main, ["audit", "--train", str(tmp_path / "nope.jsonl"), "--eval", "stabletoolbench"])
    assert r.exit_code == 2
    assert "nope.jsonl: no such file" in r.output and "Traceback" not in r.output


def test_bad_input_line_exits_2_naming_file_and_line(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"text": "fine record here"}\n{oops}\n')
    r = runner.invoke(main, ["audit", "--train", str(p), "--eval", "webshop:0:10"])
    assert r.exit_code == 2
    assert f"{p}:line 2: invalid JSON" in r.output


def test_unknown_method_exits_2():
    r = runner.invoke(main, ["audit", "--train", "webshop:10:20", "--eval", "webshop:0:10", "--method", "magic"])
    assert r.exit_code == 2 and "unknown method 'magic'" in r.output


MANIFEST = """
[datasets.stb]
path = "stabletoolbench"
role = "eval"

[datasets.v]
path = "{train}"
role = "train"

[[checks]]
name = "toolmvr"
train = ["v"]
eval = ["stb"]
"""


def write_manifest(tmp_path, text):
    p = tmp_path / "split.toml"
    p.write_text(text)
    return p


def test_verify_manifest_pass(tmp_path):
    train = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    m = write_manifest(tmp_path, MANIFEST.format(train=train))
    r = invoke("verify", m, "--report-dir", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert Report.load(tmp_path / "out" / "report.json").checks[0]["name"] == "toolmvr"


def test_verify_relative_paths_and_report_dir_from_manifest(tmp_path):
    src = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "v.json").write_text(src.read_text())
    m = write_manifest(tmp_path, 'report_dir = "out"\n' + MANIFEST.format(train="data/v.json"))
    r = invoke("verify", m)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda t: t.replace('role = "eval"', 'role = "eval"\ncolour = "red"'), "unknown key 'colour'"),
        (lambda t: t.replace('eval = ["stb"]', 'eval = ["stbx"]'), "unknown dataset 'stbx'"),
        (lambda t: t.replace("{train}", "missing/file.json"), "missing/file.json: no such file"),
        (lambda t: t.replace("[[checks]]", "[[checks]]\nthreshold = 3"), "unknown key 'threshold'"),
        (lambda t: t.replace('eval = ["stb"]', 'eval = ["v"]'), "has role 'train' but is used as eval"),
        (lambda t: t + "\n[methods.ngram]\nsize = 5\n", "method 'ngram'"),
        (lambda t: t.replace("[[checks]]", "[[checks]"), "invalid TOML"),
    ],
)
def test_manifest_errors_exit_2(tmp_path, edit, message):
    m = write_manifest(tmp_path, edit(MANIFEST).replace("{train}", "x.json"))
    if "missing/file.json" not in message:
        (tmp_path / "x.json").write_text("[]")
    r = runner.invoke(main, ["verify", str(m)])
    assert r.exit_code == 2, r.output
    assert message in r.output and str(m) in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_missing_manifest_exits_2(tmp_path):
    r = runner.invoke(main, ["verify", str(tmp_path / "none.toml")])
    assert r.exit_code == 2 and "no such manifest" in r.output


def test_real_subprocess_exit_code_and_stderr(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "auditor", "audit", "--train", str(tmp_path / "x.json"), "--eval", "stabletoolbench"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("Error: ") and "x.json: no such file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_registry_methods_formats_inspect():
    assert "stabletoolbench" in invoke("registry").output
    out = invoke("methods").output
    assert re.search(r"^exact\s+available", out, re.M) and re.search(r"^ngram\s+available", out, re.M)
    assert "tau2-tasks" in invoke("formats").output
    doc = json.loads(invoke("inspect", "tau2-airline:test", "-n", "1", "--json").output)
    assert doc["records"] == 20 and doc["first"][0]["split"] == "test"
