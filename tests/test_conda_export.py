"""``auditor report REPORT.json --format conda``: the rows of the CONDA Data Contamination Database
(https://huggingface.co/spaces/CONDA-Workshop/Data-Contamination-Database, its
``contamination_report.csv``), from the real reports of the README's audits (tests/data/golden)."""

from __future__ import annotations

import csv
import io
import re

from click.testing import CliRunner
from helpers import REPO, loadable_golden_report

from auditor.cli import main

#: the database file's header line, as its contamination_report.csv has it (semicolon-separated)
DATABASE_HEADER = (
    "Evaluation Dataset;Subset;Contaminated Source;Model or corpus;Train Split;Development Split;Test Split;"
    "Approach;Reference;PR"
)
README = (REPO / "README.md").read_text()


def _export(tmp_path, name: str, *extra: str):
    report = tmp_path / name / "report.json"
    report.parent.mkdir()
    report.write_text(loadable_golden_report(name))
    res = CliRunner().invoke(main, ["report", str(report), "--format", "conda", *extra])
    assert res.exit_code == 0, res.output
    out = report.with_name("conda.csv") if not extra else tmp_path / extra[-1]
    pr = out.with_name(f"{out.stem}-pr.md")
    assert res.stdout.splitlines() == [str(out), str(pr)]
    assert "## What are you reporting:" in pr.read_text()
    text = out.read_text()
    return text, list(csv.DictReader(io.StringIO(text), delimiter=";")), res.stderr


def test_one_row_per_check_with_the_share_in_the_eval_splits_column(tmp_path):
    """examples/split.toml's report: WebShop goals 0:500 (split_label test) and tau2-retail:test, each
    against its training side; the share of eval items found is the README's figure."""
    text, rows, err = _export(tmp_path, "split")
    assert text.splitlines()[0] == DATABASE_HEADER
    webshop = int(re.search(r"It finds (\d+) leaked test goals", README).group(1))
    retail = int(re.search(r"(\d+)/40 retail test tasks", (REPO / "docs" / "cli.md").read_text()).group(1))
    assert [r["Contaminated Source"] for r in rows] == ["webshop_train", "retail_train"]
    assert [r["Test Split"] for r in rows] == [f"{100 * webshop / 500:g}", f"{100 * retail / 40:g}"]
    assert [r["Evaluation Dataset"] for r in rows] == [
        "https://github.com/princeton-nlp/WebShop",  # the bundled sets' source repositories
        "https://github.com/sierra-research/tau2-bench",
    ]
    assert [r["Subset"] for r in rows] == ["0:500", ""]  # tau2-retail's split is the test column itself
    assert {(r["Model or corpus"], r["Approach"], r["Train Split"], r["Development Split"]) for r in rows} == {
        ("corpus", "data-based", "", "")
    }
    assert {(r["Reference"], r["PR"]) for r in rows} == {("", "")}  # the user's: named on stderr
    pr = (tmp_path / "split" / "conda-pr.md").read_text()
    assert "- [x] Evaluation dataset(s) found in a pre-training corpus." in pr and "- [x] Data-based approach" in pr
    assert f"- webshop\\_test: test {100 * webshop / 500:g}% ({webshop} of 500 eval items) in webshop\\_train" in pr
    assert f"- retail\\_test: test {100 * retail / 40:g}% ({retail} of 40 eval items) in retail\\_train" in pr
    assert "exact: normalized-text hash equality" in pr  # the methods the checks ran, described
    lines = err.splitlines()
    assert "CONDA-Workshop/Data-Contamination-Database" in lines[0]
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == [
        "row 1 (check 'webshop-baseline-split'",
        "row 2 (check 'tau2-retail-split'",
    ]
    for line in lines[1:]:
        assert "Reference:" in line and "PR:" in line and "Contaminated Source:" in line
        assert "Evaluation Dataset:" not in line  # a link was filled in


def test_a_share_without_a_split_label_is_left_to_the_user_and_named(tmp_path):
    """The quick-start audit (flags, no split label on webshop:0:500): no split column is claimed; stderr
    gives the figure and where it goes; the suspected items not counted are named too."""
    _, rows, err = _export(tmp_path, "quickstart")
    assert len(rows) == 1
    assert (rows[0]["Train Split"], rows[0]["Development Split"], rows[0]["Test Split"]) == ("", "", "")
    found = int(re.search(r"It finds (\d+) leaked test goals", README).group(1))
    assert f"{100 * found / 500:g} ({found} of 500 eval items with a conclusive finding)" in err
    assert "split_label" in err and "suspected findings, not counted" in err


def test_out_path_and_a_users_file_is_never_replaced(tmp_path):
    _export(tmp_path, "split", "--out", str(tmp_path / "mine.csv"))
    theirs = tmp_path / "theirs.csv"
    theirs.write_text("a user's file\n")
    res = CliRunner().invoke(
        main, ["report", str(tmp_path / "split" / "report.json"), "--format", "conda", "--out", str(theirs)]
    )
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert theirs.read_text() == "a user's file\n"
