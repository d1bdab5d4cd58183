"""Helpers the test modules import (``from helpers import shared_file``): where the repository and the
public releases in ../shared/data are, and a skip that names a missing release.

Fixtures live in ``conftest.py``; plain functions and constants live here, so no test imports conftest.
"""

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
