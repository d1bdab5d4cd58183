"""Dataset format adapters. Each built-in one is declared in :data:`~auditor.adapters.base.BUILTIN` (its
name, its module, its place in the sniffing order) and imported when first asked for.

Each module here defines one :class:`~auditor.adapters.base.Adapter` subclass; :func:`detect`
picks the adapter for a file by content, :func:`get_adapter` by name. The writers adapters return
for cleaned output (:class:`RecordWriter`, :class:`ViewsWriter` for formats without one,
:class:`AtomicFile`) are public here; the ``_``-modules are the adapters' own helpers.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ..errors import InputError
from ..io.archive import archive_kind
from ..io.arrowread import FILE_MAGIC
from ..io.compressed import open_decompressed
from ..io.files import base_suffix
from ..io.remote import is_url
from ..io.sniff import Sniffed, sniff
from ._rows import TABLE_SUFFIXES, first_row
from ._write import AtomicFile, RecordWriter, ViewsWriter
from .base import ADAPTERS, Adapter, AdapterOptions, get_adapter, in_sniff_order, is_generic, registry


def detect(path: str | Path) -> type[Adapter]:
    """The adapter class for ``path``, chosen by content (then suffix for generic formats).

    JSON and JSON Lines are told apart by content whatever the suffix (:func:`auditor.io.sniff.sniff`,
    a bounded prefix); CSV, TSV, Parquet, Arrow and YAML go by suffix; zip and tar archives by suffix
    or content. Raises :class:`InputError` when nothing fits.
    """
    return explain(path)[0]


def adapter_for(path: str | Path, fmt: str | None) -> type[Adapter]:
    """The adapter that reads ``path`` for a dataset of format ``fmt`` (None: detected). An archive is
    read by the ``archive`` adapter whatever the format: the format is its members' (pass it as
    :attr:`AdapterOptions.member_format`)."""
    if fmt is None:
        return detect(path)
    if fmt != "archive" and archive_kind(path, by_content=True) is not None:
        return get_adapter("archive")
    return get_adapter(fmt)


#: suffixes that name a data format: no content check for an archive or an Arrow file
_DATA_SUFFIXES = (".json", ".jsonl", *TABLE_SUFFIXES)


def _by_content(path: Path) -> str | None:
    """``archive`` or ``arrow`` for a file whose name does not say what it is, by its first bytes."""
    if archive_kind(path, by_content=True) is not None:
        return "archive"
    try:
        with open_decompressed(path) as f:
            head = f.read(8)
    except (OSError, InputError):
        return None
    return "arrow" if head.startswith(FILE_MAGIC) and base_suffix(path) == "" else None


def explain(path: str | Path) -> tuple[type[Adapter], str]:
    """:func:`detect` plus a one-line reason (``auditor inspect`` prints it)."""
    # a URL stays a string (Path would fold its //); adapters read its name through Path(...) too
    path = cast(Path, path) if is_url(path) else Path(path)
    suffix = base_suffix(path)
    kind = archive_kind(path)
    if kind is not None:
        return get_adapter("archive"), f"a {kind} archive (by its name): each member read by its own format"
    if suffix not in _DATA_SUFFIXES:
        found_kind = _by_content(path)
        if found_kind == "archive":
            return get_adapter("archive"), "a zip or tar archive (by its content): each member read by its own format"
        if found_kind == "arrow":
            return get_adapter("arrow"), "an Arrow IPC file (by its content)"
    if suffix in TABLE_SUFFIXES:  # a named reader that recognizes the first row wins over the generic table
        row = first_row(path)
        named = in_sniff_order(a for a in registry().values() if a.layouts and suffix in a.suffixes)
        for adapter in named if row is not None else []:
            if adapter.sniff(path, [row]):
                return adapter, f"suffix {suffix}; first row has the fields of format '{adapter.name}'"
    table = in_sniff_order(a for a in registry().values() if not a.layouts and suffix in a.suffixes)
    for adapter in table:
        if adapter.sniff(path, None):
            return adapter, f"suffix {suffix}"
    found = sniff(path)
    if found.kind in ("unknown", "empty"):
        if suffix not in (".json", ".jsonl"):
            raise InputError(
                str(path),
                None,
                f"no adapter reads '{suffix or 'no suffix'}' files and the content is not JSON or JSON Lines "
                f"({found.reason}); pass a format explicitly",
            )
        # the generic reader reports the precise error (file, line, problem)
        name = "jsonl" if suffix == ".jsonl" else "json"
        return get_adapter(name), f"content {found.kind} ({found.reason}); generic {name} reader"
    candidates = in_sniff_order(a for a in registry().values() if found.kind in a.layouts)
    for adapter in candidates:
        if adapter.sniff(path, found.sample):
            return adapter, _why(adapter, found)
    return get_adapter("jsonl" if found.kind == "lines" else "json"), _why(None, found)


def _why(adapter: type[Adapter] | None, found: Sniffed) -> str:
    layout = {"lines": "JSON Lines", "array": "a JSON array", "object": "a JSON object"}.get(found.kind, found.kind)
    if adapter is None or is_generic(adapter):
        return f"{layout} ({found.reason}); no specific format matched its first record: generic reader"
    return f"{layout} ({found.reason}); first record has the fields of format '{adapter.name}'"


__all__ = [
    "ADAPTERS",
    "Adapter",
    "AdapterOptions",
    "AtomicFile",
    "RecordWriter",
    "ViewsWriter",
    "adapter_for",
    "detect",
    "explain",
    "get_adapter",
    "in_sniff_order",
    "is_generic",
    "registry",
]
