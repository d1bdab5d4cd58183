"""Detection methods. Importing this package registers every built-in method module.

:func:`create` makes an index by name with parameters; :func:`available` lists the methods whose
optional dependencies are installed; :func:`default_methods` those a check runs when it names none.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ..errors import ConfigError, did_you_mean
from .base import Finding, Index, MethodConfig, registry

for _m in pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_") and _m.name != "base":
        importlib.import_module(f"{__name__}.{_m.name}")


def names() -> list[str]:
    return sorted(registry())


def available() -> list[str]:
    """Registered methods whose requirements are installed, in a stable order."""
    return [n for n, cls in sorted(registry().items()) if not cls.missing_requirements()]


def default_methods() -> list[str]:
    """The methods a check runs when it names none: available ones with ``in_default`` set."""
    return [n for n in available() if registry()[n].in_default]


def get(name: str) -> type[Index]:
    try:
        return registry()[name]
    except KeyError:
        raise ConfigError(
            f"unknown method '{name}'{did_you_mean(name, names())} (methods: {', '.join(names())})"
        ) from None


def create(name: str, params: dict[str, Any] | None = None) -> Index:
    return get(name)(**(params or {}))


__all__ = ["Finding", "Index", "MethodConfig", "available", "create", "default_methods", "get", "names", "registry"]
