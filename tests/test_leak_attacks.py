"""Issue 37: the second adversarial round, each attack built by :mod:`leak_attacks` on real text.

Every test runs the real audit (default methods, default engine) and counts what it finds of the
planted eval items: conclusive, or at least suspected where the issue says so. The code before this
change, run on this file (``a4ddaa6``): light edits inside long documents 15/20 found; the two-swap
queries partly missed; the first / last 60 % of a query 30/50 and 18/50; prompt-keyed JSON objects
0/50 (both shapes); token lists 0/50 conclusive; queries inside rendered eval items 41/50 (ReAct) and
46/50 (short template); sibling items (tau2-retail, tau2-airline, API-Bank, BFCL values shifted) and
questions sharing a passage conclusive. 14 of these 17 tests failed there.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from leak_attacks import (
    TEMPLATES,
    document,
    light_edit,
    prefix,
    prose_paragraphs,
    shift_digits,
    tokenized,
    two_swaps,
)
from test_false_pass import _write, chat, filler, stb_config, stb_items

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.text.normalize import normalize


def _found(report, items, conclusive_only: bool = False) -> set[int]:
    """Ordinals of ``items`` with a conclusive finding (or a suspected one, unless ``conclusive_only``)."""
    wanted = {it.ordinal for it in items}
    return {
        f["eval_ordinal"]
        for f in report.findings
        if f["eval_ordinal"] in wanted
        and (f["conclusive"] or (not conclusive_only and f["evidence"].get("tier") == "suspected"))
    }


def _flagged(report) -> list[dict]:
    return [f for f in report.findings if f["conclusive"] or f["evidence"].get("tier") == "suspected"]


def _documents(tmp_path: Path, planted: list[str], clean: int = 150, seed: int = 37) -> Path:
    rng = random.Random(seed)
    paragraphs = prose_paragraphs()
    rows = [{"id": f"d{i}", "text": document(rng, paragraphs, rng.choice(paragraphs))} for i in range(clean)]
    for k, text in enumerate(planted):
        rows.insert(7 * k + 3, {"id": f"p{k}", "text": document(rng, paragraphs, text)})
    return _write(tmp_path / "docs.jsonl", [json.dumps(r) + "\n" for r in rows])


def test_light_edits_inside_long_documents_are_found(tmp_path):
    """20 test queries, each with a word swapped for a near-synonym and a courtesy phrase appended, as a
    paragraph of a 400-900-word document of real prose: each is found (before: 8/20, not even
    suspected), and most conclusively (the n-grams found cover 80 % of the item's tokens)."""
    items = stb_items(120)[100:120]
    edited = [light_edit(it.view("query"), k) for k, it in enumerate(items)]
    assert all(normalize(e) != normalize(it.view("query")) for e, it in zip(edited, items))
    report = run_audit(stb_config(_documents(tmp_path, edited), tmp_path))
    assert len(_found(report, items)) >= 19
    assert len(_found(report, items, conclusive_only=True)) >= 15
    planted = {f"p{k}" for k in range(len(items))}
    assert all(f["train_id"] in planted for f in _flagged(report))  # the 150 clean documents: nothing


def test_clean_long_documents_pass(tmp_path):
    """The same 170 documents of real prose without a planted query: no finding at all."""
    report = run_audit(stb_config(_documents(tmp_path, [], clean=170), tmp_path))
    assert _flagged(report) == [] and report.verdict == "pass"


def test_two_word_swaps_leaving_19_and_20_word_runs_are_found(tmp_path):
    """A user's case: two word swaps leave verbatim runs of 19 and 20 words; inside a document each such
    query (every one of the first 120 with 43 words or more) is found: conclusive where the runs cover
    80 % of its tokens, suspected where less (before: 0/1, not even suspected)."""
    items = [it for it in stb_items(120) if len(it.view("query").split(" ")) >= 43]
    assert len(items) >= 10
    report = run_audit(stb_config(_documents(tmp_path, [two_swaps(it.view("query")) for it in items]), tmp_path))
    assert _found(report, items) == {it.ordinal for it in items}
    by_item = {f["eval_ordinal"]: f for f in report.findings if f["method"] == "ngram"}
    assert all(f["conclusive"] == (f["evidence"].get("coverage", 1.0) >= 0.8) for f in by_item.values())


@pytest.mark.parametrize("part", ["leading", "trailing"])
def test_sixty_percent_of_a_query_is_found(tmp_path, part):
    """The first (or last) 60 % of each of 50 queries, alone in a user turn: at least suspected (before:
    10/50). A part of 13 tokens or more holds 13-grams of the item: what lm-eval's janitor flags."""
    items = stb_items(50)
    parts = [
        prefix(q)
        if part == "leading"
        else " ".join(reversed(prefix(" ".join(reversed(q.split(" "))).strip()).split(" ")))
        for q in (it.view("query") for it in items)
    ]
    rows = [chat(f"r{i}", filler(i)) for i in range(2000)]
    for k, p in enumerate(parts):
        rows.insert(40 * k + 3, chat(f"q{k}", p))
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path))
    assert len(_found(report, items)) >= 48
    suspected = [f for f in report.findings if f["evidence"].get("tier") == "suspected" and f["method"] == "ngram"]
    assert suspected and all("suspected_because" in f["evidence"] for f in suspected)


@pytest.mark.parametrize("shape", ["string", "object"])
def test_prompt_keyed_json_object_is_found(tmp_path, shape):
    """A cache of model outputs, one JSON object keyed by the prompt (``{prompt: response}`` or
    ``{prompt: {response, model}}``), 2,000 prompts with 50 test queries among them: every query is
    found in its key (before: 0/50, the key was only meta), and the proof names the key."""
    items = stb_items(50)
    prompts = [filler(i) for i in range(2000)]
    for k, it in enumerate(items):
        prompts.insert(40 * k + 3, it.view("query"))
    doc = {
        p: (f"Response number {i}." if shape == "string" else {"response": f"Response number {i}.", "model": "m-7b"})
        for i, p in enumerate(prompts)
    }
    path = tmp_path / "cache.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    report = run_audit(stb_config(path, tmp_path))
    assert len(_found(report, items, conclusive_only=True)) >= 48
    fields = {f["evidence"].get("field") for f in report.findings if f["conclusive"]}
    assert any(str(x).endswith("(key)") for x in fields), fields


def test_token_lists_are_found_in_order(tmp_path):
    """Records that are token lists (a query's words and punctuation, between the tokens of real filler
    text): every planted query is found conclusively (before: 2/50, repeated tokens dropped)."""
    items = stb_items(50)
    rows = []
    for i in range(500):
        rows.append(json.dumps({"id": f"r{i}", "tokens": tokenized(filler(i) + " " + filler(i + 1))}) + "\n")
    for k, it in enumerate(items):
        toks = tokenized(filler(k)) + tokenized(it.view("query")) + tokenized(filler(k + 7))
        rows.insert(10 * k + 3, json.dumps({"id": f"q{k}", "tokens": toks}) + "\n")
    report = run_audit(stb_config(_write(tmp_path / "tokens.jsonl", rows), tmp_path))
    assert len(_found(report, items, conclusive_only=True)) >= 48


def _templated_eval(tmp_path: Path, template: str, items) -> Path:
    rows = [
        json.dumps({"id": it.id, "prompt": TEMPLATES[template].format(query=it.view("query"))}) + "\n" for it in items
    ]
    return _write(tmp_path / f"eval_{template}.jsonl", rows)


def _templated_config(tmp_path: Path, eval_path: Path, train: Path) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [str(eval_path)], role="eval", text_field="prompt"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_templated_eval_items_are_searched_for_what_is_left(tmp_path, template):
    """Eval items stored as rendered prompts (a template around the query; ``--eval-text-field prompt``)
    against training data holding the bare queries: found conclusively (before: 0/50, and 18 lost with a
    25-word template), the report saying template text was left out; training records rendered in the
    same template around *other* queries are no finding at all."""
    items = stb_items(150)
    evals, others = items[:50], items[100:150]
    eval_path = _templated_eval(tmp_path, template, evals)
    rows = [chat(f"r{i}", filler(i)) for i in range(2000)]
    for k, it in enumerate(evals):
        rows.insert(40 * k + 3, chat(f"q{k}", it.view("query")))
    report = run_audit(_templated_config(tmp_path, eval_path, _write(tmp_path / "train.jsonl", rows)))
    found = {f["eval_id"] for f in report.findings if f["conclusive"]}
    assert len(found & {it.id for it in evals}) >= 48
    assert any("template text" in n for n in report.checks[0]["notes"]), report.checks[0]["notes"]
    same_template = [chat(f"o{k}", TEMPLATES[template].format(query=it.view("query"))) for k, it in enumerate(others)]
    clean = run_audit(_templated_config(tmp_path, eval_path, _write(tmp_path / "clean.jsonl", same_template)))
    assert _flagged(clean) == [], [(f["eval_id"], f["method"], f["evidence"]) for f in _flagged(clean)][:3]


def _bundled(ref: str) -> list:
    return list(Dataset(DatasetSpec("ev", [ref], role="eval")).records())


def _self_config(tmp_path: Path, ref: str) -> AuditConfig:
    return AuditConfig(
        datasets={"ev": DatasetSpec("ev", [ref], role="eval"), "tr": DatasetSpec("tr", [ref], role="train")},
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )


@pytest.mark.parametrize("ref", ["tau2-retail", "tau2-airline", "api-bank", "stabletoolbench", "webshop:0:2000"])
def test_a_sibling_item_is_no_proof(tmp_path, ref):
    """A public eval set audited against itself: an item is conclusive in another item's record only
    when its whole token run stands there (API-Bank's dialogue prefixes, WebShop goals inside longer
    goals). Sibling items that differ in a word or a value (tau2-retail 6 and 8: 'a less bright' vs 'a
    brighter' desk lamp) were conclusive at n-gram share 0.5-0.72; now at most suspected."""
    records = _bundled(ref)
    norm = {r.ordinal: normalize(r.view("query")) for r in records}
    whole = {r.ordinal: " ".join(normalize(v) for v in r.views.values() if isinstance(v, str)) for r in records}
    report = run_audit(_self_config(tmp_path, ref))
    cross = [
        f
        for f in report.findings
        if f["conclusive"] and f["method"] == "ngram" and norm[f["eval_ordinal"]] != norm[f["train_ordinal"]]
    ]
    partial = [(f["eval_id"], f["train_id"], f["score"]) for f in cross if f["score"] < 1.0]
    assert partial == []
    assert all(f" {norm[f['eval_ordinal']]} " in f" {whole[f['train_ordinal']]} " for f in cross)


def test_sibling_with_other_values_is_not_conclusive(tmp_path):
    """Items with values (tau2-retail user ids and zip codes, BFCL numbers) copied with every digit
    changed: never conclusive (the item's values are not in the text); the unchanged copies are."""
    items = [r for r in _bundled("bfcl:simple_python") if any(c.isdigit() for c in r.view("query"))][:50]
    assert len(items) == 50
    rows = [chat(f"r{i}", filler(i)) for i in range(500)]
    for k, it in enumerate(items):
        rows.insert(10 * k + 3, chat(f"q{k}", shift_digits(it.view("query"))))
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["bfcl:simple_python"], role="eval"),
            "tr": DatasetSpec("tr", [str(_write(tmp_path / "train.jsonl", rows))], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(config)
    wrong = [(f["eval_id"], f["method"], f["score"]) for f in report.findings if f["conclusive"]]
    assert _found(report, items, conclusive_only=True) == set(), wrong[:5]
    rows = [chat(f"r{i}", filler(i)) for i in range(500)] + [
        chat(f"q{k}", it.view("query")) for k, it in enumerate(items)
    ]
    config.datasets["tr"] = DatasetSpec("tr", [str(_write(tmp_path / "copies.jsonl", rows))], role="train")
    assert len(_found(run_audit(config), items, conclusive_only=True)) == 50


def test_questions_sharing_a_passage(tmp_path):
    """Eval items made of a shared passage (a real paragraph of 60+ words) and a distinct question (a
    test query), five per passage: a training text holding the passage and another question is never
    conclusive for them; the passage with one of the questions is conclusive for that one only."""
    paragraphs = [p for p in prose_paragraphs() if len(p.split()) >= 60][:10]
    queries = [it.view("query") for it in stb_items(120)]
    evals = [
        {"id": f"p{i}q{j}", "text": f"{paragraphs[i]}\n\nQuestion: {queries[5 * i + j]}"}
        for i in range(10)
        for j in range(5)
    ]
    eval_path = _write(tmp_path / "passages.jsonl", [json.dumps(e) + "\n" for e in evals])
    rows = [chat(f"r{i}", filler(i)) for i in range(300)]
    rows += [chat(f"o{i}", f"{paragraphs[i]}\n\nQuestion: {queries[100 + i]}") for i in range(10)]
    rows.append(chat("hit", evals[12]["text"]))
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [str(eval_path)], role="eval"),
            "tr": DatasetSpec("tr", [str(_write(tmp_path / "train.jsonl", rows))], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(config)
    conclusive = {(f["eval_id"], f["train_id"], f["method"]) for f in report.findings if f["conclusive"]}
    assert {e for e, _, _ in conclusive} == {"p2q2"}, sorted(conclusive)[:5]
    assert {t for _, t, _ in conclusive} == {"hit"}


def test_a_templated_item_copied_whole_is_conclusive_however_short_its_own_part(tmp_path):
    """Rendered items whose own part is short (5-7-word requests in the ReAct prompt): left without their
    template they are short items (suspected when found alone), but a training text holding the rendered
    item whole, template and all, is a copy of it: conclusive."""
    asks = [
        "Book a table for four tonight.", "What is the weather in Oslo?", "Convert ten euros to dollars.",
        "Find flights from Rome to Lima.", "Show me vegan pasta recipes.", "Who won the last Tour de France?",
        "Translate good morning into Greek.", "List museums open in Prague today.", "Play some jazz from the fifties.",
        "Track my parcel from Hamburg please.", "Summarize the news about volcanoes.", "Set an alarm for six thirty.",
        "How tall is Mount Kilimanjaro?", "Recommend a sci-fi novel for teens.", "Order pizza with extra olives.",
        "Check the score of the cricket final.", "Where can I rent kayaks nearby?", "Define the word ephemeral.",
        "Suggest a gift for my grandmother.", "Compare iPhone and Pixel cameras.",
    ]  # fmt: skip
    evals = [{"id": f"e{k}", "prompt": TEMPLATES["react"].format(query=a)} for k, a in enumerate(asks)]
    eval_path = _write(tmp_path / "eval.jsonl", [json.dumps(e) + "\n" for e in evals])
    rows = [chat(f"r{i}", filler(i)) for i in range(200)]
    rows += [chat(f"w{k}", "Earlier turn.\n" + e["prompt"] + "\nObservation: ok") for k, e in enumerate(evals[:10])]
    rows += [chat(f"b{k}", asks[k]) for k in range(10, 20)]
    report = run_audit(_templated_config(tmp_path, eval_path, _write(tmp_path / "train.jsonl", rows)))
    conclusive = {f["eval_id"] for f in report.findings if f["conclusive"]}
    assert conclusive == {f"e{k}" for k in range(10)}
    assert all(
        f["evidence"].get("whole_item") for f in report.findings if f["conclusive"] and f["method"] == "ngram"
    ), [
        (f["eval_id"], f["train_id"], f["evidence"])
        for f in report.findings
        if f["conclusive"] and f["method"] == "ngram"
    ][:3]
    suspected = {f["eval_id"] for f in report.findings if f["evidence"].get("tier") == "suspected"}
    assert {f"e{k}" for k in range(10, 20)} <= suspected


@pytest.mark.parametrize("template", [None, *sorted(TEMPLATES)])
def test_the_ngram_index_holds_each_items_own_ngrams(template):
    """The n-gram build hashes a whole eval set in one token batch: each item's n-grams in the tables
    are what its own tokens give (template text left out), on real queries, bare and rendered in a
    template (then every item is templated)."""
    import numpy as np

    from auditor.methods import create
    from auditor.records.record import Record
    from auditor.text.normalize import tokens
    from auditor.text.tokens import ngram_hashes, token_hashes

    items = stb_items(300)
    if template is not None:
        view = {it.id: TEMPLATES[template].format(query=it.view("query")) for it in items}
        items = [Record("ev", it.id, f"ev#{i}", {"query": view[it.id]}, ordinal=i) for i, it in enumerate(items)]
    ix = create("ngram").build(items)
    held: dict[int, set[int]] = {}
    for h, p in ix.tables.values():
        for gram, pos in zip(h.tolist(), p.tolist()):
            held.setdefault(pos, set()).add(gram)
    for h, p in ix.tables.values():  # sorted by n-gram, then item
        assert (np.lexsort((p, h)) == np.arange(len(h))).all()
    for pos, r in enumerate(items):
        toks = ix._item_tokens(tokens(r.view(ix.config.eval_view)))
        n = int(ix.item_n[pos])
        assert n == (min(ix.config.n, len(toks)) if min(ix.config.n, len(toks)) >= ix.config.short_min_n else 0)
        assert held.get(pos, set()) == (set(ngram_hashes(token_hashes(toks), n).tolist()) if n else set()), r.id
        assert ix.totals[pos] == len(np.unique(ngram_hashes(token_hashes(toks), n))) if n else ix.totals[pos] == 0
    assert ix.templated == (frozenset() if template is None else frozenset(range(len(items))))
