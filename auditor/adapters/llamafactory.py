"""LLaMA-Factory datasets: a data file read through the entry of the ``dataset_info.json`` that names it.

LLaMA-Factory's users describe their files in ``dataset_info.json`` (beside the files, in its
``dataset_dir``): an entry gives ``file_name``, ``formatting`` (``alpaca``, the default, or
``sharegpt``), ``ranking`` and the ``columns`` / ``tags`` mapping of the file's fields. A JSON or JSON
Lines file that an entry of a ``dataset_info.json`` in its folder (or one or two folders up) names is
read with that mapping (detected; ``format = "llamafactory"`` / ``--*-format llamafactory`` insists,
and names the entries when none matches); the first entry naming the file wins.

- ``alpaca``: ``columns`` ``prompt`` (default ``instruction``), ``query`` (``input``), ``response``
  (``output``), ``history``, ``system``, ``chosen`` / ``rejected``; views as ``alpaca``
  (:mod:`auditor.adapters.alpaca`; the query is prompt + query, a template prompt left out).
- ``sharegpt``: ``columns`` ``messages`` (default ``conversations``), ``system``, ``tools``, ``chosen``
  / ``rejected``; ``tags`` ``role_tag`` (``from``), ``content_tag`` (``value``), ``user_tag`` (``human``),
  ``assistant_tag`` (``gpt``), ``observation_tag`` (``observation``), ``function_tag`` (``function_call``),
  ``system_tag`` (``system``); views as ``chat`` (query: the first user turn), plus ``rejected``.

``meta['llamafactory']`` is the entry's name. ``dataset_info.json`` itself is no dataset of this format
(read as a training set it is the generic JSON it is); reading it with ``format = "llamafactory"`` is an
error that names its local entries: it describes datasets, it holds none.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.remote import is_url
from ..records.pycalls import default_schemas
from ..records.record import Record, Skip
from ..records.trajectory import Turn, trajectory_views
from ._rows import RowAdapter, record_id
from .alpaca import TEMPLATE_SAMPLE, AlpacaColumns, alpaca_views, template_instructions
from .chat import Tags, message_turns, select_query

INFO = "dataset_info.json"
_MAX_INFO_BYTES = 16 * 1024 * 1024
_FOLDERS_UP = 2


def _load_info(info: Path) -> dict | None:
    """The parsed ``dataset_info.json`` (None when it does not read as a JSON object), read once per
    version of the file: detection asks for it for every file of a dataset."""
    try:
        st = info.stat()
    except OSError:
        return None
    return _parsed_info(str(info), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _parsed_info(info: str, mtime_ns: int, size: int) -> dict | None:
    if size > _MAX_INFO_BYTES:
        return None
    try:
        doc = json.loads(Path(info).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def find_entry(path: str | Path) -> tuple[Path, str, dict] | None:
    """``(dataset_info.json, entry name, entry)`` of the first entry naming ``path`` (its ``file_name``
    is the file, or a folder holding it), looking in its folder and up to two above; else None."""
    if is_url(str(path)):
        return None
    try:
        target = Path(path).resolve()
    except OSError:
        return None
    for folder in [target.parent, *list(target.parents)[1 : 1 + _FOLDERS_UP]]:
        info = folder / INFO
        if not info.is_file() or info.resolve() == target:
            continue
        doc = _load_info(info)
        for name, entry in (doc or {}).items():
            file_name = entry.get("file_name") if isinstance(entry, dict) else None
            if not isinstance(file_name, str) or not file_name:
                continue
            named = (folder / file_name).resolve()
            if named == target or named in target.parents:
                return info, str(name), entry
    return None


def _tags(entry: dict) -> Tags:
    raw = entry.get("tags")
    tags: dict = raw if isinstance(raw, dict) else {}
    roles = {
        str(tags.get("user_tag", "human")).lower(): "user",
        str(tags.get("assistant_tag", "gpt")).lower(): "assistant",
        str(tags.get("observation_tag", "observation")).lower(): "tool",
        str(tags.get("function_tag", "function_call")).lower(): "function_call",
        str(tags.get("system_tag", "system")).lower(): "system",
    }
    return Tags(str(tags.get("role_tag", "from")), str(tags.get("content_tag", "value")), roles)


class LlamaFactoryAdapter(RowAdapter):
    """A data file read through the dataset_info.json entry naming it (LLaMA-Factory alpaca / sharegpt)."""

    name = "llamafactory"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        return find_entry(path) is not None

    _configured: str | None = None  # the file the mapping below was read for

    def _configure(self, path: Path) -> None:
        """Read the mapping of the entry naming ``path`` (InputError when none does)."""
        if self._configured == str(path):
            return
        found = find_entry(path)
        if found is None:
            raise InputError(str(path), None, self._no_entry(path))
        _, self._entry_name, entry = found
        self._sharegpt = str(entry.get("formatting", "alpaca")).lower() == "sharegpt"
        raw = entry.get("columns")
        columns: dict = raw if isinstance(raw, dict) else {}
        self._columns = columns
        self._alpaca = AlpacaColumns(
            prompt=str(columns.get("prompt", "instruction")),
            query=str(columns.get("query", "input")),
            response=str(columns.get("response", "output")),
            history=columns.get("history"),
            system=columns.get("system"),
            chosen=columns.get("chosen"),
            rejected=columns.get("rejected"),
        )
        self._tags = _tags(entry)
        self._templates = (
            frozenset() if self._sharegpt else template_instructions(self.sample(path, TEMPLATE_SAMPLE), self._alpaca)
        )
        self._configured = str(path)

    def prepare(self, path: Path) -> None:
        self._configure(path)

    def _no_entry(self, path: Path) -> str:
        p = Path(str(path))
        if p.name == INFO:
            doc = _load_info(p) or {}
            local = [f"{n} -> {e['file_name']}" for n, e in doc.items() if isinstance(e, dict) and e.get("file_name")]
            return (
                "this is LLaMA-Factory's dataset_info.json: it describes datasets and holds none; pass the data "
                "file an entry names (its mapping is then read from here)"
                + (": " + ", ".join(local[:10]) + (" …" if len(local) > 10 else "") if local else "")
            )
        return (
            f"format 'llamafactory': no {INFO} in this file's folder or the {_FOLDERS_UP} above it has an entry "
            "whose file_name is this file"
        )

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        rec = (
            self._sharegpt_record(obj, position, source)
            if self._sharegpt
            else self._alpaca_record(obj, position, source)
        )
        if isinstance(rec, Record):
            rec.meta["llamafactory"] = self._entry_name
        return rec

    def _alpaca_record(self, obj: dict, position: int, source: str) -> Record | Skip:
        views = alpaca_views(obj, self._alpaca, self._templates)
        if isinstance(views, str):
            return Skip(source, f"{views} (dataset_info.json entry '{self._entry_name}')")
        return self._make(obj, position, source, views, {})

    def _sharegpt_record(self, obj: dict, position: int, source: str) -> Record | Skip:
        key = str(self._columns.get("messages", "conversations"))
        msgs = obj.get(key)
        if not isinstance(msgs, list):
            return Skip(source, f"no '{key}' message list (dataset_info.json entry '{self._entry_name}')")
        schemas = default_schemas()
        tools_key = self._columns.get("tools")
        if tools_key and obj.get(tools_key) is not None:
            schemas.add_docs(obj[tools_key])
        turns = message_turns(msgs, self._tags, schemas)
        system_key = self._columns.get("system")
        system = obj.get(system_key) if system_key else None
        if isinstance(system, str) and system.strip():
            turns.insert(0, Turn("system", system))
        chosen_key, rejected_key = self._columns.get("chosen"), self._columns.get("rejected")
        answer = None
        rejected: list[Turn] = []
        if chosen_key and isinstance(obj.get(chosen_key), dict):
            chosen = message_turns([obj[chosen_key]], self._tags, schemas)
            turns.extend(chosen)
            answer = "\n".join(t.text for t in chosen if t.text)
        if rejected_key and isinstance(obj.get(rejected_key), dict):
            rejected = message_turns([obj[rejected_key]], self._tags, schemas)
        views, meta = trajectory_views(turns, answer=answer)
        refused = select_query(views, turns, self.options.messages, source)
        if refused is not None:
            return refused
        views["rejected"] = "\n".join(t.text for t in rejected if t.text)
        if views["rejected"]:
            views["text"] += "\n" + views["rejected"]
        if not views["text"].strip():
            return Skip(source, "conversation has no text")
        return self._make(obj, position, source, views, meta)

    def _make(self, obj: dict, position: int, source: str, views: dict, meta: dict) -> Record:
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, positional_id=True, **meta)
        return self.record(rid, source, views, raw=obj, **meta)
