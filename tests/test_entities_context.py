"""Entities with fewer false friends: context rules for reservation-shaped codes, and identifiers a
training record holds only in tool results weigh less than ones in the user's request."""

from __future__ import annotations

from helpers import shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods.entities import TOOL_RESULT_WEIGHT, EntitiesIndex
from auditor.records.record import Record


def _kinds(text):
    return [(i, k) for i, k, *_ in EntitiesIndex().extract(text)]


def test_a_hex_colour_is_not_a_reservation():
    assert _kinds("Use the brand colour #E11D48 for the button") == []
    assert _kinds("background: E11D48;") == []
    assert _kinds("commit sha 4A1B2C") == []
    assert _kinds("Please cancel reservation EHGLP3 today") == [("EHGLP3", "reservation")]


def test_prices_and_quantities_are_not_reservations():
    assert _kinds("It costs 100USD, or USD250 with 512GB1 storage") == []
    assert _kinds("codes H8Q05L and XYZ123") == [("H8Q05L", "reservation"), ("XYZ123", "reservation")]


def test_ids_seen_only_in_search_results_weigh_less():
    """A real tau-bench trajectory: flight numbers it saw in search results are marked and weigh
    TOOL_RESULT_WEIGHT; the same ids in the user's own request weigh 1."""
    path = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    tr = next(iter(Dataset(DatasetSpec(name="traj", paths=[str(path)])).records()))
    index = EntitiesIndex()
    only_results = sorted(i for i in index._tool_result_only(tr) if i.startswith("HAT"))
    assert len(only_results) >= 2
    ev = Record("bench", "1", "b#0", {"query": f"Fly on {only_results[0]} and {only_results[1]}."})
    (f,) = index.build([ev]).search([tr])
    assert f.evidence["in_tool_results_only"] == 2 and f.score == TOOL_RESULT_WEIGHT
    assert all(loc["in_tool_results_only"] for loc in f.evidence["identifiers"])
    said = Record("train", "u", "u:1", {"query": f"I want {only_results[0]} and {only_results[1]}"})
    (g,) = EntitiesIndex().build([ev]).search([said])
    assert g.score == 1.0 and g.evidence["in_tool_results_only"] == 0


def _findings(eval_name: str, train: list[Record]) -> list[dict]:
    ev = list(Dataset(DatasetSpec(name=eval_name, paths=[eval_name], role="eval")).records())
    return [f.to_dict() for f in EntitiesIndex().build(ev).search(train)]


def test_the_identifier_prefilter_finds_what_extracting_every_text_finds(monkeypatch):
    """The scan extracts only texts in which an Aho-Corasick automaton finds one of the eval
    identifiers (a ToolBench id also spelt with ``@``): on real tau-bench trajectories and few-shot
    records and tau2's retail tasks (read as a training set) against tau2's airline and retail tasks
    and StableToolBench, the findings equal those of extracting every text, whether the automaton
    is a DFA (identifiers of up to ``DFA_CHARS`` characters, as each of these eval sets has) or the one
    the wheel picks."""
    from auditor.methods import entities

    train = []
    for name in (
        "tau-bench/historical_trajectories/gpt-4o-airline.json",
        "tau-bench/few_shot_data/MockAirlineDomainEnv-few_shot.jsonl",
        "tau-bench/few_shot_data/MockRetailDomainEnv-few_shot.jsonl",
        "tau2-bench/data/tau2/domains/retail/tasks.json",
    ):
        train += list(Dataset(DatasetSpec(name="train", paths=[str(shared_file(name))])).records())
    qid = Record("train", "q", "q:1", {"text": "as in G1@588, nothing else"})
    for eval_name in ("tau2-airline", "tau2-retail", "stabletoolbench"):
        fast = _findings(eval_name, [*train, qid])
        with monkeypatch.context() as m:
            m.setattr(entities, "ahocorasick_rs", None)
            slow = _findings(eval_name, [*train, qid])
        with monkeypatch.context() as m:
            m.setattr(entities, "DFA_CHARS", 0)
            not_dfa = _findings(eval_name, [*train, qid])
        assert fast == slow == not_dfa, eval_name
        assert fast, eval_name  # each eval set has identifiers these records hold


def test_the_identifier_prefilter_skips_texts_without_an_eval_identifier():
    index = EntitiesIndex().build([Record("bench", "1", "b#0", {"query": "Cancel EHGLP3 for emma_kim_9957."})])
    assert index.literals is not None
    assert index._lines_to_read("Please cancel reservation EHGLP4 for emma_kim_9958 today") == []
    assert index._lines_to_read("re: EHGLP3") == [(0, 10)]
    assert index._lines_to_read("a\nemma_kim_9957's trip\nb") == [(2, 22)]


def test_a_long_record_is_extracted_on_the_lines_holding_an_eval_identifier_only_as_a_whole():
    """Lines holding a spelling of an eval identifier are read as the whole text reads them: the
    findings equal those of extracting the whole text, whatever the other lines hold."""
    index = EntitiesIndex().build(
        [Record("bench", "1", "b#0", {"query": "Cancel EHGLP3 and HAT136 for emma_kim_9957, G1_588."})]
    )
    lines = [
        "colour #EHGLP3 is no code",
        "Rebook EHGLP3, flight HAT136 (not HAT777).",
        "mail emma_kim_9957@example.com or emma_kim_9957",
        "other codes AB12CD and HAT999, user jo_lee_1234",
        "as in G1@588" + "x" * 5000,
        "EHGLP3",
    ]
    text = "\n".join(lines * 3)
    windowed = index.extract(text, index._lines_to_read(text))
    whole = [t for t in index.extract(text) if t[0] in index.table]
    assert [t for t in windowed if t[0] in index.table] == whole and len(whole) > 10
    assert {t[0] for t in windowed} - set(index.table)  # other identifiers on those lines are found too
    tr = Record("train", "t", "t:1", {"text": text})
    with_lines = index.search([tr])
    index.__dict__["literals"] = None  # the whole text, as without the automaton
    assert [f.evidence for f in index.search([tr])] == [f.evidence for f in with_lines]


_INDEX = EntitiesIndex().build(
    [Record("b", "1", "b#0", {"query": "Cancel EHGLP3 and HAT136 for emma_kim_9957, G1_588."})]
)
_PIECES = ["EHGLP3", "HAT136", "HAT1367", "emma_kim_9957", "G1_588", "G1@588", "G1_5889", "#", "0x", "@example.com"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES, " ", "\n", "\n", "x", "_", "colour ", "9", "A"]), max_size=40).map("".join))
def test_lines_holding_an_eval_identifier_give_what_the_whole_text_gives(text):
    lines = _INDEX._lines_to_read(text)
    whole = [t for t in _INDEX.extract(text) if t[0] in _INDEX.table]
    assert [t for t in _INDEX.extract(text, lines) if t[0] in _INDEX.table] == whole
    assert lines or not whole
