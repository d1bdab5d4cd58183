"""What a dataset is: :class:`DatasetSpec` (one ``[datasets.NAME]`` table of a manifest, or one
``--train`` / ``--eval`` flag) and the split selection it names.

Split selection: ``"START:END"`` selects by position (0-based, END exclusive, either may be empty);
any other value selects records whose adapter-given ``split`` equals it (comma-separated values allowed).

>>> from types import SimpleNamespace as R
>>> keep = selector("1:3")
>>> [i for i in range(5) if keep(R(ordinal=i))]
[1, 2]
>>> is_position_range("0:500"), is_position_range("test")
(True, False)
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS
from ..records.messages import MessageSelector

ROLES = ("train", "eval")
ON_ERROR = ("fail", "skip")
_RANGE = re.compile(r"^(-?\d*):(-?\d*)$")
#: "0-500": a range written with a dash (a hint when a split label matches nothing)
DASHED_RANGE = re.compile(r"^\d+-\d*$")


@dataclass
class DatasetSpec:
    """What a dataset is. ``paths`` entries are files, globs, or one registry reference."""

    name: str = field(metadata={"manifest": None})  # the manifest's table name [datasets.NAME]
    paths: list[str] = field(metadata={"manifest": "path"})
    role: str = "train"
    format: str | None = None
    split: str | None = None
    text_field: str | None = None
    id_field: str | None = None
    #: message selector for chat-shaped text fields (``first-user``, ``all-user`` ...; :mod:`auditor.records.messages`)
    messages: str | None = None
    #: dotted path of a field holding tool calls (JSON calls or Python-style call strings), generic formats
    calls_field: str | None = None
    #: ``fail`` (default) or ``skip``: a bad record is counted and named, not read; on the eval side
    #: a skipped item is unchecked, so a check reading it is ``incomplete`` at best (never ``pass``)
    on_error: str | None = None
    base_dir: str = field(default=".", metadata={"manifest": None})  # the manifest's folder
    #: a record with a text view longer than this (characters) is a bad record (see ``on_error``)
    max_record_chars: int = DEFAULT_MAX_RECORD_CHARS
    #: when set, relative paths must resolve inside this folder (manifests: their own folder)
    confine_to: str | None = field(default=None, metadata={"manifest": None})
    split_label: str | None = None  # provenance: the split every record of this dataset belongs to
    #: a file without any content reads as 0 records instead of an error (cleaned files emptied
    #: by ``--write-clean``; a well-formed empty document is always 0 records)
    allow_empty: bool = False
    #: the text encoding of the dataset's files (``latin-1``, ``cp1252``, ``utf-16`` ...); None: UTF-8,
    #: or what a byte-order mark says (UTF-16 / UTF-32)
    encoding: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigError(f"dataset '{self.name}': role must be one of {ROLES}, not '{self.role}'")
        if self.on_error is not None and self.on_error not in ON_ERROR:
            raise ConfigError(f"dataset '{self.name}': on_error must be one of {ON_ERROR}, not '{self.on_error}'")
        if not self.paths:
            raise ConfigError(f"dataset '{self.name}': no path given")
        if self.messages is not None:
            MessageSelector.parse(self.messages)  # ConfigError now, not at the first record
        if self.encoding is not None:
            try:
                text = getattr(codecs.lookup(self.encoding), "_is_text_encoding", True)
            except (LookupError, TypeError):
                text = False
            if not text:
                raise ConfigError(
                    f"dataset '{self.name}': unknown text encoding '{self.encoding}' (e.g. latin-1, cp1252, utf-16)"
                )
        if (
            isinstance(self.max_record_chars, bool)
            or not isinstance(self.max_record_chars, int)
            or self.max_record_chars < 1
        ):
            raise ConfigError(f"dataset '{self.name}': max_record_chars must be a positive integer")


def is_position_range(split: str | None) -> bool:
    """Is ``split`` a position range (``"0:500"``)? Selecting it needs every record's ordinal."""
    return bool(split and _RANGE.match(split))


def selector(split: str | None) -> Callable[[Any], bool]:
    """The test a record passes to be selected by ``split`` (None or empty: every record)."""
    if not split:
        return lambda r: True
    m = _RANGE.match(split)
    if m:
        start = int(m.group(1)) if m.group(1) else 0
        end = int(m.group(2)) if m.group(2) else None
        if start < 0 or (end is not None and end < 0):
            raise ConfigError(f"split range '{split}': negative positions are not supported")
        return lambda r: r.ordinal >= start and (end is None or r.ordinal < end)
    wanted = {s.strip() for s in split.split(",")}
    return lambda r: r.split in wanted
