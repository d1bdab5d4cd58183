"""The public surface is pinned: adding or removing a name is a deliberate change to this list."""

import auditor
from auditor.errors import AuditorError


def test_public_names_are_pinned():
    assert sorted(auditor.__all__) == sorted(
        [
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
    )
    for name in auditor.__all__:
        assert hasattr(auditor, name), name


def test_every_public_error_is_one_catchable_family():
    errors = [getattr(auditor, n) for n in auditor.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, AuditorError) for e in errors)
