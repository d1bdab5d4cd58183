"""Training sets with leaks planted one way at a time, for ``bench_leaks.py`` (issue 22's measurements).

Filler records are real text from ``../shared/data``: ToolBench test queries with their gpt-3.5 answers and
tool docs (ToolEval's default evalset, minus any text that holds a StableToolBench query), the Glaive
function-calling demo dialogues (LLaMA-Factory) and API-Bank's level-3 training records. Each case writes
a training file of ``RECORDS`` records in one schema, with the ``PLANTS`` eval texts planted in one field
(record ``k * STRIDE + STRIDE - 1`` holds text ``k``), or with every planted text disguised one way.

>>> pool = [Filler("sys", f"user {i}", f"answer {i}", f"context {i}", [], f"other {i}") for i in range(4)]
>>> records = list(schema_records("alpaca_input", pool, ["Q0", "Q1"], count=4))
>>> [r["input"] for r in records]
['user 0', 'Q0', 'user 2', 'Q1']
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from benchmarks.common import SHARED

RECORDS = 2000
PLANTS = 50


@dataclass(frozen=True)
class Filler:
    """One real exchange: a system prompt, the user's request, the reply, a longer context (a tool
    result or document), the tools offered (OpenAI function schemas) and a second reply (a rejected one)."""

    system: str
    user: str
    assistant: str
    context: str
    tools: list[dict]
    other: str


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _grams(words: list[str], n: int = 8) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def filler_pool(forbidden: Sequence[str]) -> list[Filler]:
    """The real filler, interleaved by source, without any exchange whose text holds one of ``forbidden``
    (the eval texts, as lower-case words) or shares 8 consecutive words with one (ToolBench's test set
    holds near-duplicates of StableToolBench queries: they would be real findings in every case)."""
    bad = [_norm(t) for t in forbidden]
    bad_grams = set().union(*(_grams(b.split()) for b in bad))
    toolbench = _toolbench()
    glaive = _glaive()
    apibank = _apibank()
    out: list[Filler] = []
    for i in range(max(len(toolbench), len(glaive), len(apibank))):
        for source in (toolbench, glaive, apibank):
            if i < len(source):
                f = source[i]
                text = _norm(" ".join((f.system, f.user, f.assistant, f.context, f.other, json.dumps(f.tools))))
                if not any(b in text for b in bad) and not (_grams(text.split()) & bad_grams):
                    out.append(f)
    return out


def _toolbench() -> list[Filler]:
    folder = SHARED / "stabletoolbench/toolbench/tooleval/results/default_evalset/gpt-3.5-turbo_CoT"
    system = _toolbench_system()
    out = []
    for path in sorted(folder.glob("G*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")).values():
            tools = [{"type": "function", "function": t} for t in item.get("available_tools", []) if "name" in t]
            answer = (item.get("answer") or {}).get("final_answer") or ""
            desc = next((t["function"].get("description", "") for t in tools), "")
            out.append(Filler(system, item["query"], answer, desc, tools, "I give up and restart."))
    return out


def _toolbench_system() -> str:
    """The system prompt of ToolBench's DFSDT answers (one real trajectory's), without its tool list."""
    path = sorted((SHARED / "toolbench/data_example/answer/G1_answer").glob("*.json"))[0]
    found: list[str] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            if o.get("role") == "system" and isinstance(o.get("content"), str):
                found.append(o["content"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(json.loads(path.read_text(encoding="utf-8")))
    return found[0].split("You have access of the following tools:")[0].strip()


def _glaive() -> list[Filler]:
    data = json.loads((SHARED / "llama-factory/data/glaive_toolcall_en_demo.json").read_text(encoding="utf-8"))
    out = []
    for rec in data:
        turns = rec["conversations"]
        user = next(t["value"] for t in turns if t["from"] == "human")
        replies = [t["value"] for t in turns if t["from"] in ("gpt", "function_call")]
        obs = next((t["value"] for t in turns if t["from"] == "observation"), "")
        tools = [{"type": "function", "function": t} for t in json.loads(rec.get("tools") or "[]")]
        system = "You are a helpful assistant with access to the following functions. Use them if required."
        out.append(Filler(system, user, replies[-1] if replies else "", obs, tools, replies[0] if replies else ""))
    return out


def _apibank() -> list[Filler]:
    data = json.loads((SHARED / "damo-convai/api-bank/training-data/lv3-train.json").read_text(encoding="utf-8"))
    out = []
    for rec in data:
        user = rec["input"].rsplit("User: ", 1)[-1].split("TIME:")[0].strip() or rec["input"][-300:]
        out.append(Filler(rec["instruction"].strip(), user, rec["output"], rec["input"], [], rec["output"][:80]))
    return out


# -- schemas ----------------------------------------------------------------------------------------


def _chat(f: Filler, user: str | None = None, extra: list[dict] | None = None) -> list[dict]:
    msgs = [{"role": "system", "content": f.system}, {"role": "user", "content": f.user if user is None else user}]
    return msgs + (extra or []) + [{"role": "assistant", "content": f.assistant}]


def _with(text: str, plant: str) -> str:
    """A field's real text with the planted text as its last paragraph."""
    return f"{text}\n\n{plant}" if text else plant


# One builder per schema: (filler, position, planted text or None) -> record. The planted text goes in
# the field the case names; nothing else differs from a filler record.
Builder = Callable[[Filler, int, "str | None"], Any]

SCHEMAS: dict[str, tuple[str, Builder]] = {
    "alpaca_input": (
        "Alpaca {instruction, input, output}, query in input",
        lambda f, i, q: {"instruction": f.system, "input": q or f.user, "output": f.assistant},
    ),
    "alpaca_output": (
        "Alpaca, query in output",
        lambda f, i, q: {
            "instruction": f.system,
            "input": f.user,
            "output": _with(f.assistant, q) if q else f.assistant,
        },
    ),
    "alpaca_no_input": (
        "Alpaca {instruction, output}, query in output",
        lambda f, i, q: {"instruction": f.user, "output": _with(f.assistant, q) if q else f.assistant},
    ),
    "prompt_completion": (
        "prompt/completion, query in completion",
        lambda f, i, q: {"prompt": f.user, "completion": _with(f.assistant, q) if q else f.assistant},
    ),
    "qa_answer": (
        "QA {question, answer}, query in answer",
        lambda f, i, q: {"question": f.user, "answer": _with(f.assistant, q) if q else f.assistant},
    ),
    "dolly_context": (
        "Dolly {instruction, context, response, category}, query in context",
        lambda f, i, q: {
            "instruction": f.user,
            "context": _with(f.context, q) if q else f.context,
            "response": f.assistant,
            "category": "closed_qa",
        },
    ),
    "dpo_chosen": (
        "DPO {prompt, chosen, rejected}, query in chosen",
        lambda f, i, q: {"prompt": f.user, "chosen": _with(f.assistant, q) if q else f.assistant, "rejected": f.other},
    ),
    "schema_change_1000": (
        "JSON Lines, {id, text} then from record 1,000 Alpaca with the query in input",
        lambda f, i, q: (
            {"id": f"r{i}", "text": f"{f.user}\n{f.assistant}"}
            if i < RECORDS // 2
            else {"id": f"r{i}", "instruction": f.system, "input": q or f.user, "output": f.assistant}
        ),
    ),
    "openai_tool_description": (
        "OpenAI {messages, tools}, query in tools[].function.description",
        lambda f, i, q: {
            "messages": _chat(f),
            "tools": [
                {"type": "function", "function": {"name": "search_web", "description": q, "parameters": {}}},
                *f.tools,
            ]
            if q
            else f.tools,
        },
    ),
    "chat_user": (
        "OpenAI {messages}, query as the user turn (the reference case)",
        lambda f, i, q: {"id": f"r{i}", "messages": _chat(f, q)},
    ),
    # -- schemas the generic reader refused ("no text field found") --
    "trl_preference_messages": (
        "TRL preference, implicit prompt: chosen/rejected message lists, query in the user turn",
        lambda f, i, q: {
            "chosen": [{"role": "user", "content": q or f.user}, {"role": "assistant", "content": f.assistant}],
            "rejected": [{"role": "user", "content": q or f.user}, {"role": "assistant", "content": f.other}],
        },
    ),
    "trl_prompt_messages": (
        "TRL preference, conversational: prompt/chosen/rejected message lists",
        lambda f, i, q: {
            "prompt": [{"role": "user", "content": q or f.user}],
            "chosen": [{"role": "assistant", "content": f.assistant}],
            "rejected": [{"role": "assistant", "content": f.other}],
        },
    ),
    "lmsys_conversation": (
        "LMSYS-Chat {conversation_id, model, conversation, turn, language}",
        lambda f, i, q: {
            "conversation_id": f"c{i:05d}",
            "model": "vicuna-13b",
            "conversation": [{"role": "user", "content": q or f.user}, {"role": "assistant", "content": f.assistant}],
            "turn": 1,
            "language": "English",
        },
    ),
    "glaive_v2": (
        "Glaive v2 {system, chat} strings",
        lambda f, i, q: {
            "system": "SYSTEM: " + f.system + ("\n" + json.dumps(f.tools[0]["function"], indent=4) if f.tools else ""),
            "chat": f"USER: {q or f.user}\n\n\nASSISTANT: {f.assistant} <|endoftext|>\n\n\n",
        },
    ),
    "nested_messages": (
        "messages nested under data.messages",
        lambda f, i, q: {"id": f"r{i}", "data": {"messages": _chat(f, q)}},
    ),
    "text_list": (
        "a text field holding a list of strings",
        lambda f, i, q: {"id": f"r{i}", "text": [f.system, q or f.user, f.assistant]},
    ),
    "content_parts": (
        "LLaMA-Factory messages with content as [{type, value}] parts",
        lambda f, i, q: {
            "messages": [{"role": m["role"], "content": [{"type": "text", "value": m["content"]}]} for m in _chat(f, q)]
        },
    ),
    "parquet_messages": (
        "Parquet with a messages column (list<struct<role, content>>)",
        lambda f, i, q: {"id": f"r{i}", "messages": _chat(f, q)},
    ),
    "json_data_lists": (
        'one JSON document {"data": [...]} whose items are message lists',
        lambda f, i, q: _chat(f, q),
    ),
}
NOT_READ = (
    "trl_preference_messages",
    "trl_prompt_messages",
    "lmsys_conversation",
    "glaive_v2",
    "nested_messages",
    "text_list",
    "content_parts",
    "parquet_messages",
    "json_data_lists",
)


def schema_records(schema: str, pool: Sequence[Filler], plants: Sequence[str], count: int = RECORDS) -> Iterator[Any]:
    """``count`` records of ``schema``; plant ``k`` in record ``k * stride + stride - 1`` (in the second
    half for ``schema_change_1000``: the plants sit after the schema changed)."""
    build = SCHEMAS[schema][1]
    start = count // 2 if schema == "schema_change_1000" else 0
    stride = (count - start) // len(plants) if plants else 0
    for i in range(count):
        k, r = divmod(i - start, stride) if stride and i >= start else (-1, -1)
        planted = plants[k] if 0 <= k < len(plants) and r == stride - 1 else None
        yield build(pool[i % len(pool)], i, planted)


def write_schema(schema: str, records: list[Any], folder: Path, as_csv: bool = False) -> Path:
    """The records as the schema's users store them: JSON Lines, CSV, Parquet or one JSON document."""
    folder.mkdir(parents=True, exist_ok=True)
    if as_csv:
        path = folder / "train.csv"
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
        path.write_text(buf.getvalue(), encoding="utf-8")
    elif schema == "parquet_messages":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / "train.parquet"
        pq.write_table(pa.Table.from_pylist(records), path)
    elif schema == "json_data_lists":
        path = folder / "train.json"
        path.write_text(json.dumps({"data": records}, ensure_ascii=False), encoding="utf-8")
    else:
        path = folder / "train.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# -- disguises --------------------------------------------------------------------------------------

_ACUTE = str.maketrans("aeiouAEIOU", "áéíóúÁÉÍÓÚ")
_DOT_BELOW = str.maketrans("aeiouAEIOU", "ạẹịọụẠẸỊỌỤ")
_SMALL_CAPS = str.maketrans("abcdefghijklmnoprstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ")


def _one_accent_per_word(q: str) -> str:
    out = []
    for w in q.split(" "):
        m = re.search(r"[aeiouAEIOU]", w)
        out.append(w[: m.start()] + w[m.start()].translate(_ACUTE) + w[m.end() :] if m else w)
    return " ".join(out)


def _camel(q: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9']+", q))


DISGUISES: dict[str, tuple[str, Callable[[str], str]]] = {
    "combining_acute_per_vowel": (
        "a combining acute after each vowel",
        lambda q: re.sub(r"([aeiouAEIOU])", "\\1\u0301", q),
    ),
    "one_accent_per_word": ("the first vowel of each word accented (precomposed)", _one_accent_per_word),
    "dot_below": ("every vowel with a dot below (precomposed)", lambda q: q.translate(_DOT_BELOW)),
    "greek_e_eta_chi": ("Greek ε for e, η for n, χ for x", lambda q: q.translate(str.maketrans("enx", "εηχ"))),
    "small_capitals": ("lower-case letters as Latin small capitals", lambda q: q.translate(_SMALL_CAPS)),
    "percent20": ("spaces as %20", lambda q: q.replace(" ", "%20")),
    "rtl_override_reversed": ("RIGHT-TO-LEFT OVERRIDE + the text reversed", lambda q: "\u202e" + q[::-1] + "\u202c"),
    "lunate_sigma": ("c as Greek lunate sigma ϲ", lambda q: q.replace("c", "\u03f2")),
    "quote_plus": ("urllib quote_plus", quote_plus),
    "camel_case": ("words joined in CamelCase", _camel),
}
#: disguises that change the record's shape rather than the text
SHAPED = {
    "tool_call_url": "the query inside a search URL of a tool call (OpenAI tool_calls, arguments as a JSON string)",
    "split_two_user_turns": "the query split at its middle word across two user turns",
}


def disguised_record(kind: str, f: Filler, i: int, q: str | None) -> dict:
    """A chat record (OpenAI messages) whose user turn is the disguised query."""
    if q is None:
        return {"id": f"r{i}", "messages": _chat(f)}
    if kind == "tool_call_url":
        args = json.dumps({"url": "https://www.bing.com/search?q=" + quote(q)})
        call = {"id": "call_1", "type": "function", "function": {"name": "fetch_url", "arguments": args}}
        extra: list[dict] = [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": f.context or "no results"},
        ]
        return {"id": f"r{i}", "messages": _chat(f, extra=extra)}
    if kind == "split_two_user_turns":
        words = q.split(" ")
        half = len(words) // 2
        extra = [
            {"role": "assistant", "content": "Sure, go on."},
            {"role": "user", "content": " ".join(words[half:])},
        ]
        return {"id": f"r{i}", "messages": _chat(f, " ".join(words[:half]), extra=extra)}
    return {"id": f"r{i}", "messages": _chat(f, DISGUISES[kind][1](q))}


def short_record(f: Filler, i: int, item: str | None) -> dict:
    """Seal-Tools style: the item in a ``task_instruction = "..."`` line inside a longer prompt."""
    task = item if item is not None else f.user
    prompt = f'{f.system}\nYou are given the following tools and a task.\ntask_instruction = "{task}"\nAnswer:'
    return {"id": f"r{i}", "prompt": prompt, "completion": f.assistant}


def short_goals(lo: int, hi: int, count: int = PLANTS) -> list[tuple[int, str]]:
    """The first ``count`` distinct WebShop human goals of ``lo``..``hi`` words, with their indices."""
    goals = json.loads((SHARED / "webshop/baseline_models/data/human_goals.json").read_text(encoding="utf-8"))
    seen: set[str] = set()
    out = []
    for idx, g in enumerate(goals):
        if lo <= len(g.split()) <= hi and g not in seen:
            seen.add(g)
            out.append((idx, g))
        if len(out) == count:
            break
    return out


def toolalpaca_apis(
    pool: Sequence[Filler], plants: Sequence[str], count: int = RECORDS, per_api: int = 10
) -> list[dict]:
    """ToolAlpaca's older layout: API objects holding ``per_api`` ``Questions`` each (``count`` questions
    in all); question ``j`` is plant ``k`` when ``j = k * stride + stride - 1``."""
    stride = count // len(plants)
    apis = []
    for a in range(count // per_api):
        questions = []
        for j in range(a * per_api, (a + 1) * per_api):
            k, r = divmod(j, stride)
            questions.append(plants[k] if r == stride - 1 and k < len(plants) else pool[j % len(pool)].user)
        f = pool[a % len(pool)]
        name = (f.tools[0]["function"]["name"] if f.tools else f"api_{a}").replace("_", " ").title()
        doc = {"openapi": "3.0.0", "info": {"title": name, "description": f.context[:200]}}
        apis.append(
            {
                "Name": name,
                "Description": f.context[:200] or f.system[:200],
                "Category": "Tools",
                "Introduction": f.system,
                "NLDocumentation": json.dumps(f.tools[:1]),
                "Documentation": json.dumps(doc),
                "Functions": {t["function"]["name"]: t["function"].get("description", "") for t in f.tools},
                "Questions": questions,
            }
        )
    return apis
