"""Issue 23's target for the reviewer's loop, on real data with the bundled model (slow: three
embedding-tier audits of 500 WebShop test goals against 11,587 training goals).

WebShop's test goals (0:500, bundled) against its training goals (500 onwards) as
../shared/data/webshop holds them (``human_goals.json``), with the paraphrase tier alone: hundreds of
suspected findings (template siblings: "i am looking for a ... for my living room") beside the
conclusive ones.

- every suspected row is marked as such in report.md, report.html and junit.xml;
- ``--fail-on unreviewed`` exits 1 while any is unreviewed;
- after ``auditor review --dismiss`` of all of them the same command exits 0;
- after re-ordering the training goals (shuffled, split across two files, read through a glob) the
  decisions still apply: their keys are content hashes, not record positions.

The allowance is every eval item (``--max-contaminated 500``), so what decides is the review state
alone, not the conclusive count.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner
from helpers import shared_file

pytest.importorskip("sentence_transformers", reason="the embedding tier needs the [embed] extra")

from auditor.cli import main  # noqa: E402

pytestmark = pytest.mark.slow


def _run(runner, tmp_path, name, train, decisions):
    args = ["audit", "--eval", "webshop:0:500", "--train", train, "--method", "embedding"]
    args += ["--max-contaminated", "500", "--fail-on", "unreviewed", "--decisions", str(decisions)]
    args += ["--report-dir", str(tmp_path / name), "--index-dir", str(tmp_path / "ix")]
    res = runner.invoke(main, args)
    return res, json.loads((tmp_path / name / "report.json").read_text())


def _only_suspected(report):
    conclusive = {f["eval_ordinal"] for f in report["findings"] if f["conclusive"]}
    return {
        f["eval_id"]
        for f in report["findings"]
        if f["evidence"].get("tier") == "suspected" and f["eval_ordinal"] not in conclusive
    }


def test_embedding_review_loop_survives_reordered_training_files(tmp_path):
    goals = json.loads(shared_file("webshop/baseline_models/data/human_goals.json").read_text())
    (tmp_path / "in_order").mkdir()
    (tmp_path / "in_order" / "train.json").write_text(json.dumps(goals[500:]))
    decisions = tmp_path / "auditor-decisions.json"
    runner = CliRunner()

    res, report = _run(runner, tmp_path, "r1", str(tmp_path / "in_order" / "train.json"), decisions)
    check = report["checks"][0]
    assert res.exit_code == 1, res.output
    assert check["unreviewed"] == check["suspected"] > 50 and check["contaminated_items"] > 0
    head = res.output.splitlines()[0]
    assert (
        f"{check['suspected']} suspected ({check['unreviewed']} unreviewed)" in head and "fail_on = unreviewed" in head
    )

    # every suspected row marked: md (findings table and review list), html (status tags, decision
    # cells), junit (failure message entries and the review note)
    md = (tmp_path / "r1" / "report.md").read_text()
    html = (tmp_path / "r1" / "report.html").read_text()
    junit = (tmp_path / "r1" / "junit.xml").read_text()
    items = _only_suspected(report)
    md_rows = [r for r in md.splitlines() if r.startswith("| audit | webshop:0:500 ")]
    for row in md_rows:
        eval_id = row.split(" | ")[1].rsplit(" ", 1)[1]
        assert ("| suspected: unreviewed |" in row) == (eval_id in items), row
    assert md_rows  # (the first rows are conclusive: a conclusive item always ranks first)
    review_rows = [r for r in md.splitlines() if re.match(r"\| \d+ \| audit \| [\d.]+ \| ", r)]
    assert review_rows and all(" | unreviewed (" in r for r in review_rows)
    for m in re.finditer(
        r"<td>(?:<a [^>]*>)?webshop:0:500 (\d+)(?:</a>)?</td><td><span class='st st-([a-z-]+)'>", html
    ):
        assert (m.group(2) == "suspected") == (m.group(1) in items), m.group(0)
    assert html.count("class='decision d-unreviewed'") == len(review_rows)
    listed = re.findall(r"webshop:0:500#(\d+) in \S+ \(([a-z: ]+): ", junit)
    assert listed and all((status == "suspected: unreviewed") == (eid in items) for eid, status in listed)
    assert any(status == "suspected: unreviewed" for _, status in listed)
    assert "unreviewed; embedding: possible paraphrases" in junit

    # dismiss them all: the same command passes
    res = runner.invoke(
        main, ["review", str(tmp_path / "r1" / "report.json"), "--decisions", str(decisions), "--dismiss-unreviewed"]
    )
    assert res.exit_code == 0, res.output
    dismissed = json.loads(decisions.read_text())["decisions"]
    assert dismissed and {d["decision"] for d in dismissed} == {"dismissed"}
    res, report2 = _run(runner, tmp_path, "r2", str(tmp_path / "in_order" / "train.json"), decisions)
    check2 = report2["checks"][0]
    assert res.exit_code == 0, res.output
    assert check2["unreviewed"] == 0 and check2["dismissed"] == check2["suspected"] == check["suspected"]
    md2 = (tmp_path / "r2" / "report.md").read_text()
    review_rows2 = [r for r in md2.splitlines() if re.match(r"\| \d+ \| audit \| [\d.]+ \| ", r)]
    assert review_rows2 and all(" | dismissed (" in r for r in review_rows2)
    assert f"{check2['suspected']} suspected ({check2['dismissed']} dismissed)" in res.output.splitlines()[0]

    # the training goals shuffled into two files: other positions, the same texts, the same decisions
    shuffled = goals[500:]
    random.Random(23).shuffle(shuffled)
    (tmp_path / "reordered").mkdir()
    half = len(shuffled) // 2
    (tmp_path / "reordered" / "b.json").write_text(json.dumps(shuffled[:half]))
    (tmp_path / "reordered" / "a.json").write_text(json.dumps(shuffled[half:]))
    res, report3 = _run(runner, tmp_path, "r3", str(tmp_path / "reordered" / "*.json"), decisions)
    check3 = report3["checks"][0]
    assert res.exit_code == 0, res.output
    assert check3["unreviewed"] == 0 and check3["dismissed"] == check3["suspected"] == check["suspected"]
    before = {f["review_id"]: f["train_source"] for f in report["findings"] if f.get("review_id")}
    after = {f["review_id"]: f["train_source"] for f in report3["findings"] if f.get("review_id")}
    assert set(after) == set(before)
    moved = sum(before[rid] != after[rid] for rid in after)
    assert moved > 0.9 * len(after)  # the decisions followed the texts to their new places
