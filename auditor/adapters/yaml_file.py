"""YAML adapter (``.yaml``, ``.yml``; PyYAML's safe loader, the ``yaml`` extra): a list of records, a
mapping of records (``{id: record}`` or ``{id: text}``), one record, or a stream of documents
(``---``), one record each (:mod:`auditor.io.yamlread`); ``text_field`` / ``id_field`` as for JSON."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..io.yamlread import iter_yaml_items
from ..records.record import Record, Skip
from ._fields import extract
from ._rows import YAML_SUFFIXES
from ._write import RecordWriter, YamlWriter
from .base import GenericAdapter


class YamlAdapter(GenericAdapter):
    name = "yaml"
    suffixes = YAML_SUFFIXES
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        for position, key, item in iter_yaml_items(path):
            rec = extract(self, item, position, f"{path}#{position}")
            if key is not None and isinstance(rec, Record):
                rec.meta["json_key"] = key  # written back under its key
                if rec.meta.pop("positional_id", False):
                    rec.id = str(key)
            yield rec

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return YamlWriter(source, target)
