"""What the encoder reads of a text: its first ``max_seq_length`` word pieces (all-MiniLM-L6-v2: 256),
cut where the model's own tokenizer stops. The lexical gate judges each segment on this, so what
decides a segment is what the model would embed: a window of prose is read almost whole, one of
numbers or code much less ("1.4208365e-03" is nine word pieces).

>>> reach = ModelReach.bundled()   # all-MiniLM-L6-v2: 256 word pieces
>>> prose, numbers = "Book a room for 2 adults", " ".join(["1.4208365e-03"] * 100)
>>> [len(t.split()) for t in reach.cut([prose, numbers])]
[6, 29]

Errors: none of its own; a tokenizer that cannot encode raises what ``tokenizers`` raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ModelReach:
    """Cuts texts to what a model reads, with a copy of its fast tokenizer (``tokenizers.Tokenizer``)
    truncating at ``max_seq_length``; picklable."""

    def __init__(self, tokenizer: Any, max_seq_length: int):
        from tokenizers import Tokenizer

        self.max_seq_length = int(max_seq_length)
        self.tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a copy: the encoder's stays as it is
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_seq_length)

    @classmethod
    def bundled(cls) -> ModelReach:
        """The bundled model's reach (its ``tokenizer.json`` and ``max_seq_length``), without loading it."""
        import json

        from tokenizers import Tokenizer

        from .model import bundled_model_path

        folder = bundled_model_path()
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return cls(Tokenizer.from_file(str(folder / "tokenizer.json")), int(config["max_seq_length"]))

    @classmethod
    def of(cls, model: Any) -> ModelReach:
        """The reach of a loaded sentence model (torch or ONNX backend)."""
        return cls(model.tokenizer.backend_tokenizer, int(model.max_seq_length))

    def cut(self, texts: Sequence[str]) -> list[str]:
        """Each text as far as the model reads it (the whole text when it fits)."""
        out = []
        for text, enc in zip(texts, self.tokenizer.encode_batch(list(texts))):
            if len(enc.ids) < self.max_seq_length:
                out.append(text)
            else:
                out.append(text[: max((end for _, end in enc.offsets), default=0)])
        return out
