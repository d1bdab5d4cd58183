"""Issue 37, item 2: normalization never deletes text it cannot prove is markup.

A false PASS (a leaked eval item reported clean) is the worst bug this tool can have. Each attack
here made ``normalize`` delete or merge the words of a planted eval item: a stray ``<`` before the
query and a ``>`` later on its line (the tag pattern swallowed the query), one unpaired right-to-left
override before a query stored forwards (the query was reversed), zero-width spaces or Hangul fillers
standing for the spaces (the words were merged), ANSI colour codes on the words (``[31m`` stuck to
each word) and PDF-style hyphenated hard wraps (``informa-`` / ``tion`` split the word in two).

Unit tests pin each rule on ``normalize`` with its negative cases (real tags still stripped, reversed
text behind an override still put in reading order, zero-width characters inside words still
dropped); end-to-end tests plant the first 50 bundled StableToolBench queries, attacked, among chat
training records and count the items the default audit finds conclusively (in the style of
``tests/test_disguises.py``). Before this change: stray ``<`` 0/50, unpaired U+202E 0/50, U+200B and
U+3164 separators 0/50, ANSI colours 0/50, hyphenated hard wraps 20/50 (see ``BEFORE``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_false_pass import SYSTEM, _write, chat, filler, stb_config, stb_items

from auditor.audit.run import run_audit
from auditor.text.batch import TokenBatch, forget_batch
from auditor.text.normalize import clean, normalize

# -- the attacks (written before any rule was tuned) -----------------------------------------------

#: a stray ``<`` before the query and a ``>`` after it, on the same line (code and maths in prose)
_STRAY = [
    "Debug note: skip the rows where score<threshold. {q} Keep only the rows where x>0.",
    "items.filter(x => x.price<maxPrice). Then: {q} (results -> table)",
    "if a<b and {q} and c>d",
    "if x<y then {q} >",
    "while i<n: {q} # n>0 here",
]


def stray_angle(q: str, k: int) -> str:
    return _STRAY[k % len(_STRAY)].format(q=q)


_OVERRIDDEN = ["\u202e{q}", "Note:\u202e {q}", "Task \u202e- {q}", "\u202e {q}\nThanks!", "ok \u202e{q}"]


def override_forward(q: str, k: int) -> str:
    """One unpaired U+202E before a query stored (and read by any model) forwards."""
    return _OVERRIDDEN[k % len(_OVERRIDDEN)].format(q=q)


def separated(mark: str):
    """Every space of the query replaced by ``mark`` (a zero-width space, a Hangul filler)."""
    return lambda q, k: q.replace(" ", mark)


#: colour and other terminal escapes, each (before, after) a word: SGR (16, 256, true colour, bold,
#: reset in both spellings), a CSI that is not SGR (erase in line), OSC 8 hyperlinks (ST and BEL)
_ANSI = [
    ("\x1b[31m", "\x1b[0m"),
    ("\x1b[1;32m", "\x1b[m"),
    ("\x1b[38;5;208m", "\x1b[39m"),
    ("\x1b[38;2;255;0;0m", "\x1b[0m\x1b[K"),
    ("\x1b]8;;https://example.com/a\x1b\\", "\x1b]8;;\x1b\\"),
    ("\x1b[4m\x1b[33m", "\x1b[24m\x1b[0m"),
    ("\x1b]0;title\x07\x1b[35m", "\x1b[0m"),
]


def ansi_colours(q: str, k: int) -> str:
    return " ".join(
        "{}{}{}".format(*_ANSI[(i + k) % len(_ANSI)][:1], w, _ANSI[(i + k) % len(_ANSI)][1])
        for i, w in enumerate(q.split(" "))
    )


def hyphen_wrap(q: str, k: int, width: int = 20) -> str:
    """``q`` hard-wrapped at ``width`` columns as a PDF extractor gives it: a word that crosses the
    margin is broken with a hyphen after a lower-case letter, the rest on the next line."""
    lines, line = [], ""
    width += k % 9  # margins differ, so breaks fall in other words
    for word in q.split(" "):
        room = width - len(line) - (1 if line else 0)
        if len(word) <= room:
            line = f"{line} {word}" if line else word
            continue
        letters = len(word) - len(word.lstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        cut = min(room - 1, letters - 2)  # two letters at least on each side
        if cut >= 2 and word[cut - 1].islower():
            lines.append(f"{line} {word[:cut]}-" if line else f"{word[:cut]}-")
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    return "\n".join([*lines, line])


ATTACKS = {
    "stray_angle_brackets": stray_angle,
    "unpaired_override_forward": override_forward,
    "zero_width_space_separators": separated("\u200b"),
    "hangul_filler_separators": separated("\u3164"),
    "ansi_colours": ansi_colours,
    "hyphenated_hard_wrap": hyphen_wrap,
}
#: the issue's targets (conclusive findings of 50)
TARGET = {"stray_angle_brackets": 48, "hyphenated_hard_wrap": 48}
#: measured before this change (the same attacks, the default audit)
BEFORE = {
    "stray_angle_brackets": 0,
    "unpaired_override_forward": 0,
    "zero_width_space_separators": 0,
    "hangul_filler_separators": 0,
    "ansi_colours": 0,
    "hyphenated_hard_wrap": 20,
}


def _found(tmp_path, planted: list[str], items) -> set[int]:
    rows = [chat(f"r{i}", filler(i)) for i in range(2000)]
    for k, text in enumerate(planted):
        rows.insert(40 * k + 3, chat(f"q{k}", text))
    report = run_audit(stb_config(_write(tmp_path / "train.jsonl", rows), tmp_path))
    return {f["eval_ordinal"] for f in report.findings if f["conclusive"]} & {it.ordinal for it in items}


@pytest.mark.parametrize("kind", sorted(ATTACKS))
def test_attacked_queries_are_found_by_the_default_audit(tmp_path, kind):
    items = stb_items(50)
    attacked = [ATTACKS[kind](it.view("query"), k) for k, it in enumerate(items)]
    assert all(a != it.view("query") for a, it in zip(attacked, items))
    found = _found(tmp_path, attacked, items)
    assert len(found) >= TARGET.get(kind, 45), (kind, len(found))
    assert SYSTEM  # the records share the agent system prompt of test_false_pass


# -- 1. a tag must look like a tag -----------------------------------------------------------------

Q = "Book a flight to Paris for two adults next Monday"
NQ = "book a flight to paris for two adults next monday"


@pytest.mark.parametrize(
    "text",
    [
        f"score<threshold. {Q} Keep rows where x>0.",
        f"x.price<maxPrice). {Q} -> done",
        f"a<b and {Q} and c>d",
        f"if x<y then {Q} >",
        f"while i<n: {Q} # n>0",
        f"List<String> {Q} Map<K, V>",
        f"#include <stdio.h> {Q} <name> <sevice_id>",
        f'a<b title {Q} x="1">',
        f"1 < 2 {Q} 3 > 2",
    ],
)
def test_a_stray_angle_bracket_never_swallows_prose(text):
    assert NQ in normalize(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<b>Bo</b>ok a fl<i>ig</i>ht", "book a flight"),
        ('<p class="x">Book</p><div id=main>a flight</div>', "book a flight"),
        ("Book<br/>a<BR>flight<br />now", "book a flight now"),
        ("<tool_call>Book a flight</tool_call>", "book a flight"),
        ("<think>Book</think> a flight", "book a flight"),
        ('<ns:tag attr="v">Book a flight', "book a flight"),
        ("<image>Book a flight", "book a flight"),
        ('<input type="checkbox" checked disabled>Book <td nowrap>a <div data-x>flight', "book a flight"),
        ("<a href=https://x.example/p?q=1>Book a flight</a>", "book a flight"),
        ("Book a flight</s>", "book a flight"),
        ("<custom/>Book a flight", "book a flight"),
    ],
)
def test_real_tags_are_still_stripped(text, expected):
    assert normalize(text) == expected


def test_a_tag_of_another_name_needs_its_closing_tag_an_attribute_or_a_slash():
    assert normalize("Vec<T> <think> x") == "vec t think x"
    assert normalize("<think> x </think>") == "x"
    assert normalize("List<String> and </String>") == "list and"


# -- 2. an override is undone only where it reverses something -------------------------------------


@pytest.mark.parametrize("prefix", ["\u202e", "Note:\u202e ", "\u202e ", "ok \u202e"])
def test_an_unpaired_override_before_forward_text_changes_nothing(prefix):
    assert normalize(prefix + Q) == normalize(prefix.replace("\u202e", "") + Q)
    assert NQ in normalize(prefix + Q + "\u202c and more")


def test_reversed_text_behind_an_override_is_still_put_in_reading_order():
    assert normalize("\u202e" + Q[::-1]) == NQ
    assert normalize(f"see \u202e{Q[::-1]}\u202c now") == f"see {NQ} now"
    assert normalize("\u202e.esaelp ,siraP ot thgilf a kooB") == "book a flight to paris please"
    # right-to-left letters read in stored order, reversed or not
    assert normalize("\u202e\u05e9\u05dc\u05d5\u05dd") == normalize("\u05e9\u05dc\u05d5\u05dd")


def test_an_override_over_no_words_either_way_is_left_as_stored():
    assert normalize("\u202e8DT4XZ 12345") == "8dt4xz 12345"


# -- 3. ignorables that stand for spaces become spaces ---------------------------------------------


@pytest.mark.parametrize("mark", ["\u200b", "\u3164", "\u2060", "\u00ad", "\ufeff", "\u200b\u200b"])
def test_ignorables_standing_for_spaces_become_spaces(mark):
    assert normalize(Q.replace(" ", mark)) == NQ
    assert normalize(f"Please: {Q.replace(' ', mark)}!") == f"please {NQ}"


@pytest.mark.parametrize("mark", ["\u200b", "\u200d", "\u00ad", "\u3164", "\u2060"])
def test_ignorables_inside_words_are_still_dropped(mark):
    inside = " ".join(w[:2] + mark + w[2:] if len(w) > 3 else w for w in Q.split())
    assert normalize(inside) == NQ
    every = " ".join(mark.join(w) for w in Q.split())  # one between every two letters of each word
    assert normalize(every) == NQ


def test_ignorables_in_scripts_written_without_spaces_are_dropped():
    thai = "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35" * 6
    assert normalize("\u200b".join(thai[i : i + 3] for i in range(0, len(thai), 3))) == normalize(thai)
    cjk = "上述段落中表达的观点最直接的增强了哪项反对政府军备扩张的立场"
    assert normalize(cjk[:10] + "\u200b" + cjk[10:]) == normalize(cjk)


def test_the_ignorables_a_text_holds_are_found_by_the_kernel_as_by_its_set_of_characters():
    """``drop_ignorables`` asks the kernel whether a text holds an ignorable (``first_in`` over their
    code-point ranges), then which, by a pattern: every code point, alone and beside an astral one,
    gives what ``set(text) & ignorable`` gives."""
    from auditor.text.evasion import _present
    from auditor.text.normalize import _tables

    ignorable = _tables().ignorable
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        want = {c} & ignorable
        assert _present(f"a{c}b", ignorable) == (want, 1 if want else -1), hex(cp)
        assert _present(f"{c}\U0001f600", ignorable) == (want, 0 if want else -1), hex(cp)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*" \u3000\u00a0\n\x1c\t", "\u200b", "\u3164", "\u00ad", "a", "Book", "flight" * 5, "\u4e0a\u8ff0", "x.y"]
        ),
        max_size=40,
    ).map("".join)
)
def test_ignorables_are_dropped_from_the_first_one_s_chunk_on_as_from_the_whole_text(text):
    """``drop_ignorables`` rewrites a text from the whitespace-free chunk of its first ignorable on
    (the kernel says where it stands): what rewriting all of it gives (a set of ignorables, not a
    frozenset, takes that path)."""
    from auditor.text.evasion import drop_ignorables

    ignorable = {"\u200b", "\u3164", "\u00ad"}
    assert drop_ignorables(text, frozenset(ignorable)) == drop_ignorables(text, ignorable)


def test_a_long_word_with_one_ignorable_in_a_url_keeps_its_word():
    assert "flight" in normalize("https://x.example/search/very/long/path/fl\u200bight?q=1").split()


# -- 4. terminal escapes are word boundaries -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "\x1b[31mBook\x1b[0m a \x1b[1;32mflight\x1b[m",
        "\x1b[38;5;208mBook\x1b[39m\x1b[K a \x1b[38;2;255;0;0mflight\x1b[0m",
        "\x1b]8;;https://x.example\x1b\\Book\x1b]8;;\x1b\\ a \x1b]0;title\x07flight",
        "\x1b[2J\x1b[HBook\x1b(B a\x1b7 flight\x9b0m",
    ],
)
def test_terminal_escapes_become_word_boundaries(text):
    assert normalize(text) == "book a flight"
    assert "\x1b" not in clean(text)


def test_a_lone_escape_is_a_space_as_before():
    assert normalize("Book\x1ba flight") == "book a flight"
    assert normalize("x\x1b]never terminated Book a flight") == "x never terminated book a flight"


# -- 5. hyphenated hard wraps are joined -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the informa-\ntion you need", "the information you need"),
        ("the informa-\r\n   tion you need", "the information you need"),
        ("the informa\u00ad\ntion, the infor\u2010\nmation", "the information the information"),
        ("Lio-\nnel Messi", "lionel messi"),
        ("COVID-\n19, A-\nB, x -\ny, end-\n- item", "covid 19 a b x y end item"),
    ],
)
def test_a_word_broken_by_a_hyphen_and_a_newline_is_one_word(text, expected):
    assert normalize(text) == expected


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*"-\u00ad\u2010\n\r \taB1_\u00e9", "a-\n", "a\u00ad\n", "a\u2010\n", "\u00e9\u2010\r\n  ", "-\r\n x"]
        ),
        max_size=30,
    ).map("".join)
)
def test_wraps_joined_hyphen_by_hyphen_are_those_one_pattern_joins(text):
    """``join_hyphen_wraps`` runs one pattern per hyphen (each found fast by its first character):
    the same text as the pattern of all three hyphens in one pass."""
    from auditor.text import evasion

    assert evasion.join_hyphen_wraps(text) == evasion._WRAP.sub(evasion._join_wrap, text)


def test_a_hyphen_inside_a_line_is_punctuation_as_before():
    assert normalize("well-known e-mail") == "well known e mail"


# -- the batch path gives exactly normalize ---------------------------------------------------------


def test_the_batch_normalizes_every_attack_as_normalize():
    items = stb_items(20)
    texts = [f(it.view("query"), k) for k, it in enumerate(items) for f in ATTACKS.values()]
    texts += ["\x1b[31mplain ascii\x1b[0m", "plain-\nascii", "plain -\r\nascii", "a<b and c>d", "<b>x</b>y"]
    forget_batch()
    batch = TokenBatch(texts)
    assert [batch.normalized(i) for i in range(len(texts))] == [normalize(t).encode() for t in texts]
