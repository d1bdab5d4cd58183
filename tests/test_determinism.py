"""Determinism (same inputs → byte-identical findings and reports apart from timings) and
interrupted runs (a scan killed midway leaves no half-written report or index; re-running works)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from events import Markers, live_processes, marked_cli, records_mark, wait_gone
from hostile import EVAL_ITEMS, REPO, report, run_cli, write_eval

from auditor.store import indexes as indexstore

TIMING_KEYS = (
    "started",
    "seconds",
    "mb_per_s",
    "records_per_s",
    "peak_rss_mb",
    "peak_worker_rss_mb",
    "encoding",
    "caller_cpu_s",
    "worker_cpu_s",
)


def _training_file(path, n: int, seed: int = 7) -> None:
    """Random word records, with every eval item copied (whole, or inside a longer record) many
    times: more matches per item than the report keeps, so tie-breaking is exercised."""
    rng = random.Random(seed)
    words = (
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
        "sigma tau upsilon phi chi psi omega"
    ).split()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            if i % 97 == 0:
                item = EVAL_ITEMS[(i // 97) % len(EVAL_ITEMS)]["text"]
                text = item if i % 2 else f"user says: {item} please"
            else:
                text = " ".join(rng.choice(words) for _ in range(20))
            f.write(json.dumps({"id": f"r{i}", "text": text}) + "\n")


def _strip_timings(doc: dict) -> dict:
    run = dict(doc["run"])
    for k in TIMING_KEYS:
        run.pop(k, None)
    run["scan"] = {k: v for k, v in run.get("scan", {}).items() if k in ("records", "chars")}
    return {**doc, "run": run}


def test_same_inputs_give_identical_findings_and_reports(tmp_path):
    ev = write_eval(tmp_path)
    train = tmp_path / "train.jsonl"
    _training_file(train, 3000)
    runs = []
    # different hash seeds, a fresh index, then a reused (loaded) index
    for i, (seed, idx) in enumerate([("1", "idx_a"), ("2", "idx_b"), ("3", "idx_b")]):
        out = tmp_path / f"r{i}"
        p = run_cli(
            "audit",
            "--eval",
            str(ev),
            "--eval",
            "webshop:0:200",
            "--train",
            str(train),
            "--train",
            "webshop:200:1500",
            "--report-dir",
            str(out),
            "--index-dir",
            str(tmp_path / idx),
            env={"PYTHONHASHSEED": seed},
        )
        assert p.returncode == 1, p.stderr
        runs.append(out)
    first = (runs[0] / "report.json").read_text(encoding="utf-8")
    doc = json.loads(first)
    assert doc["findings"] and doc["checks"][0]["contaminated_items"] >= 3
    findings = json.dumps(doc["findings"], sort_keys=True)
    for out in runs[1:]:
        other = report(out)
        assert json.dumps(other["findings"], sort_keys=True) == findings  # byte-identical findings
        assert _strip_timings(other) == _strip_timings(doc)

        def md(folder):
            return [
                ln
                for ln in (folder / "report.md").read_text(encoding="utf-8").splitlines()
                if not ln.startswith("auditor ")
            ]  # the line with start time and seconds

        assert md(out) == md(runs[0])


@pytest.mark.slow
def test_killed_scan_leaves_no_half_written_report_and_rerun_works(tmp_path):
    ev = write_eval(tmp_path)
    train = tmp_path / "big.jsonl"
    _training_file(train, 150_000)
    out, idx = tmp_path / "reports", tmp_path / "idx"
    args = [
        sys.executable,
        "-m",
        "auditor",
        "audit",
        "--eval",
        str(ev),
        "--train",
        str(train),
        "--report-dir",
        str(out),
        "--index-dir",
        str(idx),
    ]
    marks = Markers()
    proc = subprocess.Popen(
        marked_cli(*args[3:], fd=marks.fd),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=[marks.fd],
    )
    marks.started()
    try:  # a third of the scan of 150,000 records merged: the indexes are saved, the report not yet written
        marks.wait_for(records_mark(50_000), 240, "the scan did not get a third of the way")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
        marks.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "report.json").exists() and not (out / "report.md").exists()
    # whatever index folder exists is complete and verifies
    finals = [p for p in idx.iterdir() if not p.name.startswith(".")]
    assert finals
    for folder in finals:
        indexstore.read_index_folder(folder)
    # re-running works, reuses the index and finds the leaks
    p = run_cli(*args[3:], timeout=300)
    assert p.returncode == 1, p.stderr
    doc = report(out)
    assert doc["datasets"]["big"]["records"] == 150_000
    assert doc["checks"][0]["contaminated_items"] == 3
    assert any(f["eval_source"] == f"{ev}:1" for f in doc["findings"])


def _group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (from /proc; zombies count as gone)."""
    return [pid for pid, fields in live_processes() if int(fields[2]) == pgid]


def _start_scan(tmp_path, train, ev, i: int, marks: Markers, start: str = "auto") -> subprocess.Popen:
    """``auditor audit`` in its own process group (as a shell starts a command), two workers started
    by ``start`` (``--start-method``; auto forks them from the command's process), writing its marks
    (tests/events.py) to ``marks``."""
    args = [
        "audit",
        "--start-method",
        start,
        "--eval",
        str(ev),
        "--train",
        str(train),
        "--workers",
        "2",
        "--method",
        "exact",
        "--method",
        "ngram",
    ]
    args += ["--report-dir", str(tmp_path / f"reports{i}"), "--index-dir", str(tmp_path / "idx")]
    proc = subprocess.Popen(
        marked_cli(*args, fd=marks.fd),
        cwd=REPO,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # thread stacks on SIGABRT (_communicate_or_explain)
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
        pass_fds=[marks.fd],
    )
    marks.started()
    return proc


def _communicate_or_explain(proc: subprocess.Popen, timeout: float, moment: str) -> tuple[str, str]:
    """``proc``'s stdout and stderr once it ends and its pipes close; past ``timeout``, a failure that says why:
    the run's live processes (with their command lines) and, if the main process still runs, the
    stacks of its threads (``PYTHONFAULTHANDLER``, set by :func:`_start_scan`, prints them on SIGABRT).
    (The hang once seen here, a worker killed while writing its result, is fixed: tests/test_lifecycle.py.)"""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    members = []
    for pid in _group_members(proc.pid):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
        except OSError:
            cmd = "?"
        members.append(f"{pid}: {cmd}")
    alive = proc.poll() is None
    if alive:
        proc.send_signal(signal.SIGABRT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        err = "(stderr still open: a process of the run holds it)"
    pytest.fail(
        f"no exit {timeout:g} s after Ctrl-C ({moment}); main process {'still running' if alive else 'ended'}; "
        f"live processes of the run: {members}\nstderr:\n{err[-8000:]}"
    )


#: the moments a Ctrl-C comes, from the start of the parallel scan to deep inside it, and how the
#: workers start (the command forks them; the forkserver starts them for a process running threads)
MOMENTS = {
    "the forkserver runs (the workers start)": (lambda line: line == "forkserver", "forkserver"),
    "a worker runs": (lambda line: line == "worker", "auto"),
    "a worker runs (from the forkserver)": (lambda line: line == "worker", "forkserver"),
    "the first unit is merged": (records_mark(1), "auto"),
    "a third is scanned": (records_mark(50_000), "auto"),
    "two thirds are scanned": (records_mark(100_000), "forkserver"),
}


@pytest.fixture(scope="module")
def scan_inputs(tmp_path_factory):
    """An eval set and a 150,000-record (22 MB) training file: a parallel scan of several seconds."""
    folder = tmp_path_factory.mktemp("scan")
    train = folder / "big.jsonl"
    _training_file(train, 150_000)
    return write_eval(folder), train


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads process groups from /proc")


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("target", ["group", "main"])
def test_ctrl_c_mid_scan_exits_130_with_one_line(tmp_path, scan_inputs, target):
    """Ctrl-C as a terminal sends it (SIGINT to the whole process group: main process, forkserver,
    workers) or to the main process only, at moments from the start of the parallel scan (as the
    forkserver and workers start) to deep inside it: exit 130, exactly one line on stderr from all
    the processes together, no report, and no process of the run left behind."""
    ev, train = scan_inputs
    for i, (moment, (wanted, start)) in enumerate(MOMENTS.items()):
        marks = Markers()
        proc = _start_scan(tmp_path, train, ev, i, marks, start)
        try:
            marks.wait_for(wanted, 240, f"the run ended before {moment}")
            members = _group_members(proc.pid)
            if target == "group":
                os.killpg(proc.pid, signal.SIGINT)
            else:
                proc.send_signal(signal.SIGINT)
            out, err = _communicate_or_explain(proc, 60, moment)
            assert (proc.returncode, err.strip()) == (130, "auditor: interrupted; no report written"), (
                f"{moment}; marks: {marks.seen[-5:]}; stdout: {out[-2000:]}"
            )
            assert not (tmp_path / f"reports{i}").exists()
            wait_gone(members + _group_members(proc.pid), 10, f"processes of the run left behind ({moment})")
        finally:
            if _group_members(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.kill()
            proc.communicate()
            marks.close()


def test_ctrl_c_inside_a_string_exec_still_exits_130(tmp_path):
    """CPython marks a KeyboardInterrupt that ends a string ``exec`` (scipy runs one at import,
    reached while indexes are built) and, under ``python -m``, then exits by SIGINT (-2) however the
    interrupt was handled; the CLI clears that mark, so the status is 130 as documented."""
    (tmp_path / "kbi_cmd.py").write_text(
        "import click\nfrom auditor.cli._common import library_errors\n\n"
        "@click.command()\ndef cmd():\n    with library_errors():\n"
        "        exec('raise KeyboardInterrupt', {})\n\ncmd()\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    p = subprocess.run([sys.executable, "-m", "kbi_cmd"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert (p.returncode, p.stderr.strip()) == (130, "auditor: interrupted; no report written")


@needs_proc
@pytest.mark.parametrize("sig, start", [(signal.SIGKILL, "auto"), (signal.SIGTERM, "forkserver")])
def test_workers_die_with_a_killed_main_process(tmp_path, scan_inputs, sig, start):
    """SIGKILL or SIGTERM to the main process only, mid-scan: no worker outlives it (before, orphaned
    workers waited forever on their task queue, holding the caller's stdout), whether the workers
    were forked from it or started by the forkserver."""
    ev, train = scan_inputs
    marks = Markers()
    proc = _start_scan(tmp_path, train, ev, 0, marks, start)
    try:
        marks.wait_for(records_mark(1), 240, "the run ended before its first unit was merged")  # workers busy
        parents = {pid: int(fields[1]) for pid, fields in live_processes() if int(fields[2]) == proc.pid}
        members = [pid for pid in parents if pid != proc.pid]
        if start == "auto":  # the workers, forked from the main process, and nothing else
            assert members and all(parents[pid] == proc.pid for pid in members), parents
        else:
            assert len(members) >= 3, members  # resource tracker, forkserver and at least one worker
        proc.send_signal(sig)
        proc.wait(timeout=30)
        wait_gone(members, 15, "workers outlived their main process")
        assert _group_members(proc.pid) == []
    finally:
        if _group_members(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        marks.close()


def test_index_save_killed_at_random_moments_never_leaves_a_broken_index(tmp_path):
    """SIGKILL a process writing a large index at several moments: afterwards there is either no
    index folder or a complete one that verifies."""
    code = (
        "import os, pathlib, sys, numpy as np\nfrom auditor.store import indexes as indexstore\n"
        "def marked(fn, name):\n"
        "    def wrapped(*args, **kwargs):\n"
        "        print('before', name, flush=True)\n"
        "        result = fn(*args, **kwargs)\n"
        "        print('after', name, flush=True)\n"
        "        return result\n"
        "    return wrapped\n"
        "os.replace = marked(os.replace, 'replace')\n"
        "pathlib.Path.write_bytes = marked(pathlib.Path.write_bytes, 'write')\n"
        "pathlib.Path.write_text = marked(pathlib.Path.write_text, 'write')\n"
        "a = np.arange(8_000_000, dtype=np.uint64)\n"
        "while True:\n"
        "    indexstore.save_index(sys.argv[1], 'ngram', {'n': 13}, 'e' * 64, {'h': a, 'p': a}, {'ns': [13]})\n"
    )
    rng = random.Random(3)
    for attempt in range(6):
        root = tmp_path / f"root{attempt}"
        proc = subprocess.Popen([sys.executable, "-c", code, str(root)], cwd=REPO, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        # killed at the k-th step of the first two saves (each file written, each rename: before or after it;
        # the second save swaps the first's folder out), never after a guessed delay
        for _ in range(rng.randint(1, 18)):
            assert proc.stdout.readline().split()[:1] in (["before"], ["after"]), "the writer ended by itself"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        for folder in (p for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else ():
            arrays, meta = indexstore.read_index_folder(folder, "ngram", {"n": 13}, "e" * 64)
            assert arrays["h"].shape == (8_000_000,) and meta == {"ns": [13]}
