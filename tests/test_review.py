"""The reviewer's loop (issue 23 items 2-3): suspected findings marked everywhere, decisions that
persist (``auditor review``), ``fail_on = "unreviewed"``, and the one verdict rule.

Real data: WebShop's test goals against its training goals (bundled), whose default text tiers give
a few *suspected* findings (near-template goals: ngram / minhash below the conclusive bar) beside the
conclusive copies. The embedding-tier target of the issue (hundreds of suspected findings, re-ordered
training files) is tests/test_review_embedding.py (slow).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.audit.decisions import DECISIONS_FILE, Decisions
from auditor.audit.verdict import ItemCounts, counted, decide
from auditor.cli import main
from auditor.report import Report

AUDIT = [
    "audit",
    "--eval",
    "webshop:0:500",
    "--train",
    "webshop:500:4000",
    "--method",
    "exact",
    "--method",
    "ngram",
    "--method",
    "minhash",
    "--max-contaminated",
    "500",  # every conclusive item allowed: what decides is the review state alone
    "--fail-on",
    "unreviewed",
]


#: one suspected finding of a made-up report (the review command's own tests)
SUSPECTED = {
    "check": "c", "eval_dataset": "e", "eval_id": "1", "eval_source": "e#0", "eval_ordinal": 0,
    "train_dataset": "t", "train_id": "9", "train_source": "t:10", "train_ordinal": 9, "method": "embedding",
    "score": 1.6, "conclusive": False, "evidence": {"tier": "suspected"}, "eval_hash": "a" * 16,
    "train_hash": "b" * 16,
}  # fmt: skip


def _audit(runner: CliRunner, tmp_path: Path, name: str, *extra: str):
    res = runner.invoke(
        main, [*AUDIT, "--report-dir", str(tmp_path / name), "--index-dir", str(tmp_path / "ix"), *extra]
    )
    report = json.loads((tmp_path / name / "report.json").read_text()) if (tmp_path / name).exists() else None
    return res, report


def _suspected(report: dict) -> list[dict]:
    return [f for f in report["findings"] if (f.get("evidence") or {}).get("tier") == "suspected"]


@pytest.mark.parametrize(
    "counts, allowance, fail_on, verdict",
    [
        (ItemCounts(500, 38, suspected=5, unreviewed=5), 38, "conclusive", "pass"),
        (ItemCounts(500, 38, suspected=5, unreviewed=5), 38, "suspected", "fail"),
        (ItemCounts(500, 38, suspected=5, unreviewed=5), 43, "suspected", "pass"),
        (ItemCounts(500, 38, suspected=5, unreviewed=5), 500, "unreviewed", "fail"),
        (ItemCounts(500, 38, suspected=5, dismissed=5), 38, "unreviewed", "pass"),
        (ItemCounts(500, 38, suspected=5, dismissed=5), 38, "suspected", "pass"),  # dismissed never count
        (ItemCounts(500, 38, confirmed=1, suspected=5, dismissed=4), 38, "conclusive", "fail"),  # confirmed count
        (ItemCounts(500, 0, suspected=2, unreviewed=2), 0, "conclusive", "pass"),
        (ItemCounts(0, 0), 0, "conclusive", "incomplete"),
    ],
)
def test_the_verdict_rule(counts, allowance, fail_on, verdict):
    assert decide(counts, allowance, fail_on) == verdict
    if verdict != "incomplete":
        assert decide(counts, allowance, fail_on, unchecked=True) == ("fail" if verdict == "fail" else "incomplete")
    assert counted(counts, "suspected") >= counted(counts, "conclusive") == counts.conclusive + counts.confirmed
    with pytest.raises(ValueError):
        decide(counts, allowance, "suspicious")


def test_review_loop_on_webshop(tmp_path, monkeypatch):
    """Suspected rows marked in every rendering; --fail-on unreviewed fails until every suspected
    finding is decided; a confirmed one counts as contamination; the default decisions file is the
    current folder's; the printed line never says a bare PASS while suspected items wait."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    res, report = _audit(runner, tmp_path, "r1")
    check = report["checks"][0]
    suspected = _suspected(report)
    assert res.exit_code == 1, res.output
    assert check["suspected"] == check["unreviewed"] >= 2 and check["verdict"] == "fail"
    line = res.output.splitlines()[0]
    assert line.startswith("auditor: FAIL — audit: fail, ") and re.search(
        rf"{check['contaminated_items']} conclusive \+ {check['suspected']} suspected \({check['unreviewed']} unreviewed\) of 500",
        line,
    ), line
    assert "auditor review" in res.output and report["decisions"]["file"] == DECISIONS_FILE
    assert all(f["decision"] == "unreviewed" and len(f["review_id"]) == 10 for f in suspected)

    # every suspected row is marked as such: md tables, html status tags, the JUnit failure
    md = (tmp_path / "r1" / "report.md").read_text()
    html = (tmp_path / "r1" / "report.html").read_text()
    junit = (tmp_path / "r1" / "junit.xml").read_text()
    only_suspected = {f["eval_id"] for f in suspected} - {f["eval_id"] for f in report["findings"] if f["conclusive"]}
    for eval_id in only_suspected:
        rows = [r for r in md.splitlines() if r.startswith(f"| audit | webshop:0:500 {eval_id} |")]
        assert rows and all("| suspected: unreviewed |" in r for r in rows), rows
        assert re.search(
            rf"webshop:0:500 {eval_id}(</a>)?</td><td><span class='st st-suspected'>suspected: unreviewed", html
        )
        assert f"webshop:0:500#{eval_id} in " in junit and "(suspected: unreviewed: " in junit
    assert "| conclusive |" in md and md.count("unreviewed (") >= len(suspected)

    # review: one dismissed by id (a prefix), one confirmed in the terminal (stdin), with a note
    first, *rest = sorted({f["review_id"] for f in suspected})
    res = runner.invoke(main, ["review", "r1/report.json", "--dismiss", first[:6], "--note", "another size"])
    assert res.exit_code == 0 and "1 dismissed" in res.output, res.output
    decisions = Decisions.load(tmp_path / DECISIONS_FILE)
    assert [d.note for d in decisions.entries.values()] == ["another size"]
    res = runner.invoke(main, ["review", "r1/report.json"], input="n\nsame goal reworded\nc\n" + "s\n" * 20)
    assert res.exit_code == 0 and "1 confirmed" in res.output, res.output
    assert "eval item" in res.output and "training record" in res.output and "evidence:" in res.output
    confirmed = [d for d in Decisions.load(tmp_path / DECISIONS_FILE).entries.values() if d.decision == "confirmed"]
    assert len(confirmed) == 1 and confirmed[0].note == "same goal reworded"

    # the next run reads the file: the confirmed item is contamination, the dismissed one is listed
    res, report = _audit(runner, tmp_path, "r2")
    check = report["checks"][0]
    assert check["confirmed"] == 1 and check["dismissed"] >= 1
    assert check["contaminated_items"] == report["checks"][0]["counted_items"]
    assert "confirmed" in res.output.splitlines()[0] and "dismissed" in res.output.splitlines()[0]
    assert ("suspected: dismissed" in (tmp_path / "r2" / "report.md").read_text()) and (
        "suspected: dismissed" in (tmp_path / "r2" / "report.html").read_text()
    )
    assert res.exit_code == (1 if check["unreviewed"] else 0)

    # all the rest dismissed: the same command passes, and says what it passed with
    res = runner.invoke(main, ["review", "r2/report.json", "--dismiss-unreviewed", "--note", "template siblings"])
    assert res.exit_code == 0, res.output
    res, report = _audit(runner, tmp_path, "r3")
    check = report["checks"][0]
    assert res.exit_code == 0, res.output
    assert check["unreviewed"] == 0 and check["dismissed"] + check["confirmed"] == check["suspected"]
    assert res.output.startswith("auditor: PASS — audit: pass, ") and "dismissed" in res.output.splitlines()[0]
    assert "allowance 500" in res.output.splitlines()[0]


def test_write_clean_removes_the_records_behind_confirmed_findings(tmp_path, monkeypatch):
    """A suspected finding a reviewer confirmed is contamination: --write-clean removes its training
    record as it does a conclusive one's; a dismissed one's record stays."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    _, report = _audit(runner, tmp_path, "r1")
    suspected = _suspected(report)
    conclusive_train = {f["train_id"] for f in report["findings"] if f["conclusive"]}
    first, *rest = sorted({f["review_id"] for f in suspected})
    assert rest, "the WebShop audit has several suspected findings"
    assert runner.invoke(main, ["review", "r1/report.json", "--confirm", first]).exit_code == 0
    assert runner.invoke(main, ["review", "r1/report.json", "--dismiss-unreviewed"]).exit_code == 0
    res, report = _audit(runner, tmp_path, "r2", "--write-clean", str(tmp_path / "clean"))
    assert res.exit_code == 0, res.output
    removed = {r["id"]: r for r in map(json.loads, (tmp_path / "clean" / "removed.jsonl").read_text().splitlines())}
    confirmed = [f for f in _suspected(report) if f["decision"] == "confirmed"]
    dismissed = [f for f in _suspected(report) if f["decision"] == "dismissed"]
    assert confirmed and all(f["train_id"] in removed for f in confirmed)
    assert any(removed[f["train_id"]]["method"] == f["method"] for f in confirmed)
    kept = {f["train_id"] for f in dismissed} - conclusive_train - {f["train_id"] for f in confirmed}
    assert kept and not kept & set(removed)


def test_pass_with_unreviewed_suspected_is_never_bare(tmp_path):
    """fail_on = conclusive (the default) passes with suspected items waiting, and says so on the
    verdict line, in every rendering and with the review command on stdout."""
    res = CliRunner().invoke(
        main,
        [
            *AUDIT[:-2],
            "--report-dir",
            str(tmp_path / "r"),
            "--index-dir",
            str(tmp_path / "ix"),
            "--decisions",
            str(tmp_path / "d.json"),
        ],
    )
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    check = report["checks"][0]
    assert res.exit_code == 0 and check["verdict"] == "pass" and check["unreviewed"] >= 2
    head = res.output.splitlines()[0]
    assert head.startswith("auditor: PASS — audit: pass, ") and f"({check['unreviewed']} unreviewed)" in head
    assert "allowance 500" in head and "unreviewed:" in res.output
    for name in ("report.md", "report.html", "junit.xml"):
        assert (
            f"{check['suspected']} suspected ({check['unreviewed']} unreviewed)" in (tmp_path / "r" / name).read_text()
        )
    assert not (tmp_path / "d.json").exists()  # reading a decisions file never creates one


def test_decisions_file_is_never_written_over_and_bad_ones_are_one_line(tmp_path):
    f = dict(SUSPECTED)
    report_path = tmp_path / "report.json"
    report_path.write_text(Report("pass", {}, [], [f]).to_json())
    mine = tmp_path / "notes.json"
    mine.write_text('{"my": "notes"}\n')
    runner = CliRunner()
    res = runner.invoke(main, ["review", str(report_path), "--dismiss-unreviewed", "--decisions", str(mine)])
    assert res.exit_code == 2 and "notes.json" in res.output and "not an auditor decisions file" in res.output
    assert mine.read_text() == '{"my": "notes"}\n' and len(res.output.strip().splitlines()) == 1
    res = runner.invoke(
        main, ["review", str(report_path), "--confirm", "zzzz", "--decisions", str(tmp_path / "d.json")]
    )
    assert res.exit_code == 2 and "no suspected finding with review id 'zzzz'" in res.output
    # deterministic: the same decisions in another order give the same bytes
    a, b = Decisions(tmp_path / "a.json"), Decisions(tmp_path / "b.json")
    fs = [{**f, "eval_id": str(i), "train_hash": f"{i:016x}"} for i in (10, 2, 33)]
    for finding in fs:
        a.set(finding, "dismissed")
    for finding in reversed(fs):
        b.set(finding, "dismissed")
    a.save(), b.save()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert [d["eval_id"] for d in json.loads((tmp_path / "a.json").read_text())["decisions"]] == ["2", "10", "33"]
    # a decisions file that names something else than confirmed / dismissed: one line naming the entry
    bad = json.loads((tmp_path / "a.json").read_text())
    bad["decisions"][1]["decision"] = "maybe"
    (tmp_path / "a.json").write_text(json.dumps(bad))
    res = runner.invoke(main, ["review", str(report_path), "--list", "--decisions", str(tmp_path / "a.json")])
    assert res.exit_code == 2 and "a.json:decisions[1]: decision must be confirmed or dismissed" in res.output


def test_glob_training_set_is_named_by_its_pattern(tmp_path):
    (tmp_path / "data").mkdir()
    goals = [
        "i need a long clip-in hair extension which is natural looking",
        "i want a noise cancelling usb microphone",
    ]
    (tmp_path / "data" / "a.json").write_text(json.dumps(goals))
    pattern = str(tmp_path / "data" / "*.json")
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            "webshop:0:5",
            "--train",
            pattern,
            "--method",
            "exact",
            "--report-dir",
            str(tmp_path / "r"),
        ],
    )
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert res.exit_code == 1, res.output
    assert report["checks"][0]["train"] == [pattern] and pattern in report["datasets"]


def test_verify_reads_the_decisions_beside_the_manifest(tmp_path):
    """A manifest's checks read ``auditor-decisions.json`` beside it (no flag), ``fail_on =
    "unreviewed"`` from the manifest fails until every suspected finding is decided, and
    ``auditor review`` writes the file the run read."""
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        'fail_on = "unreviewed"\n'
        '[datasets.test]\npath = "webshop:0:500"\nrole = "eval"\n'
        '[datasets.train]\npath = "webshop:500:4000"\nrole = "train"\n'
        '[[checks]]\nname = "webshop"\ntrain = "train"\neval = "test"\n'
        'methods = ["exact", "ngram", "minhash"]\nmax_contaminated = 500\n'
    )
    runner = CliRunner()
    args = ["verify", str(manifest), "--index-dir", str(tmp_path / "ix")]
    res = runner.invoke(main, [*args, "--report-dir", str(tmp_path / "r1")])
    report = json.loads((tmp_path / "r1" / "report.json").read_text())
    assert res.exit_code == 1 and report["checks"][0]["unreviewed"] > 0, res.output
    assert report["decisions"] == {"file": str(tmp_path / DECISIONS_FILE), "read": 0, "applied": 0}
    res = runner.invoke(main, ["review", str(tmp_path / "r1" / "report.json"), "--dismiss-unreviewed"])
    assert res.exit_code == 0 and (tmp_path / DECISIONS_FILE).exists(), res.output
    res = runner.invoke(main, [*args, "--report-dir", str(tmp_path / "r2")])
    report = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert res.exit_code == 0, res.output
    assert report["decisions"]["applied"] == report["decisions"]["read"] > 0
    # a manifest naming a decisions file outside its folder is refused, like any output path
    manifest.write_text(manifest.read_text().replace('fail_on = "unreviewed"\n', 'decisions = "../elsewhere.json"\n'))
    res = runner.invoke(main, [*args, "--report-dir", str(tmp_path / "r3")])
    assert res.exit_code == 2 and "leads outside the manifest's folder" in res.output, res.output


def test_review_all_walks_decided_findings_too(tmp_path):
    """``--all``: the terminal walk offers findings decided already (a dismissed one can be confirmed)."""
    f = dict(SUSPECTED)
    report_path = tmp_path / "report.json"
    report_path.write_text(Report("pass", {}, [], [f]).to_json())
    args = ["review", str(report_path), "--decisions", str(tmp_path / "d.json")]
    runner = CliRunner()
    assert runner.invoke(main, [*args, "--dismiss-unreviewed"]).exit_code == 0
    res = runner.invoke(main, args, input="c\n")  # nothing unreviewed: nothing asked
    assert res.exit_code == 0 and "no decisions" in res.output, res.output
    res = runner.invoke(main, [*args, "--all"], input="c\n")
    assert res.exit_code == 0 and "1 confirmed" in res.output, res.output
    assert [d.decision for d in Decisions.load(tmp_path / "d.json").entries.values()] == ["confirmed"]


def test_describe_names_a_finding_with_whole_number_ids_and_no_refs():
    """report.json may hold whole-number ids (check_report takes them) and, from an older version, no
    ``*_ref``: the review line names the records instead of failing to add an int to a str (found by mypy
    once findings were typed)."""
    from auditor.audit.review_session import describe

    f = {
        "check": "c",
        "eval_dataset": "e",
        "eval_id": 7,
        "eval_source": "e.json#7",
        "train_dataset": "t",
        "train_id": 12,
        "train_source": "t.json#12",
        "method": "embedding",
        "score": 0.91,
        "conclusive": False,
        "evidence": {"tier": "suspected", "cosine": 0.91},
        "eval_hash": "a" * 16,
        "train_hash": "b" * 16,
    }
    report = Report(verdict="pass", datasets={}, checks=[], findings=[f])
    lines = describe(report, f, Decisions(None), 1, 1)
    assert "  eval item      e 7 (e.json#7)" in lines and "  training record t 12 (t.json#12)" in lines
