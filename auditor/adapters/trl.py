"""TRL datasets: prompt/completion and preference data, plain strings or conversational (message lists).

Accepted objects (TRL's dataset types): ``{prompt, completion}`` (also with a KTO ``label``),
``{prompt, chosen, rejected}``, ``{chosen, rejected}`` with the prompt implicit (the messages that
``chosen`` and ``rejected`` share; for plain strings their common prefix, up to its last HH-RLHF
``Assistant:`` marker, see :func:`implicit_prompt`), LLaMA-Factory v1's ``{chosen_messages,
rejected_messages}``, and LLaMA-Factory's sharegpt preference form ``{conversations |
messages, chosen, rejected}`` whose ``chosen`` / ``rejected`` are single messages. Each part is a string
or a message list (``{role, content}`` with content parts and ``tool_calls``, ShareGPT ``{from, value}``).

Views: ``query`` (the prompt's user messages, one per line; a plain prompt as it is; with
``messages`` / ``--messages`` the selected prompt messages), ``system`` (the prompt's system
messages), ``calls`` (tool calls of the completion), ``answer`` (the completion / ``chosen``),
``rejected``, ``text`` (every part). The id is ``id`` when present, else the 0-based position.

>>> r = TrlAdapter("t").convert({"prompt": [{"role": "user", "content": "What color is the sky?"}],
...     "chosen": [{"role": "assistant", "content": "Blue."}],
...     "rejected": [{"role": "assistant", "content": "Green."}]}, 0, "t.jsonl:1")
>>> r.views["query"], r.views["answer"], r.views["rejected"]
('What color is the sky?', 'Blue.', 'Green.')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.messages import MessageSelector
from ..records.record import Record, Skip
from ..records.trajectory import Turn, trajectory_views
from ._rows import RowAdapter, record_id
from .base import first_record
from .chat import message_turns

_PROMPT_KEYS = ("prompt", "messages", "conversations")
_ANSWER_KEYS = ("completion", "chosen", "chosen_messages")
#: the turn marker of Anthropic's HH-RLHF dialogues: a plain prompt ends after its last one
_ASSISTANT_MARK = "\n\nAssistant:"


def implicit_prompt(chosen: str, rejected: str) -> int:
    """Where the prompt that two plain preference strings share ends: after the last ``\\n\\nAssistant:``
    of their common prefix (HH-RLHF), else at the prefix's last whitespace.

    >>> c, r = "\\n\\nHuman: Hi?\\n\\nAssistant: Hello there", "\\n\\nHuman: Hi?\\n\\nAssistant: Hello. Go away"
    >>> c[: implicit_prompt(c, r)]
    '\\n\\nHuman: Hi?\\n\\nAssistant:'
    """
    n = 0
    while n < min(len(chosen), len(rejected)) and chosen[n] == rejected[n]:
        n += 1
    if n == len(chosen) == len(rejected):
        return 0  # identical strings: no shared prompt to tell apart
    mark = chosen.rfind(_ASSISTANT_MARK, 0, n)
    if mark != -1 and mark + len(_ASSISTANT_MARK) <= n:
        return mark + len(_ASSISTANT_MARK)
    cut = max(chosen.rfind(" ", 0, n), chosen.rfind("\n", 0, n))
    return cut + 1 if cut > 0 else 0


def _messages(value: Any) -> list | None:
    """A message list: a list of message objects, or one message object (LLaMA-Factory's chosen)."""
    if isinstance(value, dict) and any(k in value for k in ("role", "from")):
        return [value]
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        return value
    return None


def _turns(value: Any, role: str) -> list[Turn]:
    if isinstance(value, str):
        return [Turn(role, value)] if value.strip() else []
    msgs = _messages(value)
    return message_turns(msgs) if msgs is not None else []


def _shared_prefix(a: list, b: list) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


class TrlAdapter(RowAdapter):
    """TRL prompt/completion and preference (prompt/chosen/rejected), plain or conversational."""

    name = "trl"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None or "instruction" in first:  # Alpaca's preference form
            return False
        if ("chosen" in first and "rejected" in first) or ("chosen_messages" in first and "rejected_messages" in first):
            return True
        return "prompt" in first and "completion" in first

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        prompt = next((obj[k] for k in _PROMPT_KEYS if obj.get(k) is not None), None)
        completion = next((obj[k] for k in _ANSWER_KEYS if obj.get(k) is not None), None)
        rejected = obj.get("rejected", obj.get("rejected_messages"))
        chosen_msgs, rejected_msgs = _messages(completion), _messages(rejected)
        if prompt is None and isinstance(completion, str) and isinstance(rejected, str):
            n = implicit_prompt(completion, rejected)
            prompt, completion, rejected = completion[:n], completion[n:], rejected[n:]
        elif prompt is None and chosen_msgs is not None and rejected_msgs is not None:
            # implicit prompt (TRL): the messages chosen and rejected share
            n = _shared_prefix(chosen_msgs, rejected_msgs)
            prompt, completion, rejected = chosen_msgs[:n], chosen_msgs[n:], rejected_msgs[n:]
        elif prompt is None and chosen_msgs is not None:
            prompt = [
                m for m in chosen_msgs if str(m.get("role", m.get("from", ""))).lower() not in ("assistant", "gpt")
            ]
        prompt_turns = _turns(prompt, "user")
        answer_turns = _turns(completion, "assistant")
        rejected_turns = _turns(rejected, "assistant")
        if self.options.messages:
            query = MessageSelector.parse(self.options.messages).select(
                [{"role": t.role, "content": t.text} for t in prompt_turns]
            )
            if query is None:
                return Skip(source, f"no prompt message for '{self.options.messages}'")
        else:
            query = "\n".join(t.text.strip() for t in prompt_turns if t.role == "user" and t.text.strip())
        answer = "\n".join(t.text.strip() for t in answer_turns if t.text.strip())
        views, meta = trajectory_views([*prompt_turns, *answer_turns], query=query, answer=answer)
        views["rejected"] = "\n".join(t.text.strip() for t in rejected_turns if t.text.strip())
        if views["rejected"]:
            views["text"] = views["text"] + "\n" + views["rejected"]
        if not views["text"].strip():
            return Skip(source, "no prompt, completion, chosen or rejected text")
        label = obj.get("label")
        if isinstance(label, bool):
            meta["label"] = label
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, positional_id=True, **meta)
        return self.record(rid, source, views, raw=obj, **meta)
