"""Split manifests (``split.toml``): datasets, checks and method parameters in one TOML file.

::

    report_dir = "reports/toolmvr"        # optional; relative to the manifest
    write_clean = "clean/toolmvr"         # optional: training sets without the records behind conclusive findings

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

    [[provenance]]                        # optional (see auditor.audit.attribution); a manifest may have
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

import dataclasses
import os
import sys
import typing
from pathlib import Path
from typing import Any, cast

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .. import engines, methods
from ..datasets.dataset import Dataset, DatasetSpec
from ..errors import AuditorError, ManifestError
from ..store import findings
from .attribution import ProvenanceSpec
from .config import AuditConfig, CheckSpec
from .decisions import default_path as default_decisions


def manifest_keys(cls: type) -> dict[str, dataclasses.Field]:
    """Manifest key → field of dataclass ``cls``: every field, under the key its ``manifest``
    metadata names (the field's own name by default; None: not a manifest key).

    >>> sorted(manifest_keys(CheckSpec))
    ['eval', 'max_contaminated', 'methods', 'name', 'train']
    >>> manifest_keys(DatasetSpec)["path"].name
    'paths'
    """
    out = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("group"):  # AuditConfig's option groups: their fields are top-level keys
            out.update(manifest_keys(cast(type, f.default_factory)))
            continue
        key = f.metadata.get("manifest", f.name)
        if key is not None:
            out[key] = f
    return out


DATASET_KEYS = set(manifest_keys(DatasetSpec))
CHECK_KEYS = set(manifest_keys(CheckSpec))
PROVENANCE_KEYS = set(manifest_keys(ProvenanceSpec))
TOP_KEYS = set(manifest_keys(AuditConfig))
#: the shapes of the scalar keys a manifest gives as they are (the other keys are tables or lists)
_SCALARS = {str: "string", str | None: "string", int: "integer", int | None: "integer", bool: "boolean"}
_TYPES = {"string": str, "integer": int, "boolean": bool}


def registered_options() -> dict[str, tuple[str, str, dataclasses.Field, Any]]:
    """Manifest key → (the AuditConfig field it goes to, engine or store, option field, its type) for
    the options every registered engine and finding store declares in its nested ``Config`` (a
    field's ``manifest`` metadata names the key, its own name by default).

    >>> target, plugin, opt, _ = registered_options()["ray_address"]
    >>> target, plugin, opt.name
    ('engine_options', 'ray', 'address')
    >>> registered_options()["findings_db"][:2]
    ('store_options', 'duckdb')
    """
    configs: list[tuple[str, str, type[Any]]] = [
        ("engine_options", n, engines.engine_class(n).Config) for n in engines.names()
    ]
    configs += [("store_options", n, findings.store_class(n).Config) for n in findings.store_names()]
    out: dict[str, tuple[str, str, dataclasses.Field, Any]] = {}
    for target, plugin, cfg in configs:
        hints = typing.get_type_hints(cfg)
        for f in dataclasses.fields(cfg):
            key = f.metadata.get("manifest", f.name)
            if key is not None:
                out[key] = (target, plugin, f, hints[f.name])
    return out


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
        config = parse_manifest(doc, base_dir=path.parent, name=str(path))
        config.manifest_path = str(path)  # an input: never a target of the run's outputs
        if config.review.decisions is None:  # review decisions: the file beside the manifest (read when present)
            config.review.decisions = default_decisions(path.parent)
        return config
    except ManifestError:
        raise
    except AuditorError as e:
        raise ManifestError(f"{path}: {e}") from None


def parse_manifest(doc: dict[str, Any], base_dir: str | Path = ".", name: str = "manifest") -> AuditConfig:
    plugin_keys = registered_options()  # what registered engines and stores declare (ray_address, ...)
    _unknown(doc, TOP_KEYS | set(plugin_keys), name)
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
        opts = _dataset_options(entry, where)
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
    owners = [config, *(getattr(config, g.name) for g in dataclasses.fields(config) if g.metadata.get("group"))]
    for key, f in manifest_keys(AuditConfig).items():
        owner = next(o for o in owners if f in dataclasses.fields(o))
        shape = _SCALARS.get(typing.get_type_hints(type(owner))[f.name])
        if key not in doc or shape is None:
            continue  # absent, or a table / list parsed above
        value = doc[key]
        if f.metadata.get("folder"):
            if not isinstance(value, str):
                raise ManifestError(f"{name}: '{key}' must be a string (a folder)")
            value = _confined_dir(value, base, f"{name}: '{key}'")
        elif isinstance(value, bool) or not isinstance(value, int if shape == "integer" else str):
            raise ManifestError(f"{name}: '{key}' must be a{'n integer' if shape == 'integer' else ' string'}")
        setattr(owner, f.name, value)
    for key, (target, plugin, opt, hint) in plugin_keys.items():
        if key not in doc:
            continue
        value, shape = doc[key], _SCALARS.get(hint)
        if opt.metadata.get("folder"):
            if not isinstance(value, str):
                raise ManifestError(f"{name}: '{key}' must be a string (a folder)")
            value = _confined_dir(value, base, f"{name}: '{key}'")
        elif shape is not None and (
            isinstance(value, bool) != (shape == "boolean") or not isinstance(value, _TYPES[shape])
        ):
            raise ManifestError(f"{name}: '{key}' must be a{'n' if shape == 'integer' else ''} {shape}")
        getattr(config, target).setdefault(plugin, {})[opt.name] = value
    try:
        config.validate()

        for m, params in method_params.items():
            methods.create(m, params)
    except AuditorError as e:
        raise ManifestError(f"{name}: {e}") from None
    return config


def _dataset_options(entry: dict[str, Any], where: str) -> dict[str, Any]:
    """The scalar options of a ``[datasets.NAME]`` table (``path`` and ``role`` aside), checked by
    the type of their :class:`DatasetSpec` field."""
    hints = typing.get_type_hints(DatasetSpec)
    opts: dict[str, Any] = {}
    for key, f in manifest_keys(DatasetSpec).items():
        if key in ("path", "role") or key not in entry:
            continue
        value, shape = entry[key], _SCALARS[hints[f.name]]
        if shape == "string" and not isinstance(value, str):
            raise ManifestError(f"{where}: '{key}' must be a string")
        if shape == "boolean" and not isinstance(value, bool):
            raise ManifestError(f"{where}: '{key}' must be true or false")
        if shape == "integer" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ManifestError(f"{where}: '{key}' must be a positive integer")
        opts[f.name] = value
    return opts


def _provenance(raw: Any, name: str) -> list:
    """``[[provenance]]`` entries → ProvenanceSpec list (see :mod:`auditor.audit.attribution`)."""
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
