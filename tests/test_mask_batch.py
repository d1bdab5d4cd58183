"""The batch masking path (``Boilerplate.mask_texts`` / ``mask_records``, ``Masker.premask_batch``)
gives exactly what the per-record reference (``Boilerplate.mask_text`` / ``mask_record``) gives.

On real agent training data (StepTool, Tool-MVR, tau2, ToolBench trajectories from ../shared/data),
on adversarial texts (eval items inside boilerplate lines, eval n-grams straddling boilerplate
n-grams, empty lines, unicode, markup, ``\\r\\n``) and on hypothesis-generated texts. Masking more
than the reference would hide eval text (a false PASS); masking less would let boilerplate count.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.datasets.dataset import Dataset
from auditor.datasets.spec import DatasetSpec
from auditor.masking.base import MASK, BoilerplateConfig
from auditor.masking.boilerplate import Boilerplate
from auditor.masking.detect import detect
from auditor.masking.masker import Masker
from auditor.records.record import TEXT, Record
from tests.helpers import shared_file

POLICY = "You are a helpful travel agent. Always confirm the booking with the user before paying."
ITEM = "book a one way flight from boston to denver for two adults next friday morning please"
SHORT = "Short item: here"  # an eval item shorter than protect_n words, a line of its own
GUIDE = "Guidelines: always double check dates, airports and times before you answer"
SCHEMA = '{"name": "search_flights", "parameters": {"origin": "string", "destination": "string"}}'


def _records(rel: str) -> list[Record]:
    path = shared_file(rel)
    return list(Dataset(DatasetSpec("d", [str(path)])).records())


def _eval_texts() -> list[str]:
    return [r.view(TEXT) for r in Dataset(DatasetSpec("e", ["stabletoolbench"])).records()]


def _same(bp: Boilerplate, records: list[Record], views: tuple[str, ...]) -> None:
    """mask_records == [mask_record ...], views and counts, on two copies of ``bp``."""
    ref, new = dataclasses.replace(bp), dataclasses.replace(bp)
    want = [ref.mask_record(r, views) for r in records]
    got = new.mask_records(records, views)
    assert [g.views for g in got] == [w.views for w in want]
    assert [g is r for g, r in zip(got, records)] == [w is r for w, r in zip(want, records)]
    assert (new.masked_records, new.masked_chars, new.scanned_chars) == (
        ref.masked_records,
        ref.masked_chars,
        ref.scanned_chars,
    )


def _check_file(rel: str, extra_eval: int = 3) -> Boilerplate:
    recs = _records(rel)
    # eval items: the bundled benchmark, plus lines and passages of these records (so that lines are
    # guarded or spared and boilerplate n-grams overlap eval n-grams)
    evals = _eval_texts()
    for r in recs[:extra_eval]:
        lines = [line for line in r.view(TEXT).split("\n") if len(line.split()) >= 10]
        evals += lines[:2] + [" ".join(line.split()[2:14]) for line in lines[2:4]]
    bp = detect(recs, evals, BoilerplateConfig(min_records=min(10, len(recs))))
    views = tuple(dict.fromkeys(v for r in recs for v in r.views)) + (TEXT,)
    _same(bp, recs, views)
    return bp


def test_steptool_trajectories():
    bp = _check_file("steptool/data_train/qwen2/gpt4_dfs_G123_for_sft_example.json")
    assert bp.lines and len(bp.ngrams)  # both line and n-gram masking are exercised
    _check_file("steptool/data_train/rft/rft_data_example.json")


def test_toolmvr_trajectories():
    bp = _check_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    assert bp.lines
    _check_file("tool-mvr/data/training_data/selected_Toolbench_R.json")


def test_tau2_and_toolbench():
    _check_file("tau2-bench/data/tau2/domains/airline/tasks.json")
    answer = shared_file("toolbench/data_example/answer")
    recs = list(Dataset(DatasetSpec("tb", [str(answer / "G1_answer" / "10_ChatGPT_DFS_woFilter_w2.json")])).records())
    recs += list(Dataset(DatasetSpec("tb", [str(answer / "G3_answer" / "8_ChatGPT_DFS_woFilter_w2.json")])).records())
    bp = detect(recs * 6, _eval_texts(), BoilerplateConfig(min_records=10))
    _same(bp, recs, (TEXT,))


def _adversarial_bp() -> Boilerplate:
    """Boilerplate with removed lines, a spared line (an eval item inside a shared line), protected
    lines (equal to an eval item) and n-grams that overlap an eval item's 8-grams."""
    recs = [
        Record(
            "t",
            str(i),
            f"t:{i}",
            {
                "text": f"{POLICY}\r\n{SHORT}\n{GUIDE} {i}\nTools: {SCHEMA}\n\nExample: {ITEM}\n{ITEM}\n"
                f"Remember, the policy says refunds go to the original payment method only {i % 2}\n"
                f"Task {i}: Ünïcödé <b>markup</b> ok"
            },
        )
        for i in range(24)
    ]
    evals = [ITEM, SHORT, "refunds go to the original payment method", "the user before paying. Tools:"]
    bp = detect(recs, evals, BoilerplateConfig(min_records=10))
    assert bp.lines and bp.spared and len(bp.ngrams) and bp.protected
    return bp


@functools.cache
def _adversarial_bp_once() -> Boilerplate:
    return _adversarial_bp()


ADVERSARIAL = [
    "",
    "\n",
    "\n\n\n",
    "\r\n",
    f"{POLICY}\r\n",
    f"{POLICY}\nTask 3",
    f"Example: {ITEM}",
    f"{SHORT}\nExample: {ITEM}",
    f"{SHORT}\n{GUIDE} 99",
    f"{POLICY}\n{SHORT}\n{GUIDE}",
    f"{POLICY}\r\n{SHORT}\nTools: {SCHEMA}\n\nExample: {ITEM}\n{ITEM}",
    f"Example: {ITEM}\r\nExample: {ITEM}",
    ITEM,
    f"{POLICY} {ITEM}",
    f"x {ITEM} y\n{POLICY}",
    "Remember, the policy says refunds go to the original payment method only 0",
    "Remember, the policy says refunds go to the original payment method only 1\nmore words here",
    "remember the policy says refunds go to the original payment method only now and then",
    f"Tools: {SCHEMA}",
    f"<p>Tools: {SCHEMA}</p>\n<p>{POLICY}</p>",
    "Ünïcödé ＦＵＬＬ ｗｉｄｔｈ\u200b zero\u00a0width\u3000space\nTask 1: Ünïcödé <b>markup</b> ok",
    "!!!\n...\n---",
    f"{POLICY}\n\n{POLICY}\n{ITEM}\n{POLICY}",
    "the user before paying. Tools: " + SCHEMA,
    "\ud800 lone surrogate " + POLICY,
]


def test_adversarial_texts():
    bp = _adversarial_bp()
    assert bp.mask_texts(ADVERSARIAL) == [bp.mask_text(t) for t in ADVERSARIAL]
    # one at a time as well (a batch of one), and every text next to every other
    assert [bp.mask_texts([t])[0] for t in ADVERSARIAL] == [bp.mask_text(t) for t in ADVERSARIAL]
    masked = bp.mask_texts([f"{SHORT}\n{GUIDE} 7"])[0]
    assert masked.startswith(SHORT + "\n") and MASK in masked  # a line equal to an eval item is untouched
    masked = bp.mask_texts([f"Example: {ITEM}\r\nExample: {ITEM}"])[0]
    assert ITEM.split()[0] in masked and MASK in masked  # the eval item kept, the rest masked
    recs = [Record("a", str(i), f"a:{i}", {"text": t, "query": t[::-1]}) for i, t in enumerate(ADVERSARIAL)]
    _same(bp, recs, ("text", "query", "absent"))


def test_premask_batch_matches_premask():
    bp = _adversarial_bp()
    recs = [Record("a", str(i), f"a:{i}", {"text": t}) for i, t in enumerate(ADVERSARIAL)]
    one = Masker(dataclasses.replace(bp), [], (TEXT,), methods=["ngram"])
    many = Masker(dataclasses.replace(bp), [], (TEXT,), methods=["ngram"])
    want = []
    for r in recs:
        one.premask(r)
        want.append(r.meta.get("_masked_views"))
        Masker.unmask(r)
    many.premask_batch(recs)
    assert [r.meta.get("_masked_views") for r in recs] == want
    assert one.report() == many.report()
    assert any(w is not None for w in want) and any(w is None for w in want)


WORDS = [*POLICY.split(), *ITEM.split(), *SCHEMA.split(), "Ünï", "<b>", "\r", "", "  ", "ｗ", "x"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), max_size=6).map("\n".join),
        max_size=6,
    )
)
def test_generated_texts(texts):
    bp = _adversarial_bp_once()
    extra = [f"{POLICY}\n" + t for t in texts] + [t + f"\nExample: {ITEM}" for t in texts]
    batch = texts + extra
    assert bp.mask_texts(batch) == [bp.mask_text(t) for t in batch]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(max_size=40) | st.sampled_from([POLICY, ITEM, SHORT, f"{GUIDE} 3", "Example: " + ITEM]), max_size=8
    )
)
def test_generated_unicode_lines(lines):
    """Arbitrary Unicode (control characters, NUL, surrogates, other line breaks) between shared lines."""
    bp = _adversarial_bp_once()
    batch = ["\n".join(lines), "\r\n".join(lines), "\n".join(reversed(lines)), *lines]
    assert bp.mask_texts(batch) == [bp.mask_text(t) for t in batch]


HEAD, TURN_END, AWAIT = "**Dialogue Records History**", "End Of Turn", "Await Reply Now"
QR = "Could you please generate a QR code for the URL www.example.com?"
#: short eval items whose 8-grams straddle short shared lines: one at the start, one at the end, two inside
STRADDLING = [
    f"{HEAD}\n<user> {QR} </user>",
    f"the URL www.example.com? </user>\n{TURN_END}",
    f"code for the URL www.example.com? </user>\n{TURN_END}\n{AWAIT}\nid",
]


@functools.cache
def _straddle_bp() -> Boilerplate:
    """Boilerplate whose removed lines are short (3 words), next to text of the STRADDLING eval items."""
    recs = [
        Record(
            "t", str(i), f"t:{i}", {"text": f"{POLICY}\n{HEAD}\n<user> fact {i} </user>\n{TURN_END}\n{AWAIT}\nid {i}"}
        )
        for i in range(24)
    ]
    bp = detect(recs, [*STRADDLING, ITEM], BoilerplateConfig(min_records=10))
    assert len(bp.lines) == 4 and not bp.spared
    return bp


def _eval_grams_kept(bp: Boilerplate, text: str, masked: str) -> bool:
    """Every eval 8-gram occurring in ``text`` (across its line breaks too) occurs in ``masked``."""
    from auditor.text.normalize import tokens
    from auditor.text.tokens import ngram_hashes, token_hashes

    k = bp.config.protect_n
    before, after = (ngram_hashes(token_hashes(tokens(t)), k) for t in (text, masked))
    return set(before[np.isin(before, bp.eval_grams)].tolist()) <= set(after.tolist())


def test_eval_grams_straddling_shared_lines_are_kept():
    bp = _straddle_bp()
    texts = [
        f"{POLICY}\n{HEAD}\n<user> {QR} </user>\n{TURN_END}\n{AWAIT}\nid 3",
        f"{HEAD}\r\n\n<user> {QR} </user>\r\n\n{TURN_END}\n\n{AWAIT}\nid",
        f"{HEAD}\n{HEAD}\n<user> {QR}",
        f"{HEAD}\n<user> fact 3 </user>\n{TURN_END}\n{AWAIT}\nid 3",
        f"{QR} </user>\n{AWAIT}\n{TURN_END}\nid",
    ]
    masked = [bp.mask_text(t) for t in texts]
    assert bp.mask_texts(texts) == masked
    assert all(_eval_grams_kept(bp, t, m) for t, m in zip(texts, masked))
    assert masked[0] == "\n".join(texts[0].split("\n")[1:])  # the prompt removed, the rest all eval text
    assert masked[3] == "<user> fact 3 </user>\nid 3"  # no eval 8-gram: the shared lines removed
    assert masked[4] == f"{QR} </user>\nid"  # the shared lines in another order: no eval 8-gram, removed
    recs = [Record("a", str(i), f"a:{i}", {"text": t}) for i, t in enumerate(texts)]
    _same(bp, recs, (TEXT,))
    # a removed line that itself holds an eval 8-gram (detect spares those: built here by hand)
    adv = _adversarial_bp()
    moved = dataclasses.replace(adv, lines=adv.lines | adv.spared, spared=set())
    assert moved.mask_texts(ADVERSARIAL) == [moved.mask_text(t) for t in ADVERSARIAL]
    assert [moved.mask_text(t) for t in ADVERSARIAL] == [adv.mask_text(t) for t in ADVERSARIAL]


LINES = [POLICY, HEAD, TURN_END, AWAIT, QR, f"<user> {QR} </user>", "the URL www.example.com? </user>", "id", ITEM]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(LINES)
        | st.lists(st.sampled_from([*QR.split(), "</user>", "id", "Now", ""]), max_size=6).map(" ".join),
        max_size=10,
    )
)
def test_generated_straddling_texts(lines):
    """Shared lines, eval-item lines and fragments in any order: the batch form equals the reference,
    and no eval 8-gram of the text is lost, however it straddles the lines."""
    bp = _straddle_bp()
    batch = ["\n".join(lines), "\r\n".join(lines), "\n\n".join(reversed(lines)), *lines]
    masked = [bp.mask_text(t) for t in batch]
    assert bp.mask_texts(batch) == masked
    assert all(_eval_grams_kept(bp, t, m) for t, m in zip(batch, masked))


def _common_reference(texts: list[str], n: int, need: int) -> list[int]:
    """The word n-grams (hashes) of at least ``need`` of ``texts``, counted text by text."""
    from collections import Counter

    from auditor.text.normalize import tokens
    from auditor.text.tokens import ngram_hashes, token_hashes

    per_text = Counter(h for t in texts for h in set(ngram_hashes(token_hashes(tokens(t)), n).tolist()))
    return sorted(h for h, c in per_text.items() if c >= need)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=40), st.integers(min_value=1, max_value=6), st.integers(0, 2**31))
def test_the_common_ngrams_of_a_sample_are_those_counted_record_by_record(need, n, seed):
    """Every window hashed at once and counted in buckets first (``_may_occur``): the same n-grams as a
    per-record count, on real trajectories with shared lines, for any share and n-gram size."""
    from auditor.masking.detect import _common_ngrams, _leading_token_hashes
    from auditor.text.batch import TokenBatch

    rng = np.random.default_rng(seed)
    texts = _sample_texts()
    picked = [texts[i] for i in rng.choice(len(texts), size=min(len(texts), 120), replace=False)]
    grams = _common_ngrams(*_leading_token_hashes(TokenBatch(picked), 20000), n, need)
    got = [] if grams is None else grams.common.tolist()
    assert got == _common_reference(picked, n, need)


@functools.lru_cache(maxsize=1)
def _sample_texts() -> list[str]:
    """Whole texts of real agent records (tau2 airline tasks), a third of them again under shared lines."""
    recs = _records("tau2-bench/data/tau2/domains/airline/tasks.json")
    policy = [f"{POLICY}\n{GUIDE}\n{r.whole_text()}" for r in recs[::3]]  # shared lines in a third of them
    return [r.whole_text() for r in recs] + policy


def test_the_line_counts_of_a_sample_are_those_counted_record_by_record():
    """Each normalized line of 10 characters or more counted once per record, read from the batch's
    buffer and hashed there in one kernel call (``span_hashes``): the counts a per-record pass gives,
    and the first raw text of every line two records hold, on real trajectories with shared lines
    (and a text past ASCII, whose lines take the slow path)."""
    from collections import Counter

    from auditor.masking.detect import _line_counts
    from auditor.text.batch import TokenBatch
    from auditor.text.normalize import normalize, text_hash

    texts = [*_sample_texts(), f"Caf\u00e9 r\u00e9sum\u00e9 line\n{POLICY}\n{GUIDE}"]
    counts, first = _line_counts(TokenBatch(texts))
    want: Counter = Counter()
    first_seen: dict[int, str] = {}
    for t in texts:
        held = {}
        for line in t.split("\n"):
            norm = normalize(line)
            if len(norm) >= 10:
                held.setdefault(text_hash(norm), line.strip())
        want.update(held.keys())
        for h, line in held.items():
            first_seen.setdefault(h, line)
    assert dict(counts) == dict(want)
    assert first == {h: first_seen[h] for h, c in want.items() if c >= 2}
    assert counts[text_hash(normalize(POLICY))] > 1  # the shared line is there
