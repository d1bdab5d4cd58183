"""Dataset format adapters. Importing this package registers every built-in adapter module.

Each module here defines one :class:`~auditor.adapters.base.Adapter` subclass; :func:`detect`
picks the adapter for a file by content, :func:`get_adapter` by name.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .._io import base_suffix, peek_json
from ..errors import InputError
from .base import Adapter, AdapterOptions, get_adapter, registry

for _m in pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_") and _m.name != "base":
        importlib.import_module(f"{__name__}.{_m.name}")


def detect(path: str | Path) -> type[Adapter]:
    """The adapter class for ``path``, chosen by content (then suffix for generic formats).

    Raises :class:`InputError` when nothing fits.
    """
    path = Path(path)
    suffix = base_suffix(path)
    candidates = sorted((a for a in registry().values() if suffix in a.suffixes), key=lambda a: (a.priority, a.name))
    if not candidates:
        raise InputError(str(path), None, f"no adapter reads '{suffix or 'no suffix'}' files; pass a format explicitly")
    sample = peek_json(path) if suffix in (".json", ".jsonl") else None
    if suffix in (".json", ".jsonl") and sample is None:
        # let the generic reader report the precise error (file, line, problem)
        return get_adapter("jsonl" if suffix == ".jsonl" else "json")
    for adapter in candidates:
        if adapter.sniff(path, sample):
            return adapter
    return candidates[-1]


__all__ = ["Adapter", "AdapterOptions", "detect", "get_adapter", "registry"]
