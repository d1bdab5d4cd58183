"""Shared test fixtures (isolated output folders); helpers that tests import are in ``helpers.py``."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path, monkeypatch):
    """Keep every test's reports and indexes in its own temp folder."""
    monkeypatch.setenv("AUDITOR_REPORT_DIR", str(tmp_path / "reports"))
    monkeypatch.setenv("AUDITOR_INDEX_DIR", str(tmp_path / "indexes"))
