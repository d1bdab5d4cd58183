"""An eval set whose items read as one text is an error, not a pass (issue 22 item 2;
``auditor/datasets/sameness.py``), and an Alpaca eval set's shared instruction leaves its items distinct and
findable. Real rows as in tests/test_readers.py."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from helpers import SHARED, fetch_hint, shared_file
from test_readers import ICL, LF, jsonl, read

from auditor.adapters import detect
from auditor.cli import main
from auditor.datasets.sameness import MAX_SHARE, MIN_ITEMS, most_shared, require_distinct_items
from auditor.errors import InputError


def test_an_eval_item_leaked_without_its_template_is_found(tmp_path):
    """Alpaca eval items sharing a 10-word instruction, 5 of their inputs planted alone in training:
    all 5 found (with the instruction in the query, an input of 20 words left 8 of 18 13-grams)."""
    items = json.loads((LF / "alpaca_en_demo.json").read_text())
    inputs = [i["output"].split("\n")[0].strip() for i in items if 12 <= len(i["output"].split("\n")[0].split()) <= 25]
    inputs = list(dict.fromkeys(inputs))[:10]
    assert len(inputs) == 10
    shared = "Answer the following request as helpfully as you can, please."
    ev = jsonl(tmp_path, "ev.jsonl", [{"instruction": shared, "input": x, "output": ""} for x in inputs])
    train = jsonl(tmp_path, "train.jsonl", [{"text": f"Note {k}: {x}"} for k, x in enumerate(inputs[:5])])
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["audit", "--train", str(train), "--eval", str(ev), "--report-dir", str(out)])
    assert res.exit_code == 1, res.output
    found = {f["eval_id"] for f in json.loads((out / "report.json").read_text())["findings"] if f["conclusive"]}
    assert found == {str(k) for k in range(5)}


def test_generic_reader_on_a_shared_instruction_is_an_error():
    recs = read(ICL, format="json")
    assert len({r.view("query") for r in recs}) == 1  # what the generic reader makes of it
    with pytest.raises(InputError) as e:
        require_distinct_items(recs)
    msg = str(e.value)
    assert msg.startswith(str(ICL)) and "eval set 'd': 20 of its 20 items read as the same text" in msg
    assert "'You will be tested on your ability" in msg and "--eval-format alpaca" in msg
    assert "--eval-text-field input" in msg


def test_the_whole_api_bank_file_reads_245_distinct_items():
    path = shared_file("damo-convai/api-bank/test-data/level-3-batch-inf-icl.json")
    recs = read(path)
    assert detect(path).name == "alpaca" and len(recs) == 245
    assert most_shared(recs)[1] == 1
    with pytest.raises(InputError, match="245 of its 245 items"):
        require_distinct_items(read(path, format="json"))


def test_audit_refuses_an_eval_set_of_one_text_and_runs_on_its_items(tmp_path):
    runner = CliRunner()
    train = str(LF / "alpaca_en_demo.json")
    args = ["audit", "--train", train, "--eval", str(ICL), "--method", "exact"]
    bad = runner.invoke(main, [*args, "--eval-format", "json", "--report-dir", str(tmp_path / "a")])
    assert bad.exit_code == 2, bad.output
    assert "20 of its 20 items read as the same text" in bad.output and "--eval-format alpaca" in bad.output
    assert "Traceback" not in bad.output
    good = runner.invoke(main, [*args, "--report-dir", str(tmp_path / "b")])
    assert good.exit_code == 0, good.output
    assert "0 conclusive + 0 suspected of 20 eval items" in good.output


def test_repeats_below_the_rule_are_audited(tmp_path):
    items = json.loads((LF / "alpaca_en_demo.json").read_text())[:20]

    def copies(n):  # the first n items made copies of item 0, the rest as they are
        rows = [{**i, "instruction": items[0]["instruction"], "input": items[0]["input"]} for i in items[:n]]
        return read(jsonl(tmp_path, f"copies{n}.jsonl", rows + items[n:]))

    assert most_shared(copies(10))[1:3] == (10, 20)
    require_distinct_items(copies(10))  # half: audited
    with pytest.raises(InputError, match="11 of its 20 items"):
        require_distinct_items(copies(11))  # more than half
    require_distinct_items(copies(9)[:9])  # all alike, but fewer than MIN_ITEMS


def test_no_bundled_eval_set_trips_the_rule():
    """Every bundled eval set, whole and split by split, stays far below the rule (module doc figures)."""
    from auditor.datasets import registry as bundled

    worst = 0.0
    for name in bundled.names():
        recs = read(name)
        by_split: dict = {}
        for r in recs:
            by_split.setdefault(r.split, []).append(r)
        for group in [recs, *by_split.values()]:
            _, count, total, _ = most_shared(group)
            if total >= MIN_ITEMS:
                worst = max(worst, count / total)
        require_distinct_items(recs)
    assert worst < MAX_SHARE / 2, worst


@pytest.mark.slow
def test_no_data_file_in_shared_data_trips_the_rule():
    """Every data file in ../shared/data read as an eval set with its detected format (docs/formats.md)."""
    if not SHARED.exists():
        pytest.skip(f"real data not available: {SHARED} is absent; {fetch_hint()}")
    checked, worst = 0, (0.0, "")
    for folder, _, files in os.walk(SHARED):
        for f in sorted(files):
            if not f.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz", ".csv", ".parquet")):
                continue
            path = os.path.join(folder, f)
            try:
                recs = read(path, allow_empty=True)
            except InputError:
                continue  # not readable as an eval set as it is (no text field ...): nothing to compare
            _, count, total, _ = most_shared(recs)
            if total >= MIN_ITEMS:
                checked += 1
                worst = max(worst, (count / total, path))
                require_distinct_items(recs)
    assert checked >= 100 and worst[0] <= 0.45, worst
