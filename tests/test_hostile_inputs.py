"""Hostile inputs through the CLI: one clear line and exit 2 (on_error = fail), or a counted skip
with its reason in the report and a verdict that is never a plain pass (on_error = skip)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest
from hostile import (
    CORPUS,
    EVAL_ITEMS,
    EVAL_ONLY_BAD,
    GOOD,
    LEAK,
    OTHER,
    REPO,
    assert_accounting,
    cli,
    jl,
    make_file,
    report,
    run_cli,
    write_eval,
)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_training_file_fails_with_one_line(tmp_path, name):
    ev = write_eval(tmp_path)
    bad = make_file(tmp_path, name)
    res = cli("audit", "--eval", str(ev), "--train", str(bad), "--report-dir", str(tmp_path / "r"))
    _, problem, where = CORPUS[name]
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in res.output
    loc = f"{bad}:{where}:" if where else f"{bad}:"
    assert err.startswith(f"Error: {loc}"), err
    assert problem in err, err
    assert not (tmp_path / "r" / "report.json").exists()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_training_file_is_skipped_and_counted(tmp_path, name):
    ev = write_eval(tmp_path)
    bad = make_file(tmp_path, name)
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(bad), "--on-error", "skip", "--report-dir", str(out))
    assert res.exit_code == 1, res.output  # incomplete (or fail): never 0
    doc = report(out)
    assert_accounting(doc)
    d = doc["datasets"][bad.name.split(".")[0]]
    problem = CORPUS[name][1]
    reasons = list(d["skip_reasons"]) + [f["reason"] for f in d["skipped_files"]]
    assert any(problem in r for r in reasons), reasons
    assert doc["checks"][0]["verdict"] in ("incomplete", "fail")
    assert doc["verdict"] != "pass"
    assert doc["checks"][0]["notes"], "the verdict must say what was not checked"
    # what could be read was read and checked: the leak is found when it sits before the damage
    if name not in (
        "empty.jsonl",
        "empty.json",
        "invalid_utf8.json",
        "nul.json",
        "truncated.json",
        "deep.json",
        "csv_unterminated.csv",
        "truncated.jsonl.gz",
        "truncated.jsonl.zst",
    ):
        assert doc["checks"][0]["contaminated_items"] == 1, name
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "skipped" in md or "file not read" in md


def test_training_record_of_no_known_schema_is_read_whole(tmp_path):
    """Bad as eval data (below), read whole as training data: its ``body`` is searched, nothing skipped."""
    ev = write_eval(tmp_path, [*EVAL_ITEMS, {"id": "e9", "text": "No text here!"}])
    bad = make_file(tmp_path, "missing_field.jsonl")
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(bad), "--report-dir", str(out))
    assert res.exit_code == 1, res.output
    doc = report(out)
    assert doc["datasets"]["missing_field"]["skipped"] == 0 and doc["datasets"]["missing_field"]["records"] == 2
    found = {
        (f["eval_id"], f["train_id"], f["evidence"].get("field")) for f in doc["findings"] if f["method"] == "exact"
    }
    assert ("e9", "t2", "body") in found


@pytest.mark.parametrize(
    "name", ["truncated.json", "invalid_utf8.jsonl", "wrong_schema.jsonl", "deep.jsonl", "missing_field.jsonl"]
)
def test_bad_eval_file_fails_or_is_skipped_as_unchecked(tmp_path, name):
    train = tmp_path / "train.jsonl"
    train.write_bytes(jl(GOOD))
    bad = make_file(tmp_path, name)
    res = cli("audit", "--eval", str(bad), "--train", str(train), "--report-dir", str(tmp_path / "r0"))
    assert res.exit_code == 2 and {**CORPUS, **EVAL_ONLY_BAD}[name][1] in res.stderr and "Traceback" not in res.output
    # --on-error skip applies to eval data too: the bad part is unchecked, so never a pass
    res = cli(
        "audit", "--eval", str(bad), "--train", str(train), "--on-error", "skip", "--report-dir", str(tmp_path / "r")
    )
    assert res.exit_code == 1, res.output
    doc = report(tmp_path / "r")
    check = doc["checks"][0]
    # the corpus holds the leak before the damage: found (fail), else incomplete; never a pass
    assert check["verdict"] in ("fail", "incomplete") and check["skipped"]["eval"] + check["skipped_files"]["eval"] >= 1
    assert any("unchecked" in n and str(bad) in n for n in check["notes"]), check["notes"]
    # and so can a manifest
    (tmp_path / "m.toml").write_text(
        f'[datasets.ev]\npath = "{bad.name}"\nrole = "eval"\non_error = "skip"\n'
        f'[datasets.tr]\npath = "train.jsonl"\nrole = "train"\n'
        f'[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\n'
    )
    res = cli("verify", str(tmp_path / "m.toml"), "--report-dir", str(tmp_path / "r2"))
    assert res.exit_code == 1, res.output
    assert report(tmp_path / "r2")["checks"][0]["verdict"] == check["verdict"]


def test_subprocess_errors_are_one_line_without_traceback(tmp_path):
    ev = write_eval(tmp_path)
    bad = make_file(tmp_path, "deep.json")
    p = run_cli("audit", "--eval", str(ev), "--train", str(bad), "--report-dir", str(tmp_path / "r"))
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"Error: {bad}:line 3: JSON nested deeper than 900 levels"]
    p = run_cli(
        "audit", "--eval", str(ev), "--train", str(bad), "--on-error", "skip", "--report-dir", str(tmp_path / "r")
    )
    # the file is streamed: its first (leaking) record was read before the bad one, so the verdict is
    # fail, and the report still says the rest of the file went unchecked
    assert p.returncode == 1 and not p.stderr.strip()
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["verdict"] in ("fail", "incomplete")
    train = next(d for d in doc["datasets"].values() if d["role"] == "train")
    assert train["skipped_files"] and "nested deeper" in json.dumps(train["skipped_files"])


def test_bom_files_are_read_whole(tmp_path):
    ev = write_eval(tmp_path)
    bom = b"\xef\xbb\xbf"
    files = {
        "bom.jsonl": bom + jl(GOOD, OTHER),
        "bom.json": bom + json.dumps([GOOD, OTHER]).encode(),
        "bom.csv": bom + b'id,text\nt1,"' + LEAK.encode() + b'"\nt2,other\n',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        out = tmp_path / name.replace(".", "_")
        res = cli("audit", "--eval", str(ev), "--train", str(tmp_path / name), "--report-dir", str(out))
        assert res.exit_code == 1, (name, res.output)  # the leak in the first record is found
        doc = report(out)
        assert doc["verdict"] == "fail" and doc["checks"][0]["contaminated_items"] == 1
        d = doc["datasets"]["bom"]
        assert (d["read"], d["records"], d["skipped"]) == (2, 2, 0)
        assert doc["findings"][0]["train_id"] == "t1"


def test_csv_with_embedded_newlines_keeps_records_and_lines(tmp_path):
    ev = write_eval(tmp_path)
    table = tmp_path / "table.csv"
    table.write_text(
        'id,text\nt0,"first line\nsecond line\nthird"\nt1,"' + LEAK + '"\nt2,"a, b\nc"\n', encoding="utf-8"
    )
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(table), "--report-dir", str(out))
    assert res.exit_code == 1
    doc = report(out)
    assert doc["datasets"]["table"]["records"] == 3
    assert [f["train_source"] for f in doc["findings"] if f["method"] == "exact"] == [f"{table}:5"]
    assert doc["texts"]  # the record's text behind the finding


def test_duplicate_ids_in_eval_are_reported_and_all_checked(tmp_path):
    items = EVAL_ITEMS + [{"id": "e1", "text": "a different item reusing the id e1 for a hotel in rome"}]
    ev = write_eval(tmp_path, items)
    train = tmp_path / "train.jsonl"
    train.write_bytes(jl({"id": "t1", "text": LEAK}, {"id": "t9", "text": items[3]["text"]}))
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(train), "--method", "exact", "--report-dir", str(out))
    assert res.exit_code == 1
    doc = report(out)
    assert doc["datasets"]["eval"]["duplicate_ids"] == 1
    assert doc["datasets"]["eval"]["duplicate_id_examples"] == [f"{ev}:4: id 'e1'"]
    assert doc["checks"][0]["eval_items"] == 4 and doc["checks"][0]["contaminated_items"] == 2
    assert sorted(f["eval_source"] for f in doc["findings"]) == [f"{ev}:1", f"{ev}:4"]
    assert "duplicate ids" in (out / "report.md").read_text(encoding="utf-8")


def _mixed_folder(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "a_chat.jsonl").write_text(
        json.dumps(
            {
                "id": "c1",
                "messages": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": LEAK}],
            }
        )
        + "\n"
    )
    (d / "b_goals.json").write_text(json.dumps(["i need a red cotton t-shirt under 20 dollars", EVAL_ITEMS[1]["text"]]))
    (d / "c_table.csv").write_text("id,text\nr1," + EVAL_ITEMS[2]["text"] + "\n")
    (d / "sub").mkdir()  # folders matched by a glob are not data
    return d


def test_mixed_formats_in_one_glob(tmp_path):
    ev = write_eval(tmp_path)
    d = _mixed_folder(tmp_path)
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(d / "*"), "--method", "exact", "--report-dir", str(out))
    assert res.exit_code == 1, res.output
    doc = report(out)
    assert doc["checks"][0]["contaminated_items"] == 3
    assert {f["train_source"].split(":")[0].split("#")[0] for f in doc["findings"]} == {
        str(d / "a_chat.jsonl"),
        str(d / "b_goals.json"),
        str(d / "c_table.csv"),
    }
    # an unreadable member of the glob: exit 2 naming it, or skipped as a file with --on-error skip
    (d / "notes.txt").write_text("not data")
    res = cli("audit", "--eval", str(ev), "--train", str(d / "*"), "--method", "exact")
    assert res.exit_code == 2 and f"{d / 'notes.txt'}: no adapter reads '.txt' files" in res.stderr
    res = cli(
        "audit",
        "--eval",
        str(ev),
        "--train",
        str(d / "*"),
        "--method",
        "exact",
        "--on-error",
        "skip",
        "--report-dir",
        str(out),
    )
    doc = report(out)
    assert res.exit_code == 1 and doc["checks"][0]["contaminated_items"] == 3
    assert doc["checks"][0]["skipped_files"] == {"eval": 0, "train": 1}
    assert doc["datasets"][str(d / "*")]["skipped_files"][0]["file"] == str(d / "notes.txt")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "file not read" in html and "notes.txt" in html


def test_symlink_loop(tmp_path):
    ev = write_eval(tmp_path)
    a, b = tmp_path / "loop_a.jsonl", tmp_path / "loop_b.jsonl"
    os.symlink(b, a)
    os.symlink(a, b)
    res = cli("audit", "--eval", str(ev), "--train", str(a))
    assert res.exit_code == 2 and "symlink loop or dangling symlink" in res.stderr and str(a) in res.stderr
    # inside a glob: not silently dropped
    d = tmp_path / "g"
    d.mkdir()
    (d / "ok.jsonl").write_bytes(jl(GOOD))
    os.symlink(d / "x.jsonl", d / "y.jsonl")
    os.symlink(d / "y.jsonl", d / "x.jsonl")
    res = cli("audit", "--eval", str(ev), "--train", str(d / "*.jsonl"))
    assert res.exit_code == 2 and "symlink loop" in res.stderr
    out = tmp_path / "r"
    res = cli("audit", "--eval", str(ev), "--train", str(d / "*.jsonl"), "--on-error", "skip", "--report-dir", str(out))
    doc = report(out)
    assert res.exit_code == 1 and len(doc["datasets"][str(d / "*.jsonl")]["skipped_files"]) == 2
    assert doc["checks"][0]["verdict"] == "fail"  # the readable file still shows the leak


def test_fifo_and_folder_are_refused_without_blocking(tmp_path):
    ev = write_eval(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    p = run_cli("audit", "--eval", str(ev), "--train", str(fifo), timeout=60)
    assert p.returncode == 2 and p.stderr.strip() == f"Error: {fifo}: is a FIFO, not a regular file"
    folder = tmp_path / "looks_like.jsonl"
    folder.mkdir()
    res = cli("audit", "--eval", str(ev), "--train", str(folder))
    assert res.exit_code == 2 and "is a folder" in res.stderr


def _drop_root_file_powers():
    """In the child: drop CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) from the bounding set,
    so after exec even root obeys file permissions (prctl PR_CAPBSET_DROP = 24)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_permission_denied_file(tmp_path):
    """chmod 000 does not stop root; the CLI child runs without root's file-permission override."""
    base = tmp_path
    ev = write_eval(base)
    locked = base / "locked.jsonl"
    locked.write_bytes(jl(GOOD))
    os.chmod(locked, 0o000)
    p = run_cli("audit", "--eval", str(ev), "--train", str(locked), preexec_fn=_drop_root_file_powers, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == f"Error: {locked}: cannot open: Permission denied"


def test_hundred_megabyte_line_is_bounded(tmp_path):
    """A 100 MB single-line record: skipped by --max-record-chars without ever being held whole."""
    ev = write_eval(tmp_path)
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.write(jl(GOOD))
        f.write(b'{"id": "huge", "text": "')
        chunk = b"lorem ipsum " * 87382  # ~1 MiB
        for _ in range(100):
            f.write(chunk)
        f.write(b'"}\n')
        f.write(jl(OTHER))
    assert big.stat().st_size > 100_000_000
    rss_file = tmp_path / "rss"
    code = (
        "import atexit, resource, sys\n"
        "out = sys.argv[1]\n"
        "atexit.register(lambda: open(out, 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))\n"
        "sys.argv = ['auditor'] + sys.argv[2:]\n"
        "from auditor.cli import main\nmain()\n"
    )
    args = ["--eval", str(ev), "--train", str(big), "--method", "ngram", "--max-record-chars", "1000000"]

    def run(*extra):
        return subprocess.run(
            [sys.executable, "-c", code, str(rss_file), "audit", *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=180,
        )

    small = tmp_path / "small.jsonl"
    small.write_bytes(jl(GOOD, OTHER))
    assert run("--eval", str(ev), "--train", str(small), "--report-dir", str(tmp_path / "s")).returncode == 1
    baseline_kib = int(rss_file.read_text())
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.strip() == f"Error: {big}:line 2: record longer than max_record_chars=1000000"
    out = tmp_path / "r"
    p = run(*args, "--on-error", "skip", "--report-dir", str(out))
    assert p.returncode == 1, p.stderr
    peak_kib = int(rss_file.read_text())
    doc = report(out)
    d = doc["datasets"]["big"]
    assert (d["read"], d["records"], d["skipped"]) == (3, 2, 1)
    assert d["skip_reasons"] == {"record longer than max_record_chars=1000000": 1}
    assert doc["checks"][0]["verdict"] == "fail" and doc["checks"][0]["contaminated_items"] == 1
    # the 100 MB line never sat in memory (held whole it would cost > 200 MB as bytes + str)
    assert peak_kib < baseline_kib + 64 * 1024, (peak_kib, baseline_kib)


@pytest.mark.slow
def test_json_array_of_a_million_records(tmp_path):
    n = 1_000_000
    ev = write_eval(tmp_path)
    path = tmp_path / "million.json"
    with open(path, "w") as f:
        f.write("[")
        f.write(",".join('{"id":%d,"text":"training record %d says hello"}' % (i, i) for i in range(n - 1)))
        f.write("," + json.dumps({"id": n - 1, "text": LEAK}) + "]")
    out = tmp_path / "r"
    p = run_cli(
        "audit", "--eval", str(ev), "--train", str(path), "--method", "exact", "--report-dir", str(out), timeout=300
    )
    assert p.returncode == 1, p.stderr
    doc = report(out)
    assert_accounting(doc)
    assert doc["datasets"]["million"]["read"] == n and doc["datasets"]["million"]["records"] == n
    assert doc["findings"][0]["train_id"] == str(n - 1) and doc["findings"][0]["train_source"] == f"{path}#{n - 1}"


def test_write_clean_leaves_out_unreadable_files_and_says_so(tmp_path):
    ev = write_eval(tmp_path)
    d = _mixed_folder(tmp_path)
    (d / "notes.txt").write_text("not data")
    out, clean = tmp_path / "r", tmp_path / "clean"
    res = cli(
        "audit",
        "--eval",
        str(ev),
        "--train",
        str(d / "*"),
        "--method",
        "exact",
        "--on-error",
        "skip",
        "--report-dir",
        str(out),
        "--write-clean",
        str(clean),
    )
    assert res.exit_code == 1, res.output
    summary = report(out)["clean"]["datasets"][str(d / "*")]
    assert summary["not_written_files"] == [str(d / "notes.txt")]
    assert summary["removed"] == 3 and len(summary["files"]) == 3


def test_provenance_with_an_unread_file_is_incomplete(tmp_path):
    (tmp_path / "src.jsonl").write_bytes(jl(*EVAL_ITEMS))
    (tmp_path / "der").mkdir()
    (tmp_path / "der" / "a.jsonl").write_bytes(jl(OTHER))
    m = tmp_path / "m.toml"
    m.write_text(
        '[datasets.src]\npath = "src.jsonl"\nrole = "eval"\nsplit_label = "test"\n'
        '[datasets.der]\npath = "der/*"\nrole = "train"\non_error = "skip"\n'
        '[[provenance]]\nname = "p"\nderived = ["der"]\nsources = ["src"]\nmethods = ["exact"]\n'
    )
    out = tmp_path / "r"
    res = cli("verify", str(m), "--report-dir", str(out))
    assert res.exit_code == 0, res.output  # everything read: a plain pass
    (tmp_path / "der" / "b.txt").write_text("unreadable as data")
    res = cli("verify", str(m), "--report-dir", str(out))
    prov = report(out)["provenance"][0]
    assert res.exit_code == 1 and prov["verdict"] == "incomplete"
    assert "1 files were not read" in prov["notes"][0]


def test_skip_tally_is_by_kind_and_bounded(tmp_path):
    lines = [json.dumps(GOOD)]
    lines += ['{"id": %d, "text": "x"' % i + " " * i + "oops" for i in range(300)]  # invalid at varying columns
    lines += ['{"id": %d, "%s": 1}' % (i, "k" * (i % 7)) for i in range(300)]  # no text field
    lines += ['{"id": %d, "text": %d}' % (i, i) for i in range(10)]
    train = tmp_path / "messy.jsonl"
    train.write_text("\n".join(lines) + "\n")
    ev = write_eval(tmp_path)
    out = tmp_path / "r"
    res = cli(
        "audit",
        "--eval",
        str(ev),
        "--train",
        str(train),
        "--on-error",
        "skip",
        "--report-dir",
        str(out),
        "--text-field",
        "text",
    )
    assert res.exit_code == 1
    d = report(out)["datasets"]["messy"]
    assert d["read"] == len(lines) and d["records"] == 1 and d["skipped"] == len(lines) - 1
    assert len(d["skip_reasons"]) <= 101 and sum(d["skip_reasons"].values()) == d["skipped"]
    assert d["skip_reasons"]["invalid JSON: Expecting ',' delimiter"] == 300

    # more kinds of problem than the tally keeps: the rest are counted together, also when the
    # problems come from several work units (each unit tallies, the dataset's account merges)
    from auditor.datasets.account import DatasetAccount
    from auditor.datasets.dataset import Dataset, DatasetSpec
    from auditor.datasets.units import MAX_SKIP_REASONS, Unit, UnitStats, _count_skip
    from auditor.records.record import Skip

    ds = Dataset(DatasetSpec("messy", [str(train)], on_error="skip"))
    account = DatasetAccount(ds)
    units = [Unit(0, str(train), part_no=k, parts=2) for k in range(2)]
    for k, unit in enumerate(units):
        ustats = UnitStats(read=1)
        for i in range(k * 75, (k + 1) * 75):
            _count_skip(ustats, Skip(f"{train}:{i}", f"problem number {i}"))
        account.absorb(unit, ustats)
    assert len(ds.stats.skip_reasons) == MAX_SKIP_REASONS + 1
    assert ds.stats.skip_reasons["other reasons (beyond the first 100 kinds)"] == 50
    assert ds.stats.skipped == sum(ds.stats.skip_reasons.values()) == MAX_SKIP_REASONS + 50
