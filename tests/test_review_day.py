"""A reviewer's day with a report (issue 40): ``auditor review`` shows both texts of every suspected
finding whatever the training record's shape, the notes name the report and what the findings are,
a record is numbered one way, report.md explains its error types, and the CI pieces say what they do.

Real runs through the CLI on small files written here (no mocks): each training file holds one record
that shares the first 14 words of an eval item and then goes its own way, which the n-gram tier finds
as a *suspected* finding (shared 13-token runs, too little to be a copy), in a named field (Alpaca
``output``, a ``completion`` named by ``--train-text-field``), a chat turn or a plain text.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.report._errortypes import MEANINGS

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
    "upsilon phi chi psi omega red green blue mug lamp chair table river stone"
).split()
LEAKED = 5  # the eval item half-copied into training record HOST
HOST = 40


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _shape(kind: str, text: str) -> dict:
    if kind == "alpaca":
        return {"instruction": "write it", "input": "", "output": text}
    if kind == "chat":
        return {"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": text}]}
    if kind == "text":
        return {"text": text}
    return {"prompt": "answer", "completion": text}  # "named": --train-text-field completion


def _write(tmp_path: Path, kind: str) -> tuple[Path, Path, str]:
    rng = random.Random(7)
    evals = [{"id": f"q{i}", "text": _words(rng, 25)} for i in range(20)]
    half = " ".join(evals[LEAKED]["text"].split()[:14]) + " but then something else entirely " + _words(rng, 12)
    train = [_shape(kind, _words(rng, 40)) for _ in range(60)]
    train[HOST] = _shape(kind, half)
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text("".join(json.dumps(x) + "\n" for x in evals))
    tr.write_text("".join(json.dumps(x) + "\n" for x in train))
    return ev, tr, half


def _audit(tmp_path: Path, kind: str) -> tuple[Path, str, str]:
    ev, tr, half = _write(tmp_path, kind)
    extra = ["--train-text-field", "completion"] if kind == "named" else []
    rep = tmp_path / "rep"
    res = CliRunner().invoke(  # names relative to tmp_path (the tests run there): sources as a user sees them
        main, ["audit", "--eval", ev.name, "--train", tr.name, "--report-dir", "rep", "--index-dir", "ix", *extra]
    )
    assert res.exit_code in (0, 1), res.output
    return rep / "report.json", res.output, half


@pytest.mark.parametrize("kind", ["alpaca", "chat", "text", "named"])
def test_review_shows_both_texts_for_every_record_shape(tmp_path, kind, monkeypatch):
    """Before: ``(text not kept in report.json: open train.jsonl:41)`` for a finding in a named field
    though report.json held the text under ``"train#40 output"``. Now both texts, for every shape, and
    ``--list`` shows the eval text."""
    monkeypatch.chdir(tmp_path)
    report_json, _, half = _audit(tmp_path, kind)
    report = json.loads(report_json.read_text())
    suspected = [f for f in report["findings"] if (f.get("evidence") or {}).get("tier") == "suspected"]
    assert suspected, report["findings"]
    eval_text = next(json.loads(line)["text"] for i, line in enumerate((tmp_path / "eval.jsonl").open()) if i == LEAKED)
    walked = CliRunner().invoke(main, ["review", str(report_json)], input="q\n")
    assert walked.exit_code == 0, walked.output
    assert "text not kept" not in walked.output
    assert eval_text in walked.output and half in walked.output
    listed = CliRunner().invoke(main, ["review", str(report_json), "--list"])
    assert listed.exit_code == 0 and "eval: " + " ".join(eval_text.split()[:10]) in listed.output, listed.output


def test_one_numbering_and_notes_say_what_the_findings_are(tmp_path, monkeypatch):
    """Before: ``training record train 40 (train.jsonl:41)`` (0-based beside 1-based), ``(possible
    paraphrases)`` for shared 13-token runs, and ``review them with: auditor review REPORT.json``."""
    monkeypatch.chdir(tmp_path)
    report_json, out, _ = _audit(tmp_path, "alpaca")
    walked = CliRunner().invoke(main, ["review", str(report_json)], input="q\n").output
    assert f"training record train (train.jsonl:{HOST + 1})" in walked
    assert f"train {HOST} " not in walked
    assert "possible paraphrases" not in out
    assert "unreviewed: 1 suspected eval item (ngram: shared word n-grams or partial copies)" in out
    report = json.loads(report_json.read_text())
    notes = [n for c in report["checks"] for n in c["notes"] if "suspected findings" in n]
    assert notes and all("auditor review rep/report.json" in n and "REPORT.json" not in n for n in notes), notes
    assert all("possible paraphrases" not in n for n in notes)
    md = (report_json.parent / "report.md").read_text()
    assert "Findings below the conclusive bar (ngram: shared word n-grams or partial copies)" in md
    # report.md / report.html name the record one way too: its source line, not "train #40" beside it
    html = (report_json.parent / "report.html").read_text()
    for page in (md, html):
        assert f"train (train.jsonl:{HOST + 1})" in page and f"train #{HOST}" not in page
        assert f"train {HOST} " not in page and f"train {HOST}<" not in page


def test_error_types_table_says_what_the_labels_are(tmp_path, monkeypatch):
    """Before: report.md's "Error types" table (``ungrounded_identifier 1``) with no word of what it
    means. Now a sentence, the docs section, and each label's meaning, in report.md and report.html."""
    from test_agent_adapters import write_caft

    monkeypatch.chdir(tmp_path)
    caft = write_caft(tmp_path)
    res = CliRunner().invoke(
        main, ["audit", "--eval", "webshop:0:50", "--train", caft.name, "--report-dir", "rep", "--index-dir", "ix"]
    )
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    section = md.split("## Error types", 1)[1].split("\n## ", 1)[0]
    assert "deterministic labels of tool-use failures" in section and "docs/report.md#error-types" in section
    assert "| caft\\_example | 1 |" in section
    assert "- `ungrounded_identifier`: an id-like argument found neither in the user's text" in section
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "deterministic labels of tool-use failures" in html and "<code>ungrounded_identifier</code>: " in html
    docs = (Path(__file__).parents[1] / "docs" / "report.md").read_text()
    assert "## Error types" in docs and all(f"| `{lb}` |" in docs for lb in MEANINGS)


def test_provenance_statement_counts_the_goals_the_audit_finds(tmp_path):
    """Before: ``auditor provenance examples/split.toml --statement`` said 42 leaked goals where the
    audit finds 43: the entry attributed by exact + ngram while the check (and the README's audit) also
    runs minhash, whose word-set match alone finds test goal 177 ("im looking for wall art for hanging
    through the wall") in training goal 7136. The entry now runs the check's methods, and the statement
    names what attributed its records."""
    repo = Path(__file__).parents[1]
    found = int(re.search(r"It finds (\d+) leaked test goals", (repo / "README.md").read_text()).group(1))
    res = CliRunner().invoke(
        main,
        ["provenance", str(repo / "examples" / "split.toml"), "--statement", "--report-dir", str(tmp_path / "p")],
    )
    assert res.exit_code == 1, res.output
    assert f"and {found} (0.4%) to the held-out split 'test' ({found} source items:" in res.output
    assert "Attributed by: exact, ngram, minhash, id." in res.output
    doc = json.loads((tmp_path / "p" / "provenance.json").read_text())
    entry = doc[0] if isinstance(doc, list) else doc.get("provenance", [doc])[0]
    assert any(r["source_id"] == "177" and r["held_out"] for r in entry["records"])


def _sides(html: str) -> list[str]:
    """The text of each side of each proof panel (captions dropped, tags kept)."""
    out = []
    for m in re.finditer(r"<div class='pair'>(.*?)</div></div><div class='src'>", html, re.S):
        for side in m.group(1).split("</div><div>"):
            out.append(re.sub(r"<div class='where'>.*?</div>", "", side))
    return out


def test_every_conclusive_and_suspected_item_has_a_proof_in_view(tmp_path, monkeypatch):
    """Before: report.html gave a proof panel to the first 12 items only (12 of 19 conclusive ones in
    the issue's case), and a match embedded 2,500 characters into a training text sat below the fold of
    its scroll box. Now every conclusive and suspected item has its panel (report.md its texts), and
    each highlighted run starts within LEAD characters of its box's top."""
    from auditor.report.proof import LEAD

    monkeypatch.chdir(tmp_path)
    rng = random.Random(3)
    evals = [{"id": f"q{i}", "text": _words(rng, 30)} for i in range(40)]
    train = [{"text": _words(rng, 60)} for _ in range(200)]
    for k in range(20):  # 20 leaked items, each deep inside a long training text
        train[k * 7] = {"text": _words(rng, 450) + " " + evals[k]["text"] + " " + _words(rng, 40)}
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(x) + "\n" for x in evals))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in train))
    res = CliRunner().invoke(
        main, ["audit", "--eval", "e.jsonl", "--train", "t.jsonl", "--report-dir", "rep", "--index-dir", "ix"]
    )
    assert res.exit_code == 1, res.output
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    proven = {
        f["eval_ordinal"]
        for f in report["findings"]
        if f["conclusive"] or (f.get("evidence") or {}).get("tier") == "suspected"
    }
    assert len(proven) >= 20
    html = (tmp_path / "rep" / "report.html").read_text()
    assert html.count("<div class='finding' id='item-") == len(proven) > 12
    sides = _sides(html)
    assert len(sides) == 2 * len(proven)
    for side in sides:
        assert "<mark>" in side, side[:300]
        lead = re.sub(r"<span class='cut'>.*?</span>", "", side.split("<mark>", 1)[0])
        assert len(re.sub(r"<[^>]+>", "", lead).strip()) <= LEAD, side[:400]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert md.count("\n#### ") == len(proven) and md.count("**") >= 4 * len(proven)


def test_review_shows_a_named_fields_text_when_the_finding_names_no_span(tmp_path, monkeypatch):
    """A report whose finding names its field but no span (an older writer, a hand-edited report) still
    finds the field's text report.json keeps under ``"train#40 output"``."""
    from auditor.audit.decisions import Decisions
    from auditor.audit.review_session import describe
    from auditor.report import Report

    monkeypatch.chdir(tmp_path)
    report_json, _, half = _audit(tmp_path, "alpaca")
    report = Report.load(str(report_json))
    assert f"train#{HOST} output" in report.texts
    (f,) = [f for f in report.findings if (f.get("evidence") or {}).get("tier") == "suspected"]
    f["evidence"].pop("span")
    lines = describe(report, f, Decisions(None), 1, 1)
    assert lines[5].strip() == half and "text not kept" not in "\n".join(lines)
