"""Shared test fixtures (isolated output folders); helpers that tests import are in ``helpers.py``."""

from __future__ import annotations

import signal

import pytest

# Tests send real Ctrl-Cs and check the handler the run restores: start as a shell starts a command in
# the foreground, with SIGINT at its default, also when the suite runs as a background job (a
# non-interactive shell's background job inherits SIGINT ignored, and Python then installs no handler:
# the Ctrl-C tests and lifecycle's doctest failed when `.ci/run` was started with `&`)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path, monkeypatch):
    """Keep every test's reports and indexes in its own temp folder."""
    monkeypatch.setenv("AUDITOR_REPORT_DIR", str(tmp_path / "reports"))
    monkeypatch.setenv("AUDITOR_INDEX_DIR", str(tmp_path / "indexes"))
