"""APIBench / Gorilla (TorchHub, TensorFlow Hub, HuggingFace): the API-call datasets and the eval questions.

Two shapes, JSON Lines (files named ``.json`` hold JSON Lines too):

- ``{code, api_call, provider, api_data}`` (``torchhub_train.json``, ``torchhub_eval.json``): the
  instruction sits in ``code`` (train: ``{'Instruction': …, 'Output': …}``; eval: ``###Instruction: …
  ###Output: …``, in a few HuggingFace / TensorFlow Hub records ``### Instruction: … ### Output: …``);
  ``calls`` is ``api_call`` parsed with :mod:`ast` (positional arguments bound by the library's documented signature, :data:`auditor.records.pycalls.KNOWN_SIGNATURES`). The id is the 1-based line
  number, which for ``torchhub_eval.json`` is the ``question_id`` of the matching eval question.
- eval questions ``{question_id, text, category}`` (``questions_<hub>_0_shot.jsonl``): ``query`` is
  ``text`` without the literal ``\\n`` the files end with; id ``question_id``.

``split``: the hub (``torchhub``, ``tensorflowhub``, ``huggingface``) for eval files, ``train-<hub>``
for ``<hub>_train`` files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import iter_jsonl
from ..records.callparse import calls_from_value, unbound
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view
from .base import Adapter, first_record

#: the instruction of ``code``: after ``###Instruction:`` (eval; a few HuggingFace and TensorFlow Hub
#: records write ``### Instruction:`` and ``### Output:``, with a space) or ``'Instruction':`` (train)
_INSTRUCTION = re.compile(
    r"(?:#{2,}\s*Instruction\s*:|'Instruction'\s*:)\s*(.*?)(?:\s*#{2,}\s*Output\s*:|,\s*'Output'\s*:|$)", re.S
)
_HUB = re.compile(r"(torchhub|tensorflowhub|tensorflow|huggingface)", re.I)


def split_of(path: Path) -> str | None:
    name = Path(path).name.lower()
    m = _HUB.search(name)
    if not m:
        return None
    hub = "tensorflowhub" if m.group(1) == "tensorflow" else m.group(1)
    return f"train-{hub}" if "_train" in name else hub


class ApiBenchAdapter(Adapter):
    """APIBench (Gorilla) API-call records and eval questions; api_call strings as canonical calls."""

    name = "apibench"
    suffixes = (".json", ".jsonl")
    layouts = ("lines",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None:
            return False
        keys = set(first)
        return {"code", "api_call", "api_data"} <= keys or keys == {"question_id", "text", "category"}

    def read(self, path: Path) -> Iterator[Record | Skip]:
        split = split_of(path)
        for lineno, obj, err in iter_jsonl(path, self.options.max_record_chars):
            source = f"{path}:{lineno}"
            if err:
                yield Skip(source, err)
                continue
            if not isinstance(obj, dict):
                yield Skip(source, f"item is {type(obj).__name__}, not an object")
                continue
            if "question_id" in obj:
                text = obj.get("text")
                query = text.replace("\\n", "\n").strip() if isinstance(text, str) else ""
                rid: Any = obj["question_id"]
                views = {QUERY: query, TEXT: query}
                meta: dict[str, Any] = {}
            else:
                m = _INSTRUCTION.search(obj.get("code") or "")
                query = m.group(1).strip() if m else ""
                steps = calls_from_value(obj.get("api_call") or "")
                views = {QUERY: query, TEXT: query, "calls": calls_view(steps)}
                meta = {"calls_unbound": unbound(steps)} if unbound(steps) else {}
                rid, meta["positional_id"] = lineno, True
            if not query:
                yield Skip(source, "no instruction text")
                continue
            yield self.record(rid, source, views, raw=obj, split=split, **meta)
