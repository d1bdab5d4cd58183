"""Split manifests (``split.toml``): datasets, checks and method parameters in one TOML file.

::

    report_dir = "reports/toolmvr"        # optional; relative to the manifest

    [datasets.stb]
    path = "stabletoolbench"              # a registry name, a file, a glob, or a list of them
    role = "eval"

    [datasets.toolbench_v]
    path = "../shared/data/tool-mvr/data/training_data/selected_Toolbench_V.json"
    role = "train"                        # format, split, text_field, id_field, on_error optional

    [methods.ngram]                       # optional per-method parameters
    threshold = 0.5

    [[checks]]
    name = "toolmvr"
    train = ["toolbench_v"]
    eval = ["stb"]
    methods = ["exact", "ngram"]          # default: every available method
    max_contaminated = 0                  # default 0

Unknown keys anywhere are an error (:class:`~auditor.errors.ManifestError`), not ignored.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .audit import AuditConfig, CheckSpec
from .datasets import DatasetSpec
from .errors import AuditorError, ManifestError

DATASET_KEYS = {"path", "role", "format", "split", "text_field", "id_field", "on_error"}
CHECK_KEYS = {"name", "train", "eval", "methods", "max_contaminated"}
TOP_KEYS = {"datasets", "checks", "methods", "report_dir", "index_dir", "engine", "batch_size", "workers",
            "ray_address", "findings_store", "findings_db"}


def _strs(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ManifestError(f"{where}: expected a string or a list of strings")


def _unknown(keys, allowed: set[str], where: str) -> None:
    extra = sorted(set(keys) - allowed)
    if extra:
        raise ManifestError(f"{where}: unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} "
                            f"(allowed: {', '.join(sorted(allowed))})")


def load_manifest(path: str | Path) -> AuditConfig:
    """Parse and validate a manifest. Raises ManifestError with the file and the problem."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such manifest") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path}: invalid TOML: {e}") from None
    try:
        return parse_manifest(doc, base_dir=path.parent, name=str(path))
    except ManifestError:
        raise
    except AuditorError as e:
        raise ManifestError(f"{path}: {e}") from None


def parse_manifest(doc: dict[str, Any], base_dir: str | Path = ".", name: str = "manifest") -> AuditConfig:
    _unknown(doc, TOP_KEYS, name)
    base = str(base_dir)
    datasets: dict[str, DatasetSpec] = {}
    raw_ds = doc.get("datasets") or {}
    if not isinstance(raw_ds, dict) or not raw_ds:
        raise ManifestError(f"{name}: no [datasets.NAME] table")
    for ds_name, entry in raw_ds.items():
        where = f"{name}: [datasets.{ds_name}]"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where}: expected a table")
        _unknown(entry, DATASET_KEYS, where)
        if "path" not in entry:
            raise ManifestError(f"{where}: missing 'path'")
        if "role" not in entry:
            raise ManifestError(f"{where}: missing 'role' (train or eval)")
        opts = {k: entry[k] for k in ("format", "split", "text_field", "id_field", "on_error") if k in entry}
        for k, v in opts.items():
            if not isinstance(v, str):
                raise ManifestError(f"{where}: '{k}' must be a string")
        try:
            datasets[ds_name] = DatasetSpec(name=ds_name, paths=_strs(entry["path"], f"{where} path"),
                                            role=entry["role"], base_dir=base, **opts)
        except AuditorError as e:
            raise ManifestError(f"{where}: {e}") from None
    checks = []
    raw_checks = doc.get("checks") or []
    if not isinstance(raw_checks, list) or not raw_checks:
        raise ManifestError(f"{name}: no [[checks]] entry")
    for i, entry in enumerate(raw_checks):
        where = f"{name}: [[checks]] #{i + 1}"
        _unknown(entry, CHECK_KEYS, where)
        for key in ("name", "train", "eval"):
            if key not in entry:
                raise ManifestError(f"{where}: missing '{key}'")
        mc = entry.get("max_contaminated", 0)
        if not isinstance(mc, (int, float)) or isinstance(mc, bool) or mc < 0:
            raise ManifestError(f"{where}: max_contaminated must be a non-negative number")
        checks.append(CheckSpec(name=str(entry["name"]), train=_strs(entry["train"], f"{where} train"),
                                eval=_strs(entry["eval"], f"{where} eval"),
                                methods=_strs(entry["methods"], f"{where} methods") if "methods" in entry else None,
                                max_contaminated=mc))
    method_params = doc.get("methods") or {}
    if not isinstance(method_params, dict) or not all(isinstance(v, dict) for v in method_params.values()):
        raise ManifestError(f"{name}: [methods.NAME] entries must be tables of parameters")
    config = AuditConfig(datasets=datasets, checks=checks, method_params=method_params)
    for key, kind in (("engine", str), ("batch_size", int), ("workers", int), ("ray_address", str),
                      ("findings_store", str)):
        if key in doc:
            if not isinstance(doc[key], kind) or isinstance(doc[key], bool):
                raise ManifestError(f"{name}: '{key}' must be a{'n integer' if kind is int else ' string'}")
            setattr(config, key, doc[key])
    for key in ("report_dir", "index_dir", "findings_db"):
        if key in doc:
            setattr(config, key, str(Path(base) / doc[key]))
    try:
        config.validate()
        from . import methods

        for m, params in method_params.items():
            methods.create(m, params)
    except AuditorError as e:
        raise ManifestError(f"{name}: {e}") from None
    return config
