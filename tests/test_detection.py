"""The exact, ngram and id tiers on real data: planted copies are found, clean splits pass."""

from __future__ import annotations

import json

from helpers import shared_file

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import DatasetSpec
from auditor.text.normalize import tokens

STB_G1 = "stabletoolbench/solvable_queries/test_instruction/G1_instruction.json"


def audit(tmp_path, train_paths, eval_ref="stabletoolbench", methods=None, **train_kw):
    cfg = AuditConfig(
        datasets={
            "eval": DatasetSpec("eval", [eval_ref], role="eval"),
            "train": DatasetSpec("train", [str(p) for p in train_paths], role="train", **train_kw),
        },
        checks=[CheckSpec("c", train=["train"], eval=["eval"], methods=methods)],
        index_dir=str(tmp_path / "idx"),
    )
    return run_audit(cfg)


def stb_query(qid: str) -> str:
    doc = json.loads(shared_file(STB_G1).read_text())
    return next(r["query"] for r in doc if str(r["query_id"]) == qid)


def test_toolbench_v_sample_is_clean_against_stabletoolbench(tmp_path):
    path = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    report = audit(tmp_path, [path])
    assert report.verdict == "pass"
    check = report.checks[0]
    assert check["eval_items"] == 765 and check["contaminated_items"] == 0 and check["train_records"] == 3
    assert [f for f in report.findings if f["conclusive"]] == []


def test_planted_verbatim_copy_found(tmp_path):
    train = tmp_path / "train.jsonl"
    rows = [
        {"id": "a", "text": "Plan a birthday party for my daughter with a unicorn theme please."},
        {"id": "b", "text": stb_query("588").upper()},  # case change only
        {"id": "c", "text": "Totally unrelated training text about cooking pasta al dente at home."},
    ]
    train.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = audit(tmp_path, [train])
    assert report.verdict == "fail"
    exact = [f for f in report.findings if f["method"] == "exact"]
    assert [(f["eval_id"], f["train_id"], f["train_source"], f["score"]) for f in exact] == [
        ("588", "b", f"{train}:2", 1.0)
    ]
    assert exact[0]["eval_source"].endswith("G1_instruction.json#0")
    assert report.checks[0]["contaminated_items"] == 1


def test_planted_copy_inside_long_chat_record_found(tmp_path):
    """An eval query pasted into the user turn of a real ToolBench-V trajectory."""
    real = json.loads(shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json").read_text())
    planted = json.loads(json.dumps(real[1]))
    user = next(m for m in planted["messages"] if m["role"] == "user")
    target = stb_query("608")
    start = user["content"].index("Task:") + len("Task:")
    end = user["content"].index("Begin!")
    user["content"] = user["content"][:start] + "\n" + target + "\n" + user["content"][end:]
    planted["id"] = "G1@99999999"
    train = tmp_path / "chat.json"
    train.write_text(json.dumps(real + [planted]))
    report = audit(tmp_path, [train])
    hits = {(f["method"], f["eval_id"], f["train_id"], f["train_source"]) for f in report.findings if f["conclusive"]}
    assert ("exact", "608", "G1@99999999", f"{train}#3") in hits
    assert ("ngram", "608", "G1@99999999", f"{train}#3") in hits
    assert report.checks[0]["contaminated_items"] == 1
    ngram = next(f for f in report.findings if f["method"] == "ngram")
    assert ngram["score"] == 1.0 and ngram["evidence"]["n"] == 13


def test_ngram_finds_edited_copy_that_exact_misses(tmp_path):
    q = stb_query("588")
    edited = q.replace("I'm also curious about", "Also tell me about") + " Thanks a lot!"
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"id": "x", "text": "Earlier context. " + edited}) + "\n")
    report = audit(tmp_path, [train])
    methods = {f["method"] for f in report.findings if f["eval_id"] == "588"}
    assert "ngram" in methods and "exact" not in methods
    f = next(f for f in report.findings if f["method"] == "ngram")
    assert 0.5 <= f["score"] < 1.0


def test_ngram_threshold_respected(tmp_path):
    """A third of the item (below the 0.5 default, but 13 tokens or more) is no proof: suspected, as
    lm-eval's janitor flags any shared 13-gram, never conclusive; a run shorter than 13 tokens is nothing."""
    q = stb_query("588")
    words = q.split()
    partial = " ".join(words[: len(words) // 3])  # a third of the item: below the 0.5 default
    assert len(tokens(partial)) >= 13
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"id": "x", "text": partial}) + "\n")
    (f,) = audit(tmp_path, [train], methods=["ngram"]).findings
    assert not f["conclusive"] and f["evidence"]["tier"] == "suspected" and f["score"] < 0.5
    assert "13-token runs" in f["evidence"]["suspected_because"]
    train.write_text(json.dumps({"id": "x", "text": " ".join(words[:10])}) + "\n")
    assert audit(tmp_path, [train], methods=["ngram"]).findings == []


def test_id_equality_is_evidence_not_contamination(tmp_path):
    """A ToolBench-V-style id naming a StableToolBench test query, with unrelated content."""
    real = json.loads(shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json").read_text())
    rec = json.loads(json.dumps(real[0]))
    rec["id"] = "G1@588"
    train = tmp_path / "v.json"
    train.write_text(json.dumps([rec]))
    report = audit(tmp_path, [train])
    ids = [f for f in report.findings if f["method"] == "id"]
    assert [(f["eval_id"], f["train_id"], f["conclusive"]) for f in ids] == [("588", "G1@588", False)]
    assert report.verdict == "pass" and report.checks[0]["contaminated_items"] == 0


def test_id_group_scoping(tmp_path):
    real = json.loads(shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json").read_text())
    rec = json.loads(json.dumps(real[0]))
    rec["id"] = "G3@588"  # 588 is a G1 id in StableToolBench
    train = tmp_path / "v.json"
    train.write_text(json.dumps([rec]))
    report = audit(tmp_path, [train], eval_ref="stabletoolbench:G1_instruction")
    assert [f for f in report.findings if f["method"] == "id"] == []


def test_caft_webshop_split_is_clean(tmp_path):
    """CAFT's WebShop split: goals 0-99 eval, 100-199 train share no goal."""
    cfg = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:100"], role="eval"),
            "train": DatasetSpec("train", ["webshop:100:200"], role="train"),
        },
        checks=[CheckSpec("webshop", train=["train"], eval=["test"])],
        index_dir=str(tmp_path),
    )
    report = run_audit(cfg)
    assert report.verdict == "pass" and report.findings == []
    assert report.checks[0]["eval_items"] == 100 and report.checks[0]["train_records"] == 100


def test_tau2_airline_test_task_is_a_variant_of_a_train_task(tmp_path):
    """Real finding: airline test task 16 repeats most of train task 15's scenario (same user, trip, ask)."""
    cfg = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["tau2-airline:test"], role="eval"),
            "train": DatasetSpec("train", ["tau2-airline:train"], role="train"),
        },
        checks=[CheckSpec("tau2", train=["train"], eval=["test"], methods=["exact", "ngram"])],
        index_dir=str(tmp_path),
    )
    report = run_audit(cfg)
    assert report.checks[0]["eval_items"] == 20 and report.checks[0]["train_records"] == 30
    conclusive = [f for f in report.findings if f["conclusive"]]
    assert [(f["method"], f["eval_id"], f["train_id"]) for f in conclusive] == [("ngram", "16", "15")]
    assert 0.7 < conclusive[0]["score"] < 1.0
    assert report.verdict == "fail"
    # tasks that share a 13-token run of instructions with a training task (lm-eval's janitor flags
    # them): suspected, with the share of the task the runs cover, for a reviewer to decide
    others = [f for f in report.findings if not f["conclusive"]]
    assert others and all(f["evidence"]["tier"] == "suspected" for f in others)
    assert all(f["evidence"]["coverage"] < 0.8 and f["score"] < 0.5 for f in others)


def test_webshop_baseline_split_leaks(tmp_path):
    """WebShop's own baseline split (test 0:500, train 500:) repeats test goals verbatim."""
    goals = json.loads(shared_file("webshop/baseline_models/data/human_goals.json").read_text())

    def norm(s):
        return " ".join("".join(c if c.isalnum() else " " for c in s.lower()).split())

    train_norm = {norm(g) for g in goals[500:]}
    expected = {str(i) for i, g in enumerate(goals[:500]) if norm(g) in train_norm}
    cfg = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
            "train": DatasetSpec("train", ["webshop:500:"], role="train"),
        },
        checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])],
        index_dir=str(tmp_path),
    )
    report = run_audit(cfg)
    found = {f["eval_id"] for f in report.findings}
    assert found == expected and len(found) > 0
    assert report.checks[0]["contaminated_items"] == len(expected)


def test_allowance_as_share(tmp_path):
    cfg = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
            "train": DatasetSpec("train", ["webshop:500:"], role="train"),
        },
        checks=[CheckSpec("w", train=["train"], eval=["test"], methods=["exact"], max_contaminated=0.1)],
        index_dir=str(tmp_path),
    )
    report = run_audit(cfg)
    assert report.checks[0]["allowance"] == 50 and report.verdict == "pass"


def test_persisted_ngram_index_reused_with_same_findings(tmp_path):
    train = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    first = audit(tmp_path, [train], methods=["ngram"])
    folders = list((tmp_path / "idx").iterdir())
    assert len(folders) == 1 and (folders[0] / "index.json").exists()
    second = audit(tmp_path, [train], methods=["ngram"])
    assert first.findings == second.findings


def test_eval_item_no_method_can_check_makes_the_check_incomplete(tmp_path):
    """A 2-word eval item is too short for exact (10 chars), ngram (8 tokens) and minhash: never 'pass'."""
    ev = tmp_path / "ev.jsonl"
    ev.write_text(
        json.dumps({"id": "short", "text": "yes no"})
        + "\n"
        + json.dumps({"id": "long", "text": stb_query("588")})
        + "\n"
    )
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"id": "x", "text": "an unrelated training record about cooking pasta at home"}) + "\n")
    cfg = AuditConfig(
        datasets={
            "eval": DatasetSpec("eval", [str(ev)], role="eval"),
            "train": DatasetSpec("train", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["train"], eval=["eval"], methods=["exact", "ngram", "minhash"])],
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(cfg)
    check = report.checks[0]
    assert check["uncovered_items"] == 1 and check["verdict"] == "incomplete" and report.verdict == "incomplete"
    assert any("eval#short" in n for n in check["notes"])
    cfg.datasets["eval"] = DatasetSpec("eval", [str(ev)], role="eval", split="1:")  # only the long item
    report = run_audit(cfg)
    assert report.checks[0]["uncovered_items"] == 0 and report.verdict == "pass"


def test_report_texts_need_no_second_pass_over_the_training_data(tmp_path, monkeypatch):
    """The texts shown beside findings are captured while the training set streams past."""
    from auditor.datasets.units import UnitReader

    reads: dict[str, int] = {}
    original = UnitReader.read

    def counting(self, unit, *args, **kwargs):  # every pass of every engine reads units through this
        reads[self.spec.name] = reads.get(self.spec.name, 0) + 1
        yield from original(self, unit, *args, **kwargs)

    monkeypatch.setattr(UnitReader, "read", counting)
    cfg = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
            "train": DatasetSpec("train", ["webshop:500:"], role="train"),
        },
        checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact", "ngram"])],
        index_dir=str(tmp_path),
        batch_size=64,
    )
    report = run_audit(cfg)
    # one look at a sample for boilerplate, one scan: no read after the scan for the report's texts
    assert reads["train"] == 2
    assert report.findings
    for f in report.findings:
        assert report.texts[f"train#{f['train_ordinal']}"] and report.texts[f"test#{f['eval_ordinal']}"]
    f = next(f for f in report.findings if f["method"] == "exact")
    assert report.texts[f"train#{f['train_ordinal']}"].lower() == report.texts[f"test#{f['eval_ordinal']}"].lower()
