"""A command whose standard output is closed by its reader (``auditor review R --list | head``) ends
quietly with 141 (128 + SIGPIPE, as a shell tool killed by the signal), never "Error: Broken pipe"."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import REPO, loadable_golden_report


@pytest.fixture(scope="module")
def report_json(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipe") / "report.json"
    path.write_text(loadable_golden_report("quickstart"), encoding="utf-8")
    return str(path)


def _closed_stdout(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """Run ``auditor ARGV`` writing into a pipe whose reading end is already closed: the earliest a
    reader can close it, so the first write fails (no race with how much the pipe buffers)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "auditor", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=300,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["audit", "--help"],
        ["formats"],
        ["methods"],
        ["registry"],
        ["inspect", "webshop:0:3"],
        ["review", "{report}", "--list"],
        ["audit", "--eval", "webshop:0:40", "--train", "webshop:40:80", "--method", "exact"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_closed_stdout_ends_the_command_quietly(argv, report_json, tmp_path):
    done = _closed_stdout([a.replace("{report}", report_json) for a in argv], tmp_path)
    assert (done.returncode, done.stderr) == (141, ""), done.stderr
