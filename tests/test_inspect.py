"""`auditor inspect` for people: per file the format chosen and why, counts, each sampled record's
views first (truncated), meta after; `--json` for the raw form."""

from __future__ import annotations

import json

from click.testing import CliRunner
from helpers import shared_file

from auditor.cli import main


def test_inspect_summary_is_short_and_views_come_before_meta():
    path = shared_file("tool-mvr/data/RefineToolBench/I3.json")
    out = CliRunner().invoke(main, ["inspect", str(path)]).output
    lines = out.splitlines()
    assert lines[0] == f"file {path}"
    assert lines[1].startswith("  format refinetoolbench: a JSON array") and "'refinetoolbench'" in lines[1]
    assert lines[2] == "records: 3 read, 3 kept, 0 skipped, 0 left out by the split"
    assert len(lines) < 60  # three records; the raw JSON form ran to 552 lines
    first = lines.index(next(line for line in lines if line.startswith("record 1:")))
    block = lines[first : lines.index("", first)]
    assert block[1].lstrip().startswith("query") and block[-1].lstrip().startswith("meta")
    assert all(len(line) < 400 for line in block[:-1])  # views truncated
    assert "chars)" in out  # and say how long they were


def test_inspect_json_is_the_raw_form():
    path = shared_file("tool-mvr/data/RefineToolBench/I3.json")
    doc = json.loads(CliRunner().invoke(main, ["inspect", str(path), "--json", "-n", "1"]).output)
    assert doc["records"] == 3 and doc["formats"][str(path)] == "refinetoolbench"
    assert len(doc["first"][0]["views"]["system"]) > 1000  # not truncated


def test_inspect_says_why_a_json_lines_file_named_json_was_read_as_lines(tmp_path):
    p = tmp_path / "data.json"
    p.write_text('{"id": 1, "utterance": "hi"}\n{"id": 2, "utterance": "yo"}\n')
    out = CliRunner().invoke(main, ["inspect", str(p), "--text-field", "utterance"]).output
    assert "format jsonl: JSON Lines (a second JSON value follows the first" in out
    assert "records: 2 read, 2 kept" in out
    out = CliRunner().invoke(main, ["inspect", str(p)]).output  # the training side: read whole, saying why
    assert "read whole 2 (not of the file's format): no text field found" in out
    assert "utterance" in out and "--text-field" in out and "fields utterance: 2 strings" in out
