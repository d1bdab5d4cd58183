"""The report names what did not run: every registered detection method a check did not run (the
paraphrase tier ``embedding`` above all, with how to turn it on), and every method it ran that indexed
no eval item or read none of a training set's records, is "not checked: …" with its reason in stdout,
report.md, report.html and report.json (``checks[].not_checked``); a method the check asked for that
checked nothing makes it ``incomplete`` (exit 1), one simply not selected does not.

Real audits on real data: the bundled WebShop goals and NESTFUL tasks (their gold tool calls), and
training files written from WebShop goals — plain JSON Lines, and records of no known schema
(``{"predictions": [...]}``) that the training side reads whole (the ``fields`` view).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO

from auditor import methods
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.report import Report
from auditor.report.validate import check_report

README = (REPO / "README.md").read_text(encoding="utf-8")
EMBEDDING_OFF = "not checked: embedding — not selected: the paraphrase tier runs only when named (--method embedding)"
#: how the reason ends: the extra to install, and whether it is missing here (the README quotes a full install)
INSTALLED = not methods.get("embedding").missing_requirements()
EXTRA = "needs pip install 'auditor[embed]'" + ("" if INSTALLED else " (not installed)")


def _audit(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / f"r{len(list(tmp_path.glob('r*')))}"
    res = CliRunner().invoke(main, ["audit", *args, "--report-dir", str(out), "--index-dir", str(tmp_path / "idx")])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, res.output, out


def _goals(ref: str) -> list[str]:
    return [r.view("query") for r in Dataset(DatasetSpec("g", [ref], role="eval")).records()]


def _not_checked(out: Path) -> list[dict]:
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    check_report(doc)  # the section is of its documented types
    return doc["checks"][0]["not_checked"]


def test_a_default_run_names_the_paraphrase_tier_as_not_checked_everywhere(tmp_path):
    code, output, out = _audit(tmp_path, "--eval", "webshop:0:500", "--train", "webshop:500:")
    assert code == 1 and output.startswith("auditor: FAIL — audit: fail, 43 conclusive + ")
    lines = output.splitlines()
    assert lines[1:4] == [
        "not checked: calls — indexed none of the 500 eval items (no tool calls in the eval calls view: 500)",
        "not checked: entities — indexed none of the 500 eval items (no identifier found: 500)",
        f"{EMBEDDING_OFF}; {EXTRA}",
    ]
    assert "\n".join(lines[:4]) in README or not INSTALLED  # the tour quotes them
    entries = {n["method"]: n for n in _not_checked(out)}
    assert entries["embedding"] == {
        "method": "embedding",
        "status": "not_run",
        "reason": f"not selected: the paraphrase tier runs only when named (--method embedding); {EXTRA}",
        "incomplete": False,
    }
    # the defaults' tiers for one kind of data name what they lacked and decide nothing
    assert entries["calls"]["status"] == "nothing_indexed" and not entries["calls"]["incomplete"]
    assert set(entries) == {"calls", "entities", "embedding"}
    md = (out / "report.md").read_text(encoding="utf-8")
    assert f"- {EMBEDDING_OFF}; {EXTRA}".replace("[", "\\[").replace("]", "\\]") in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"<p class='not-checked muted'>{EMBEDDING_OFF}; {EXTRA.replace(chr(39), '&#x27;')}</p>" in html
    # every training record was read by each method that indexed eval items
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    read = {ms["method"]: ms["train_records_read"]["webshop:500:"] for ms in doc["checks"][0]["method_stats"]}
    assert read["exact"] == read["ngram"] == read["minhash"] == doc["datasets"]["webshop:500:"]["records"]


def test_a_run_of_one_method_names_every_other_as_not_selected(tmp_path):
    code, output, out = _audit(tmp_path, "--eval", "webshop:0:500", "--train", "webshop:500:", "--method", "exact")
    assert code == 1
    others = sorted(set(methods.names()) - {"exact", "embedding"})
    assert f"not checked: {', '.join(others)} — not selected (the check's methods: exact)" in output.splitlines()
    assert EMBEDDING_OFF in output
    entries = _not_checked(out)
    assert sorted(n["method"] for n in entries) == sorted(set(methods.names()) - {"exact"})
    assert all(n["status"] == "not_run" and not n["incomplete"] for n in entries)
    assert "not checked: " + ", ".join(others) in (out / "report.md").read_text(encoding="utf-8")
    assert "not checked: " + ", ".join(others) in (out / "report.html").read_text(encoding="utf-8")


def test_the_methods_run_only_when_named_are_declared_as_their_classes_say():
    assert {n for n in methods.BUILTIN if not methods.get(n).in_default} == methods.NAMED_ONLY


def test_a_check_naming_its_methods_says_so_of_the_others_without_importing_them(tmp_path):
    """In a process of its own (this one has every method loaded): the reasons are those above, and of
    the methods not run only those run only when named are imported (to name their tier and extra)."""
    code = (
        "import json, sys\n"
        "from auditor.cli import main\n"
        "try:\n"
        f"    main(['audit', '--eval', 'webshop:0:500', '--train', 'webshop:500:', '--method', 'exact',"
        f" '--report-dir', {str(tmp_path / 'r')!r}, '--index-dir', {str(tmp_path / 'i')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('auditor.methods.'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(run.stdout.splitlines()[-1]))
    assert "auditor.methods.embedding" in loaded
    assert not loaded & {f"auditor.methods.{m}" for m in ("minhash", "calls", "entities", "ids")}
    others = sorted(set(methods.names()) - {"exact", "embedding"})
    assert f"not checked: {', '.join(others)} — not selected (the check's methods: exact)" in run.stdout.splitlines()
    assert EMBEDDING_OFF in run.stdout
    reasons = {n["method"]: n["reason"] for n in _not_checked(tmp_path / "r")}
    assert reasons == {
        **{m: "not selected (the check's methods: exact)" for m in others},
        "embedding": f"not selected: the paraphrase tier runs only when named (--method embedding); {EXTRA}",
    }


def test_a_method_asked_for_that_read_nothing_makes_the_check_incomplete_only_when_asked(tmp_path):
    """NESTFUL's tasks carry gold tool calls; a training file of plain WebShop goals holds none, so
    ``calls`` reads none of its records. Named, that leaves the check incomplete (exit 1, README's
    exit codes); among the defaults, or not selected, it is named and the clean data passes."""
    train = tmp_path / "plain.jsonl"
    train.write_text(
        "".join(json.dumps({"id": f"w{i}", "text": g}) + "\n" for i, g in enumerate(_goals("webshop:600:900")))
    )
    named = _audit(tmp_path, "--eval", "nestful", "--train", str(train), "--method", "exact", "--method", "calls")
    default = _audit(tmp_path, "--eval", "nestful", "--train", str(train))
    unselected = _audit(tmp_path, "--eval", "nestful", "--train", str(train), "--method", "exact")
    gap = "not checked: calls on training set plain — read none of its 300 records: none has text in the views it reads (calls)"
    code, output, out = named
    assert code == 1 and output.startswith("auditor: INCOMPLETE — audit: incomplete, 0 conclusive")
    assert f"{gap}; asked for, so the check is at best incomplete" in output.splitlines()
    [calls] = [n for n in _not_checked(out) if n["method"] == "calls"]
    assert calls == {
        "method": "calls",
        "status": "nothing_searched",
        "reason": "read none of its 300 records: none has text in the views it reads (calls)",
        "dataset": "plain",
        "incomplete": True,
    }
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert '<error type="incomplete"' in junit and "not checked: calls on training set plain" in junit
    code, output, out = default
    assert code == 0 and output.startswith("auditor: PASS — ") and gap in output.splitlines()
    assert not any(n["incomplete"] for n in _not_checked(out))
    code, output, out = unselected
    assert code == 0 and "not checked: calls, entities, id, minhash, ngram — not selected" in output


def _whole_records(path: Path, goals: list[str]) -> None:
    """Records of no known schema: no text field, their strings in a list (read whole: ``fields``)."""
    rows = [{"predictions": [g, "a reply about something else"]} for g in goals[:10]]
    rows += [{"predictions": [f"note {i}: the weather was mild all week"]} for i in range(10)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_paraphrase_tier_reads_records_read_whole(tmp_path):
    """Training records with no text field were skipped by the embedding tier (0 units, a silent PASS);
    it reads their ``fields`` view, every string they hold, as the text tiers do."""
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    goals = _goals("webshop:0:30")
    ev, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text("".join(json.dumps({"id": f"g{i}", "text": g}) + "\n" for i, g in enumerate(goals)))
    _whole_records(train, goals)
    rec = next(Dataset(DatasetSpec("t", [str(train)], role="train")).records())
    assert set(rec.views) == {"fields"} and rec.meta["read_whole"].startswith("no text field found")
    ix = methods.create("embedding")
    assert ix.reads(rec) and ix.train_views_of(rec) == ("fields",)
    code, output, out = _audit(tmp_path, "--eval", str(ev), "--train", str(train), "--method", "embedding")
    assert code == 1 and output.startswith("auditor: FAIL — audit: fail, 10 conclusive + ")
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    check = doc["checks"][0]
    assert check["method_stats"][0]["train_records_read"] == {"train": 20}
    assert "embedding" not in {n["method"] for n in check["not_checked"]}
    found = {f["eval_id"] for f in doc["findings"] if f["conclusive"]}
    assert found == {f"g{i}" for i in range(10)}
    assert all(f["evidence"]["field"].startswith("predictions[") for f in doc["findings"])


def test_a_paraphrase_tier_that_reads_nothing_is_unchecked_not_a_pass(tmp_path):
    """The embedding tier told to read only the ``user`` view (a chat's user turns) of plain text
    records, which have none (and no ``fields`` either: their one string is their text), reads none of
    them: named, the check is incomplete and says why."""
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    goals = _goals("webshop:0:30")
    train = tmp_path / "plain.jsonl"
    train.write_text("".join(json.dumps({"id": f"w{i}", "text": g}) + "\n" for i, g in enumerate(goals[:10])))
    cfg = AuditConfig(
        datasets={"e": DatasetSpec("e", ["webshop:0:30"], role="eval"), "t": DatasetSpec("t", [str(train)])},
        checks=[CheckSpec("c", ["t"], ["e"], methods=["embedding"])],
        method_params={"embedding": {"train_views": ["user"]}},
    )
    report = run_audit(cfg)
    c = report.checks[0]
    assert report.verdict == c.verdict == "incomplete" and c.contaminated_items == 0
    [gap] = [n for n in c.not_checked if n.method == "embedding"]
    assert (gap.status, gap.dataset, gap.incomplete) == ("nothing_searched", "t", True)
    assert gap.reason == "read none of its 10 records: none has text in the views it reads (user, fields)"
    again = Report.from_dict(json.loads(report.to_json()))  # written and read back, typed
    assert again.checks[0].not_checked == c.not_checked


def test_a_report_without_the_section_loads_and_a_bad_one_is_refused():
    """Reports of earlier versions have no ``not_checked``; a value of the wrong type is named."""
    check = {"name": "c", "train": ["t"], "eval": ["e"], "methods": ["exact"], "eval_items": 3}
    old = Report.from_dict(
        {
            "verdict": "pass",
            "checks": [{**check, "contaminated_items": 0, "verdict": "pass"}],
            "datasets": {},
            "findings": [],
        }
    )
    assert old.checks[0].not_checked == [] and "not checked" not in old.render("md")
    bad = {**check, "contaminated_items": 0, "verdict": "pass", "not_checked": [{"method": "ngram", "reason": 7}]}
    with pytest.raises(ValueError, match=r"checks\[0\]\.not_checked\[0\]\.reason: a string expected"):
        check_report({"verdict": "pass", "checks": [bad], "datasets": {}, "findings": []})


def test_a_default_tier_that_indexed_no_eval_item_is_named_and_decides_nothing(tmp_path):
    """WebShop's test goals of at most 10 words are too short for ``minhash`` (10 word 3-grams): among
    the defaults it is named and clean data (goals 3000–3300, none of them) passes (``exact`` and ``ngram`` check every item); named
    alone, it checked nothing and the check is incomplete."""
    short = [g for g in _goals("webshop:0:500") if len(g.split()) <= 10]
    ev, train = tmp_path / "short.jsonl", tmp_path / "plain.jsonl"
    ev.write_text("".join(json.dumps({"id": f"s{i}", "text": g}) + "\n" for i, g in enumerate(short)))
    train.write_text(
        "".join(json.dumps({"id": f"w{i}", "text": g}) + "\n" for i, g in enumerate(_goals("webshop:3000:3300")))
    )
    code, output, out = _audit(tmp_path, "--eval", str(ev), "--train", str(train))
    assert code == 0 and output.startswith("auditor: PASS — ")
    [minhash] = [n for n in _not_checked(out) if n["method"] == "minhash"]
    assert minhash["status"] == "nothing_indexed" and not minhash["incomplete"]
    assert f"not checked: minhash — indexed none of the {len(short)} eval items (fewer than min_shingles=10" in output
    code, output, out = _audit(tmp_path, "--eval", str(ev), "--train", str(train), "--method", "minhash")
    assert code == 1 and output.startswith("auditor: INCOMPLETE — ")
    assert (
        "not checked: minhash — indexed none of" in output and "asked for, so the check is at best incomplete" in output
    )
