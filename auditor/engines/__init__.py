"""Scan engines (see :mod:`auditor.engines.base` for the protocol, the registry and
:func:`~auditor.engines.base.get_engine`).

A new engine is one module defining an :class:`~auditor.engines.base.Engine` subclass with a ``name``
(and, for options of its own, a nested ``Config``): it registers itself on import; a built-in one is
also declared in :data:`~auditor.engines.base.ENGINES`, so that it is imported only when used.
"""

from __future__ import annotations

from .base import ENGINES, Engine, EngineConfig, engine_class, get_engine, names, registry

__all__ = ["ENGINES", "Engine", "EngineConfig", "engine_class", "get_engine", "names", "registry"]
