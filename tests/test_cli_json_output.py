"""``auditor audit --format json``: report.json's document on stdout and nothing else; ``--quiet``;
the methods that ran in the summary line."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from auditor.cli import main

ARGS = ["audit", "--train", "webshop:500:700", "--eval", "webshop:0:200", "--method", "exact", "--method", "ngram"]


def _run(tmp_path, *extra):
    out = tmp_path / "r"
    return CliRunner().invoke(main, [*ARGS, "--report-dir", str(out), "--index-dir", str(tmp_path / "i"), *extra])


def test_format_json_puts_the_report_alone_on_stdout(tmp_path):
    res = _run(tmp_path, "--format", "json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    written = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["verdict"] == written["verdict"] == "fail"
    assert report["checks"][0]["contaminated_items"] == written["checks"][0]["contaminated_items"] > 0
    assert res.stderr.startswith("auditor: FAIL — audit: fail, ") and "report: " in res.stderr


def test_format_json_quiet_prints_only_the_report(tmp_path):
    res = _run(tmp_path, "--format", "json", "--quiet")
    assert res.exit_code == 1 and json.loads(res.stdout)["verdict"] == "fail" and res.stderr == ""


def test_quiet_text_is_the_summary_line_naming_the_methods_that_ran(tmp_path):
    res = _run(tmp_path, "-q")
    assert res.exit_code == 1
    (line,) = res.stdout.splitlines()
    assert line.startswith("auditor: FAIL — audit: fail, ") and line.endswith("[methods: exact, ngram]")


def test_json_on_stdout_of_the_real_process(tmp_path):
    """No progress line, warning or log reaches stdout of the command itself."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            *ARGS,
            "--report-dir",
            str(tmp_path / "r"),
            "--index-dir",
            str(tmp_path / "i"),
            "--format",
            "json",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "fail"


def test_verify_format_json_names_each_checks_methods(tmp_path):
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        '[datasets.test]\npath = "webshop:0:100"\nrole = "eval"\n\n'
        '[datasets.train]\npath = "webshop:100:300"\nrole = "train"\n\n'
        '[[checks]]\nname = "a"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n\n'
        '[[checks]]\nname = "b"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact", "ngram"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r"), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    assert [c["name"] for c in json.loads(res.stdout)["checks"]] == ["a", "b"]
    assert res.stderr.splitlines()[0].endswith("[methods: a (exact); b (exact, ngram)]")
