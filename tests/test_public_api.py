"""The public surface is pinned: adding or removing a name is a deliberate change to this list."""

import re
from pathlib import Path

import pytest

import auditor
from auditor.errors import AuditorError

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def test_public_names_are_pinned():
    assert sorted(auditor.__all__) == sorted(
        [
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
    )
    for name in auditor.__all__:
        assert hasattr(auditor, name), name


def test_every_public_error_is_one_catchable_family():
    errors = [getattr(auditor, n) for n in auditor.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, AuditorError) for e in errors)


def test_the_extension_points_the_docs_name_are_public():
    text = " ".join(ARCHITECTURE.read_text(encoding="utf-8").split())
    sentence = re.search(r"The extension points are exported by `auditor` itself.*?\.(?: |$)", text)
    assert sentence, "docs/architecture.md no longer names the extension points"
    named = set(re.findall(r"`([A-Z]\w+)`", sentence.group(0)))
    assert {"Index", "MethodConfig", "Adapter", "Engine", "FindingStore"} <= named
    assert named <= set(auditor.__all__)
    assert all(isinstance(getattr(auditor, n), type) for n in named)


def test_the_output_error_run_audit_raises_is_the_public_one(tmp_path):
    not_a_folder = tmp_path / "indexes"
    not_a_folder.write_text("a file where the index folder should be\n")
    config = auditor.AuditConfig(
        datasets={
            "test": auditor.DatasetSpec("test", ["webshop:0:20"], role="eval"),
            "train": auditor.DatasetSpec("train", ["webshop:20:40"], role="train"),
        },
        checks=[auditor.CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])],
        findings_store="memory",
        index_dir=str(not_a_folder),
    )
    with pytest.raises(auditor.OutputError) as caught:
        auditor.run_audit(config)
    assert caught.value.path == str(not_a_folder) and "not a folder" in caught.value.problem
