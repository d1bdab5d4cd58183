"""Property-based tests (hypothesis): text normalization, canonical tool calls and the adapters' parsing.

Adapters get arbitrary JSON values, chat-shaped objects and CSV cells; whatever they get, reading
yields Records or counted Skips (or one InputError), never another exception, and the accounting
``read = records + skipped`` holds.
"""

from __future__ import annotations

import csv
import functools
import json
import string
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from auditor.adapters.chat import extract_task, parse_ref_id, parse_turns
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import InputError
from auditor.records.record import Record
from auditor.records.toolcalls import call_name, calls_in_text, canonical_call, parse_arguments
from auditor.text.camel import split_camel_runs
from auditor.text.normalize import _unicode_table, clean, normalize, text_hash, tokens

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def _space_table() -> dict[int, str]:
    return _unicode_table()  # ~0.6 s to spell out; built once per test session


def _unicode_path(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().translate(_space_table()).split())


# -- normalization ------------------------------------------------------------------------------


@SETTINGS
@given(st.text())
def test_normalize_is_idempotent_and_canonical(text):
    norm = normalize(text)
    assert normalize(norm) == norm
    assert norm == norm.strip() and "  " not in norm
    assert not any(unicodedata.category(c)[0] in "PSC" and c != " " for c in norm)
    assert tokens(text) == norm.split()
    assert text_hash(norm) == text_hash(normalize(norm))


@SETTINGS
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_equals_unicode_path(text):
    # clean: markup (tags, entities) removed and %XX decoded first; normalize also splits camel-cased runs
    assert normalize(text) == _unicode_path(split_camel_runs(clean(text)))


@SETTINGS
@given(st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \t\n"))
def test_normalize_ignores_case_punctuation_and_spacing(text):
    # but for a hyphen ending a line: a hard wrap is joined after a lower-case letter only
    # (join_hyphen_wraps: "informa-\ntion" is one word, "A-\nB" two), so that case is left out here
    text = text.replace("-\n", "- \n")
    assert normalize(text.upper()) == normalize(text.lower())
    assert normalize(text.replace(" ", "  ,  ")) == normalize(text)


# -- adapters -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)

keys = st.sampled_from(
    [
        "id",
        "text",
        "query",
        "query_id",
        "question",
        "messages",
        "conversations",
        "user_scenario",
        "role",
        "content",
        "from",
        "value",
        "instruction_text",
    ]
)
messages = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["user", "system", "assistant", "tool", 3, None]),
            "from": st.sampled_from(["human", "gpt", "function"]),
            "content": st.one_of(st.text(max_size=40), st.lists(json_values, max_size=3), json_values),
            "value": st.one_of(st.text(max_size=40), json_values),
        },
    ),
    max_size=4,
)
record_like = st.dictionaries(keys, st.one_of(json_values, messages), max_size=5)
items = st.lists(st.one_of(record_like, json_values), min_size=1, max_size=8)


def _read(path: Path, fmt: str | None = None):
    ds = Dataset(DatasetSpec(name="d", paths=[str(path)], role="train", on_error="skip", format=fmt))
    try:
        recs = list(ds.records())
    except InputError:
        return None, ds.stats
    s = ds.stats
    assert s.read == s.yielded + s.skipped + s.filtered
    assert s.skipped == sum(s.skip_reasons.values())
    for r in recs:
        assert isinstance(r, Record) and isinstance(r.id, str)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r.views.items())
    assert [r.ordinal for r in recs] == list(range(len(recs)))
    return recs, s


@SETTINGS
@given(items, st.sampled_from([None, "json", "jsonl", "chat", "toolbench-queries", "tau2-tasks", "webshop-goals"]))
def test_adapters_never_crash_and_account_for_every_item(docs, fmt):
    with tempfile.TemporaryDirectory() as d:
        for suffix, data in ((".jsonl", "".join(json.dumps(x) + "\n" for x in docs)), (".json", json.dumps(docs))):
            if fmt in ("toolbench-queries", "tau2-tasks", "webshop-goals") and suffix == ".jsonl":
                continue
            path = Path(d) / f"data{suffix}"
            path.write_text(data, encoding="utf-8")
            recs, stats = _read(path, fmt)
            if recs is not None and not stats.skipped_files:
                # one item per array element or line (a file forced into the other JSON format may differ)
                natural = fmt != "jsonl" if suffix == ".json" else fmt in (None, "jsonl", "chat")
                assert stats.read == len(docs) or not natural


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.text(
                alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1,
                max_size=40,
            ).filter(str.strip)
        ),
        min_size=1,
        max_size=10,
    )
)
def test_jsonl_and_csv_round_trip_texts_and_ids(rows):
    texts = [t for (t,) in rows]
    with tempfile.TemporaryDirectory() as d:
        jl = Path(d) / "x.jsonl"
        jl.write_text(
            "".join(json.dumps({"id": f"k{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8"
        )
        recs, _ = _read(jl)
        assert [(r.id, r.views["text"]) for r in recs] == [(f"k{i}", t) for i, t in enumerate(texts)]
        table = Path(d) / "x.csv"
        with open(table, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "text"])
            for i, t in enumerate(texts):
                w.writerow([f"k{i}", t])
        recs, _ = _read(table, "csv")
        assert [(r.id, r.views.get("text", "")) for r in recs] == [(f"k{i}", t) for i, t in enumerate(texts)]


@SETTINGS
@given(st.text(max_size=200))
def test_extract_task_returns_stripped_text_from_the_prompt(content):
    task = extract_task(content)
    assert task == task.strip()
    assert task in content or not content.strip()


@SETTINGS
@given(st.from_regex(r"G[0-9]@[0-9]{1,8}(_[a-z]+)?", fullmatch=True) | st.text(max_size=20))
def test_parse_ref_id(rid):
    ref = parse_ref_id(rid)
    if ref is not None:
        group, num = ref
        assert rid.startswith(f"{group}@{num}") and num.isdigit()


@SETTINGS
@given(record_like)
def test_parse_turns_gives_role_text_turns(obj):
    parsed = parse_turns(obj)
    if parsed is not None:
        assert all(isinstance(t.role, str) and isinstance(t.text, str) for t in parsed)


# -- canonical tool calls -----------------------------------------------------------------------

scalars = (
    st.booleans()
    | st.none()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=12)
)
arguments = st.dictionaries(
    st.text(min_size=1, max_size=8).filter(lambda k: k == k.strip()),
    st.recursive(
        scalars,
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(st.text(min_size=1, max_size=5).filter(lambda k: k == k.strip()), c, max_size=3)
        ),
        max_leaves=8,
    ),
    max_size=5,
)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)


@SETTINGS
@given(names, arguments, st.randoms())
def test_canonical_call_ignores_order_case_spacing_and_encoding(name, args, rnd):
    canon = canonical_call(name, args)
    items = list(args.items())
    rnd.shuffle(items)
    shuffled = dict(items)
    assert canonical_call(f"  {name.upper()} ", shuffled) == canon
    assert canonical_call(name, json.dumps(shuffled, indent=2)) == canon  # arguments given as JSON text
    assert call_name(canon) == name.lower()


@SETTINGS
@given(names, arguments)
def test_canonical_call_is_a_fixed_point(name, args):
    canon = canonical_call(name, args)
    inner = canon[len(call_name(canon)) + 1 : -1]
    assert canonical_call(call_name(canon), inner) == canon


@SETTINGS
@given(st.text(max_size=300))
def test_tool_call_parsing_never_raises_on_arbitrary_text(text):
    assert isinstance(parse_arguments(text), dict)
    for canon, args in calls_in_text(text):
        assert canon.endswith(")") and isinstance(args, dict)
    for canon, _ in calls_in_text(f"Action: search\nAction Input: {text}"):
        assert call_name(canon) == "search" or "Action" in text


# -- compressed input ---------------------------------------------------------------------------


@SETTINGS
@given(st.lists(st.binary(max_size=70000), min_size=1, max_size=4), st.sampled_from([".gz", ".zst"]))
@example(frames=[b"\x00\x00\xfe\xff", b"\x00" * 13], suffix=".gz")  # a UTF-32 BOM: transcoded, not compared
def test_compressed_readers_return_exactly_the_data_of_every_frame(frames, suffix):
    """Byte for byte, except data that opens with a UTF-16 / UTF-32 byte-order mark: that is text in
    that encoding, transcoded to UTF-8 by design (``tests/test_formats_more.py`` checks it)."""
    import gzip

    import zstandard

    from auditor.io.compressed import BOMS, open_binary

    assume(not any(b"".join(frames).startswith(bom) for bom, _, _ in BOMS))

    pack = gzip.compress if suffix == ".gz" else zstandard.ZstdCompressor().compress
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"x.jsonl{suffix}"
        path.write_bytes(b"".join(pack(f) for f in frames))  # several members / frames
        with open_binary(path) as f:
            assert f.read() == b"".join(frames)
        with open_binary(path) as f:
            assert b"".join(f) == b"".join(frames)
