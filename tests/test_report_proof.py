"""Proof on screen (issue 23, item 1): every finding shows the training string that matched — its
field path, the string windowed around the match, the shared word runs highlighted — beside the eval
text, in report.json ``texts``, report.html (checked in headless Chromium) and report.md, for every
tier and record shape.

Each training record below puts a long system prompt or tool schema (over the 4,000 characters a
kept text holds) before the leaked StableToolBench query, so a report that showed the record from its
start — as it did for chat data — shows no proof at all.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import shared_file
from test_false_pass import stb_queries
from test_html_report import chromium, needs_chromium

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import DatasetSpec
from auditor.report.proof import proof_texts, where
from auditor.text.proof import CUT_RE

LONG = " ".join(f"Rule {i}: answer politely, cite the tool you used and never invent an API." for i in range(80))
TOOLS = [{"type": "function", "function": {"name": f"tool_{i}", "description": LONG[:900]}} for i in range(6)]
assert len(LONG) > 4000


def _flat(text: str) -> str:
    return " ".join(text.split())


#: record shape → (builder(query) -> training object, the field path the query is in)
SHAPES = {
    "chat": (
        lambda q: {
            "messages": [
                {"role": "system", "content": LONG},
                {"role": "user", "content": q},
                {"role": "assistant", "content": "Calling the tool now."},
            ],
            "tools": TOOLS,
        },
        "messages[1].content",
    ),
    "sharegpt": (
        lambda q: {
            "conversations": [{"from": "system", "value": LONG}, {"from": "human", "value": q + "\nBegin!"}],
        },
        "conversations[1].value",
    ),
    "alpaca": (lambda q: {"instruction": LONG, "input": q, "output": "Sure."}, "input"),
    "generic_fields": (lambda q: {"meta": {"policy": LONG, "notes": ["kept for later", q]}}, "meta.notes[1]"),
    "tool_description": (
        lambda q: {
            "messages": [{"role": "user", "content": "List the tools."}, {"role": "assistant", "content": "Here."}],
            "tools": [{"type": "function", "function": {"name": "search", "description": LONG + " Example: " + q}}],
        },
        "tools[0].function.description",
    ),
    "long_text": (lambda q: {"text": LONG + " " + q + " " + LONG}, "text"),
}


def _audit(tmp_path: Path, objs: list[dict], methods: list[str]):
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"id": f"r{i}", **o}) + "\n" for i, o in enumerate(objs)), encoding="utf-8")
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["stabletoolbench"], role="eval"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=methods)],
        index_dir=None,
    )
    return run_audit(cfg)


def _assert_proof(report, f, query: str, field: str) -> str:
    """The finding's training text holds ``query`` whole, from the field it was planted in."""
    ev, tr = proof_texts(report.texts, f)
    assert ev is not None and tr is not None, (f["method"], sorted(report.texts))
    assert _flat(query) in _flat(tr), (f["method"], tr[:300])
    assert f["evidence"].get("field") == field, f["evidence"]
    assert where(f).startswith(field)
    return tr


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_text_tier_shows_the_matched_string_of_every_shape(tmp_path, shape):
    build, field = SHAPES[shape]
    queries = stb_queries(3)
    report = _audit(tmp_path, [build(q) for q in queries], ["exact", "ngram", "minhash"])
    methods = set()
    for f in report.findings:
        q = queries[int(f["train_id"][1:])]
        tr = _assert_proof(report, f, q, field)
        assert len(tr) <= 4000 + len(q) + 80  # bounded: a window around the match
        if shape in ("tool_description", "long_text"):
            assert CUT_RE.search(tr), tr[:200]  # says what it cut
        methods.add(f["method"])
    # exact compares whole texts and lines: a query inside a longer string is the n-gram tier's
    assert ({"ngram"} if shape in ("tool_description", "long_text") else {"exact", "ngram"}) <= methods, methods
    page, md = report.render("html"), report.render("md")
    for q in queries:
        assert "<mark>" + html.escape(q.split()[0]) in page or html.escape(q.split()[0]) in page
    training_cells = [line.split(" | ")[1] for line in md.splitlines() if line.startswith("| **")]
    assert training_cells and all("**" in c for c in training_cells)  # the shared run is bold on the training side


def test_calls_ids_and_entities_show_their_evidence_and_where(tmp_path):
    """ids: the record's id; entities: the string holding the value; calls: the matched calls."""
    src = shared_file("steptool/data_train/rft/rft_data_example.json")
    doc = json.loads(src.read_text())
    qid = sorted(doc)[1]
    conv = doc[qid]["instances"][0]["conversations"]
    k = next(i for i, m in enumerate(conv) if m["from"] == "user")
    conv[k]["value"] += "\nBy the way, my user id is emma_kim_9957."
    out = tmp_path / "planted.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    cfg = AuditConfig(
        datasets={
            "t": DatasetSpec("t", [str(out)]),
            "air": DatasetSpec("air", ["tau2-airline"], role="eval"),
        },
        checks=[CheckSpec("c", train=["t"], eval=["air"], methods=["entities"])],
        index_dir=None,
    )
    report = run_audit(cfg)
    f = next(f for f in report.findings if f["method"] == "entities")
    assert f["evidence"]["field"] == f"conversations[{k}].value"  # the raw object is the instance
    _, tr = proof_texts(report.texts, f)
    assert "emma_kim_9957" in tr
    assert "emma_kim_9957" in report.render("md").split("Suspected")[0] or "emma_kim_9957" in report.render("html")
    page = report.render("html")
    assert "identifiers found: emma_kim_9957 (user_id)" in page

    tau = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    cfg = AuditConfig(
        datasets={"t": DatasetSpec("t", [str(tau)]), "air": DatasetSpec("air", ["tau2-airline"], role="eval")},
        checks=[CheckSpec("c", train=["t"], eval=["air"], methods=["calls"])],
        index_dir=None,
    )
    report = run_audit(cfg)
    f = next(f for f in report.findings if f["conclusive"])
    assert f["evidence"].get("field"), f["evidence"]
    assert "tool calls (" in report.render("html") and "tool calls (" in report.render("md")

    stb = AuditConfig(
        datasets={"t": DatasetSpec("t", [str(src)]), "stb": DatasetSpec("stb", ["stabletoolbench"], role="eval")},
        checks=[CheckSpec("c", train=["t"], eval=["stb"], methods=["id"])],
        index_dir=None,
    )
    report = run_audit(stb)
    f = report.findings[0]
    assert where(f) == "the record's id" and "carries the item's id 12961" in report.render("md")


@pytest.mark.slow
def test_embedding_tier_shows_the_matched_message(tmp_path):
    pytest.importorskip("sentence_transformers", reason="the [embed] extra is not installed")
    build, field = SHAPES["chat"]
    queries = stb_queries(2)
    report = _audit(tmp_path, [build(q) for q in queries], ["embedding"])
    found = [f for f in report.findings if f["method"] == "embedding"]
    assert found
    for f in found:
        _assert_proof(report, f, queries[int(f["train_id"][1:])], field)
    assert "paraphrase evidence: cosine" in report.render("html")


def _cli_audit(tmp_path: Path, train: Path) -> Path:
    out = tmp_path / "r"
    res = CliRunner().invoke(
        main,
        ["audit", "--train", str(train), "--eval", "stabletoolbench", "--report-dir", str(out)],
    )
    assert res.exit_code == 1, res.output
    return out


def _training_side(dom: str) -> list[str]:
    """The training side of each finding box in a rendered page: its text, and the marked runs."""
    sides = re.findall(r'<div class="where">training: <code>[^<]*</code></div>(.*?)</div></div>', dom, re.S)
    return sides


@needs_chromium
def test_steptool_sample_shows_the_matched_stabletoolbench_query_in_chromium(tmp_path):
    """The issue's target: StepTool's RFT sample against StableToolBench; the training side of the
    finding is the user turn holding query 12961, highlighted, not the system prompt."""
    src = shared_file("steptool/data_train/rft/rft_data_example.json")
    out = _cli_audit(tmp_path, src)
    doc = json.loads((out / "report.json").read_text())
    query = next(v for k, v in doc["texts"].items() if k.startswith("stabletoolbench#"))
    assert query.startswith("Translate this phrase 'Thank you'")
    f = next(f for f in doc["findings"] if f["method"] == "exact")
    assert f["evidence"]["field"] == "conversations[1].value"
    _, tr = proof_texts(doc["texts"], f)
    assert _flat(query[:-1]) in _flat(tr) and "AutoGPT" not in tr

    md = (out / "report.md").read_text()
    section = md.split("### Texts of ")[1]
    row = next(line for line in section.splitlines() if line.startswith("| **"))
    assert "training record (conversations\\[1\\].value" in section
    train_cell = row.split(" | ")[1]
    assert "**Translate this phrase 'Thank you' into all supported languages." in train_cell

    dom, console = chromium(out / "report.html", tmp_path, "--dump-dom", "--window-size=800,2000")
    assert console == [], console
    sides = _training_side(dom)
    assert sides, dom[-3000:]
    marked = " ".join(re.findall(r"<mark>(.*?)</mark>", sides[0], re.S))
    assert _flat(html.unescape(query[:-1])) in _flat(html.unescape(marked))
    assert "AutoGPT" not in sides[0]
