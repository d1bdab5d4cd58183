"""Shared test fixtures: the public releases in ../shared/data, and isolated output folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("AUDITOR_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_file(rel: str) -> Path:
    """Path of a file in ../shared/data, skipping the test (with the reason) when it is absent."""
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (../shared/data holds the public releases)")
    return path


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path, monkeypatch):
    """Keep every test's reports and indexes in its own temp folder."""
    monkeypatch.setenv("AUDITOR_REPORT_DIR", str(tmp_path / "reports"))
    monkeypatch.setenv("AUDITOR_INDEX_DIR", str(tmp_path / "indexes"))
