"""LMSYS-Chat-1M (and WildChat) records: ``{conversation_id, model, conversation[{role, content}], ...}``.

Read as ``chat`` reads a message list (:mod:`auditor.adapters.chat`), from the ``conversation`` key, with
``conversation_id`` (WildChat: ``conversation_hash``) as the record id. Views: ``query`` (the first user
turn; ``messages`` / ``--messages`` choose others), ``system``, ``calls``, ``answer``, ``user``, ``text``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.messages import is_chat
from .base import first_record
from .chat import ChatAdapter


class LmsysChatAdapter(ChatAdapter):
    """LMSYS-Chat / WildChat {conversation_id, conversation[{role, content}]}."""

    name = "lmsys-chat"
    message_keys = ("conversation",)
    id_keys = ("conversation_id", "conversation_hash", "id")

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        return first is not None and is_chat(first.get("conversation"))
