"""Every docstring example in the package runs and holds."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import auditor

MODULES = ["auditor"] + sorted(
    m.name
    for m in pkgutil.walk_packages(auditor.__path__, "auditor.")
    if not m.name.endswith("__main__") and not m.name.startswith("auditor.data._")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
