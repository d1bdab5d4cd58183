"""Reports that never clobber and faults that end in one line: report folders written as one set
(killed at random moments: never a mix of two runs), one folder per ``audit`` run without
``--report-dir``, and every file-system / recursion / memory fault reproduced at reduced size ends
in one line on stderr and exit 2 (never a traceback, never exit 1, which reads as "contaminated")."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from events import children, wait_any_gone
from hostile import REPO, run_cli, write_eval

from auditor.cli import main
from auditor.io.ledger import LEDGER
from auditor.report.publish import SETS, publish
from auditor.store import indexes as indexstore

runner = CliRunner()
SMALL = ["--eval", "webshop:0:200", "--train", "webshop:200:1200", "--method", "exact"]


def _one_error_line(p) -> str:
    """The error of a subprocess run: exit 2 and exactly one line, with no traceback."""
    err = p.stderr.strip()
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and len(err.splitlines()) == 1, p.stderr[-2000:]
    return err


# -- one folder per run, exactly the files it names -------------------------------------------------


def test_two_audits_without_report_dir_leave_two_reports(tmp_path):
    reports = tmp_path / "reports"  # $AUDITOR_REPORT_DIR (conftest)
    printed = []
    for _ in range(2):
        r = runner.invoke(main, ["audit", *SMALL])
        assert r.exit_code == 1, r.output
        line = next(ln for ln in r.output.splitlines() if ln.startswith("report: "))
        printed.append([Path(p) for p in line.removeprefix("report: ").split(", ")])
    folders = sorted(reports.iterdir())
    assert len(folders) == 2 and all(re.fullmatch(r"audit-\d{8}-\d{6}-[0-9a-f]{6}(-2)?", f.name) for f in folders)
    for paths in printed:  # the printed list is exactly what is in the run's own folder
        folder = paths[0].parent
        assert sorted(p.name for p in paths) == sorted(SETS["report"])
        assert sorted(os.listdir(folder)) == sorted([*SETS["report"], LEDGER])  # and the ledger of them
        assert json.loads((folder / "report.json").read_text(encoding="utf-8"))["verdict"] == "fail"
    assert printed[0][0].parent != printed[1][0].parent


def test_a_folder_holding_other_files_is_refused_before_the_audit(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    r = runner.invoke(main, ["audit", *SMALL, "--report-dir", str(out)])
    assert r.exit_code == 2 and "notes.txt" in r.output and "not an auditor report" in r.output
    assert os.listdir(out) == ["notes.txt"] and (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_existing_file_as_report_dir_is_one_line_before_any_work(tmp_path):
    target = tmp_path / "afile"
    target.write_text("x", encoding="utf-8")
    p = run_cli("audit", *SMALL, "--report-dir", str(target))
    assert "is a file, not a folder" in _one_error_line(p)
    p = run_cli("audit", *SMALL, "--index-dir", str(target), "--report-dir", str(tmp_path / "r"))
    assert "is a file, not a folder (give a folder for the indexes)" in _one_error_line(p)
    assert target.read_text(encoding="utf-8") == "x" and not (tmp_path / "r").exists()


# -- one set, whatever the moment of a kill ------------------------------------------------------------

_WRITER = """
import os, sys
from auditor.report import Report
from auditor.report.publish import publish


def marked(fn, name):  # a line before and after each step of a write: the moments the test kills at
    def wrapped(*args, **kwargs):
        print("before", name, flush=True)
        result = fn(*args, **kwargs)
        print("after", name, flush=True)
        return result

    return wrapped


os.fsync, os.rename, os.link = marked(os.fsync, "fsync"), marked(os.rename, "rename"), marked(os.link, "link")
out = sys.argv[1]
base = Report.load(sys.argv[2])
publish(out, {"provenance.json": "other set"})
i = 0
while True:
    i += 1
    base.checks[0].name = f"run{i}"
    base.write(out)
    print("wrote", i, flush=True)
"""


@pytest.mark.slow
def test_kill_during_report_write_never_leaves_a_mixed_set(tmp_path):
    """SIGKILL a process rewriting a report folder at 12 random moments (before or after one of the
    steps of its first writes: each file's fsync, each rename): the folder always holds one run's four
    files (each names the same run), the other set in it is untouched, and the next write removes what
    the killed ones left."""
    r = runner.invoke(main, ["audit", *SMALL, "--report-dir", str(tmp_path / "seed")])
    assert r.exit_code == 1, r.output
    out = tmp_path / "rep"
    rng = random.Random(12)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for attempt in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(out), str(tmp_path / "seed" / "report.json")],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        written = 0  # report sets this writer has put in place before the kill
        for _ in range(rng.randint(1, 60)):
            line = proc.stdout.readline().split()
            assert line, "the writer ended by itself"
            written += line[0] == "wrote"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        if not out.exists():
            assert not written and attempt == 0  # killed before the first set was in place: no folder at all
            continue
        names = sorted(os.listdir(out))
        if names == ["provenance.json"]:
            assert not written  # killed before this writer's first report set was in place
            continue
        assert names == sorted([*SETS["report"], "provenance.json", LEDGER]), (attempt, names)
        runs = {n: set(re.findall(r"run\d+", (out / n).read_text(encoding="utf-8"))) for n in SETS["report"]}
        assert len({frozenset(v) for v in runs.values()}) == 1 and len(runs["report.json"]) == 1, (attempt, runs)
        assert (out / "provenance.json").read_text(encoding="utf-8") == "other set"
    publish(out, {"provenance.md": "next run"})
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".rep.")]  # leftovers removed


def test_leftovers_of_killed_runs_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "r"
    publish(out, {"report.json": "{}"})
    (tmp_path / ".r.tmp-dead0001").mkdir()
    (tmp_path / ".r.tmp-dead0001" / "report.json").write_text("half", encoding="utf-8")
    (out / ".report.html.k1l2m3.tmp").write_text("half", encoding="utf-8")  # a killed `auditor report`
    r = runner.invoke(main, ["audit", *SMALL, "--report-dir", str(out)])
    assert r.exit_code == 1, r.output
    assert sorted(os.listdir(tmp_path)) == ["r"] and sorted(os.listdir(out)) == sorted([*SETS["report"], LEDGER])


# -- faults: one line, exit 2 ----------------------------------------------------------------------------


def test_file_size_limit_while_writing_the_report_is_one_line(tmp_path):
    """``ulimit -f`` (RLIMIT_FSIZE) below the report's size: EFBIG, named, exit 2; no partial folder."""
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        'findings_store = "memory"\nreport_dir = "rep"\n'
        '[datasets.test]\npath = "webshop:0:500"\nrole = "eval"\n'
        '[datasets.train]\npath = "webshop:500:"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))

    p = run_cli("verify", str(manifest), preexec_fn=limit)
    assert "ulimit -f" in _one_error_line(p)
    assert not (tmp_path / "rep").exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".rep")]


def test_full_disk_while_writing_clean_data_keeps_the_report(tmp_path):
    """The report is written before the cleaned data: a write failure there (RLIMIT_FSIZE between the
    report's files and the 0.9 MB cleaned file) ends in one line naming the report, which is complete."""
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        'findings_store = "memory"\nreport_dir = "rep"\nwrite_clean = "clean"\n'
        '[datasets.test]\npath = "webshop:0:500"\nrole = "eval"\n'
        '[datasets.train]\npath = "webshop:500:"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))

    p = run_cli("verify", str(manifest), preexec_fn=limit)
    err = _one_error_line(p)
    assert "writing the cleaned data failed" in err and "ulimit -f" in err and "report.json" in err
    doc = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "fail" and doc["checks"][0]["contaminated_items"] > 0
    assert sorted(os.listdir(tmp_path / "rep")) == sorted([*SETS["report"], LEDGER])


def test_deeply_nested_toml_is_one_line(tmp_path):
    manifest = tmp_path / "deep.toml"
    manifest.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    p = run_cli("verify", str(manifest))
    assert "nested too deeply" in _one_error_line(p)


@pytest.mark.parametrize(
    "doc, problem",
    [
        ({"verdict": "pass", "checks": [1], "datasets": {}, "findings": []}, "'checks' must hold objects"),
        ({"verdict": "pass", "checks": [], "datasets": [], "findings": []}, "'datasets' is list"),
        ({"verdict": "pass", "checks": [{}], "datasets": {}, "findings": []}, "not a valid auditor report"),
        ([1, 2], "missing verdict"),
    ],
)
def test_mangled_report_given_to_report_is_one_line(tmp_path, doc, problem):
    src = tmp_path / "report.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    for fmt in ("html", "md", "junit"):
        p = run_cli("report", str(src), "--format", fmt)
        assert problem in _one_error_line(p), fmt


def test_ray_client_address_without_ray_client_is_one_line_before_any_work():
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    if __import__("importlib").util.find_spec("grpc") is not None:
        pytest.skip("ray[client] is installed here: a ray:// address is usable")
    p = run_cli("audit", *SMALL, "--engine", "ray", "--ray-address", "ray://127.0.0.1:10001")
    assert "pip install 'ray[client]'" in _one_error_line(p)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_ctrl_c_while_ray_shuts_down_at_exit_keeps_the_status_without_a_traceback(tmp_path):
    """After the report is written the process exits, and the local Ray the engine started is stopped
    at exit (1-2 s): a Ctrl-C then ended in a traceback from Ray's exit handler (and status 1); the
    run is over, so it is ignored and the status is the verdict's."""
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    hits = 0
    for i in range(3):
        cmd = [sys.executable, "-m", "auditor", "audit", *SMALL, "--engine", "ray", "--workers", "2"]
        proc = subprocess.Popen(
            [*cmd, "--report-dir", str(tmp_path / f"r{i}")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("report:"):
                break
        # the processes of the local Ray the engine started (GCS, raylet ...): the first one to end marks
        # the shutdown at exit, past the CLI's own return
        ray_processes = children(proc.pid)
        assert ray_processes, "no local Ray was started"
        first = wait_any_gone([*ray_processes, proc.pid], 60)
        if first not in (None, proc.pid) and proc.poll() is None:
            hits += 1
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 1) and "Traceback" not in err, (proc.returncode, lines, err[-2000:])
    assert hits, "every run had exited before the Ctrl-C"


def test_resigned_index_array_with_a_huge_shape_is_refused_before_loading(tmp_path):
    """An index array whose header claims 10**12 elements, checksums recomputed: an IndexFileError
    (one line, exit 2), not numpy allocating terabytes."""
    ev = write_eval(tmp_path)
    idx = tmp_path / "idx"
    args = ["audit", "--eval", str(ev), "--train", str(ev), "--method", "ngram", "--index-dir", str(idx)]
    p = run_cli(*args, "--report-dir", str(tmp_path / "r1"))
    assert p.returncode == 1, p.stderr
    folder = next(f for f in idx.iterdir() if not f.name.startswith("."))
    doc = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    name, entry = next(iter(doc["arrays"].items()))
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<u8", "fortran_order": False, "shape": (10**12,)})
    data = buf.getvalue() + b"\0" * 64
    (folder / entry["file"]).write_bytes(data)
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    doc["checksum"] = indexstore.doc_checksum(doc)  # re-signed, as an attacker would
    (folder / "index.json").write_text(json.dumps(doc), encoding="utf-8")
    p = run_cli(*args, "--report-dir", str(tmp_path / "r2"))
    assert "does not match the file's" in _one_error_line(p)


def test_negative_max_contaminated_is_rejected(tmp_path):
    p = run_cli("audit", *SMALL, "--max-contaminated", "-1")
    assert p.returncode == 2 and "-1" in p.stderr and "Traceback" not in p.stderr


def test_a_check_name_with_a_newline_cannot_forge_a_summary_line(tmp_path):
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        'findings_store = "memory"\n[datasets.test]\npath = "webshop:0:200"\nrole = "eval"\n'
        '[datasets.train]\npath = "webshop:200:1200"\nrole = "train"\n'
        '[[checks]]\nname = "c\\nauditor: PASS \\u2014 c: pass (0/200 eval items contaminated)\\r\\u001b[2K"\n'
        'train = ["train"]\neval = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )
    r = runner.invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r")])
    assert r.exit_code == 1, r.output
    summary = [ln for ln in r.stdout.splitlines() if ln.startswith("auditor:")]
    assert len(summary) == 1 and summary[0].startswith("auditor: FAIL")
    assert "\\nauditor: PASS" in summary[0] and "\r" not in r.stdout and "\x1b" not in r.stdout


def test_killed_runs_index_and_findings_temp_folders_are_removed_by_the_next_run(tmp_path, monkeypatch):
    root = tmp_path / "idx"
    arrays = {"h": np.arange(10, dtype=np.uint64)}
    final = indexstore.save_index(root, "ngram", {"n": 13}, "e" * 64, arrays, {})
    (root / f".{final.name}.k1ll3d").mkdir()  # a save killed mid-write
    (root / f".{final.name}.old.k1ll3d").mkdir()  # a save killed mid-swap
    (root / ".keep").mkdir()  # not ours: untouched
    indexstore.save_index(root, "ngram", {"n": 13}, "e" * 64, arrays, {})
    assert sorted(os.listdir(root)) == [".keep", final.name]

    import tempfile

    from auditor.store.findings_db import DuckDBFindingStore

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f"auditor-findings-{dead.pid}-abc").mkdir()  # the database folder of a killed run
    (tmp_path / f"auditor-findings-{os.getpid()}-live").mkdir()  # a live run's
    store = DuckDBFindingStore()
    store.close()
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith("auditor-findings-")) == [
        f"auditor-findings-{os.getpid()}-live"
    ]


# -- Ctrl-C once the report is written ------------------------------------------------------------


def test_ctrl_c_after_the_report_is_written_keeps_the_verdicts_status(tmp_path, monkeypatch):
    """A real SIGINT as the exit status is chosen (the report is on disk): ignored; the exit status is
    the verdict's and nothing says "no report written"."""
    import auditor.cli.run as cli_run

    real = cli_run.exit_for

    def interrupted(verdict):
        os.kill(os.getpid(), signal.SIGINT)
        return real(verdict)

    monkeypatch.setattr(cli_run, "exit_for", interrupted)
    r = runner.invoke(main, ["audit", *SMALL, "--report-dir", str(tmp_path / "rep")])
    assert r.exit_code == 1, r.output  # FAIL: webshop 200:1200 repeats goals of 0:200
    assert "interrupted" not in r.output and "report:" in r.output
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored for the caller


def test_ctrl_c_while_writing_clean_data_names_the_written_report(tmp_path, monkeypatch):
    import auditor.audit.run as audit_run

    real = audit_run.write_clean

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(audit_run, "write_clean", interrupted)
    r = runner.invoke(
        main, ["audit", *SMALL, "--report-dir", str(tmp_path / "rep"), "--write-clean", str(tmp_path / "clean")]
    )
    assert r.exit_code == 130
    assert "interrupted while writing the cleaned data" in r.output and "report.json" in r.output
    assert json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))["verdict"] == "fail"


def test_a_clean_ray_run_prints_no_warning(tmp_path):
    """Ray's local cluster announces its default token authentication with a WARNING on every run:
    a first-time user sees only the auditor's two lines (the authentication itself is unchanged)."""
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    # Ray's default mode (it warns then); a Ray started earlier in this process may have set the variable
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    args = ["audit", *SMALL, "--engine", "ray", "--workers", "1", "--report-dir", str(tmp_path / "r")]
    p = subprocess.run(
        [sys.executable, "-m", "auditor", *args], cwd=REPO, capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 1, p.stderr[-2000:]
    assert p.stderr == "" and p.stdout.startswith("auditor: FAIL")
