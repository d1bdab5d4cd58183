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

from ._version import __version__
from .audit.manifest import load_manifest, parse_manifest
from .audit.run import AuditConfig, CheckSpec, run_audit
from .datasets.dataset import Dataset, DatasetSpec
from .errors import (
    AuditorError,
    ConfigError,
    IndexFileError,
    InputError,
    ManifestError,
    MissingDependencyError,
    RegistryError,
    ScanError,
)
from .methods import Finding, Index
from .records.record import Record, Skip
from .report import Report

__all__ = [
    "AuditConfig",
    "AuditorError",
    "CheckSpec",
    "ConfigError",
    "Dataset",
    "DatasetSpec",
    "Finding",
    "Index",
    "IndexFileError",
    "InputError",
    "ManifestError",
    "MissingDependencyError",
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
