"""Generators of the issue-37 attacks (round 2 of the adversarial corpus), on real text only.

Each generator takes real eval items (bundled StableToolBench test queries) and writes them into
training data the way a real corpus would hold them: lightly edited inside long documents of real
prose, cut to a prefix, as the keys of a JSON object (a cache of model outputs), as token lists, or as
eval items rendered in a prompt template. The prose comes from public releases the tool was never
shaped on (``tests/data/foreign``: LLaMA-Factory's Alpaca demo outputs, Arena-Hard GPT-4 answers), so
the documents share the common words of English with every eval set, as a user's corpus does.

Everything here is deterministic (a seeded :class:`random.Random`); nothing is fitted to the tool:
the edits and the synonym table below were written before the rules that find them.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOREIGN = REPO / "tests" / "data" / "foreign"

#: one-word near-synonyms a person editing a query reaches for (a word -> its replacement)
SYNONYMS = {
    "want": "would like",
    "provide": "give",
    "information": "details",
    "find": "locate",
    "help": "assist",
    "know": "learn",
    "need": "require",
    "get": "obtain",
    "show": "display",
    "recommend": "suggest",
    "suggest": "recommend",
    "fetch": "retrieve",
    "tell": "inform",
    "interested": "keen",
    "latest": "newest",
    "popular": "well-known",
    "planning": "preparing",
    "also": "additionally",
    "some": "a few",
    "trip": "journey",
    "current": "present",
    "top": "best",
    "check": "verify",
    "give": "provide",
    "like": "love",
    "list": "rundown",
    "details": "particulars",
    "curious": "eager",
    "friends": "pals",
    "company": "firm",
}
COURTESY = ["Thanks a lot!", "Thank you in advance.", "Much appreciated!", "Please and thank you.", "Cheers!"]


def prose_paragraphs() -> list[str]:
    """Paragraphs of real English prose: the outputs of LLaMA-Factory's Alpaca demo, then Arena-Hard's
    GPT-4 answers, split at blank lines (paragraphs of 20 words or more)."""
    texts = [r["output"] for r in json.loads((FOREIGN / "llama-factory" / "alpaca_en_demo.json").read_text())]
    for line in (FOREIGN / "arena-hard" / "model_answer_gpt-4-0314.jsonl").read_text().splitlines():
        texts.append(json.loads(line)["choices"][0]["turns"][0]["content"])
    return [p.strip() for t in texts for p in re.split(r"\n\s*\n", t) if len(p.split()) >= 20]


def document(rng: random.Random, paragraphs: list[str], inserted: str, words: tuple[int, int] = (400, 900)) -> str:
    """A document of ``words`` words of real paragraphs with ``inserted`` as a paragraph of its own."""
    target = rng.randint(*words)
    chosen: list[str] = []
    while sum(len(p.split()) for p in chosen) < target:
        chosen.append(paragraphs[rng.randrange(len(paragraphs))])
    chosen.insert(rng.randint(1, len(chosen) - 1), inserted)
    return "\n\n".join(chosen)


def light_edit(query: str, k: int) -> str:
    """Two light edits: the table word nearest the middle of ``query`` replaced by its near-synonym,
    and a courtesy phrase appended."""
    words = query.split(" ")
    middle = len(words) / 2
    candidates = [i for i, w in enumerate(words) if w.lower().strip(",.?!") in SYNONYMS]
    if candidates:
        i = min(candidates, key=lambda j: abs(j - middle))
        bare = words[i].lower().strip(",.?!")
        words[i] = words[i].lower().replace(bare, SYNONYMS[bare])
    return " ".join(words) + " " + COURTESY[k % len(COURTESY)]


def two_swaps(query: str) -> str:
    """Words 19 and 20, and 41 and 42, swapped: verbatim runs of 19 and 20 words are left (0-based:
    words 0-18 and 21-40). Needs 43 words or more."""
    w = query.split(" ")
    if len(w) < 43:
        raise ValueError("two_swaps needs 43 words")
    w[19], w[20] = w[20], w[19]
    w[41], w[42] = w[42], w[41]
    return " ".join(w)


def prefix(query: str, share: float = 0.6) -> str:
    """The first ``share`` of the words of ``query`` (rounded up)."""
    w = query.split(" ")
    return " ".join(w[: -(-len(w) * int(share * 100) // 100)])


#: a short rendering template (25 words around the query) and a ReAct agent prompt (StableToolBench's own
#: style of system prompt, ~90 words), each with ``{query}`` where the item goes
TEMPLATES = {
    "short": "Answer the user's request below using the tools you have. Request: {query} Reply with a final answer once you are done.",
    "react": (
        "You are AutoGPT, you can use many tools (functions) to do the following task. First I will give you "
        "the task description, and your task start. At each step, you need to give your thought to analyze "
        "the status now and what to do next, with a function call to actually execute your step. After the "
        "call, you will get the call result, and you are now in a new state. Task: {query}\nThought: "
        "Let me think about which tool to call first. Remember: the state change is irreversible, you "
        "can't go back to one of the former states; if you want to restart the task, say 'I give up and restart'."
    ),
}


def tokenized(text: str) -> list[str]:
    """``text`` as a token list, as a tokenizer's pre-split words: words and punctuation apart."""
    return re.findall(r"\w+|[^\w\s]", text)


def shift_digits(text: str) -> str:
    """Every digit replaced by the next one (9 → 0): a sibling of an item that differs in its values."""
    return re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), text)
