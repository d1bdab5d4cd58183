"""Typed results written as JSON objects: a dataclass whose fields, in order, are the object's keys.

The report's parts (a check's result, a dataset's accounting, the run's statistics) are dataclasses
deriving from :class:`JsonObject`: code reads typed attributes, ``to_dict()`` writes the JSON object
(fields in declaration order, nested results as objects, a field marked :data:`OMIT_NONE` left out
while it is ``None``), and ``from_dict()`` reads what any version wrote: keys it does not know are
kept in ``extra`` and written back after the known ones; a key that is missing takes the field's
default, and a field without a default is required.

>>> from dataclasses import dataclass
>>> @dataclass
... class Cell(JsonObject):
...     train: str
...     items: int = 0
>>> cell = Cell.from_dict({"train": "t", "items": 2, "later": True})
>>> cell.items, cell.extra, cell.to_dict()
(2, {'later': True}, {'train': 't', 'items': 2, 'later': True})
>>> Cell.from_dict({"items": 2})
Traceback (most recent call last):
...
ValueError: Cell: missing train

``result["key"]`` reads the dict form's value, so code written when these results were plain dicts
(``report.checks[0]["contaminated_items"]``) keeps working; new code reads attributes.

Raises ValueError (from :meth:`JsonObject.from_dict`) for a value that is not an object or lacks a
required key.
"""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

#: field metadata: leave the key out of ``to_dict()`` while the value is ``None``
OMIT_NONE = {"omit_none": True}

T = TypeVar("T", bound="JsonObject")


def plain(value: Any) -> Any:
    """``value`` as JSON-able builtins: results as dicts, tuples as lists, containers copied."""
    if isinstance(value, JsonObject):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass
class JsonObject:
    """Base of the typed results: see the module docstring."""

    #: keys this version does not know (a newer or older report's), written back after the known ones
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or (value is None and f.metadata.get("omit_none")):
                continue
            out[f.name] = plain(value)
        out.update(plain(self.extra))
        return out

    @classmethod
    def from_dict(cls: type[T], d: Any) -> T:
        """The result from its JSON object (nested results converted); raises ValueError."""
        if not isinstance(d, dict):
            raise ValueError(f"{cls.__name__} must be an object, not {type(d).__name__}")
        hints = typing.get_type_hints(cls)
        known = [f for f in fields(cls) if f.name != "extra"]
        missing = [f.name for f in known if f.name not in d and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise ValueError(f"{cls.__name__}: missing {', '.join(missing)}")
        values = {f.name: _typed(hints[f.name], d[f.name]) for f in known if f.name in d}
        names = {f.name for f in known}
        return cls(**values, extra={k: v for k, v in d.items() if k not in names})

    def __getitem__(self, key: str) -> Any:
        """The dict form's value of ``key`` (KeyError when the dict form has no such key)."""
        if key in self.extra:
            return self.extra[key]
        for f in fields(self):
            if f.name == key != "extra":
                value = getattr(self, key)
                if value is None and f.metadata.get("omit_none"):
                    break
                return plain(value)
        raise KeyError(key)


def _typed(hint: Any, value: Any) -> Any:
    """``value`` read from JSON, with the results ``hint`` names converted (others as they are)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, JsonObject):
        return hint.from_dict(value)
    if origin in (typing.Union, types.UnionType):
        return value if value is None else _typed(next(a for a in args if a is not type(None)), value)
    if origin is list and args and isinstance(value, list):
        return [_typed(args[0], v) for v in value]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {k: _typed(args[1], v) for k, v in value.items()}
    return value
