"""Scan engines. Importing this package registers every engine module in it (see :mod:`auditor.engines.base`
for the protocol, the registry and :func:`~auditor.engines.base.get_engine`).

A new engine is one module here defining an :class:`~auditor.engines.base.Engine` subclass with a
``name`` (and, for options of its own, a nested ``Config``): it registers itself on import.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Engine, EngineConfig, engine_class, get_engine, names, registry

for _m in pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_") and _m.name not in ("base", "lifecycle"):
        importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["Engine", "EngineConfig", "engine_class", "get_engine", "names", "registry"]
