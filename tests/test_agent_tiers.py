"""Canonical calls, the calls and entities tiers, boilerplate masking — on real files where they exist."""

from __future__ import annotations

import json

from helpers import shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import DatasetSpec
from auditor.records.toolcalls import canonical_call

_scalars = st.one_of(
    st.integers(-(10**6), 10**6), st.text(st.characters(codec="utf-8"), max_size=8), st.booleans(), st.none()
)
_args = st.dictionaries(st.text("abcdefgh_", min_size=1, max_size=6), _scalars, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_args, st.randoms(use_true_random=False))
def test_canonical_call_ignores_key_order_and_whitespace(args, rnd):
    items = list(args.items())
    rnd.shuffle(items)
    reordered = json.dumps(dict(items), indent=rnd.choice([None, 2, 4]))
    assert canonical_call("  Get_Order ", reordered) == canonical_call("get_order", args)


def test_canonical_call_normalizes_scalars_not_values():
    assert canonical_call("f", {"page": "0", "ok": "True", "n": 2.0}) == canonical_call(
        "f", '{"n": 2, "ok": true, "page": 0}'
    )
    assert canonical_call("f", {"zip": "00123"}) != canonical_call("f", {"zip": 123})  # leading zeros are ids
    assert canonical_call("f", {"a": 1}) != canonical_call("f", {"a": 2})


def _audit(tmp_path, train, eval_, methods, params=None, train_format=None, eval_format=None):
    cfg = AuditConfig(
        datasets={
            "train": DatasetSpec("train", [str(p) for p in train], role="train", format=train_format),
            "eval": DatasetSpec("eval", [str(p) for p in eval_], role="eval", format=eval_format),
        },
        checks=[CheckSpec("c", train=["train"], eval=["eval"], methods=methods)],
        method_params=params or {},
        index_dir=None,
    )
    return run_audit(cfg)


def _trajectory_with_planted(tmp_path, planted: str):
    """A real StepTool trajectory file with ``planted`` written into one user turn."""
    src = shared_file("steptool/data_train/rft/rft_data_example.json")
    doc = json.loads(src.read_text())
    qid = sorted(doc)[1]
    conv = doc[qid]["instances"][0]["conversations"]
    k = next(i for i, m in enumerate(conv) if m["from"] == "user")
    conv[k]["value"] += f"\nBy the way, my user id is {planted}."
    out = tmp_path / "steptool_planted.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out, qid, k


def test_planted_tau2_user_id_found_with_location(tmp_path):
    out, qid, k = _trajectory_with_planted(tmp_path, "emma_kim_9957")
    report = _audit(tmp_path, [out], ["tau2-airline"], ["entities"])
    found = [f for f in report.findings if f["method"] == "entities"]
    assert {f["eval_id"] for f in found} == {"0"}  # airline task 0 is Emma Kim's (user id + reservation EHGLP3)
    f = found[0]
    assert f["train_id"] == qid and f["conclusive"] is False
    loc = f["evidence"]["identifiers"][0]
    assert (loc["id"], loc["kind"], loc["view"], loc["turn"]) == ("emma_kim_9957", "user_id", "text", k)
    from auditor.datasets.dataset import Dataset

    rec = [r for r in Dataset(DatasetSpec("t", [str(out)])).records() if r.ordinal == f["train_ordinal"]][0]
    s, e = loc["span"]
    assert rec.view("text")[s:e] == "emma_kim_9957"
    assert report.checks[0]["contaminated_items"] == 0  # evidence only
    clean = _audit(
        tmp_path, [shared_file("steptool/data_train/rft/rft_data_example.json")], ["tau2-airline"], ["entities"]
    )
    assert not clean.findings


def test_entities_user_patterns_and_bad_regex(tmp_path):
    out, qid, _ = _trajectory_with_planted(tmp_path, "TCK-77812")
    evalf = tmp_path / "tickets.jsonl"
    evalf.write_text(json.dumps({"id": "t1", "text": "Close ticket TCK-77812 for the customer"}) + "\n")
    report = _audit(tmp_path, [out], [evalf], ["entities"], {"entities": {"patterns": {"ticket": r"TCK-\d{5}"}}})
    assert [f["evidence"]["identifiers"][0]["kind"] for f in report.findings] == ["ticket"]
    import pytest

    from auditor.errors import ConfigError
    from auditor.methods import create

    with pytest.raises(ConfigError, match="not a valid regex"):
        create("entities", {"patterns": {"bad": "("}})


def test_calls_tier_tau2_solutions_in_tau_bench_trajectories(tmp_path):
    report = _audit(
        tmp_path, [shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")], ["tau2-airline"], ["calls"]
    )
    found = report.findings
    assert found and all(f["evidence"]["view"] == "calls" for f in found)
    conclusive = [f for f in found if f["conclusive"]]
    assert conclusive and all(
        f["evidence"]["kind"] in ("sequence", "contained") and f["evidence"]["eval_calls"] >= 2 for f in conclusive
    )
    assert report.checks[0]["contaminated_items"] == len({f["eval_id"] for f in conclusive})


def test_calls_tier_refinetoolbench_correction_in_training_chat(tmp_path):
    """A training chat whose tool calls are I3 case 0's corrected solution, keys reordered, numbers quoted."""
    from auditor.datasets.dataset import Dataset

    i3 = shared_file("tool-mvr/data/RefineToolBench/I3.json")
    ev = list(Dataset(DatasetSpec("e", [str(i3)], role="eval")).records())[0]
    calls = [json.loads(line[line.index("(") :][1:-1]) | {} for line in ev.view("calls").split("\n")]
    names = [line.split("(", 1)[0] for line in ev.view("calls").split("\n")]
    msgs = [{"role": "user", "content": ev.view("query")}]
    for n, a in zip(names, calls):
        rev = dict(reversed(list({k: str(v) for k, v in a.items()}.items())))
        msgs += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": n, "arguments": json.dumps(rev, indent=1)}}
                ],
            },
            {"role": "tool", "content": "{}"},
        ]
    train = tmp_path / "train.json"
    train.write_text(json.dumps([{"id": "x1", "messages": msgs}]))
    report = _audit(tmp_path, [train], [i3], ["calls"])
    hits = [f for f in report.findings if f["eval_ordinal"] == 0]
    assert [(f["evidence"]["kind"], f["conclusive"]) for f in hits] == [("sequence", True)]


POLICY = (
    "Before taking any action that updates the booking database you must list the action details "
    "and obtain explicit user confirmation to proceed, and you should deny requests against policy."
)


def _boilerplate_corpus(tmp_path, n=30, item="Agent policy: " + POLICY):
    rows = [
        {
            "id": f"r{i}",
            "messages": [
                {"role": "system", "content": f"# Policy\n{POLICY}\nTools: get_user, book"},
                {"role": "user", "content": f"Please book seat {i} on flight HAT{100 + i}."},
                {"role": "assistant", "content": f"Booked seat {i}."},
            ],
        }
        for i in range(n)
    ]
    train = tmp_path / "train.json"
    train.write_text(json.dumps(rows))
    evalf = tmp_path / "eval.jsonl"
    evalf.write_text(json.dumps({"id": "e1", "text": item}) + "\n")
    return train, evalf


QUOTING_TASK = (
    "The customer wants the cheapest economy seat to Denver for next week and keeps changing their mind; "
    "remember that you must list the action details and obtain explicit user confirmation, then book it."
)


def test_boilerplate_shared_by_all_records_is_no_evidence(tmp_path):
    """Shared policy text is masked; an eval task that quotes a few of its words is not found through it
    (the quoted words are kept, the rest of the shared line is masked around them)."""
    train, evalf = _boilerplate_corpus(tmp_path, item=QUOTING_TASK)
    report = _audit(tmp_path, [train], [evalf], ["exact", "ngram"])
    assert report.findings == []
    bp = report.checks[0]["boilerplate"]
    assert (
        bp["enabled"]
        and bp["methods"] == ["ngram"]
        and bp["lines"] >= 1
        and bp["masked_records"] == 30
        and bp["masked_chars"] > 0
    )
    assert bp["spared_lines"] == 1  # the policy line holds the task's quoted words
    assert any("explicit user confirmation" in e.get("text", "") for e in bp["examples"])
    off = _audit(tmp_path, [train], [evalf], ["exact", "ngram"], {"ngram": {"mask_boilerplate": False}})
    # exact compares whole items and never masks, so with ngram's masking off no method masks
    assert off.findings == [] and off.checks[0]["boilerplate"]["enabled"] is False


def test_boilerplate_never_hides_an_eval_item_made_of_shared_text(tmp_path):
    """An eval item whose words are (almost all) in every training record's shared policy line is
    contamination: the training data holds its text. Masking keeps it (issue 12: masking hid it)."""
    train, evalf = _boilerplate_corpus(tmp_path)
    report = _audit(tmp_path, [train], [evalf], ["exact", "ngram"])
    assert report.checks[0]["contaminated_items"] == 1 and {f["method"] for f in report.findings} == {"ngram"}
    assert report.checks[0]["boilerplate"]["spared_lines"] == 1


def test_boilerplate_never_hides_an_eval_item_copied_everywhere(tmp_path):
    train, _ = _boilerplate_corpus(tmp_path)
    evalf = tmp_path / "eval2.jsonl"
    evalf.write_text(json.dumps({"id": "e2", "text": "Tools: get_user, book"}) + "\n")
    report = _audit(tmp_path, [train], [evalf], ["exact"], {"exact": {"min_chars": 5}})
    assert report.checks[0]["contaminated_items"] == 1
