"""Long records: the findings of the linear-time identifier search are those of the plain regex search.

``entities`` searches its ``email`` pattern from the starts of character runs only
(:func:`auditor.methods.entities._run_starts`); before, ``re.finditer`` tried every position of a run
and rescanned the rest of it, quadratic in the run's length (a 2 MB record with long tokens took
about a minute). These tests compare the two searches — the reference is the same index with the
run-start search switched off — on long real records and on strings built to stress the cut. Timing
is measured in ``benchmarks/bench_long_record.py``, not here.
"""

from __future__ import annotations

import re

import pytest
from helpers import shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods.entities import BUILTIN, EntitiesIndex, _run_starts
from auditor.records.record import TEXT, Record

EMAIL = re.compile(BUILTIN["email"])
EMAIL_STARTS = re.compile(r"(?<![\w.+-])" + BUILTIN["email"])


def reference(index: EntitiesIndex) -> EntitiesIndex:
    """The same index searching every pattern with plain ``finditer`` (the code before the change)."""
    ref = EntitiesIndex(index.config)
    ref.run_starts = [None] * len(ref.regexes)
    return ref.build(index.eval_records)


def found(findings) -> list[tuple]:
    return sorted((f.eval_id, f.train_id, f.score, repr(f.evidence)) for f in findings)


def long_trajectory_record() -> Record:
    """tau-bench's 200 GPT-4o airline trajectories (4 MB of JSON) as one record: every view of every
    trajectory joined, turn starts kept, plus long tokens (a base64-like blob, an e-mail after a run)."""
    path = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    recs = list(Dataset(DatasetSpec("traj", [str(path)])).records())
    views: dict[str, list[str]] = {}
    for r in recs:
        for name, text in r.views.items():
            views.setdefault(name, []).append(text)
    joined = {name: "\n".join(texts) for name, texts in views.items()}
    tokens = "\n" + "Zq9_" * 600 + " " + "x" * 1500 + "@" + "y" * 1500 + " note-" + "k" * 800 + "@example.com.\n"
    joined[TEXT] += tokens
    joined["observations"] += tokens
    return Record("traj", "all", f"{path}:1", joined)


def test_entities_findings_on_a_long_trajectory_record_are_unchanged():
    evals = list(Dataset(DatasetSpec("tau", ["tau-bench-airline"], role="eval")).records())
    index = EntitiesIndex().build(evals)
    record = long_trajectory_record()
    record.ordinal = 0
    assert len(record.view(TEXT)) > 2_000_000
    new, old = index.search([record]), reference(index).search([record])
    assert new, "the trajectories hold the tasks' user ids and flight numbers: findings expected"
    assert found(new) == found(old)
    for view in ("text", "observations", "calls"):
        assert index.extract(record.views[view]) == reference(index).extract(record.views[view])


def test_long_record_finds_the_identifiers_of_its_short_parts():
    """Cut into its trajectories, the record yields per eval item the same identifiers as whole."""
    path = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    parts = list(Dataset(DatasetSpec("traj", [str(path)])).records())[:60]
    evals = list(Dataset(DatasetSpec("tau", ["tau-bench-airline"], role="eval")).records())
    index = EntitiesIndex(train_views=("text",)).build(evals)
    whole = Record("traj", "all", "t:1", {TEXT: "\n".join(p.view(TEXT) for p in parts)})
    for i, r in enumerate([*parts, whole]):
        r.ordinal = i

    def ids(findings) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for f in findings:
            out.setdefault(f.eval_id, set()).update(i["id"] for i in f.evidence["identifiers"])
        return out

    short = ids(index.search(parts))
    assert short and ids(index.search([whole])) == short


@pytest.mark.parametrize(
    "text",
    [
        "a@b.com-x@y.org",
        "a@b.com.x@y.org and +c@d.io",
        "mia.li3818@example.com" * 3,
        "-" * 50 + "@" + "q.r" * 20,
        "..@@..a@b.c@d.e",
        "x" * 3000 + "@example.com",
        "user @ host.com, user@@host.com, @x.y, a@b, a@b.",
        "émile.zola@exemple.fr ünïcödé+tag@bücher.de",
    ],
)
def test_run_start_search_matches_finditer(text):
    assert [m.span() for m in _run_starts(EMAIL, EMAIL_STARTS, text)] == [m.span() for m in EMAIL.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab1_.+-@ \n#é", max_size=300))
def test_run_start_search_matches_finditer_on_arbitrary_text(text):
    assert [m.span() for m in _run_starts(EMAIL, EMAIL_STARTS, text)] == [m.span() for m in EMAIL.finditer(text)]


def test_a_user_pattern_named_like_a_builtin_kind_keeps_plain_search():
    index = EntitiesIndex(kinds=["reservation"], patterns={"email": r"[a-z]+@x"})
    assert index.run_starts == [None, None]
    assert [i for i, *_ in index.extract("ab@x cd@x")] == ["ab@x", "cd@x"]
