"""Errors on the eval side are counted, not fatal: ``--on-error skip`` / ``on_error = "skip"`` apply to
eval data; a skipped eval item is unchecked (the check is ``incomplete`` at best) and the report names
it by file:line and reason — never a silent drop.

Real data: a slice of APIBench's HuggingFace and TensorFlow Hub eval files (``tests/data/apibench``,
Apache-2.0, see its NOTICE), whose records 117, 150, 204 (HF) and 429, 456 (TF) write
``### Instruction:`` with a space; they used to be "no instruction text" and abort the run.
"""

from __future__ import annotations

import json
from pathlib import Path

from hostile import cli, report

from auditor.datasets.dataset import Dataset, DatasetSpec

SLICE = Path(__file__).resolve().parent / "data" / "apibench"
HF, TF = SLICE / "huggingface_eval_slice.json", SLICE / "tensorflow_eval_slice.json"


def instruction_of(code: str) -> str:
    """The text after the instruction marker up to the output marker, read by hand from the record."""
    head = code.split("Instruction:", 1)[1]
    for marker in ("###Output:", "### Output:"):
        head = head.split(marker, 1)[0]
    return head.strip()


def test_apibench_reads_the_spaced_instruction_marker():
    for path, spaced in ((HF, {4, 6, 7}), (TF, {3, 4})):
        lines = path.read_text(encoding="utf-8").splitlines()
        ds = Dataset(DatasetSpec("e", [str(path)], role="eval"))
        recs = list(ds.records())
        assert ds.format is None and ds.stats.skipped == 0 and len(recs) == len(lines)
        for r, line in zip(recs, lines):
            code = json.loads(line)["code"]
            assert code.startswith("### Instruction:") == (r.ordinal + 1 in spaced)
            assert r.views["query"] == instruction_of(code) and r.views["query"]
            assert "Output" not in r.views["query"] and "<<<" not in r.views["query"]


def broken_copy(tmp_path: Path) -> tuple[Path, list[str]]:
    """The HF slice with line 3 cut short (invalid JSON) and line 5 without any instruction."""
    lines = HF.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:200]
    obj = json.loads(lines[4])
    obj["code"] = obj["code"].split("###Output:", 1)[1]
    lines[4] = json.dumps(obj)
    out = tmp_path / "huggingface_eval_broken.json"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, lines


def test_bad_eval_record_fails_the_run_without_skip(tmp_path):
    ev, _ = broken_copy(tmp_path)
    res = cli("audit", "--eval", str(ev), "--train", str(TF), "--report-dir", str(tmp_path / "r"))
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and f"{ev}:line 3: invalid JSON" in res.stderr
    assert not (tmp_path / "r").exists()


def test_skipped_eval_items_are_unchecked_and_listed(tmp_path):
    ev, lines = broken_copy(tmp_path)
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(TF), "--on-error", "skip", "--report-dir", str(out))
    assert res.exit_code == 1, res.output
    doc = report(out)
    check = doc["checks"][0]
    assert check["verdict"] == "incomplete" and check["contaminated_items"] == 0
    assert check["eval_items"] == len(lines) - 2 and check["skipped"]["eval"] == 2
    items = check["skipped_eval_items"]
    assert [i["source"] for i in items] == [f"{ev}:3", f"{ev}:5"]
    assert "JSON" in items[0]["reason"] and items[1]["reason"] == "no instruction text"
    note = next(n for n in check["notes"] if "unchecked" in n)
    assert f"{ev}:3" in note and f"{ev}:5: no instruction text" in note
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "no instruction text" in md and "unchecked" in md


def test_skipped_eval_items_do_not_hide_a_leak(tmp_path):
    """The items that were read are still checked: training on the eval slice itself fails the check,
    and the skipped ones are still listed."""
    ev, _ = broken_copy(tmp_path)
    out = tmp_path / "r"
    (tmp_path / "m.toml").write_text(
        f'[datasets.ev]\npath = "{ev.name}"\nrole = "eval"\non_error = "skip"\n'
        f'[datasets.tr]\npath = "{HF}"\nrole = "train"\n'
        f'[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\nmethods = ["exact"]\n'
    )
    res = cli("verify", str(tmp_path / "m.toml"), "--report-dir", str(out))
    assert res.exit_code == 1, res.output
    check = report(out)["checks"][0]
    assert check["verdict"] == "fail" and check["contaminated_items"] == check["eval_items"] == 5
    assert len(check["skipped_eval_items"]) == 2


def test_an_unreadable_eval_file_is_named(tmp_path):
    ev = tmp_path / "questions_torchhub.jsonl"
    ev.write_bytes(b'{"question_id": 1, "text": "Find a model \xff\xfe", "category": "generic"}\n')
    good = tmp_path / "good.jsonl"
    good.write_text('{"question_id": 1, "text": "Classify sports activities in videos.", "category": "generic"}\n')
    out = tmp_path / "r"
    res = cli(
        "audit",
        "--eval",
        str(ev),
        "--eval",
        str(good),
        "--train",
        str(TF),
        "--on-error",
        "skip",
        "--report-dir",
        str(out),
    )
    assert res.exit_code == 1, res.output
    check = report(out)["checks"][0]
    assert check["verdict"] == "incomplete"
    assert any(str(ev) in n and "unchecked" in n for n in check["notes"]), check["notes"]
