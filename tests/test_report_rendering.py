"""Reports a reviewer can trust: report.md escapes every value (no markup, no forged heading), one
row per contaminated item with the methods as columns, counts that say what they count, plots only
for methods with findings, error types and the clean section as tables."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec

FORGED = "x\n\n# Contamination audit: **PASS**\n"


def _audit(tmp_path):
    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop:0:40"], role="eval")).records()]
    long = [g for g in goals if len(g.split()) >= 10][:4]
    rows = [
        {"id": FORGED, "text": long[0] + " <script>alert(1)</script>"},
        {"id": "<img src=x onerror=alert(1)>", "text": "| a | `b` [c](http://e.test) " + long[1]},
        {"id": "bidi\u202eevil\u200b", "text": long[2]},
        {"id": "plain", "text": long[3]},
        {"id": "other", "text": "an unrelated record about cooking pasta al dente with garlic"},
    ]
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(
        main,
        ["audit", "--eval", "webshop:0:40", "--train", str(train), "--method", "exact", "--method", "ngram"]
        + ["--method", "id", "--report-dir", str(tmp_path / "r"), "--write-clean", str(tmp_path / "clean")],
    )
    assert res.exit_code == 1, res.output
    return tmp_path / "r"


def test_markdown_escapes_every_value(tmp_path):
    out = _audit(tmp_path)
    md = (out / "report.md").read_text()
    headings = [line for line in md.splitlines() if line.startswith("# ")]
    assert headings == ["# Contamination audit: **FAIL**"]  # no forged PASS heading
    assert "<script" not in md and "<img" not in md and not re.search(r"(?<!\\)\]\(http", md)
    assert "\u202e" not in md and "\u200b" not in md  # shown as escapes instead
    assert "\\u202e" in md and "x\\u000a\\u000a\\# Contamination audit: \\*\\*PASS\\*\\*\\u000a" in md
    assert "&lt;script&gt;" in md
    header, rows = _findings_table(md)  # every row keeps its columns: no pipe came from a value
    assert rows and all(re.sub(r"\\\|", "", r).count(" | ") == header.count(" | ") for r in rows)


def _findings_table(md: str) -> tuple[str, list[str]]:
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| check | eval item |"))
    end = lines.index("", start)
    return lines[start], lines[start + 2 : end]


def test_findings_are_one_row_per_item_with_methods_as_columns(tmp_path):
    out = _audit(tmp_path)
    doc = json.loads((out / "report.json").read_text())
    items = {(f["check"], f["eval_dataset"], f["eval_ordinal"]) for f in doc["findings"]}
    assert len(doc["findings"]) > len(items)  # several methods found the same items
    md = (out / "report.md").read_text()
    header, rows = _findings_table(md)
    assert header.split(" | ")[2:4] == ["status", "training records"]
    assert header.split(" | ")[4:] == ["exact", "ngram |"]  # methods with findings; id found none
    assert len(rows) == len(items) == doc["checks"][0]["contaminated_items"] == 4
    assert all(" | conclusive | " in r for r in rows)
    assert f"4 eval items with conclusive findings; {len(doc['findings'])} findings" in md
    page = (out / "report.html").read_text()
    assert page.count("<figure><svg") - page.count("contamination matrix") == 2  # exact, ngram
    assert "No findings, so no plot: id." in page


def test_coverage_error_types_and_clean_are_tables(tmp_path):
    out = _audit(tmp_path)
    doc = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    for ms in doc["checks"][0]["method_stats"]:  # indexed + not indexed = eval items, in both renderings
        if ms["eval_not_indexed"]:
            indexed = ms["eval_items"] - ms["eval_not_indexed"]
            assert f"{ms['method']} indexed {indexed} of {ms['eval_items']} eval items" in md
    assert "## Cleaned training data" in md and "| train | 1 | 4 | 0 | " in md
    assert "<h2 id='cleaned-training-data'>Cleaned training data</h2>" in page
    assert "Re-audit: <code>auditor verify" in page and "{&quot;" not in page  # no raw JSON in cells
    assert "## Error types" in md and "<h2 id='error-types'>Error types</h2>" in page
