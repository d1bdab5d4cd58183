"""Regression tests for false PASSes (issue 12): contaminated data must never pass.

Each test reproduces one way a contaminated training set passed, at reduced size, on the bundled
StableToolBench queries (the 765 solvable test queries) planted in chat-format training records that
share an agent system prompt, as real agent training sets do.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import auditor.audit.run as audit_mod
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ChangedFileError
from auditor.io.files import check_unchanged, file_state
from auditor.masking.base import BoilerplateConfig
from auditor.masking.detect import detect
from auditor.masking.masker import Masker
from auditor.records.record import Record
from auditor.text.normalize import tokens

SYSTEM = (
    "You are AutoGPT, you can use many tools (functions) to do the following task.\n"
    "First I will give you the task description, and your task start.\n"
    "At each step, you need to give your thought to analyze the status now and what to do next, "
    "with a function call to actually excute your step.\n"
    "Remember: the state change is irreversible, you can't go back to one of the former state."
)


def stb_items(count: int = 50, ref: str = "stabletoolbench") -> list[Record]:
    """The first ``count`` bundled StableToolBench queries of ``ref`` (eval records)."""
    records = Dataset(DatasetSpec("ev", [ref], role="eval")).records()
    return [r for _, r in zip(range(count), records)]


def stb_queries(count: int = 50, ref: str = "stabletoolbench") -> list[str]:
    return [r.view("query") for r in stb_items(count, ref)]


def chat(rid: str, user: str, system: str = SYSTEM) -> str:
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return json.dumps({"id": rid, "messages": [*msgs, {"role": "assistant", "content": "On it."}]}) + "\n"


def filler(i: int) -> str:
    return f"Tell me fact number {i} about the planet Mars and its moon number {i * 7 % 13}."


def stb_config(
    train: Path, tmp_path: Path, workers: int = 1, methods=None, batch_size: int = 64, ref: str = "stabletoolbench"
) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [ref], role="eval"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=methods)],
        workers=workers,
        batch_size=batch_size,
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )


# -- 1. the parallel engine and the boilerplate cache ---------------------------------------------


def test_masker_never_serves_an_earlier_batch():
    """``Masker.masked`` must mask the batch it is given, even one with an earlier batch's identity
    (a worker that frees a batch hands its ``id`` to the next one; a list refilled in place keeps it)."""
    recs = [Record("t", str(i), f"t:{i}", {"text": f"{SYSTEM}\n{filler(i)}"}, ordinal=i) for i in range(40)]
    masker = Masker(detect(recs, [], BoilerplateConfig(min_records=10)), [], views=("text",), methods=["exact"])
    batch = recs[:20]
    first = masker.masked(batch)
    batch[:] = recs[20:]
    second = masker.masked(batch)
    assert [r.ordinal for r in first] == list(range(20))
    assert [r.ordinal for r in second] == list(range(20, 40))
    assert second[0].views["text"] == filler(20)


@pytest.mark.slow
def test_parallel_engine_finds_what_the_serial_one_finds(tmp_path, monkeypatch):
    """The reproduction: records sharing one system prompt (boilerplate masking on), 50 StableToolBench
    queries verbatim among them, the default local engine with 2 workers on a file over its parallel
    threshold (``LocalEngine.min_parallel_bytes``, 8 MB by default, set to 0 here instead of writing
    8 MB). Before the fix the parallel scan passed (a worker's masker served an earlier batch)."""
    queries = stb_queries()
    train = tmp_path / "train.jsonl"
    with train.open("w", encoding="utf-8") as f:
        for i in range(2500):
            f.write(chat(f"r{i}", filler(i)))
            if i % 50 == 49:  # spread over the batches, so that any batch served stale is a miss
                f.write(chat(f"q{i}", queries[i // 50]))
    serial = run_audit(stb_config(train, tmp_path, workers=1))
    real_get_engine = audit_mod.get_engine
    # several work units (byte ranges of the file), so that the scan runs in the workers
    monkeypatch.setattr(
        audit_mod,
        "get_engine",
        lambda name, **kw: real_get_engine(name, **{**kw, "min_parallel_bytes": 0, "split_bytes": 200_000}),
    )
    parallel = run_audit(stb_config(train, tmp_path, workers=2))
    assert parallel.run["workers"] == 2 and parallel.run["scan"]["units"] > 2
    assert serial.checks[0]["boilerplate"]["lines"] >= 3  # masking is active
    for report in (serial, parallel):
        assert report.verdict == "fail"
        assert report.checks[0]["contaminated_items"] == 50
    assert parallel.findings == serial.findings


# -- 2. masking never hides an eval item ----------------------------------------------------------


def _write(path: Path, lines) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("numbered", [False, True], ids=["verbatim_lines", "numbered_lines"])
def test_few_shot_block_in_every_system_prompt_is_found(tmp_path, numbered):
    """The 50 queries as a few-shot block in every record's system prompt, one per line (shared by
    100% of records, so boilerplate): the default methods found 0/765 before the fix."""
    queries = stb_queries()
    block = "\n".join(f"Example {k + 1}: {q}" if numbered else q for k, q in enumerate(queries))
    system = f"{SYSTEM}\nHere are examples of tasks you will get:\n{block}"
    train = _write(tmp_path / "train.jsonl", (chat(f"r{i}", filler(i), system=system) for i in range(120)))
    report = run_audit(stb_config(train, tmp_path))
    check = report.checks[0]
    assert report.verdict == "fail" and check["contaminated_items"] == 50
    assert check["items_by_method"]["ngram"] == 50
    if not numbered:  # a line equal to the item: the exact tier too
        assert check["items_by_method"]["exact"] == 50
    bp = check["boilerplate"]
    assert bp["lines"] >= 4 and bp["masked_records"] == 120  # the system prompt itself is still masked
    assert bp["spared_lines"] == (50 if numbered else 0)


@pytest.mark.parametrize("methods", [None, ["minhash"]], ids=["default", "minhash"])
def test_one_item_in_most_records_is_found(tmp_path, methods):
    """One query as the task of 60 % of the records (its n-grams are boilerplate by share)."""
    q = stb_queries(8)[7]
    train = _write(tmp_path / "train.jsonl", (chat(f"r{i}", q if i % 5 < 3 else filler(i)) for i in range(120)))
    report = run_audit(stb_config(train, tmp_path, methods=methods))
    check = report.checks[0]
    assert report.verdict == "fail" and check["contaminated_items"] == 1
    assert {f["eval_ordinal"] for f in report.findings} == {7}
    if methods is None:  # minhash alone masks nothing (mask_boilerplate = false: a Jaccard over the whole query)
        assert check["boilerplate"]["spared_ngrams"] > 0
    else:
        assert check["boilerplate"]["enabled"] is False


def test_one_item_quoted_in_most_system_prompts_is_found(tmp_path):
    """One query after a prefix in 60 % of the system prompts: the shared line is not removed; the
    words around the item are masked and the item's words kept."""
    q = stb_queries(8)[7]
    rows = (chat(f"r{i}", filler(i), system=SYSTEM + (f"\nFor example: {q}" if i % 5 < 3 else "")) for i in range(120))
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path))
    check = report.checks[0]
    assert report.verdict == "fail" and check["items_by_method"] == {"ngram": 1}
    assert check["boilerplate"]["spared_lines"] == 1


def test_masking_keeps_eval_words_at_the_edge_of_a_boilerplate_ngram():
    """A boilerplate n-gram straddling the start of an eval item must not eat the item's first words."""
    item = "find me three vegan restaurants near the central station that are open late on sundays"
    recs = [
        Record("t", str(i), f"t:{i}", {"text": f"the assistant always answers politely and briefly {item} id {i}"})
        for i in range(20)
    ]
    bp = detect(recs, [item], BoilerplateConfig(min_records=10))
    masked = bp.mask_record(recs[4], ("text",)).views["text"]
    assert item in masked and "politely" not in masked
    assert detect(recs, [], BoilerplateConfig(min_records=10)).mask_record(recs[4], ("text",)).views["text"] == (
        "[masked] 4"
    )


def test_one_item_in_most_records_is_found_by_embedding(tmp_path):
    """The same with the embedding tier (on the 61 G3 queries, to keep the model's work small)."""
    ref = "stabletoolbench:G3_instruction"
    item = stb_items(8, ref)[7]
    rows = (chat(f"r{i}", item.view("query") if i % 5 < 3 else filler(i)) for i in range(40))
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path, methods=["embedding"], ref=ref))
    assert report.verdict == "fail" and {f["eval_ordinal"] for f in report.findings} == {item.ordinal}


TOOLRL = Path(__file__).resolve().parent / "data" / "foreign" / "toolrl"


def test_toolrl_prompt_after_a_shared_heading_is_found_as_unmasked(tmp_path):
    """ToolRL's RL test row 42 ('**Dialogue Records History**' then a one-line user turn) sits verbatim
    at the end of one SFT record's input. Most SFT records share that heading line, so masking removed
    it, and with it the start of every 8-gram of the item that straddles the heading and the next line:
    1 of its 4 13-grams survived (PASS for row 42). Masked, the ngram tier must find what it finds
    unmasked, with the same scores."""
    cfgs = []
    for mask in (True, False):
        cfg = AuditConfig(
            datasets={
                "ev": DatasetSpec("ev", [str(TOOLRL / "test.parquet")], role="eval"),
                "tr": DatasetSpec("tr", [str(TOOLRL / "rlla_sft.json")], role="train"),
            },
            checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["ngram"])],
            method_params={"ngram": {"mask_boilerplate": mask}},
            findings_store="memory",
            index_dir=str(tmp_path / f"idx{mask}"),
        )
        cfgs.append(run_audit(cfg))
    masked, unmasked = ({f["eval_ordinal"]: f["score"] for f in r.findings if f["conclusive"]} for r in cfgs)
    assert set(masked) == {0, 42} and masked == unmasked
    bp = cfgs[0].checks[0]["boilerplate"]
    assert bp["lines"] >= 10 and bp["masked_share"] > 0.3  # the SFT file's system prompt is still masked


def _heading_records(item_line: str) -> list[Record]:
    """20 chat-like records sharing a heading, a short two-line footer and a prompt; record 5 holds
    ``item_line`` as its user turn."""
    rows = []
    for i in range(20):
        turn = item_line if i == 5 else f"please tell me fact number {i} about mars"
        text = (
            f"{GUIDE_LINE}\n**Dialogue Records History**\n<user> {turn} </user>\nEnd Of Turn\nAwait Reply Now\nid {i}"
        )
        rows.append(Record("t", str(i), f"t:{i}", {"text": text}))
    return rows


GUIDE_LINE = "You are a careful assistant: answer with one tool call per turn and never guess arguments."
QR = "Could you please generate a QR code for the URL www.example.com?"


@pytest.mark.parametrize(
    "item",
    [
        f"**Dialogue Records History**\n<user> {QR} </user>",  # a shared line at the start of its 8-grams
        "the URL www.example.com? </user>\nEnd Of Turn",  # ... at the end
        "code for the URL www.example.com? </user>\nEnd Of Turn\nAwait Reply Now\nid",  # two inside one
    ],
)
def test_masking_keeps_eval_8grams_that_straddle_shared_lines(item):
    """No word inside an occurrence of an eval item's 8-gram is masked when the occurrence straddles
    line breaks and a shared line (alone holding no eval 8-gram) is at its start, end or inside it;
    the shared lines are still removed from every other record, and the batch form says the same."""
    recs = _heading_records(QR)
    bp = detect(recs, [item], BoilerplateConfig(min_records=10))
    assert len(bp.lines) == 4 and not bp.spared  # the prompt, heading and footer lines are boilerplate
    texts = [r.view("text") for r in recs]
    masked = [bp.mask_text(t) for t in texts]
    assert bp.mask_texts(texts) == masked
    assert " ".join(tokens(item)) in " ".join(tokens(masked[5]))
    assert GUIDE_LINE not in masked[5]  # the shared line outside the occurrence is still removed
    for i, m in enumerate(masked):
        if i != 5:
            assert "Dialogue" not in m and "Await" not in m and "careful assistant" not in m


# -- 3. a training file that changes while it is read ---------------------------------------------


def _truncating_reads(monkeypatch, path: Path, after: int, cut_line: int) -> None:
    """Truncate ``path`` at the end of line ``cut_line`` once ``after`` of its records were read (the
    reproduction: another process rewriting the file during the scan), in whichever pass reads it."""
    with path.open("rb") as f:
        cut = sum(len(line) for _, line in zip(range(cut_line), f))
    from auditor.datasets.units import UnitReader

    real_read = UnitReader.read  # every pass reads through it: the serial reader and the engines' units

    def read(self, unit, ustats, *args, **kwargs):
        for n, record in enumerate(real_read(self, unit, ustats, *args, **kwargs)):
            if n == after and unit.path == str(path) and path.stat().st_size > cut:
                os.truncate(path, cut)
            yield record

    monkeypatch.setattr(UnitReader, "read", read)


def _stb_training_file(path: Path, filler_records: int) -> Path:
    queries = stb_queries()
    rows = [chat(f"r{i}", filler(i)) for i in range(filler_records)]
    return _write(path, rows + [chat(f"q{k}", q) for k, q in enumerate(queries)])


@pytest.mark.slow
def test_training_file_truncated_during_the_scan_is_an_error(tmp_path, monkeypatch):
    """Before: PASS after reading 4,000 of 6,050 records (the 50 leaked queries are at the end). Now
    exit 2 with one line naming the file. The cut happens after the boilerplate sample (2,000 records)."""
    train = _stb_training_file(tmp_path / "train.jsonl", 6000)
    _truncating_reads(monkeypatch, train, after=3000, cut_line=4000)
    res = CliRunner().invoke(
        main, ["audit", "--train", str(train), "--eval", "stabletoolbench", "--report-dir", str(tmp_path / "r")]
    )
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in res.output
    assert err.startswith(f"Error: {train}: changed while it was read (size "), err
    assert not (tmp_path / "r" / "report.json").exists()


def test_file_changed_between_two_passes_is_an_error(tmp_path, monkeypatch):
    """Truncated while the boilerplate sample reads it: the scan finds it changed before reading on."""
    train = _stb_training_file(tmp_path / "train.jsonl", 3000)
    _truncating_reads(monkeypatch, train, after=100, cut_line=1500)
    with pytest.raises(ChangedFileError, match="changed while it was read"):
        run_audit(stb_config(train, tmp_path))


def test_changed_file_is_an_error_even_with_on_error_skip(tmp_path):
    """``on_error = "skip"`` skips bad records, never a file read in part."""
    train = _stb_training_file(tmp_path / "train.jsonl", 3000)
    ds = Dataset(DatasetSpec("tr", [str(train)], on_error="skip"))
    records = ds.records()
    for _ in range(10):
        next(records)
    with train.open("ab") as f:  # appended to while read
        f.write(chat("late", filler(1)).encode())
    with pytest.raises(ChangedFileError, match=r"size \d+ -> \d+ bytes"):
        for _ in records:
            pass
    assert ds.stats.skipped_files == []


def test_file_state_check_names_what_changed(tmp_path):
    """The per-unit check the engines call (a whole file or one shard): size, mtime, identity."""
    p = _write(tmp_path / "a.jsonl", [chat("a", filler(1))])
    before = file_state(p)
    check_unchanged(before)
    os.utime(p, ns=(before.mtime_ns + 10**9, before.mtime_ns + 10**9))
    with pytest.raises(ChangedFileError, match="modification time changed"):
        check_unchanged(before)
    (tmp_path / "b.jsonl").write_bytes(p.read_bytes())
    os.replace(tmp_path / "b.jsonl", p)
    with pytest.raises(ChangedFileError, match="replaced by another file"):
        check_unchanged(before)
    p.unlink()
    with pytest.raises(ChangedFileError, match="removed or made unreadable"):
        check_unchanged(before)


def test_exact_finds_multiline_items_that_share_a_line_with_the_boilerplate(tmp_path):
    """tau2 tasks span several lines, one of which ("You do not remember your email address.") most
    training tasks share: masking removed it from the training view and an exact-only audit passed
    verbatim copies."""
    train = Dataset(DatasetSpec("tr", ["tau2-retail:train"], role="train")).records()
    copies = [r.view("query") for _, r in zip(range(2), train)]
    assert all("\n" in q for q in copies)
    ev = tmp_path / "ev.jsonl"
    ev.write_text("".join(json.dumps({"id": str(i), "text": q}) + "\n" for i, q in enumerate(copies)))
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            str(ev),
            "--train",
            "tau2-retail:train",
            "--method",
            "exact",
            "--report-dir",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 1, res.output
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["checks"][0]["contaminated_items"] == 2


# -- 4. cheap evasion: the generated corpus -------------------------------------------------------

_HOMOGLYPHS = str.maketrans("aeocpxy", "аеосрху")  # Latin -> Cyrillic look-alikes


def _inside_words(q: str, mark: str) -> str:
    return " ".join(w[:2] + mark + w[2:] if len(w) > 3 else w for w in q.split(" "))


def _call_record(rid: str, arguments: str) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": arguments}}
    msgs = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": filler(int(rid[1:]))},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "no results"},
    ]
    return json.dumps({"id": rid, "messages": msgs}) + "\n"


EVASIONS = {
    "zero_width_space": lambda q: _inside_words(q, "\u200b"),
    "zero_width_joiner": lambda q: _inside_words(q, "\u200d"),
    "soft_hyphen": lambda q: _inside_words(q, "\u00ad"),
    "cyrillic_homoglyphs": lambda q: q.translate(_HOMOGLYPHS),
    "bold_every_other_word": lambda q: " ".join(f"<b>{w}</b>" if i % 2 else w for i, w in enumerate(q.split(" "))),
    "nbsp_entities": lambda q: q.replace(" ", "&nbsp;"),
    "json_escaped_argument": lambda q: json.dumps({"query": "".join(f"\\u{ord(c):04x}" for c in q)}),
    "base64_argument": lambda q: json.dumps({"payload": base64.b64encode(q.encode()).decode()}),
}


@pytest.mark.parametrize("kind", sorted(EVASIONS))
def test_evasion_corpus_is_found_by_the_default_methods(tmp_path, kind):
    """Each edit type x 50 planted StableToolBench queries: found at >= 48/50 (before: 0/50)."""
    items = stb_items(50)
    edit = EVASIONS[kind]
    rows = [chat(f"r{i}", filler(i)) for i in range(100)]
    for k, item in enumerate(items):
        planted = edit(item.view("query"))
        rows.insert(2 * k, _call_record(f"q{k}", planted) if kind.endswith("argument") else chat(f"q{k}", planted))
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path))
    found = {f["eval_ordinal"] for f in report.findings if f["conclusive"]}
    assert len(found & {it.ordinal for it in items}) >= 48, (kind, report.checks[0]["items_by_method"])


def test_format_character_table_is_this_pythons_unicode_database():
    """The default-ignorable characters come from a table of format characters (Cf) where it has this
    Python's Unicode version: it must be exactly what scanning every code point gives, or an
    invisible character would hide a planted item (a false PASS)."""
    from auditor.text.normalize import _format_code_points, normalize

    scanned = _format_code_points(table=False)
    assert len(scanned) > 100 and 0x200B in scanned and 0xE0001 in scanned
    assert _format_code_points() == scanned
    assert normalize("bo\u2064ok a fl\U0001d173ight") == "book a flight"


# -- 5. an index bound to its eval set ------------------------------------------------------------


def _resign_zeroed(folder: Path) -> None:
    """Zero every array of an index folder and recompute every checksum (what an attacker can do)."""
    import hashlib
    import io

    import numpy as np

    from auditor.store.indexes import doc_checksum

    doc = json.loads((folder / "index.json").read_text())
    for entry in doc["arrays"].values():
        path = folder / entry["file"]
        buf = io.BytesIO()
        np.save(buf, np.zeros_like(np.load(path, allow_pickle=False)), allow_pickle=False)
        path.write_bytes(buf.getvalue())
        entry["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    doc["checksum"] = doc_checksum(doc)
    (folder / "index.json").write_text(json.dumps(doc, indent=1, sort_keys=True))


def test_tampered_index_with_recomputed_checksums_is_refused(tmp_path):
    """Before: zeroed arrays with recomputed checksums turned FAIL 50/765 into PASS (exit 0)."""
    train = _stb_training_file(tmp_path / "train.jsonl", 200)
    args = ["audit", "--train", str(train), "--eval", "stabletoolbench", "--method", "ngram", "--method", "minhash"]
    args += ["--index-dir", str(tmp_path / "idx"), "--report-dir", str(tmp_path / "r")]
    for _ in range(2):  # built, then reused untouched: the same verdict
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 1 and "FAIL" in res.output and "50 conclusive + 0 suspected of 765" in res.output, (
            res.output
        )
    folders = sorted(p for p in (tmp_path / "idx").iterdir() if p.is_dir())
    assert [p.name.split("-")[0] for p in folders] == ["minhash", "ngram"]
    for folder in folders:
        _resign_zeroed(folder)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert "\n" not in err and "does not answer for its eval set" in err and "delete the folder to rebuild" in err
