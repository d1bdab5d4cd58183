"""Split manifests (``split.toml``): datasets, checks and method parameters in one TOML file.

::

    report_dir = "reports/toolmvr"        # optional; relative to the manifest
    write_clean = "clean/toolmvr"         # optional: training sets without the records behind findings

    [datasets.stb]
    path = "stabletoolbench"              # a registry name, a file, a glob, or a list of them
    role = "eval"

    [datasets.toolbench_v]
    path = "data/selected_Toolbench_V.json"  # inside the manifest's folder, or an absolute path
    role = "train"                        # format, split, text_field, id_field, on_error,
                                          # max_record_chars optional

    [methods.ngram]                       # optional per-method parameters
    threshold = 0.5

    [[checks]]
    name = "toolmvr"
    train = ["toolbench_v"]
    eval = ["stb"]
    methods = ["exact", "ngram"]          # default: every available method but `embedding` (runs when named)
    max_contaminated = 0                  # default 0

    [[provenance]]                        # optional (see auditor.audit.provenance); a manifest may have
    name = "toolmvr-purity"               # only provenance entries and no checks
    derived = ["toolbench_v"]
    sources = ["stb"]                     # give stb `split_label = "test"` in its [datasets] table
    id_pattern = 'G(?P<group>\\d)@(?P<id>\\d+)'
    held_out = ["test"]                   # default; max_held_out = 0 by default

Unknown keys anywhere are an error (:class:`~auditor.errors.ManifestError`), not ignored. Relative
paths (data, ``report_dir``, ``index_dir``) must stay inside the manifest's folder, symlinks
followed; an absolute path is the explicit way to point elsewhere. Bundled names are not paths.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..datasets.dataset import Dataset, DatasetSpec
from ..errors import AuditorError, ManifestError
from .run import AuditConfig, CheckSpec

DATASET_KEYS = {
    "path",
    "role",
    "format",
    "split",
    "text_field",
    "id_field",
    "messages",
    "calls_field",
    "on_error",
    "split_label",
    "max_record_chars",
    "allow_empty",
}
CHECK_KEYS = {"name", "train", "eval", "methods", "max_contaminated"}
PROVENANCE_KEYS = {"name", "derived", "sources", "id_pattern", "methods", "held_out", "max_held_out"}
TOP_KEYS = {
    "datasets",
    "checks",
    "methods",
    "report_dir",
    "index_dir",
    "engine",
    "batch_size",
    "provenance",
    "write_clean",
    "workers",
    "ray_address",
    "split_bytes",
    "findings_store",
    "findings_db",
    "fail_on",
}


def _strs(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ManifestError(f"{where}: expected a string or a list of strings")


def _unknown(keys, allowed: set[str], where: str) -> None:
    extra = sorted(set(keys) - allowed)
    if extra:
        raise ManifestError(
            f"{where}: unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def _confined_dir(value: str, base: str, where: str) -> str:
    """An output folder: absolute as given, or relative to ``base`` and not leading out of it."""
    if os.path.isabs(value):
        return value
    full = os.path.join(base, value)
    root = os.path.realpath(base)
    if os.path.commonpath([root, os.path.realpath(full)]) != root:
        raise ManifestError(
            f"{where}: '{value}' leads outside the manifest's folder {root}; give an absolute path to write elsewhere"
        )
    return full


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
    except RecursionError:
        raise ManifestError(f"{path}: invalid TOML: nested too deeply to parse") from None
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
        opts = {
            k: entry[k]
            for k in ("format", "split", "text_field", "id_field", "messages", "calls_field", "on_error", "split_label")
            if k in entry
        }
        for k, v in opts.items():
            if not isinstance(v, str):
                raise ManifestError(f"{where}: '{k}' must be a string")
        if "allow_empty" in entry:
            if not isinstance(entry["allow_empty"], bool):
                raise ManifestError(f"{where}: 'allow_empty' must be true or false")
            opts["allow_empty"] = entry["allow_empty"]
        if "max_record_chars" in entry:
            mrc = entry["max_record_chars"]
            if isinstance(mrc, bool) or not isinstance(mrc, int) or mrc < 1:
                raise ManifestError(f"{where}: 'max_record_chars' must be a positive integer")
            opts["max_record_chars"] = mrc
        try:
            datasets[ds_name] = DatasetSpec(
                name=ds_name,
                paths=_strs(entry["path"], f"{where} path"),
                role=entry["role"],
                base_dir=base,
                confine_to=base,
                **opts,
            )
            Dataset(datasets[ds_name])  # resolves files and globs now: a missing file is a manifest error
        except AuditorError as e:
            raise ManifestError(f"{where}: {e}") from None
    checks = []
    raw_checks = doc.get("checks") or []
    provenance = _provenance(doc.get("provenance"), name)
    if not isinstance(raw_checks, list) or (not raw_checks and not provenance):
        raise ManifestError(f"{name}: no [[checks]] (or [[provenance]]) entry")
    for i, entry in enumerate(raw_checks):
        where = f"{name}: [[checks]] #{i + 1}"
        _unknown(entry, CHECK_KEYS, where)
        for key in ("name", "train", "eval"):
            if key not in entry:
                raise ManifestError(f"{where}: missing '{key}'")
        mc = entry.get("max_contaminated", 0)
        if not isinstance(mc, (int, float)) or isinstance(mc, bool) or mc < 0:
            raise ManifestError(f"{where}: max_contaminated must be a non-negative number")
        checks.append(
            CheckSpec(
                name=str(entry["name"]),
                train=_strs(entry["train"], f"{where} train"),
                eval=_strs(entry["eval"], f"{where} eval"),
                methods=_strs(entry["methods"], f"{where} methods") if "methods" in entry else None,
                max_contaminated=mc,
            )
        )
    method_params = doc.get("methods") or {}
    if not isinstance(method_params, dict) or not all(isinstance(v, dict) for v in method_params.values()):
        raise ManifestError(f"{name}: [methods.NAME] entries must be tables of parameters")
    config = AuditConfig(datasets=datasets, checks=checks, method_params=method_params, provenance=provenance)
    for key, kind in (
        ("engine", str),
        ("batch_size", int),
        ("workers", int),
        ("ray_address", str),
        ("split_bytes", int),
        ("findings_store", str),
        ("fail_on", str),
    ):
        if key in doc:
            if not isinstance(doc[key], kind) or isinstance(doc[key], bool):
                raise ManifestError(f"{name}: '{key}' must be a{'n integer' if kind is int else ' string'}")
            setattr(config, key, doc[key])
    for key in ("report_dir", "index_dir", "write_clean", "findings_db"):
        if key in doc:
            if not isinstance(doc[key], str):
                raise ManifestError(f"{name}: '{key}' must be a string (a folder)")
            setattr(config, key, _confined_dir(doc[key], base, f"{name}: '{key}'"))
    try:
        config.validate()
        from .. import methods

        for m, params in method_params.items():
            methods.create(m, params)
    except AuditorError as e:
        raise ManifestError(f"{name}: {e}") from None
    return config


def _provenance(raw: Any, name: str) -> list:
    """``[[provenance]]`` entries → ProvenanceSpec list (see :mod:`auditor.audit.provenance`)."""
    from .provenance import ProvenanceSpec

    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError(f"{name}: 'provenance' must be [[provenance]] tables")
    out = []
    for i, entry in enumerate(raw):
        where = f"{name}: [[provenance]] #{i + 1}"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where}: expected a table")
        _unknown(entry, PROVENANCE_KEYS, where)
        for key in ("name", "derived", "sources"):
            if key not in entry:
                raise ManifestError(f"{where}: missing '{key}'")
        pattern = entry.get("id_pattern")
        if pattern is not None and not isinstance(pattern, str):
            raise ManifestError(f"{where}: 'id_pattern' must be a string")
        kw: dict[str, Any] = {"max_held_out": entry.get("max_held_out", 0)}
        if "methods" in entry:
            kw["methods"] = _strs(entry["methods"], f"{where} methods")
        if "held_out" in entry:
            kw["held_out"] = _strs(entry["held_out"], f"{where} held_out")
        try:
            out.append(
                ProvenanceSpec(
                    name=str(entry["name"]),
                    derived=_strs(entry["derived"], f"{where} derived"),
                    sources=_strs(entry["sources"], f"{where} sources"),
                    id_pattern=pattern,
                    **kw,
                )
            )
        except AuditorError as e:
            raise ManifestError(f"{where}: {e}") from None
    return out
