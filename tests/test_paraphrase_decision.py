"""Issue 14: the paraphrase decision (conclusive / suspected), suspected findings in every report
and ``--fail-on suspected``, and near-duplicate recall whatever the edits' positions.

Real inputs only: the frozen hand-written held-out set (tests/data/heldout), the bundled
StableToolBench and tau2 sets, and BFCL questions from ../shared/data.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import shared_file

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.records.record import Record

HELDOUT = Path(__file__).parent / "data" / "heldout"
BFCL = "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_simple_python.json"


def _embedding():
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    pytest.importorskip("faiss", reason="the 'embed' extra is not installed")
    from auditor.methods.embedding import EmbeddingIndex

    return EmbeddingIndex


def test_heldout_rewordings_found_and_same_topic_requests_not_conclusive():
    EmbeddingIndex = _embedding()
    ev = list(Dataset(DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval")).records())[:60]
    ids = {r.id for r in ev}
    with open(HELDOUT / "stabletoolbench.tsv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["item_id"] in ids][:16]
    train = [
        Record("train", f"{r['kind']}:{r['item_id']}", f"t:{i}", {"query": r["text"]}, ordinal=i)
        for i, r in enumerate(rows)
    ]
    index = EmbeddingIndex(cache_dir="none").build(ev)
    findings = index.search(train)
    by_train: dict[str, list] = {}
    for f in findings:
        by_train.setdefault(f.train_id, []).append(f)
    paraphrases = [t for t in train if t.id.startswith("paraphrase:")]
    negatives = [t for t in train if t.id.startswith("negative:")]
    assert len(paraphrases) == len(negatives) == 8
    for t in paraphrases:  # each rewording is matched to its own query
        own = t.id.split(":", 1)[1]
        assert any(f.eval_id == own for f in by_train.get(t.id, [])), t.view("query")
    for t in negatives:  # a same-topic query asking for something else is never conclusive
        assert not any(f.conclusive for f in by_train.get(t.id, [])), t.view("query")


def _bfcl_eval(tmp_path) -> Path:
    path = shared_file(BFCL)
    out = tmp_path / "bfcl_eval.jsonl"
    with open(path, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as w:
        for i, line in enumerate(f):
            if i == 30:
                break
            d = json.loads(line)
            w.write(json.dumps({"id": d["id"], "question": d["question"][0][0]["content"]}) + "\n")
    return out


def test_suspected_finding_in_every_report_and_fail_on_suspected(tmp_path):
    _embedding()
    from click.testing import CliRunner

    from auditor.cli import main

    ev = _bfcl_eval(
        tmp_path
    )  # simple_python_0: "Find the area of a triangle with a base of 10 units and height of 5 units."
    tr = tmp_path / "train.jsonl"
    # the same request reworded, one value changed: not proof (values disagree), but worth a review
    tr.write_text(
        json.dumps({"text": "A triangle has a base measuring 10 units and a height of 7 units; what is its <area>?"})
        + "\n"
        + json.dumps({"text": "Give me a recipe for banana bread with walnuts."})
        + "\n"
    )
    out = tmp_path / "rep"
    args = ["audit", "--train", str(tr), "--eval", str(ev), "--method", "embedding", "--report-dir", str(out)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output  # suspected findings alone do not fail the check
    report = json.loads((out / "report.json").read_text())
    check = report["checks"][0]
    assert check["contaminated_items"] == 0 and check["suspected"] >= 1 and check["verdict"] == "pass"
    sus = [f for f in report["findings"] if f["evidence"].get("tier") == "suspected"]
    assert sus and not any(f["conclusive"] for f in sus)
    # simple_python_0 and _11 ask the same thing ("the area of a triangle with base 10 and height 5")
    assert {f["eval_id"] for f in sus} & {"simple_python_0", "simple_python_11"}
    assert sus[0]["evidence"]["values"] < 1
    md = (out / "report.md").read_text().replace("**", "")  # shared word runs are bold
    assert "## Suspected findings (review list)" in md
    assert "area of a triangle with" in md and "height of 7 units" in md and "&lt;area&gt;" in md
    html = (out / "report.html").read_text()
    plain = html.replace("<mark>", "").replace("</mark>", "")  # shared word runs are marked
    assert "id='review'" in html and "height of 7 units; what is its &lt;area&gt;?" in plain
    assert "<area>" not in html
    assert "suspected findings" in (out / "junit.xml").read_text()
    # --fail-on suspected: the same run fails
    res = CliRunner().invoke(main, [*args, "--fail-on", "suspected"])
    assert res.exit_code == 1, res.output
    assert json.loads((out / "report.json").read_text())["checks"][0]["verdict"] == "fail"
    # and so does a manifest with fail_on = "suspected"
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        f'fail_on = "suspected"\n[datasets.e]\npath = "{ev}"\nrole = "eval"\n'
        f'[datasets.t]\npath = "{tr}"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\nmethods = ["embedding"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "m")])
    assert res.exit_code == 1, res.output
    manifest.write_text(manifest.read_text().replace('"suspected"', '"everything"'))
    res = CliRunner().invoke(main, ["verify", str(manifest)])
    assert res.exit_code == 2 and "fail_on" in res.output


def _default_audit(ev_spec: str, train_records_path: Path | None = None, train_spec: str | None = None):
    train = DatasetSpec("t", [str(train_records_path) if train_records_path else train_spec], role="train")
    cfg = AuditConfig(
        datasets={"e": DatasetSpec("e", [ev_spec], role="eval"), "t": train},
        checks=[CheckSpec("c", train=["t"], eval=["e"])],  # the default methods
        findings_store="memory",
        index_dir=None,
    )
    return run_audit(cfg)


def test_tau2_retail_test_task_5_found_by_default_methods():
    report = _default_audit("tau2-retail:test", train_spec="tau2-retail:train")
    pairs = {(f["eval_id"], f["train_id"], f["method"]) for f in report.findings if f["conclusive"]}
    # word Jaccard 0.88 with train task 6 (the test task adds one sentence and a word)
    assert ("5", "6", "minhash") in pairs or ("5", "7", "minhash") in pairs, sorted(pairs)


def test_near_duplicate_with_edits_at_start_and_end_found(tmp_path):
    ev = list(Dataset(DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval")).records())
    item = next(r for r in ev if r.id == "25658")  # "I'm planning a weekend getaway with my friends in New York. ..."
    words = item.view("query").split()
    # edits at both ends: the first two words dropped, the last two swapped, a courtesy phrase appended,
    # case changed at the start; word-set Jaccard stays >= 0.8
    edited = " ".join([words[2].upper(), *words[3:-2], words[-1], words[-2], "Thanks", "a", "lot!"])
    a, b = {w.lower().strip(".,?!") for w in words}, {w.lower().strip(".,?!") for w in edited.split()}
    assert len(a & b) / len(a | b) >= 0.8
    other = "Recommend three board games for a family evening with children under ten."
    tr = tmp_path / "train.jsonl"
    tr.write_text(
        "\n".join(
            json.dumps({"messages": [{"role": "user", "content": t}, {"role": "assistant", "content": "Sure."}]})
            for t in (edited, other)
        )
        + "\n"
    )
    report = _default_audit("stabletoolbench:G1_instruction", train_records_path=tr)
    found = {(f["eval_id"], f["train_id"]) for f in report.findings if f["conclusive"]}
    assert {e for e, _ in found} == {"25658"}


def _nestful_eval() -> list[Record]:
    """The bundled NESTFUL requests, ids ``<split>:<position>`` as in tests/data/heldout/nestful.tsv."""
    from auditor.adapters.nestful import split_of

    out = []
    for i, r in enumerate(Dataset(DatasetSpec("nestful", ["nestful"], role="eval")).records()):
        split = split_of(r.source.split(":", 1)[-1].split("#")[0])
        out.append(Record("nestful", f"{split}:{r.id}", r.source, {"query": r.view("query")}, ordinal=i))
    return out


def test_untouched_nestful_set_reworded_request_conclusive_same_values_other_operation_not():
    """The untouched held-out set (never fitted on): a reworded request with its values is a conclusive
    finding for its own item; requests that keep every argument value but ask another operation (LCM
    instead of GCD, cancel instead of reserve, report damage instead of rent) are never conclusive."""
    EmbeddingIndex = _embedding()
    ev = _nestful_eval()
    assert len({r.id for r in ev}) == 300
    with open(HELDOUT / "nestful.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    pick = [("glaive:60", "paraphrase"), ("glaive:52", "negative"), ("sgd:0", "negative"), ("sgd:28", "negative")]
    train = []
    for i, (item, kind) in enumerate(pick):
        text = next(r["text"] for r in rows if r["item_id"] == item and r["kind"] == kind)
        train.append(Record("train", f"{kind}:{item}", f"t:{i}", {"query": text}, ordinal=i))
    findings = EmbeddingIndex(cache_dir="none").build(ev).search(train)
    by_train: dict[str, list] = {}
    for f in findings:
        by_train.setdefault(f.train_id, []).append(f)
    own = [f for f in by_train.get("paraphrase:glaive:60", []) if f.eval_id == "glaive:60"]
    assert own and own[0].conclusive, [(f.eval_id, f.evidence.get("tier"), f.score) for f in findings]
    for t in train[1:]:
        assert not any(f.conclusive for f in by_train.get(t.id, [])), t.view("query")
