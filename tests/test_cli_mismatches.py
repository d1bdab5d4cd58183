"""What the CLI prints is what the README and docs say it prints: one-line usage errors (the tour's
transcript is run by tests/test_doc_blocks.py), ``--write-clean``'s help, ``auditor report`` on a file that is not a report.json,
examples that point at docs that exist, and ``auditor calibrate``'s advice, which a manifest accepts."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from helpers import REPO

from auditor.audit.manifest import load_manifest
from auditor.cli import commands, main
from auditor.errors import AuditorError

README = (REPO / "README.md").read_text()


@pytest.mark.parametrize(
    "args, problem",
    [
        (["audit", "--bogus"], "No such option '--bogus'"),
        (["audit", "--eval", "webshop:0:10"], "Missing option '--train'"),
        (["report", "r.json", "--format", "pdf"], "Invalid value for '--format'"),
        (["verify"], "Missing argument 'MANIFEST'"),
        (["no-such-command"], "No such command 'no-such-command'"),
        (["audit", "--train", "t", "--eval", "e", "--workers", "0"], "Invalid value for '--workers'"),
    ],
)
def test_usage_errors_are_one_line_on_stderr(args, problem):
    """The README: exit 2, "with one line on stderr naming ... the problem" — usage errors too."""
    res = CliRunner().invoke(main, args, prog_name="auditor")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert len(res.stderr.splitlines()) == 1, res.stderr
    line = res.stderr.strip()
    assert line.startswith("Error: ") and problem in line and "--help')" in line
    assert "with one line on stderr" in README


def test_examples_point_at_docs_that_exist():
    for example in (REPO / "examples").iterdir():
        text = example.read_text()
        for target in re.findall(r"\b(docs/[\w.-]+\.md)\b", text):
            assert (REPO / target).is_file(), f"{example.name}: {target} does not exist"
        for section in re.findall(r"README's \"([^\"]+)\"", text):
            assert f"\n## {section}\n" in README, f"{example.name}: the README has no section {section!r}"
    assert "docs/manifest.md" in (REPO / "examples" / "split.toml").read_text()


def test_write_clean_removes_what_its_help_says(tmp_path):
    """--write-clean removes the training records behind conclusive findings only: a record behind a
    suspected finding (WebShop's word-set near-duplicates with another value) stays."""
    for cmd in ("audit", "verify"):
        text = " ".join(next(p for p in commands()[cmd].params if p.name == "write_clean").help.split())
        assert "without the records behind conclusive findings" in text
    res = CliRunner().invoke(
        main,
        ["audit", "--eval", "webshop:0:500", "--train", "webshop:500:", "--method", "minhash"]
        + ["--report-dir", str(tmp_path / "r"), "--write-clean", str(tmp_path / "clean")],
    )
    assert res.exit_code == 1, res.output
    findings = json.loads((tmp_path / "r" / "report.json").read_text())["findings"]
    conclusive = {f["train_id"] for f in findings if f["conclusive"]}
    suspected_only = {f["train_id"] for f in findings if not f["conclusive"]} - conclusive
    removed = [json.loads(line) for line in (tmp_path / "clean" / "removed.jsonl").read_text().splitlines()]
    removed_ids = {r["id"] for r in removed}
    assert suspected_only and conclusive  # the run has both kinds
    assert removed_ids == conclusive and not removed_ids & suspected_only


def test_report_of_a_file_that_is_not_report_json_says_which_file_it_wants(tmp_path):
    folder = tmp_path / "r"
    res = CliRunner().invoke(
        main,
        ["audit", "--eval", "tau2-retail:test", "--train", "tau2-retail:train", "--method", "exact"]
        + ["--report-dir", str(folder)],
    )
    assert res.exit_code in (0, 1) and (folder / "report.json").is_file(), res.output
    for name in ("report.md", "junit.xml"):
        res = CliRunner().invoke(main, ["report", str(folder / name), "--format", "md"])
        assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
        assert "not a report.json" in res.stderr and f"give {folder / 'report.json'}" in res.stderr


def _manifest(tmp_path, table: list[str]):
    path = tmp_path / "split.toml"
    path.write_text(
        "\n".join(
            [
                '[datasets.airline_test]\npath = "tau2-airline:test"\nrole = "eval"\n',
                '[datasets.goals]\npath = "webshop:0:50"\nrole = "train"\n',
                *table,
                '\n[[checks]]\nname = "c"\ntrain = ["goals"]\neval = ["airline_test"]\nmethods = ["embedding"]\n',
            ]
        )
    )
    return path


def test_calibrate_advice_is_a_table_a_manifest_accepts(tmp_path):
    """The printed table (a best threshold above and below the default suspected one) loads; the old
    advice's key, `threshold`, is refused: the test can tell them apart."""
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    from auditor.audit.calibrate import Calibration, Row

    for best in (1.85, 1.2):
        rows = [Row(best, 0.9, 0.8, 0.85, 8, 1, 2), Row(2.5, 1.0, 0.1, 0.18, 1, 0, 9)]
        c = Calibration(rows, 10, 10, 9, "labelled", {"conclusive": 1.95, "suspected": 1.45})
        table = c.manifest_lines({"w_margin": 1.5, "cache_dir": str(tmp_path / "e")})
        config = load_manifest(_manifest(tmp_path, table))
        params = config.method_params["embedding"]
        assert params["conclusive"] == best and params["w_margin"] == 1.5 and "cache_dir" not in params
        assert params.get("suspected", 1.45) <= best
    with pytest.raises(AuditorError, match="threshold"):
        load_manifest(_manifest(tmp_path, ["[methods.embedding]", "threshold = 1.85"]))


@pytest.mark.slow
def test_calibrate_advice_pasted_into_a_manifest_runs(tmp_path):
    """`auditor calibrate` on tau2-airline, its last lines pasted into a manifest, `auditor verify`:
    exit 0 (airline tasks against shopping goals: nothing leaks), the threshold in the report."""
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    cache = ["--index-dir", str(tmp_path / "i")]
    res = CliRunner().invoke(main, ["calibrate", "--eval", "tau2-airline", "--param", "top_k=3", *cache])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    table = lines[lines.index("[methods.embedding]") :]
    assert table[1].startswith("top_k = 3") and any(t.startswith("conclusive = ") for t in table)
    manifest = _manifest(tmp_path, table)
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r"), *cache])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    best = float(next(t for t in table if t.startswith("conclusive = ")).split("=")[1])
    stats = next(s for s in report["checks"][0]["method_stats"] if s["method"] == "embedding")
    assert stats["params"]["conclusive"] == best
