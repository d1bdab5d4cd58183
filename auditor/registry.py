"""One registry of named plugins: the methods, adapters (formats), engines and finding stores.

A :class:`Registry` maps names to classes. A class gets there by :meth:`Registry.register` (a base
class's ``__init_subclass__`` registers each subclass with a ``name``); a built-in one is *declared*
first, by name and the module that defines it (:meth:`Registry.declare`), so that :meth:`names`
lists it without importing anything and :meth:`get` imports its module only when it is first asked
for: start-up loads only what a run uses. A module is a file or a package alike (``import_module``).

>>> from auditor.registry import Registry
>>> shapes = Registry("shape", plural="shapes")
>>> shapes.declare("json", "json")          # the standard library's json module, not yet asked for
>>> class Circle: ...
>>> shapes.register("circle", Circle)
>>> shapes.names()
['circle', 'json']
>>> shapes.get("circle") is Circle
True
>>> shapes.get("circel")
Traceback (most recent call last):
...
auditor.errors.ConfigError: unknown shape 'circel' (did you mean 'circle'?) (shapes: circle, json)

Errors it raises:

- :class:`~auditor.errors.ConfigError` from :meth:`get` for a name neither registered nor declared,
  with a did-you-mean hint and the known names (what a user mistyped: ``--method embeding``);
- :class:`~auditor.errors.InternalError` from :meth:`get` when a declared module imports but registers
  no entry of that name (a bug in auditor: the declaration and the module disagree);
- whatever importing a declared module raises (an ``ImportError`` of a broken installation).
  Optional dependencies are no such error: a module imports them when it runs, and says which are
  missing (methods: ``Index.requires``) without failing to import.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

from .errors import ConfigError, InternalError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind (``kind`` names it in errors, ``plural`` in the list of known names)."""

    def __init__(self, kind: str, plural: str | None = None) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self._entries: dict[str, T] = {}
        self._declared: dict[str, str] = {}  # name -> module that registers it when imported

    def declare(self, name: str, module: str) -> None:
        """Make ``name`` known as registered by importing ``module`` (imported on first :meth:`get`)."""
        self._declared[name] = module

    def register(self, name: str, entry: T) -> None:
        """Add ``entry`` as ``name``; a later registration of the same name replaces the earlier one
        (a test's or a plugin's class standing in for a built-in one)."""
        self._entries[name] = entry

    def unregister(self, name: str) -> None:
        """Forget ``name`` (registered or declared); no error when it is unknown."""
        self._entries.pop(name, None)
        self._declared.pop(name, None)

    def names(self) -> list[str]:
        """Every registered or declared name, sorted; imports nothing."""
        return sorted({*self._entries, *self._declared})

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._declared

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def module(self, name: str) -> str | None:
        """The module declared for ``name``, None when it was registered without a declaration."""
        return self._declared.get(name)

    def loaded(self, name: str) -> bool:
        """Is ``name``'s entry registered already (its module imported)?"""
        return name in self._entries

    def get(self, name: str) -> T:
        """The entry called ``name``, importing its declared module when it is not registered yet."""
        if name not in self._entries:
            module = self._declared.get(name)
            if module is None:
                raise ConfigError(self.unknown(name))
            importlib.import_module(module)
            if name not in self._entries:
                raise InternalError(f"module {module} registers no {self.kind} '{name}', though declared to")
        return self._entries[name]

    def unknown(self, name: str) -> str:
        """The message of :meth:`get` for an unknown ``name``."""
        known = self.names()
        return f"unknown {self.kind} '{name}'{did_you_mean(name, known)} ({self.plural}: {', '.join(known)})"

    def all(self) -> dict[str, T]:
        """Every entry by name, sorted by name, importing every declared module not imported yet."""
        return {n: self.get(n) for n in self.names()}

    def copy(self) -> Registry[T]:
        """An independent registry with the same entries and declarations (a test's scratch copy)."""
        other: Registry[T] = Registry(self.kind, self.plural)
        other._entries = dict(self._entries)
        other._declared = dict(self._declared)
        return other

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"
