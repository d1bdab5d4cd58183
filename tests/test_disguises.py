"""Issue 22, item 3: disguises that change how a planted eval item is written, not what it says.

Each test plants the first 50 bundled StableToolBench test queries, disguised one way, among 2,000
chat training records sharing an agent system prompt (the helpers of ``test_false_pass``), runs the
real audit with the default methods and engine, and counts the planted items found conclusively.
Before this change every disguise here but two was found 0/50 (lunate sigma 16–24/50, ``quote_plus``
37–42/50, a query split across two user turns with an assistant turn between 42–43/50). The clean
controls (real, unrelated data) must stay clean.
"""

from __future__ import annotations

import json
import unicodedata
import urllib.parse
from pathlib import Path

import pytest
from helpers import shared_file
from test_false_pass import SYSTEM, _write, chat, filler, stb_config, stb_items

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import DatasetSpec
from auditor.text.normalize import normalize

_VOWELS = "aeiouAEIOU"
_SMALL_CAPITALS = dict(zip("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ"))


def _one_accent_per_word(q: str) -> str:
    words = []
    for w in q.split(" "):
        i = next((i for i, c in enumerate(w) if c in _VOWELS), None)
        words.append(w if i is None else w[:i] + unicodedata.normalize("NFC", w[i] + "\u0301") + w[i + 1 :])
    return " ".join(words)


DISGUISES = {
    "combining_acute_on_each_vowel": lambda q: "".join(c + "\u0301" if c in _VOWELS else c for c in q),
    "one_accent_per_word": _one_accent_per_word,
    "dot_below_accents": lambda q: unicodedata.normalize(
        "NFC", "".join(c + "\u0323" if c in _VOWELS else c for c in q)
    ),
    "greek_epsilon_eta_chi": lambda q: q.translate(str.maketrans("enx", "εηχ")),
    "latin_small_capitals": lambda q: "".join(_SMALL_CAPITALS.get(c.lower(), c) for c in q),
    "percent_20": lambda q: q.replace(" ", "%20"),
    "url_quote": urllib.parse.quote,
    "quote_plus": urllib.parse.quote_plus,
    "inside_a_tool_call_url": lambda q: f"GET https://api.example.com/search?q={urllib.parse.quote_plus(q)}&lang=en",
    "right_to_left_override_reversed": lambda q: "\u202e" + q[::-1],
    "lunate_sigma_for_c": lambda q: q.replace("c", "ϲ"),
    "camel_cased_run": lambda q: "".join(w[:1].upper() + w[1:] for w in q.split()),
}
#: the issue's targets: >= 48/50, camel case and lunate sigma >= 45/50
TARGET = {"camel_cased_run": 45, "lunate_sigma_for_c": 45}


def _split_turns(rid: str, query: str, between: str | None) -> str:
    words = query.split(" ")
    half = len(words) // 2
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": " ".join(words[:half])}]
    if between is not None:
        msgs.append({"role": "assistant", "content": between})
    msgs += [{"role": "user", "content": " ".join(words[half:])}, {"role": "assistant", "content": "On it."}]
    return json.dumps({"id": rid, "messages": msgs}) + "\n"


def _found(tmp_path: Path, planted_rows: list[str], items) -> set[int]:
    rows = [chat(f"r{i}", filler(i)) for i in range(2000)]
    for k, row in enumerate(planted_rows):
        rows.insert(40 * k + 3, row)
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path))
    return {f["eval_ordinal"] for f in report.findings if f["conclusive"]} & {it.ordinal for it in items}


@pytest.mark.parametrize("kind", sorted(DISGUISES))
def test_disguised_queries_are_found_by_the_default_audit(tmp_path, kind):
    items = stb_items(50)
    disguised = [DISGUISES[kind](it.view("query")) for it in items]
    assert all(normalize(d) != d for d in disguised)  # each is a disguise, not the query itself
    found = _found(tmp_path, [chat(f"q{k}", d) for k, d in enumerate(disguised)], items)
    assert len(found) >= TARGET.get(kind, 48), (kind, len(found))


@pytest.mark.parametrize("between", [None, "Sure, go on."], ids=["adjacent_user_turns", "assistant_turn_between"])
def test_a_query_split_across_two_user_turns_is_found(tmp_path, between):
    """Split in the middle: with an assistant turn between the halves, the ``text`` view holds no
    n-gram across the split, so a 20–33-word item (13-grams) had too few left (42/50 before)."""
    items = stb_items(50)
    rows = [_split_turns(f"q{k}", it.view("query"), between) for k, it in enumerate(items)]
    assert len(_found(tmp_path, rows, items)) >= 48


def _conclusive(report) -> list:
    return [f for f in report.findings if f["conclusive"]]


def test_clean_controls_stay_clean(tmp_path):
    """Tool-MVR's public training samples (ToolBench-V, ToolBench-R) and RefineToolBench I1/I2 cases
    against StableToolBench, and WebShop goals 0:100 against 100:200: real, unrelated data with
    camel-cased tool names and JSON keys, no leak. (Tool-MVR's I3 cases and output_case files are
    runs on StableToolBench test queries: they hold them, and are found as before.)"""
    rels = ["training_data/selected_Toolbench_V.json", "training_data/selected_Toolbench_R.json"]
    rels += ["RefineToolBench/I1.json", "RefineToolBench/I2.json"]
    files = [str(shared_file(f"tool-mvr/data/{rel}")) for rel in rels]
    for path in files:
        cfg = AuditConfig(
            datasets={
                "ev": DatasetSpec("ev", ["stabletoolbench"], role="eval"),
                "tr": DatasetSpec("tr", [path], role="train"),
            },
            checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
            index_dir=str(tmp_path / "idx"),
        )
        report = run_audit(cfg)
        assert report.checks[0]["train_records"] > 0, path
        assert _conclusive(report) == [], path
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["webshop:0:100"], role="eval"),
            "tr": DatasetSpec("tr", ["webshop:100:200"], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(cfg)
    assert report.verdict == "pass" and report.findings == []


def test_an_index_built_under_another_normalization_is_not_reused(tmp_path, monkeypatch):
    """Persisted indexes hash the normalization's version into their eval fingerprint: one built by an
    auditor that normalized differently (where a disguised eval item had other tokens) gets another
    folder name, so this auditor builds its own instead of reusing it."""
    import auditor.store.indexes as indexes

    items = stb_items(20)
    train = _write(tmp_path / "train.jsonl", [chat(f"q{k}", it.view("query")) for k, it in enumerate(items)])
    monkeypatch.setattr(indexes, "NORMALIZATION_VERSION", indexes.NORMALIZATION_VERSION - 1)
    run_audit(stb_config(train, tmp_path))
    old = {p.name for p in (tmp_path / "idx").iterdir() if p.is_dir()}
    monkeypatch.undo()
    report = run_audit(stb_config(train, tmp_path))
    new = {p.name for p in (tmp_path / "idx").iterdir() if p.is_dir()} - old
    assert old and {n.split("-")[0] for n in new} == {n.split("-")[0] for n in old}
    assert report.checks[0]["contaminated_items"] == 20
