"""The batch fast path (:mod:`auditor.text.batch`) normalizes and tokenizes exactly as ``normalize``.

The exact and n-gram tiers hash and look up training tokens from a :class:`TokenBatch` (one buffer
per batch, plain ASCII translated in bytes, runs of spaces squeezed with numpy) instead of calling
``normalize`` / ``tokens`` per text. A difference would change findings (a missed copy is a false
PASS), so every output is compared with the reference functions: on the string values of real
files from ../shared/data, on adversarial strings (control characters, \\x1c-\\x1f separators,
punctuation runs, empty texts, markup, Unicode spaces and confusables), and on generated ones.
"""

from __future__ import annotations

import json
import string

import numpy as np
import pytest
import xxhash
from helpers import json_strings, shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.methods import _ngram_kernel
from auditor.methods._exact_kernel import exact_units, exact_units_batch
from auditor.methods._ngram_kernel import _select
from auditor.text.batch import TokenBatch, forget_batch, hashes_and_words, token_batch
from auditor.text.kernel import lookup
from auditor.text.normalize import clean, is_plain, normalize, text_hash, tokens

ADVERSARIAL = [
    "",
    " ",
    "\n",
    "\n\n\n",
    "!!!",
    "a",
    "A",
    "...a...",
    "a\x00b",
    "a\x01b\x02c\x7fd",
    "a\x1cb\x1dc\x1ed\x1ff",
    "tab\there\vvertical\fform\rcarriage",
    "  leading and trailing  ",
    "x" * 300,
    "Book a flight to N.Y.C.!!!",
    "one\ntwo\r\nthree\n\n  \n\x1c\nfour",
    "a<b & c>d",
    "<b>Bo</b>ok &amp; fl&#105;ght&nbsp;now",
    "ﬁnd the Ｔｏｋｙｏ hotel",
    "b\u200book a fl\u00adight to Р\u0430ris",
    "non\u00a0breaking\u2028line\u2029para\u3000ideographic\x85nel",
    "ÉCOLE café naïve Straße ǅemal",
    "emoji 🙂 and math 𝐀𝐁𝐂 and ½ ² ℃",
    "combining e\u0301 and \ufe0f selector",
    "مرحبا بالعالم، كيف حالك؟",
    "日本語のテキスト、句読点。",
    "\ud800 lone surrogate \udfff",
    "mixed ASCII line\nnon-ASCII line é\n\nlast",
    "punct-only line\n?!.,;\nreal words here",
    # issue 22's disguises: camel-cased runs, percent-encoding, right-to-left override, marks, look-alikes
    "BookAFlightToParis",
    "my iPhone runs JavaScript on PostgreSQL",
    'x {"getUserProfileById":1,"HTTPServerError":2} Find5HotelsNearMe aB1Cd2Ef',
    "aZbZa ZZz AbC abC",
    "Book%20a%20flight%2C%20please caf%C3%A9 %2520 %zz 100% 5%ff%FE %e2%80%8B",
    "https://api.example.com/search?q=Book+a+flight+to+Paris%21&lang=en",
    "see \u202esiraP ot thgilf a kooB\u202c now \u202eunclosed\nnext line",
    "\u202e\u05e9\u05dc\u05d5\u05dd \u202eabc \u0645\u0631\u062d\u0628\u0627",
    "Bo\u0301o\u0301k a\u0323 fli\u0301ght \u1ea1nd q\u0301 \u00f1and\u00fa",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627 \u0439\u043e\u0434 \u03ac",
    "\u03f2at \u1d00\u0299\u1d04 \u03b5\u03b7\u03c7 \ua7af \u03a3\u03c3\u03c2",
    # issue 37: what normalization must not delete, and the ASCII that leaves the byte path for it
    "score<threshold. Book a flight to Paris. Keep rows where x>0.",
    "a<b and c>d, if x<y then z >, List<String>, #include <stdio.h>, <think>x</think>",
    '<p class="x">Bo<b>ok</b></p><br/><tool_call>{}</tool_call><td nowrap><a href=/p?q=1>x</a>',
    "\x1b[31mBook\x1b[0m a \x1b[1;32mflight\x1b[m \x1b]8;;https://x.example\x1b\\link\x1b]8;;\x07 \x1b7\x1bc",
    "\x1b lone escape \x1b[ unfinished \x1b]never terminated",
    "the informa-\ntion you need, informa-\r\n  tion, A-\nB, 3-\n4, x -\ny, end-\n- item, -\n",
    "Book\u200ba\u200bflight\u200bto\u200bParis\u200bfor\u200btwo\u200bnext\u200bweek, fl\u200bight",
    "Book\u3164a\u3164flight\u3164to\u3164Paris\u3164for\u3164two\u3164next\u3164week",
    "\u202eBook a flight to Paris \u202e\u202c Note:\u202e hello \u202e12345",
    "informa\u00ad\ntion infor\u2010\nmation \x9b31mx",
    # state across lines of a non-ASCII text (read as a whole, then line by line): a tag closed two
    # lines later, an override to its paragraph's end, an escape over a newline, newlines made by
    # escapes and entities, a mark starting a line, a NUL on an ASCII line
    "caf\u00e9\n<think>\nBookAFlight\n</think>\n<div\n\nclass=x>Paris</div>",
    "\u00e9\n\u202esiraP ot\nthgilf a kooB\u202c\nnext",
    "\u00e9 \x1b]8;;https://x.example\nstill the link\x07 after\nfi-\nnal",
    "\u00e9%0Aline%0Atwo&#10;three&NewLine;four\n\u0301mark\nNUL\x00here\n\u00e9\x00",
]


def _check(texts: list[str]) -> None:
    """Every output of a TokenBatch of ``texts`` equals the reference functions' output."""
    forget_batch()
    batch = TokenBatch(texts)
    assert len(batch) == len(texts)
    assert [batch.normalized(i) for i in range(len(texts))] == [normalize(t).encode("utf-8") for t in texts]
    assert batch.whole_hashes() == [text_hash(normalize(t)) for t in texts]
    expected_tokens: list[bytes] = []
    for t in texts:
        expected_tokens += [w.encode("utf-8") + b" " for w in tokens(t)] + [b"\x00 "]
    assert batch.token_array().to_pylist() == expected_tokens
    counts = [len(tokens(t)) + 1 for t in texts]
    assert batch.token_starts.tolist() == np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).tolist()
    for lines in (False, True):
        reference = []
        for t in texts:
            units = [("whole", t)]
            if lines and "\n" in t:
                units += [(f"line {i}", line) for i, line in enumerate(t.split("\n"), start=1) if line.strip()]
            reference.append([(u, text_hash(normalize(c))) for u, c in units])
        assert exact_units_batch(texts, lines) == reference
        assert [exact_units(t, lines) for t in texts] == reference


def test_adversarial_strings_normalize_as_the_reference():
    _check(ADVERSARIAL)
    _check(ADVERSARIAL[::-1])
    for s in ADVERSARIAL:
        _check([s])
    _check([])


def test_every_ascii_character_normalizes_as_the_reference():
    chars = [chr(i) for i in range(128)]
    _check(chars)
    _check([f"a{c}b{c}{c}C" for c in chars])
    _check(["".join(chars), "".join(reversed(chars))])


REAL = [
    "stabletoolbench/solvable_queries/test_instruction/G1_instruction.json",
    "toolbench/data_example/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json",
    "tau2-bench/data/tau2/domains/airline/tasks.json",
    "webshop/baseline_models/data/human_goals.json",
    "tool-mvr/data/training_data/selected_Toolbench_R.json",
]


@pytest.mark.parametrize("rel", REAL)
def test_real_strings_normalize_as_the_reference(rel):
    doc = json.loads(shared_file(rel).read_text(encoding="utf-8"))
    texts: list[str] = []
    json_strings(doc, texts, 4000)
    assert len(texts) > 20
    for i in range(0, len(texts), 512):
        _check(texts[i : i + 512])


_ALPHABET = list("ab Z09,.!?-'\"<>&;#\n\t\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x01\x7f") + [
    "é",
    "ﬁ",
    "Ｔ",
    "\u2028",
    "\u00a0",
    "\u200b",
    "\u00ad",
    "\u0430",
    "\x85",
    "ß",
    "İ",
    "🙂",
    "\u0301",
    "%",
    "2",
    "0",
    "C",
    "E",
    "B",
    "\u202e",
    "\u202c",
    "\u0323",
    "\u03f2",
    "\u1d00",
    "\u03b5",
    "\x1b",
    "[",
    "]",
    "m",
    ";",
    "\u3164",
    "\u2060",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=40), max_size=8))
def test_generated_batches_normalize_as_the_reference(texts):
    _check(texts)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=6))
def test_any_unicode_normalizes_as_the_reference(texts):
    _check(texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=40), min_size=1, max_size=5))
def test_words_read_from_the_batch_are_the_tokens_joined(texts):
    """A text's tokens ``a`` to ``b``, read from the remembered batch, are its ``tokens`` sliced and joined."""
    forget_batch()
    batch, where = token_batch(texts)
    for i in where:
        text = batch.texts[i]
        hashes, words = hashes_and_words(text)
        toks = tokens(text)
        copy = (" " + text)[1:]  # another object: not read from the batch
        assert hashes.tolist() == hashes_and_words(copy)[0].tolist() and len(hashes) == len(toks)
        for a in range(len(toks) + 2):
            for b in range(len(toks) + 2):
                assert words(a, b) == " ".join(toks[a:b]), (text, a, b)
    forget_batch()


_ASCII_ALPHABET = list("abcZB09 %2CE<&\x00\n-\x1b\r") + [
    "iPhone",
    "GetUser",
    "%20",
    "%C3%A9",
    "AB",
    "[1;31m",
    "-\n",
    ">",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ASCII_ALPHABET), max_size=12).map("".join), max_size=8))
def test_plain_ascii_with_camel_and_percent_normalizes_as_the_reference(texts):
    """ASCII is where the byte path runs: camel-cased runs and ``%XX`` escapes must leave it for
    ``normalize`` exactly when ``normalize`` would change more than case and punctuation."""
    _check(texts)
    for t in texts:
        if is_plain(t):
            assert clean(t) == t and normalize(t) == " ".join(t.lower().translate(_PUNCT).split())


_PUNCT = str.maketrans({c: " " for c in string.punctuation + "".join(map(chr, [*range(32), 127]))})


def _reference_ids(batch: TokenBatch, vocab: list[bytes]) -> list[int]:
    index: dict[bytes, int] = {}
    for i, t in enumerate(vocab, start=1):
        index.setdefault(t + b" ", i)  # a token listed twice has its first id
    return [index.get(t, 0) for t in batch.token_array().to_pylist()]


def _ids(batch: TokenBatch, vocab: list[bytes]) -> list[int]:
    keys = np.array([xxhash.xxh64_intdigest(t) for t in vocab], dtype=np.uint64)
    return np.frombuffer(lookup(batch.token_hashes().data, keys.tobytes()), dtype=np.int64).tolist()


def test_vocabulary_lookup_by_token_hash_gives_the_dict_ids():
    texts = ["the cat sat on the mat", "", "a dog, a cat!", "ÉCOLE café"]
    batch = TokenBatch(texts)
    small = [b"cat", b"mat", b"caf\xc3\xa9"]
    large = [f"w{i}".encode() for i in range(200)] + [b"the", b"dog", b"cat", b"the"]  # "the" twice: its first id
    separator = [b"\x00"]  # the separators' hash: the n-gram kernel gives them id 0 itself
    for vocab in (small, large, separator, []):
        assert _ids(batch, vocab) == _reference_ids(batch, vocab)
    assert _ids(TokenBatch([]), large) == []


def test_token_batch_is_reused_for_the_same_texts_extended_or_rebuilt_for_others():
    a, b, c, d, e = "alpha beta", "gamma", "delta", "Zeta", "eta, theta"
    forget_batch()
    first, positions = token_batch([a, b, a])
    assert positions == [0, 1, 0] and first.texts == [a, b]
    again, positions = token_batch([b, a])
    assert again is first and positions == [1, 0]
    grown, positions = token_batch([a, c])  # most of their text known: the batch is extended
    assert grown is not first and grown.texts == [a, b, c] and positions == [0, 2]
    other, positions = token_batch([d, e, a])  # most of their text new: a new batch
    assert other.texts == [d, e, a] and positions == [0, 1, 2]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=30), max_size=6),
    st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=30), max_size=6),
)
def test_an_extended_batch_equals_the_batch_of_all_its_texts(first, then):
    """The n-gram tier's extra texts (user turns) are appended to the exact tier's batch: the result
    must be exactly the batch built from scratch, or a token would be looked up at the wrong place."""
    forget_batch()
    base = TokenBatch(first)
    base.whole_hashes()
    grown, fresh = base.extended(then), TokenBatch(first + then)
    for name in ("data", "text_offsets", "token_offsets", "token_starts"):
        assert getattr(grown, name).tolist() == getattr(fresh, name).tolist(), name
    assert grown.whole_hashes() == fresh.whole_hashes()
    assert grown.token_array().to_pylist() == fresh.token_array().to_pylist()
    assert [grown.normalized(i) for i in range(len(grown))] == [normalize(t).encode() for t in first + then]


def test_selected_texts_keep_their_separators():
    batch = TokenBatch(["a b", "", "c", "d e f"])
    ids = np.array(_ids(batch, [b"a", b"b", b"c", b"d", b"e", b"f"]))
    got, starts = _select(ids, batch.token_starts, np.array([3, 0, 1, 3]))
    assert got.tolist() == [4, 5, 6, 0, 1, 2, 0, 0, 4, 5, 6, 0]
    assert starts.tolist() == [0, 4, 7, 8]


def test_ngram_kernel_on_a_reordered_subset_equals_its_own_batch():
    """The n-gram tier may ask for a subset of the texts the exact tier batched (other views)."""
    from auditor.text.tokens import ngram_hashes, token_hashes

    evals = ["please book a flight from paris to tokyo next monday morning", "find a cheap hotel near the old port"]
    grams = [np.unique(ngram_hashes(token_hashes(tokens(e)), 5)) for e in evals]
    H = np.concatenate(grams)
    P = np.concatenate([np.full(len(g), i, dtype=np.int64) for i, g in enumerate(grams)])
    order = np.argsort(H, kind="stable")
    scanner = _ngram_kernel.NgramScanner((t for e in evals for t in tokens(e)), {5: (H[order], P[order])})
    texts = [f"user {i}: " + evals[i % 2] + " thanks" for i in range(6)] + ["unrelated words only"]
    queries = [f"query {i}" for i in range(len(texts))]
    forget_batch()
    alone = scanner.matches(texts[::-1], 2)
    token_batch([q for pair in zip(queries, texts) for q in pair])  # the exact tier's batch: queries and texts
    assert scanner.matches(texts[::-1], 2) == alone
    assert alone and {d for d, _, _ in alone} == set(range(1, 7))


@pytest.mark.parametrize("glue", ["\x01", "\x7f", "\x1c", "\x00", "\x0b"])
def test_a_copy_glued_with_control_characters_is_found_by_exact_and_ngram(glue):
    """A training copy whose words are joined by a control character is the eval item once
    normalized (``normalize`` turns control characters into spaces). The batch fast path once kept
    ``\\x01``, NUL and DEL inside words: both tiers missed such copies (0 of 39, a false PASS)."""
    from auditor.datasets.dataset import Dataset, DatasetSpec
    from auditor.methods.exact import ExactIndex
    from auditor.methods.ngram import NgramIndex
    from auditor.records.record import Record

    evals = Dataset(DatasetSpec("ev", ["webshop:0:60"], role="eval")).records()
    goals = [r for r in evals if len(tokens(r.view("query"))) >= 13]
    assert len(goals) >= 20
    glued = [glue.join(g.view("query").split()) for g in goals]
    inside = [
        Record("train", f"t{i}", f"t.jsonl:{i + 1}", {"text": f"note{glue}{t}{glue}end"}) for i, t in enumerate(glued)
    ]
    alone = [Record("train", f"t{i}", f"a.jsonl:{i + 1}", {"text": t}) for i, t in enumerate(glued)]
    wanted = {(g.id, f"t{i}") for i, g in enumerate(goals)}
    forget_batch()
    assert wanted <= {(f.eval_id, f.train_id) for f in NgramIndex().build(goals).search(inside)}
    assert wanted <= {(f.eval_id, f.train_id) for f in ExactIndex().build(goals).search(alone)}
