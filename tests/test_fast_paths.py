"""The scan's fast paths give what their plain reference paths give (tests/reference_paths.py), so
speed never costs a finding: on every string of every file in ../shared/data and tests/data/foreign,
on generated strings, and for whole audits of real training sets run both ways.
"""

from __future__ import annotations

import gzip
import json
import string
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import reference_paths as ref
from click.testing import CliRunner
from helpers import REPO, SHARED, json_strings, shared_file
from hypothesis import example, given, settings
from hypothesis import strategies as st

from auditor.adapters import _fields
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.io import jsonread
from auditor.methods import _exact_kernel
from auditor.records import fields, toolcalls
from auditor.records.record import Record
from auditor.report import proof
from auditor.text import camel, evasion, kernel, locate, pieces
from auditor.text import normalize as norm
from auditor.text.batch import TokenBatch
from auditor.text.lines import plain_line_spans, slow_line_spans
from auditor.text.normalize import _TYPOGRAPHY, normalize, normalize_spaced, normalize_undone, text_hash, undo_evasion

FOREIGN = REPO / "tests" / "data" / "foreign"


def _file_strings(path: Path) -> list[str]:
    """Every string of a JSON / JSON Lines file (keys too); any other text file whole, by line blocks."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    out: list[str] = []
    try:
        json_strings(json.loads(text), out)
        return out
    except ValueError:
        pass
    lines = text.splitlines()
    for line in lines:
        try:
            json_strings(json.loads(line), out)
        except ValueError:
            out.append(line)
    return out


def _text_files(root: Path) -> list[Path]:
    skip = {".parquet", ".arrow", ".zip", ".tar", ".png", ".jpg", ".pdf", ".bz2", ".xz", ".npy", ".db"}
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() not in skip)


def _camel_alphabet() -> list[str]:
    return [*"aAbBzZ09,.-_ ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\u00a0", "\u2009", "\u3000", "é", "İ", "\ud800"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_camel_alphabet() + ["Book", "A", "Flight", "To", "Paris", "I"]), max_size=40).map("".join)
)
def test_camel_runs_found_as_the_regular_expression_finds_them(text):
    assert camel.split_camel_runs(text) == ref.split_camel_runs(text)
    assert camel.has_camel_run(text) == ref.has_camel_run(text)


def test_camel_runs_split_in_a_batch_are_remembered_when_short_and_split_alike_again():
    """The batch's splitter remembers how each identifier-sized run splits (and how each does not):
    a second batch of the same runs splits alike; a run of megabytes is never remembered."""
    from auditor.text.kernel import impl as _kernel

    blob = "x" + "AbcDefGhi" * 40_000  # one whitespace-free run of 360 kB with humps
    text = f"BookAFlightToParis iPhone ProcessPoolExecutor getUserName {blob} JavaScript"
    raw = text.encode("ascii")
    spans = _kernel.camel_runs(raw, camel.MIN_HUMPS)
    assert len(spans) == 4
    for _ in range(2):  # the second time from what is remembered
        assert camel.split_candidates(raw, spans).decode("ascii") == ref.split_camel_runs(text)
    assert camel._SPLITS[b"BookAFlightToParis"] == b"Book A Flight To Paris"
    assert camel._SPLITS[b"getUserName"] is None  # two humps: a name, not words run together
    assert all(len(run) <= camel._SPLITS_RUN for run in camel._SPLITS)


_PERCENT_ALPHABET = [*"%%%0129aAfFgz é", "%C3", "%A9", "%25", "%2", "%E2%80%8B", "%ff", "%FE", "%0A", "%3C"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PERCENT_ALPHABET), max_size=20).map("".join))
def test_percent_escapes_decode_as_the_regular_expression_decodes_them(text):
    assert evasion.percent_decode(text) == ref.percent_decode(text)


def _same_words(s: str) -> bool:
    fast, slow = locate._words_of(s), ref.words_of(s)
    same_arrays = all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(fast[:3], slow[:3]))
    return same_arrays and list(fast[3].items()) == list(slow[3].items())


_WORD_ALPHABET = [*"aZ9_ -,.\n\t", *"\u00df\u0130\u01c5\u0301\u0663\u00b2\u2028\u3000\ud800"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WORD_ALPHABET), max_size=30).map("".join) | st.text(max_size=60))
def test_words_are_found_and_folded_as_the_regular_expression_finds_them(text):
    assert _same_words(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_WORD_ALPHABET), max_size=40).map("".join), st.integers(1, 8))
def test_words_found_part_by_part_are_the_words_of_the_whole_string(text, part):
    # a long string is split into words, and its characters classified, a part at a time
    with mock.patch.object(locate, "_WORDS_PART", part):
        assert _same_words(text)


_RUN_WORDS = st.lists(
    st.sampled_from(["find", "Find", "hotels", "in", "paris", "a", "\u00df", "SS", "x1"]), max_size=24
)


@settings(max_examples=400, deadline=None)
@given(_RUN_WORDS, _RUN_WORDS, st.sampled_from(proof.RUNS), st.booleans(), st.sampled_from([" ", ", ", "\n", "-"]))
def test_the_reports_shared_runs_are_the_reference_runs(a, b, k, fallback, sep):
    # few words, so runs of every size recur: repeated, overlapping, at either end, and case-folded
    ea, eb = sep.join(a), sep.join(b)
    assert proof.shared_runs(ea, eb, k, fallback) == ref.shared_runs(ea, eb, k, fallback)


def test_the_reports_shared_runs_of_real_eval_items_in_real_text_are_the_reference_runs():
    items = [r.view("text") for r in Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records()][:60]
    prose = [r.view("text") for r in Dataset(DatasetSpec("tr", ["webshop:0:300"], role="eval")).records()]
    found = 0
    for i, item in enumerate(items):
        words = item.split()
        # the item whole, its middle, and its words reordered, in a long text of real records
        for planted in (item, " ".join(words[2:-2]), " ".join(words[::2] + words[1::2])):
            text = " ".join(prose[i : i + 30]) + " " + planted + " " + " ".join(prose[i + 30 : i + 60])
            got = proof.shared_runs(item, text)
            assert got == ref.shared_runs(item, text)
            found += bool(got[0])
    assert found >= len(items) * 2


def test_every_character_is_a_word_character_as_the_regular_expression_says():
    every = "".join(map(chr, range(0x110000)))
    assert _same_words(every)
    assert _same_words(" ".join(every))  # each character a word of its own, case-folded alone


def test_a_digit_is_found_in_a_word_as_character_by_character():
    # has_digit tells a word of letters at once: no character is both a letter and a digit
    every = list(map(chr, range(0x110000)))
    assert not [c for c in every if c.isalpha() and c.isdigit()]
    assert [c for c in every if norm.has_digit(c)] == [c for c in every if c.isdigit()]
    words = [w for path in _text_files(FOREIGN)[:40] for s in _file_strings(path) for w in s.split()]
    assert len(words) > 10_000
    assert [w for w in words if norm.has_digit(w)] == [w for w in words if any(c.isdigit() for c in w)]


def test_every_letter_that_folds_to_another_folds_so_among_a_few():
    # a string with few such letters has them replaced one by one in its bytes (locate._folded)
    folding = [c for c in map(chr, range(0x110000)) if c.isalnum() and c.casefold() != c]
    assert len(folding) > 1000
    assert all(c.casefold().casefold() == c.casefold() for c in folding)  # so the order of replacements is moot
    few = locate._FOLDED_ONE_BY_ONE
    for at in range(0, len(folding), few // 2):
        chunk = folding[at : at + few // 2]
        assert _same_words(" ".join(f"{c}x{c.casefold()}X{c}" for c in chunk) + " \u00e9t\u00c9 Stra\u00dfe")


_LOCATE_WORDS = st.lists(
    st.sampled_from(["book", "Book", "a", "flight", "to", "ROME", "r\u00f4me", "\u00df", "ss", "-"]), max_size=16
)


@settings(max_examples=400, deadline=None)
@given(_LOCATE_WORDS.map(" ".join), _LOCATE_WORDS.map(" ".join))
def test_a_match_is_spanned_as_with_the_words_the_regular_expression_finds(s, text):
    assert locate.word_span(s, text) == locate.word_span(s, text, ref.words_of(s))


_CALL_ALPHABET = [
    *"fg_x9 =()\n\t,'\"#\\*:<",
    "\u00e9",
    "\u0301",
    "\u00a0",
    "\u0660",
    "\ud800",
    "print",
    "Finish",
    "(a=1)",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_CALL_ALPHABET), max_size=30).map("".join) | st.text(max_size=60), st.data())
def test_calls_written_in_text_are_found_as_the_regular_expression_finds_them(text, data):
    assert list(toolcalls.code_calls(text)) == list(ref.code_calls(text))
    assert list(toolcalls.code_calls(text, keyword_first=True)) == list(ref.code_calls(text, keyword_first=True))
    # a call is parsed only when its first argument is a keyword one: no call read is left unread
    for start, _ in ref.code_calls(text):
        assert toolcalls._python_call_args(text, start) == ref.python_call_args(text, start), text
    at = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(0, len(text) + 2))
    assert toolcalls.balanced_end(text, at, stop) == ref.balanced_end(text, at, stop)


_FIELD_TEXT = st.lists(st.sampled_from(["a", "b c", "\n", " ", "{", "[1]", '{"q": "a\\nb"}', "\t"]), max_size=5).map(
    "".join
)
_RAW = st.recursive(
    _FIELD_TEXT | st.integers(0, 3) | st.none(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["q", "the text", "x"]), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["text", "query", "fields"]), _FIELD_TEXT, max_size=3),
    _RAW,
    st.lists(_FIELD_TEXT, max_size=2),
)
def test_the_fields_view_keeps_what_the_reference_keeps(views, raw, known):
    expected = ref.fields_view(views, raw, known)
    assert fields.fields_view(views, raw, known) == expected  # walked in C where built
    assert fields.walked_fields_view(views, raw, known) == expected  # walked in Python


def test_the_fields_view_is_walked_in_c_where_the_kernel_is_built():
    # both are built at install by the same compiler: one missing alone is a broken build
    assert (fields._walk is not None) == kernel.compiled()


class _Ordered(dict):
    """A dict subclass whose order is not its storage's (as OrderedDict.move_to_end makes it)."""

    def items(self):
        return reversed(list(super().items()))


@pytest.mark.parametrize(
    "raw",
    [
        _Ordered({"a": "first text", "b": "second text"}),
        {"x": type("Text", (str,), {})("a string of a subclass")},
        {"x": type("Items", (list,), {})(["one text", "two texts"])},
        {"x": ("one", "tuple", "of", "words"), "the key text": [7, None, 2.5, True, "last"]},
    ],
)
def test_an_object_of_a_subclass_is_walked_as_the_reference_walks_it(raw):
    assert fields.fields_view({}, raw) == ref.fields_view({}, raw) == fields.walked_fields_view({}, raw)


def _raw_records(path: Path) -> list:
    """The objects of a JSON or JSON Lines file (a list's items, an object's values and itself)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except ValueError:
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out
    return [*doc, doc] if isinstance(doc, list) else [*doc.values(), doc] if isinstance(doc, dict) else [doc]


@pytest.mark.parametrize("root", [FOREIGN, SHARED], ids=lambda p: p.name)
def test_the_fields_view_of_every_real_record_is_walked_as_in_python(root):
    if not root.is_dir():
        pytest.skip(f"real data not available: {root} is absent")
    checked = 0
    for path in _text_files(root):
        for raw in _raw_records(path)[:2000]:
            strings: list[str] = []
            json_strings(raw, strings, 3)
            for views, known in (({}, ()), ({"text": "\n".join(strings[:2])}, tuple(strings[2:3]))):
                assert fields.fields_view(views, raw, known) == fields.walked_fields_view(views, raw, known), path
            checked += 1
    assert checked > 1000


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["text", "query", "fields", "calls", "system"]), st.sampled_from(["", " ", "x"]))
)
def test_a_record_has_a_view_where_the_view_has_text(views):
    """``has_view`` (what a method's ``reads`` asks) is ``bool(view)``, ``text``'s fallback included."""
    record = Record("d", "1", "d:1", views)
    for name in ("text", "query", "fields", "calls", "system", "other"):
        assert record.has_view(name) is bool(record.view(name)), name


_ID_KEYS = st.sampled_from(["id", "ID", "Id", "query_id", "Query_ID", "uid", "UID", "idx", "text", "x"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_ID_KEYS, st.sampled_from([None, "a", 3, {}, [1], True]), max_size=6))
def test_a_records_id_is_found_as_the_reference_finds_it(obj):
    assert _fields.id_candidate(obj) == ref.id_candidate(obj)
    assert _fields.id_candidate(obj) == ref.id_candidate(obj)  # again, its keys' spellings remembered


_TEXT_KEYS = st.sampled_from(["text", "Text", "TEXT", "query", "Query", "prompt", "PROMPT", "input", "goal", "x"])
_TEXT_VALUES = st.sampled_from([None, "hi", 3, {}, [{"role": "user", "content": "hi"}], ["a", "b"]])


def _outcome(find, obj):
    try:
        return find(obj)
    except _fields.AmbiguousField as e:
        return ("ambiguous", str(e))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXT_KEYS, _TEXT_VALUES, max_size=6))
def test_a_records_text_field_is_found_as_the_reference_finds_it(obj):
    """The text field (or the ambiguity refused) the reference finds, once and again (the key
    spellings of a record's keys are remembered from the first time)."""
    assert _outcome(_fields._text_candidate, obj) == _outcome(ref.text_candidate, obj)
    assert _outcome(_fields._text_candidate, obj) == _outcome(ref.text_candidate, obj)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_normalizes_as_the_reference(text):
    assert normalize(text) == ref.normalize(text)


_LINES = st.lists(
    st.sampled_from([*"aB .?%<", "\n", "\r", "\t", "\x1c", "-", "BookAFlightToParis", "é", "Hi"]), max_size=30
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES.map("".join), max_size=6))
def test_exact_line_units_are_the_reference_units(texts):
    batch = TokenBatch(texts)
    assert _exact_kernel._batch_units(batch, True) == ref.batch_units(batch, True)


def test_lines_with_camel_cased_runs_split_are_read_from_the_batch_buffer():
    texts = ["Intro line\nBookAFlightToParis now, GetUserTokenFast\n\nok", "x\nFindMeAHotelNearParis", "no humps\nhere"]
    batch = TokenBatch(texts)
    assert batch.splits.tolist() == [[0, 11, 4], [0, 35, 3], [1, 2, 5]]  # (text, where, tokens gained)
    units = [[("whole", h)] for h in batch.whole_hashes()]
    assert (
        _exact_kernel._span_units(batch, plain_line_spans(batch, [0, 1, 2]), units) == []
    )  # none left for the per-line path
    assert units == ref.batch_units(batch, True)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES.map("".join), max_size=6), st.lists(_LINES.map("".join), max_size=4), st.data())
def test_a_search_hashes_every_line_that_equals_an_item(texts, items, data):
    """With a search's keys, the units listed are the reference's whole units and every line whose
    normalized text is an item's (items drawn from the texts' own lines, and others)."""
    lines = [line for t in texts for line in t.split("\n")]
    if lines:
        items += data.draw(st.lists(st.sampled_from(lines), max_size=4))
    wanted = {text_hash(normalize(t)) for t in items}
    keys = _exact_kernel.text_keys([normalize(t).encode("utf-8") for t in items])
    batch = TokenBatch(texts)
    every = ref.batch_units(batch, True)
    searched = _exact_kernel._batch_units(batch, True, keys)
    for all_units, some in zip(every, searched):
        assert some[0] == all_units[0]  # the whole text
        assert [u for u in all_units[1:] if u[1] in wanted] == [u for u in some[1:] if u[1] in wanted]
        assert set(some) <= set(all_units)


def test_a_search_splits_into_lines_only_the_texts_holding_an_item():
    """A line with an item's key (its length and first 8 bytes) that is not the item is no unit when
    its text holds no item at all: that text is not split into lines. Where the item is, in a plain
    text, a slow one or after a camel-cased run split, its line is found."""
    item = "book a table for two tonight please"
    keys = _exact_kernel.text_keys([normalize(item).encode("utf-8")])
    texts = [
        "Notes\nBook a table for two tonight pleasE!\nthanks",  # the item, case and sign apart
        "Notes\nbook a table for two tonight plaese\nthanks",  # its key, not the item
        "Caf\u00e9 notes\nBookATableForTwoTonightPlease\nmerci",  # slow, camel-cased
        "Caf\u00e9 notes\nbook a table for two tonight plaese",  # slow, its key only
    ]
    batch = TokenBatch(texts)
    assert _exact_kernel._holders(batch, keys) == {0, 2}
    units = _exact_kernel._batch_units(batch, True, keys)
    assert [[u for u, _ in us] for us in units] == [["whole", "line 2"], ["whole"], ["whole", "line 2"], ["whole"]]
    assert units[0][1][1] == units[2][1][1] == text_hash(normalize(item))
    every = ref.batch_units(batch, True)
    assert ("line 2", text_hash(normalize(texts[1].split("\n")[1]))) in every[1]  # listed without a search


#: typography that takes the ASCII path (and some that must not: a confusable sign, NFKC letters), beside
#: what changes how ASCII normalizes: camel-cased runs, markup, percent escapes, hyphenated line ends
_TYPO = st.lists(
    st.sampled_from(
        [*_TYPOGRAPHY, *"aB .%<>&-=\"'", "\n", "\t", "%E2%80%99", "BookAFlightToParis", "é", "İ", "x", "<b>"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TYPO, max_size=5))
def test_typography_normalizes_and_batches_as_the_reference(texts):
    """Texts that are ASCII but for typography take the ASCII path (:func:`auditor.text.normalize.ascii_typography`)."""
    assert [normalize(t) for t in texts] == [ref.normalize(t) for t in texts]
    batch = TokenBatch(texts)
    assert [batch.normalized(i).decode() for i in range(len(texts))] == [ref.normalize(t) for t in texts]
    assert _exact_kernel._batch_units(batch, True) == ref.batch_units(batch, True)


#: text past ASCII that undoing evasion leaves as it is (letters, signs that normalize to nothing,
#: spaces, combining and ignorable characters), beside what it undoes and what keeps a line ASCII
_NON_ASCII = st.lists(
    st.sampled_from(
        ["\u00e9", "\u0130", "\u00df", "\u65e5\u672c", "\u2600", "\u00a0", "\u2003", "\u0301", "\u200b", "\u2019"]
        + ["&", "&amp;", "<", "<b>", "</b>", "%", "%41", "x", "B", " ", "\n", "-\n", "\x00"]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(
                ["\u00e9", "\u00c9", "\u0130", "e\u0301", "\u0435", "\ufb02", "\uff26", "\u200b", "\u2600", "\u65e5"]
                + [
                    "GetUserToken",
                    "Caf\u00e9Bar",
                    "x",
                    "B",
                    " ",
                    ",",
                    "\t",
                    "\x00",
                    "\u00a0",
                    "\u2019",
                    "\u0391",
                    "\u2028",
                    "\x85",
                ]
            ),
            max_size=12,
        ).map("".join),
        max_size=150,
    )
)
def test_lines_normalized_together_are_the_lines_normalized_one_by_one(lines):
    """``normalize_spaced`` reads lines joined as one text (and ``_undone_by_line`` them in runs, here
    more than one): each line, its words squeezed, as ``normalize_undone`` reads it alone (confusables,
    marks, ligatures, full width, ignorables, camel runs), with no whitespace past ASCII left."""
    want = [normalize_undone(line) for line in lines]
    for joined in ("\n".join(lines), "\n".join(lines * 7)):
        spaced = normalize_spaced(joined)
        assert [" ".join(line.split()) for line in spaced.split("\n")] == [
            normalize_undone(x) for x in joined.split("\n")
        ]
        assert all(c.isascii() for c in spaced if c.isspace())
    assert [" ".join(line.split()) for line in normalize_spaced("\n".join(lines)).split("\n")] == (want or [""])
    if lines:  # as the batch reads a piece: camel-cased runs split, lowered, punctuation made spaces
        undone = undo_evasion("\n".join(lines * 700))  # many runs of lines
        piece, _ = pieces._undone_by_line(undone)
        read = [camel.split_camel_runs(x.decode()).lower().translate(_PUNCT).split() for x in piece.split(b"\n")]
        assert [" ".join(x) for x in read] == [normalize_undone(x) for x in undone.split("\n")]


_PUNCT = str.maketrans({c: " " for c in string.punctuation + "".join(map(chr, range(32)))})


#: what each stage after undoing evasion changes: camel runs, confusables (Cyrillic, Greek), NFKC
#: (ligatures, full width, a fraction), case folding (``ß``, ``İ``, ``ẞ``, ``ΐ`` which folding
#: un-normalizes), ignorables, marks on Latin letters (precomposed or not) and on other scripts
_STAGED = st.lists(
    st.sampled_from(
        ["\u0435", "\u03f2", "\u0391", "\ufb02", "\uff26", "\u00bd", "\u00df", "\u0130", "\u1e9e", "\u0390"]
        + ["\u200b", "\u00ad", "e\u0301", "\u00e9", "\u1ea1", "\u0915\u093f", "\u0301", "\u2600", "\u65e5"]
        + ["GetUserToken", "x", "B", " ", ",", "\n", "\u00a0"]
    ),
    max_size=20,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_STAGED, st.booleans())
def test_the_characters_carried_through_the_stages_are_the_texts(text, fold):
    """``_folded`` gathers a text's characters once and carries them through the stages: they are the
    characters of what it returns (None: ASCII), which is what the stages give gathering them anew."""
    out, chars = norm._folded(text, fold)
    assert (chars is None and out.isascii()) or chars == set(out)
    if fold:
        assert out == ref.fold_chars(text)
    stripped, kept = evasion.marks_stripped(text, set(text))
    assert kept == set(stripped) and stripped == evasion.strip_latin_marks(text)


#: pieces of JSON lines: what msgspec and the standard library read alike, and what msgspec refuses
#: (NaN, infinity, a number past a double, a lone surrogate escape, invalid UTF-8, bad JSON, deep nesting),
#: and lines past the bound on a record's characters
_JSON_PIECES = st.sampled_from(
    ['{"a": ', '"x"', "1", "-0.0", "1e-400", "1e400", "NaN", "-Infinity", "123456789012345678901234567890", "0.1"]
    + ['"\\ud800"', '"\\ud83d\\ude00"', '"\u00e9"', '"\\u0000"', "[", "]", "}", ",", '"a": 2', " ", "[" * 1200]
    + ["]" * 1200, "\t", "\ufeff", "\x00", '"' + "\u00e9" * 1000 + '"']  # 1,002 characters, 2,002 bytes
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_JSON_PIECES, max_size=8).map("".join), min_size=1, max_size=6), st.booleans())
@example(['"' + "\u00e9" * 3100 + '"', '"' + "\u00e9" * 1600 + '"'], False)  # too long; past 3,000 bytes only
def test_json_lines_are_read_as_the_standard_library_reads_them(tmp_path_factory, lines, bom):
    """Lines msgspec parses give what ``json`` gives; any other line, what ``json`` gives or says of it."""
    path = tmp_path_factory.mktemp("jsonl") / "x.jsonl"
    data = "\n".join(lines).encode("utf-8", "surrogatepass").replace(b"\\xff", b"\xff")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data + b"\n\xff\n")
    fast = list(jsonread.iter_jsonl(path, max_chars=3000))
    with mock.patch.object(jsonread, "_fast_loads", None):
        plain = list(jsonread.iter_jsonl(path, max_chars=3000))
    assert repr(fast) == repr(plain)


#: what reads across a line break: an escaped one, a tag closed lines later, a hyphenated wrap, an override
_ACROSS = st.lists(
    st.sampled_from(
        ["%0A", "%0a", "<think>", "</think>", "<b>", "</b>", "-\n", "\u202e", "\u2019", "&amp;", "x", "B", "\n", " "]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(_TYPO, max_size=5)
    | st.lists(_LINES.map("".join), max_size=6)
    | st.lists(_ACROSS, max_size=5)
    | st.lists(_NON_ASCII, max_size=5)
)
def test_every_line_read_from_a_batch_buffer_is_the_line_normalized_on_its_own(texts):
    batch = TokenBatch(texts)
    slow = set(batch.slow)
    for spans in (
        plain_line_spans(batch, [k for k in range(len(texts)) if k not in slow]),
        slow_line_spans(batch, sorted(slow)),
    ):
        read = {k for k in spans.text.tolist()}
        assert not read & set(spans.missed)
        for k, n, a, b, mark in zip(spans.text.tolist(), spans.number.tolist(), spans.start, spans.end, spans.marked):
            line = texts[k].split("\n")[n - 1]
            assert (batch.data[a:b].tobytes() if b > a else b"") == ref.normalize(line).encode("utf-8"), (texts[k], n)
            assert bool(mark) == bool(line.strip())
        assert all(
            sorted(spans.number[spans.text == k].tolist()) == list(range(1, texts[k].count("\n") + 2)) for k in read
        )


#: tags whole or cut by a line break, closed or not, beside typography and whitespace
_TAGGED = st.lists(
    st.sampled_from(
        ["<foo", " bar>", "<b", ">", "</foo>", "<b>", "</b>", "<x/>", "List<String>", "<a href=x>", "=", " ", "\n"]
        + ["\u2019", "\u00a0", "\u2014", "\x1c", "\r", "a", "Bo"]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TAGGED | _TYPO | _NON_ASCII)
def test_a_piece_said_to_be_its_lines_pieces_is_them_and_marks_as_they_do(text):
    """What ``piece_by_lines`` vouches for without piecing a line (the batch then reads the text's
    lines from its piece, :func:`~auditor.text.lines.slow_line_spans`): each line of the piece
    normalizes as the line alone does (byte for byte the line's own piece but where the text's piece
    normalized the line), and is whitespace-only exactly where the line is."""
    from auditor.text.pieces import piece, piece_by_lines

    whole, by_lines = piece_by_lines(text)
    assert whole == piece(text)
    if by_lines:
        lines = text.split("\n")
        assert len(whole.split(b"\n")) == len(lines)
        for line, got in zip(lines, whole.split(b"\n")):
            assert ref.normalize(got.decode("utf-8")) == ref.normalize(line), (text, line)
            assert bool(got.strip(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")) == bool(line.strip()), (text, line)


def _roots() -> list[Path]:
    return [FOREIGN, *([SHARED] if SHARED.is_dir() else [])]


@pytest.mark.parametrize("root", _roots(), ids=lambda p: p.name)
def test_every_string_of_every_real_file_normalizes_and_batches_as_the_reference(root):
    files = _text_files(root)
    assert len(files) >= 10
    checked = 0
    for path in files:
        texts = _file_strings(path)
        for i in range(0, len(texts), 1024):
            chunk = texts[i : i + 1024]
            fast = [normalize(t) for t in chunk]
            slow = [ref.normalize(t) for t in chunk]
            bad = [t for t, a, b in zip(chunk, fast, slow) if a != b]
            assert not bad, f"{path.relative_to(root)}: normalize differs from the reference on {bad[0][:200]!r}"
            batch = TokenBatch(chunk)
            assert [batch.normalized(k) for k in range(len(chunk))] == [s.encode() for s in slow], path
            every = ref.batch_units(batch, True)
            assert _exact_kernel._batch_units(batch, True) == every, path
            items = [line for t in chunk for line in t.split("\n")[1::5]]  # some lines as eval items
            wanted = {text_hash(normalize(t)) for t in items}
            keys = _exact_kernel.text_keys([normalize(t).encode("utf-8") for t in items])
            searched = [[u for u in units if u[1] in wanted] for units in _exact_kernel._batch_units(batch, True, keys)]
            assert searched == [[u for u in units if u[1] in wanted] for units in every], path
            assert _same_words("\n".join(chunk)), f"{path.relative_to(root)}: words differ from the reference"
            calls = [t for t in chunk if list(toolcalls.code_calls(t)) != list(ref.code_calls(t))]
            calls += [t for t in chunk if "(" in t and "=" in t and _call_args(t) != _call_args(t, ref)]
            assert not calls, f"{path.relative_to(root)}: calls found unlike the reference in {calls[0][:200]!r}"
            checked += len(chunk)
    assert checked > 1000


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("f(# note\n a=1)", True),
        ("f(\\\n a=1)", True),
        ("f(\n\t a = 'x', b=2)", True),
        ("x.f( e\u0301=1)", True),  # a name written with a combining accent
        ("f(a, b=1)", False),
        ("f(x==1)", False),
        ("f(**k, a=1)", False),
        ("f()", False),
    ],
)
def test_a_call_is_read_whatever_comes_before_its_first_keyword(text, read):
    # whitespace, comments and line continuations before the first keyword argument; a positional one first: unread
    assert _call_args(text) == _call_args(text, ref)
    assert bool(_call_args(text)) is read


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 5), max_size=12), max_size=8),
    st.integers(1, 6),
    st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    st.integers(1, 3),
)
def test_eval_items_ngrams_are_hashed_together_as_one_by_one(items, n, share, least):
    from auditor.text.tokens import ngram_hashes, packed_ngram_hashes, shared_grams

    hashes = [np.array(item, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) for item in items]
    values, offsets = packed_ngram_hashes(hashes, n)
    assert [values[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == [
        ngram_hashes(h, n).tolist() for h in hashes
    ]
    assert shared_grams(hashes, n, share, least).tolist() == ref.shared_grams(hashes, n, share, least).tolist()


def _call_args(text: str, paths=toolcalls) -> list:
    """The keyword arguments of every Python call in ``text`` the package reads (with ``ref``: of every
    call, parsed whether or not its first argument is a keyword one)."""
    if paths is toolcalls:
        found = [(s, toolcalls._python_call_args(text, s)) for s, _ in toolcalls.code_calls(text, keyword_first=True)]
    else:
        found = [(s, ref.python_call_args(text, s)) for s, _ in ref.code_calls(text)]
    return [(s, a) for s, a in found if a is not None]


def _audit(tmp_path: Path, name: str, args: list[str]) -> dict:
    out = tmp_path / name
    res = CliRunner().invoke(
        main, ["audit", *args, "--workers", "1", "--report-dir", str(out / "r"), "--index-dir", str(out / "i")]
    )
    assert res.exit_code in (0, 1), res.output
    return json.loads((out / "r" / "report.json").read_text())


#: minhash's counts of LSH candidates: the reference sketches views that cannot reach a reported Jaccard
#: too, whose candidates are all rejected (``verified``, ``suspected_band`` and the findings must agree)
_CANDIDATE_COUNTS = {"candidates", "rejected", "word_set_candidates", "word_set_rejected"}


def _comparable(report: dict) -> dict:
    def drop(o):
        if isinstance(o, dict):
            return {
                k: drop(v)
                for k, v in o.items()
                if not k.endswith("_s") and "path" not in k and k != "notes" and k not in _CANDIDATE_COUNTS
            }
        if isinstance(o, list):
            return [drop(x) for x in o]
        return o

    return {"findings": report["findings"], "checks": drop(report["checks"])}


def _disguised_plants(tmp_path: Path) -> Path:
    """Foreign prose with StableToolBench test queries planted in the forms the fast paths treat
    apart: camel-cased, inside HTML, with curly quotes and non-breaking spaces, percent-encoded."""
    stb = json.loads(shared_file("stabletoolbench/solvable_queries/test_instruction/G1_instruction.json").read_text())
    queries = [q["query"] for q in stb[:40]]
    prose = [t for t in _file_strings(FOREIGN / "arena-hard" / "model_answer_gpt-4-0314.jsonl") if len(t) > 200]
    forms = [
        lambda q: "".join(w[:1].upper() + w[1:] for w in q.split()[:12]) + " " + " ".join(q.split()[12:]),
        lambda q: f'<div class="q"><p>{q.replace(" ", " <b>", 1)}</b></p></div>',
        lambda q: "\u201c" + q.replace(" ", "\u00a0", 3) + "\u201d \u2014 asked",
        lambda q: "search?q=" + q.replace(" ", "%20"),
    ]
    path = tmp_path / "plants.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, q in enumerate(queries):
            text = f"{prose[i % len(prose)]}\n\n{forms[i % len(forms)](q)}\n\n{prose[(i + 7) % len(prose)]}"
            fh.write(json.dumps({"text": text}) + "\n")
            fh.write(json.dumps({"text": prose[(i + 3) % len(prose)]}) + "\n")
    return path


def _cases(tmp_path: Path) -> list[tuple[str, list[str]]]:
    cases = [("webshop", ["--eval", "webshop:0:500", "--train", "webshop:500:"])]
    if SHARED.is_dir():
        cases.append(("plants", ["--eval", "stabletoolbench", "--train", str(_disguised_plants(tmp_path))]))
        mvr = SHARED / "tool-mvr/data/training_data/selected_Toolbench_V.json"
        if mvr.is_file():
            cases.append(("tool-mvr", ["--eval", "stabletoolbench", "--train", str(mvr)]))
    for path in sorted(FOREIGN.glob("*/*.jsonl"))[:6]:
        cases.append((path.parent.name, ["--eval", "stabletoolbench", "--train", str(path)]))
    return cases


@pytest.mark.slow
def test_whole_audits_on_the_reference_paths_give_the_same_findings(tmp_path, monkeypatch):
    found = 0
    for name, args in _cases(tmp_path):
        fast = _audit(tmp_path, f"{name}-fast", args)
        with ref.reference_paths(monkeypatch):
            slow = _audit(tmp_path, f"{name}-ref", args)
        monkeypatch.undo()
        assert _comparable(fast) == _comparable(slow), name
        found += len(fast["findings"])
    assert found > 0


def test_a_disguised_plant_is_found_on_both_paths(tmp_path, monkeypatch):
    if not SHARED.is_dir():
        pytest.skip(f"needs {SHARED} (StableToolBench test queries): auditor data fetch stabletoolbench")
    args = ["--eval", "stabletoolbench", "--train", str(_disguised_plants(tmp_path)), "--method", "exact"]
    args += ["--method", "ngram", "--method", "minhash"]
    fast = _audit(tmp_path, "fast", args)
    with ref.reference_paths(monkeypatch):
        slow = _audit(tmp_path, "ref", args)
    assert _comparable(fast) == _comparable(slow)
    conclusive = {f["train_ordinal"] for f in fast["findings"] if f["conclusive"]}
    assert len(conclusive) >= 30, sorted(conclusive)  # 40 plants, each on an even line


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", " ", "&", "<", ">", "*", "|", "\n", "\t", "\u202e", "\u00a0", "é", "\x00", "\u2028"]), max_size=30) | st.text(max_size=30))  # fmt: skip
def test_markdown_text_is_escaped_as_character_by_character(text):
    """``md`` writes a printable text's entities with one ``str.translate``: the same text as
    reading it character by character (control, format and separator characters made visible)."""
    from auditor.report import _md

    escaped = _md._PUNCT.sub(r"\\\1", text)
    reference = "".join(_md._visible(c) if (not c.isprintable() or c in _md._ENTITIES) else c for c in escaped)
    assert _md.md(text) == reference


def test_the_ngram_tables_are_looked_up_alike_with_and_without_the_bitmap(monkeypatch):
    # the scanner looks a window up only where its hash's top bits are an eval n-gram's: the same hits
    from auditor.datasets.dataset import Dataset, DatasetSpec
    from auditor.methods import _ngram_kernel, create

    ev = list(Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records())
    index = create("ngram").build(ev)
    texts = [r.view("query") for r in ev[:300]] + [f"see {r.view('query')} and more" for r in ev[300:400]]
    fast = index._scanner().hits(texts)
    monkeypatch.setattr(_ngram_kernel.NgramScanner, "_bitmap", lambda self, n: np.ones(1 << 20, dtype=bool))
    slow = index._scanner().hits(texts)
    assert len(fast) == len(slow) and sum(len(d) for _, d, _ in fast) > 300
    for (n, docs, entries), (m, docs2, entries2) in zip(fast, slow):
        assert n == m and docs.tolist() == docs2.tolist() and entries.tolist() == entries2.tolist()
