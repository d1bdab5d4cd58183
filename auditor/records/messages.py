"""Message selectors: which messages of a chat-shaped field are the text a user means.

A chat-shaped value is a list of messages (``{role, content}`` or ShareGPT ``{from, value}``), or a
list of turns each a list of messages (BFCL v4 ``question``). A selector is ``WHICH-ROLE``:
``WHICH`` is ``first``, ``last`` or ``all``; ``ROLE`` is ``user``, ``system``, ``assistant``,
``tool`` or ``any``. The default for a chat-shaped field is ``all-user``, so a system prompt that opens
every item is never the audited text.

>>> question = [[{"role": "system", "content": "You are a helpful agent."},
...              {"role": "user", "content": "Book a table for two."}],
...             [{"role": "user", "content": "Make it 8 pm."}]]
>>> MessageSelector.parse("first-user").select(question)
'Book a table for two.'
>>> MessageSelector.parse("all-user").select(question)
'Book a table for two.\\nMake it 8 pm.'
>>> MessageSelector.parse("first-any").select(question)
'You are a helpful agent.'

Errors: :class:`~auditor.errors.ConfigError` for a selector that does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

#: role spellings of the common chat formats, mapped to user / assistant / tool / system
ROLE_ALIASES = {
    "human": "user",
    "gpt": "assistant",
    "function": "tool",
    "observation": "tool",
    "bot": "assistant",
    "model": "assistant",
    "ipython": "tool",
}
_SPEC = re.compile(r"^(first|last|all)-([a-z_]+)$")
DEFAULT = "all-user"


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or OpenAI ``[{type: text, text}]`` / LLaMA-Factory
    ``[{type, value}]`` parts (every text-bearing part, in order; images and audio have none).

    >>> content_text([{"type": "text", "value": "Hi"}, {"type": "image_url", "image_url": {"url": "x"}},
    ...               {"type": "text", "text": "there"}])
    'Hi\\nthere'
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for p in content:
            if isinstance(p, str):
                texts.append(p)
            elif isinstance(p, dict):
                value = p.get("text", p.get("value"))
                if isinstance(value, str):
                    texts.append(value)
        return "\n".join(texts)
    return ""


def _message(m: Any) -> tuple[str, str] | None:
    if not isinstance(m, dict):
        return None
    role = m.get("role", m.get("from"))
    content = m.get("content", m.get("value"))
    if not isinstance(role, str):
        return None
    if isinstance(content, list):  # OpenAI / LLaMA-Factory content parts
        content = content_text(content)
    elif content is None and ("tool_calls" in m or "function_call" in m):  # an OpenAI call turn
        content = ""
    if not isinstance(content, str):
        return None
    role = role.lower()
    return ROLE_ALIASES.get(role, role), content


def flatten(value: Any) -> list[tuple[str, str]] | None:
    """``[(role, text)]`` of a chat-shaped value (turns flattened in order), or None when it is not one."""
    if not isinstance(value, list) or not value:
        return None
    items = [m for turn in value for m in turn] if all(isinstance(t, list) for t in value) else value
    out = [_message(m) for m in items]
    if not out or any(m is None for m in out):
        return None
    return [m for m in out if m is not None]


def is_chat(value: Any) -> bool:
    return flatten(value) is not None


@dataclass(frozen=True)
class MessageSelector:
    which: str = "all"
    role: str = "user"

    @classmethod
    def parse(cls, spec: str | None) -> MessageSelector:
        m = _SPEC.match((spec or DEFAULT).strip().lower())
        if not m:
            raise ConfigError(
                f"message selector '{spec}' not understood: use first-user, last-user, all-user, "
                "or WHICH-ROLE with WHICH in first/last/all and ROLE a role name or 'any'"
            )
        return cls(m.group(1), ROLE_ALIASES.get(m.group(2), m.group(2)))

    def __str__(self) -> str:
        return f"{self.which}-{self.role}"

    def select(self, value: Any) -> str | None:
        """The selected text of a chat-shaped ``value``; None when it is not chat-shaped or nothing matches."""
        msgs = flatten(value)
        if msgs is None:
            return None
        texts = [t for r, t in msgs if (self.role == "any" or r == self.role) and t.strip()]
        if not texts:
            return None
        if self.which == "first":
            return texts[0]
        if self.which == "last":
            return texts[-1]
        return "\n".join(texts)
