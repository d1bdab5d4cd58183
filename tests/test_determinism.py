"""Determinism (same inputs → byte-identical findings and reports apart from timings) and
interrupted runs (a scan killed midway leaves no half-written report or index; re-running works)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time

from hostile import EVAL_ITEMS, REPO, report, run_cli, write_eval

from auditor import indexstore

TIMING_KEYS = ("started", "seconds", "mb_per_s", "records_per_s", "peak_rss_mb", "peak_worker_rss_mb", "encoding")


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
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (idx.exists() and any(p.name.startswith("ngram-") for p in idx.iterdir())):
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the scan of 150,000 records
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
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


def test_ctrl_c_mid_scan_exits_130_with_one_line(tmp_path):
    ev = write_eval(tmp_path)
    train = tmp_path / "big.jsonl"
    _training_file(train, 150_000)
    out, idx = tmp_path / "reports", tmp_path / "idx"
    proc = subprocess.Popen(
        [
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
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (idx.exists() and any(p.name.startswith("ngram-") for p in idx.iterdir())):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip() == "auditor: interrupted; no report written"
    assert not out.exists() or not any(out.iterdir())


def test_index_save_killed_at_random_moments_never_leaves_a_broken_index(tmp_path):
    """SIGKILL a process writing a large index at several moments: afterwards there is either no
    index folder or a complete one that verifies."""
    code = (
        "import sys, numpy as np\nfrom auditor import indexstore\n"
        "a = np.arange(8_000_000, dtype=np.uint64)\n"
        "while True:\n"
        "    indexstore.save_index(sys.argv[1], 'ngram', {'n': 13}, 'e' * 64, {'h': a, 'p': a}, {'ns': [13]})\n"
    )
    rng = random.Random(3)
    for attempt in range(4):
        root = tmp_path / f"root{attempt}"
        proc = subprocess.Popen([sys.executable, "-c", code, str(root)], cwd=REPO)
        time.sleep(0.6 + rng.random() * 1.2)
        assert proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        for folder in (p for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else ():
            arrays, meta = indexstore.read_index_folder(folder, "ngram", {"n": 13}, "e" * 64)
            assert arrays["h"].shape == (8_000_000,) and meta == {"ns": [13]}
