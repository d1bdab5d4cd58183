"""Bundled, fingerprinted evaluation sets (``auditor registry`` lists them).

A registry name may stand wherever a dataset path is accepted, with an optional split after a
colon: ``stabletoolbench``, ``stabletoolbench:G1_instruction``, ``tau2-airline:test``,
``webshop:0:500``. Every bundled file is checked against its SHA-256 in ``registry.json`` when
loaded; a mismatch raises :class:`~auditor.errors.RegistryError`.

>>> spec = resolve("tau2-airline:test")
>>> spec.format, spec.split, spec.paths[0].endswith("tasks.json")
('tau2-tasks', 'test', True)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from ..errors import RegistryError, did_you_mean
from ..io.files import sha256_file

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    format: str
    paths: tuple[str, ...]
    split: str | None
    licence: str
    description: str
    sha256: str  # fingerprint of all files together
    #: the split used when none is given (training splits of a benchmark are not in it)
    default_split: str | None = None


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, dict[str, Any]]:
    return json.loads((DATA_DIR / "registry.json").read_text(encoding="utf-8"))["datasets"]


def source_file(path: str) -> str:
    """The real file behind a record source path (``bundled:webshop/human_goals.json`` → its installed path)."""
    return str(DATA_DIR / path[len("bundled:") :]) if path.startswith("bundled:") else path


def names() -> list[str]:
    return sorted(_catalogue())


def describe() -> list[dict[str, Any]]:
    """One dict per bundled set: name, format, records' description, splits, licence, source."""
    return [
        {"name": n, **{k: v for k, v in e.items() if k not in ("sha256", "upstream_sha256")}}
        for n, e in sorted(_catalogue().items())
    ]


def split_name(ref: str) -> tuple[str, str | None]:
    """``'webshop:0:100'`` → ``('webshop', '0:100')``."""
    name, _, split = ref.partition(":")
    return name, (split or None)


def is_registry_ref(ref: str) -> bool:
    return split_name(ref)[0] in _catalogue()


@cache
def _verified(name: str) -> str:
    entry = _catalogue()[name]

    combined = hashlib.sha256()
    for rel, expected in sorted(entry["sha256"].items()):
        path = DATA_DIR / rel
        if not path.exists():
            raise RegistryError(f"bundled dataset '{name}': file {rel} is missing from the installation")
        actual = sha256_file(path)
        if actual != expected:
            raise RegistryError(
                f"bundled dataset '{name}': {rel} fails its fingerprint check "
                f"(sha256 {actual[:12]}…, expected {expected[:12]}…)"
            )
        combined.update(f"{rel}:{actual}\n".encode())
    return combined.hexdigest()


def expand_split(name: str, split: str | None) -> str | None:
    """A split as the adapters name it: aliases (``api-bank:level-1`` → ``level-1-api,level-1-response``)
    expanded in a comma-separated list; None when no split is given."""
    if not split:
        return None
    aliases = _catalogue()[name].get("split_aliases", {})
    parts = [p.strip() for p in split.split(",")]
    return ",".join(x for p in parts for x in aliases.get(p, p).split(","))


def resolve(ref: str) -> RegistryEntry:
    """Resolve ``NAME[:split]`` to verified bundled files. Raises RegistryError when unknown.

    A split may be an alias of several (``bfcl:live``, ``api-bank:level-1``); with no split, the
    entry's ``default_split`` applies (``api-bank`` is its test levels, not its training file)."""
    name, split = split_name(ref)
    cat = _catalogue()
    if name not in cat:
        raise RegistryError(
            f"unknown bundled dataset '{name}'{did_you_mean(name, cat)} (bundled: {', '.join(sorted(cat))})"
        )
    entry = cat[name]
    fingerprint = _verified(name)
    return RegistryEntry(
        name=name,
        format=entry["format"],
        paths=tuple(str(DATA_DIR / f) for f in entry["files"]),
        split=expand_split(name, split),
        licence=entry["licence"],
        description=entry["description"],
        sha256=fingerprint,
        default_split=entry.get("default_split"),
    )
