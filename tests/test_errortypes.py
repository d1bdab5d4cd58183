"""The tool-use error taxonomy: one hand-built example per class, a clean one, and real data in a report."""

from __future__ import annotations

import pytest
from helpers import shared_file

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.errortypes import LABELS, label
from auditor.audit.run import run_audit
from auditor.datasets.dataset import DatasetSpec
from auditor.records.record import Record

TOOLS = {
    "get_user": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]},
    "get_order": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    "cancel_order": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["order_id"],
    },
}
QUERY = "I am mia_li_3668 and want to cancel order #W1234567 because I changed my mind."
OK_USER = {"name": "get_user", "args": {"user_id": "mia_li_3668"}, "observation": '{"orders": ["#W1234567"]}'}
OK_ORDER = {"name": "get_order", "args": {"order_id": "#W1234567"}, "observation": '{"status": "pending"}'}
OK_CANCEL = {
    "name": "cancel_order",
    "args": {"order_id": "#W1234567", "reason": "changed mind"},
    "observation": '{"status": "cancelled"}',
}


def rec(trace, answer="Your order is cancelled.", tools=TOOLS, **meta):
    return Record("d", "1", "d:1", {"query": QUERY, "answer": answer}, meta={"trace": trace, "tools": tools, **meta})


CASES = {
    "unknown_tool": [OK_USER, {"name": "refund_everything", "args": {}, "observation": "{}"}],
    "schema_invalid_arguments": [OK_USER, {"name": "get_order", "args": {"id": "#W1234567"}, "observation": "{}"}],
    "ungrounded_identifier": [OK_USER, {"name": "get_order", "args": {"order_id": "#W9999999"}, "observation": "{}"}],
    "ignored_error_result": [OK_USER, OK_ORDER, {**OK_CANCEL, "observation": "Error: order is already delivered"}],
    "repeated_identical_call": [OK_USER, OK_ORDER, OK_ORDER, OK_CANCEL],
    "missing_precondition_step": [OK_CANCEL],
}


@pytest.mark.parametrize("expected", sorted(CASES))
def test_each_class_labels_its_example_only(expected):
    assert label(rec(CASES[expected])) == {expected}


def test_answered_without_call():
    assert label(rec([])) == {"answered_without_call"}
    assert label(rec([], tools={})) == set()  # no tools offered: answering directly is right


def test_clean_trajectory_has_no_label():
    assert label(rec([OK_USER, OK_ORDER, OK_CANCEL])) == set()
    # the run-level labels have their own tests (tests/test_errortypes_runs.py)
    run_level = {"claimed_without_success", "step_budget_exhausted", "injection_followed"}
    assert set(CASES) | {"answered_without_call"} | run_level == set(LABELS)


def test_error_types_and_novel_types_in_report(tmp_path):
    from test_agent_adapters import write_caft

    i = shared_file("tool-mvr/data/RefineToolBench")
    tr = shared_file("tool-mvr/data/training_data/selected_Toolbench_R.json")
    caft = write_caft(tmp_path)
    cfg = AuditConfig(
        datasets={
            "refine": DatasetSpec("refine", [f"{i}/I*.json"], role="eval"),
            "toolbench_r": DatasetSpec("toolbench_r", [str(tr)], role="train"),
            "caft": DatasetSpec("caft", [str(caft)], role="train"),
        },
        checks=[
            CheckSpec("r", train=["toolbench_r"], eval=["refine"], methods=["exact"]),
            CheckSpec("c", train=["caft"], eval=["refine"], methods=["exact"]),
        ],
        index_dir=None,
    )
    report = run_audit(cfg)
    et = report.to_dict()["error_types"]
    # RefineToolBench: 9 erroneous calls, 8 with a rule-detectable error; ToolBench-R: 3 reflections
    assert et["refine"] == {"schema_invalid_arguments": 7, "ungrounded_identifier": 2, "unknown_tool": 1}
    assert et["toolbench_r"] == {"schema_invalid_arguments": 1, "ungrounded_identifier": 1, "unknown_tool": 1}
    assert et["caft"] == {"ungrounded_identifier": 1}
    assert report.checks[0]["novel_error_types"] == []
    assert report.checks[1]["novel_error_types"] == ["schema_invalid_arguments", "unknown_tool"]
