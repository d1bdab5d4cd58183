"""API-Bank (Li et al. 2023): the level-1/2/3 test data and the level-3 training data.

Three shapes, all JSON lists:

- level-1 / level-2 test (``level-{1,2}-{api,response}.json``): ``{file, id, instruction, input,
  expected_output}``; ``input`` is the dialogue so far (``User: … / AI: …`` lines). The record id is
  the benchmark's own ``<dialogue file stem>/<id>`` (``id`` numbers the turns within ``file``).
- level-3 test (``level-3.json``): ``{requirement, response, apis[{api_name, input, …}]}``; id = position.
- training (``lv3-train.json`` …): Alpaca-style ``{instruction, input, output}`` where ``instruction``
  is the prompt template every record shares and the user's utterance sits in ``input`` after
  ``User:`` (up to ``TIME:``); id = position.

``query`` (= ``text``) is the user's utterances (message selector, default ``all-user``; the shared
instruction template is never the text). ``calls`` is the expected ``API-Request: [Api(key='v')]``
(or level-3's ``apis``) as canonical calls. ``split`` is named from the file as API-Bank names it:
``level-1-api``, ``level-1-response``, ``level-2-api``, ``level-2-response``, ``level-3``; training
files ``train-level-3`` (``lv3-train``), ``train-level-3-api``, ``train-level-3-response``.

>>> dialogue_messages("User: Book Dr. Lee.TIME: 2034-04-15 10:00:00\\nAI: Done.\\nGenerate API Request:")
[('user', 'Book Dr. Lee.'), ('assistant', 'Done.')]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import iter_json_items
from ..records.callparse import calls_from_value, unbound
from ..records.messages import MessageSelector
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view, step
from .base import Adapter, first_record

_TURN = re.compile(r"^(User|AI|API-Request):\s?(.*)$")
_TIME = re.compile(r"\s*TIME:\s*\d{4}-\d\d-\d\d[ \d:]*$")
_TRAIN = re.compile(r"^lv(\d)-(?:(api|response)-)?train$")


def dialogue_messages(text: str) -> list[tuple[str, str]]:
    """``[(role, text)]`` of an API-Bank dialogue (User/AI lines; API requests and the closing
    ``Generate …`` prompt are left out; a trailing ``TIME: …`` stamp is cut off)."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        m = _TURN.match(line.strip())
        if not m or m.group(1) == "API-Request":
            continue
        role = "user" if m.group(1) == "User" else "assistant"
        out.append((role, _TIME.sub("", m.group(2)).strip()))
    return [(r, t) for r, t in out if t]


def split_of(path: Path) -> str:
    stem = Path(path).name.split(".")[0]
    m = _TRAIN.match(stem)
    if m:
        return f"train-level-{m.group(1)}" + (f"-{m.group(2)}" if m.group(2) else "")
    return stem


class ApiBankAdapter(Adapter):
    """API-Bank test levels 1-3 and training files: user utterances from the dialogue, expected API requests as calls."""

    name = "api-bank"
    suffixes = (".json",)
    layouts = ("array",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None:
            return False
        if {"requirement", "apis"} <= set(first):
            return True
        instruction = first.get("instruction")
        return (
            isinstance(instruction, str)
            and "API-Request" in instruction
            and ("expected_output" in first or "output" in first)
        )

    def read(self, path: Path) -> Iterator[Record | Skip]:
        split = split_of(path)
        selector = MessageSelector.parse(self.options.messages)
        for i, _, obj in iter_json_items(path):
            source = f"{path}#{i}"
            if not isinstance(obj, dict):
                yield Skip(source, f"item is {type(obj).__name__}, not an object")
                continue
            if "requirement" in obj:
                query = obj["requirement"].strip() if isinstance(obj["requirement"], str) else ""
                steps = [
                    step(a["api_name"], a.get("input"))
                    for a in obj.get("apis") or []
                    if isinstance(a, dict) and isinstance(a.get("api_name"), str)
                ]
                rid: Any = i
                meta: dict[str, Any] = {"positional_id": True}
            else:
                dialogue = obj.get("input")
                turns = dialogue_messages(dialogue) if isinstance(dialogue, str) else []
                msgs = [{"role": r, "content": t} for r, t in turns]
                query = selector.select(msgs) or ""
                expected = obj.get("expected_output", obj.get("output"))
                steps = calls_from_value(expected) if isinstance(expected, str) and "API-Request" in expected else []
                meta = {}
                if isinstance(obj.get("file"), str) and isinstance(obj.get("id"), (int, str)):
                    rid = f"{Path(obj['file']).stem}/{obj['id']}"
                else:
                    rid, meta["positional_id"] = i, True
            if not query:
                yield Skip(source, f"no user utterance for '{selector}'")
                continue
            if unbound(steps):
                meta["calls_unbound"] = unbound(steps)
            views = {QUERY: query, TEXT: query, "calls": calls_view(steps)}
            yield self.record(rid, source, views, raw=obj, split=split, **meta)
