"""Names of a package imported on first use (PEP 562): ``import auditor`` and ``import auditor.report``
load nothing they do not need.

>>> ns = {}
>>> getattr_, dir_ = lazy_names("auditor", {"ConfigError": "auditor.errors"}, ns)
>>> getattr_("ConfigError").__name__, "ConfigError" in ns, "ConfigError" in dir_()
('ConfigError', True, True)

Raises :class:`AttributeError` for a name that is neither declared nor a submodule.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any


def lazy_names(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``names`` (name -> the module
    defining it) is imported on first access and kept in ``namespace`` (the package's globals), so the
    next access is a plain lookup; any other public name is a submodule not imported yet."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module), name)
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
