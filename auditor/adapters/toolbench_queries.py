"""ToolBench / StableToolBench instruction files: a JSON list of ``{query_id, query, api_list, relevant APIs}``.

The record id is ``query_id`` as a string. ToolBench ids are scoped by group, so the group (``G1``,
``G2``, ``G3``, from the file name) goes into ``meta['group']``, and ``split`` is the file's stem
(``G1_instruction``, ``G2_category`` ...). ``meta['relevant_apis']`` keeps the ``[tool, api]`` pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..io.jsonread import load_json
from ..records.record import QUERY, TEXT, Record, Skip
from ._write import JsonArrayWriter, RecordWriter
from .base import Adapter

_GROUP = re.compile(r"(G\d)")


class ToolBenchQueriesAdapter(Adapter):
    name = "toolbench-queries"
    suffixes = (".json",)
    layouts = ("array",)
    sniff_keys = frozenset({"query_id", "query"})

    def read(self, path: Path) -> Iterator[Record | Skip]:
        doc = load_json(path)
        if not isinstance(doc, list):
            yield Skip(str(path), "expected a JSON list of query objects")
            return
        stem = Path(path).name.split(".")[0]
        m = _GROUP.search(stem)
        group = m.group(1) if m else None
        for i, obj in enumerate(doc):
            source = f"{path}#{i}"
            if not isinstance(obj, dict):
                yield Skip(source, f"item is {type(obj).__name__}, not an object")
                continue
            query = obj.get("query")
            if not isinstance(query, str):
                yield Skip(source, "missing or non-string 'query'")
                continue
            qid = obj.get("query_id", i)
            if not isinstance(qid, (int, str)):
                yield Skip(source, "'query_id' is not a scalar")
                continue
            apis = obj.get("relevant APIs") or []
            yield self.record(
                qid,
                source,
                {QUERY: query, TEXT: query},
                raw=obj,
                split=stem,
                group=group,
                relevant_apis=[list(a) for a in apis if isinstance(a, list)],
            )

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return JsonArrayWriter(source, target)
