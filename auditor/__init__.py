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

from typing import TYPE_CHECKING

from ._lazy import lazy_names
from ._version import __version__
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

if TYPE_CHECKING:  # what mypy and editors see; at run time each name is imported when first used
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

#: public name -> the module defining it, imported on first use (PEP 562): ``import auditor`` loads only
#: the errors and the version, so a command that needs neither the pipeline nor numpy starts at once
_LAZY = {
    "Adapter": "auditor.adapters.base",
    "AuditConfig": "auditor.audit.config",
    "CheckSpec": "auditor.audit.config",
    "Dataset": "auditor.datasets.dataset",
    "DatasetSpec": "auditor.datasets.dataset",
    "Detector": "auditor.integrations.detector",
    "Engine": "auditor.engines.base",
    "Finding": "auditor.methods",
    "FindingStore": "auditor.store.findings",
    "Index": "auditor.methods",
    "MethodConfig": "auditor.methods",
    "Record": "auditor.records.record",
    "Report": "auditor.report",
    "Skip": "auditor.records.record",
    "load_manifest": "auditor.audit.manifest",
    "parse_manifest": "auditor.audit.manifest",
    "run_audit": "auditor.audit.run",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


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
