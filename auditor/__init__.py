"""auditor: tells whether a training set leaks an evaluation set, and proves it item by item.

The public surface is what this module exports (``__all__``, pinned by ``tests/test_public_api.py``);
everything else is internal and may change.

>>> from auditor import AuditConfig, CheckSpec, DatasetSpec, run_audit
>>> report = run_audit(AuditConfig(
...     datasets={"test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
...               "train": DatasetSpec("train", ["webshop:500:"], role="train")},
...     checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])],
...     findings_store="memory"))
>>> report.verdict, report.checks[0].contaminated_items
('fail', 41)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # the names below, for type checkers; at run time each is imported when first used
    from .adapters.base import Adapter
    from .audit.config import AuditConfig, CheckSpec
    from .audit.manifest import load_manifest, parse_manifest
    from .audit.run import run_audit
    from .datasets.dataset import Dataset, DatasetSpec
    from .engines.base import Engine
    from .integrations.detector import Detector
    from .methods import Finding, Index, MethodConfig
    from .records.record import Record, Skip
    from .report import Report
    from .store.findings import FindingStore

from .errors import (
    AuditorError,
    ConfigError,
    IndexFileError,
    InputError,
    ManifestError,
    MissingDependencyError,
    OutputError,
    RegistryError,
    ScanError,
)

#: public name → the module it lives in, imported when the name is first used (PEP 562), so that
#: ``import auditor.report`` (re-rendering a report) loads no detection method, engine or adapter
_LAZY = {
    "Adapter": ".adapters.base",
    "AuditConfig": ".audit.config",
    "CheckSpec": ".audit.config",
    "load_manifest": ".audit.manifest",
    "parse_manifest": ".audit.manifest",
    "run_audit": ".audit.run",
    "Dataset": ".datasets.dataset",
    "DatasetSpec": ".datasets.dataset",
    "Engine": ".engines.base",
    "Detector": ".integrations.detector",
    "Finding": ".methods",
    "Index": ".methods",
    "MethodConfig": ".methods",
    "Record": ".records.record",
    "Skip": ".records.record",
    "Report": ".report",
    "FindingStore": ".store.findings",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'auditor' has no attribute '{name}'")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Adapter",
    "AuditConfig",
    "AuditorError",
    "CheckSpec",
    "ConfigError",
    "Dataset",
    "DatasetSpec",
    "Detector",
    "Engine",
    "Finding",
    "FindingStore",
    "Index",
    "IndexFileError",
    "InputError",
    "ManifestError",
    "MethodConfig",
    "MissingDependencyError",
    "OutputError",
    "Record",
    "RegistryError",
    "Report",
    "ScanError",
    "Skip",
    "__version__",
    "load_manifest",
    "parse_manifest",
    "run_audit",
]
