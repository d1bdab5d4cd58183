"""Short eval items are checked or named (issue 22, item 4).

Seal-Tools (tests/data/foreign/seal-tools, Apache-2.0) embeds each in-domain test query in its
fine-tuning prompt as a line ``task_instruction = "…"``: a containment the ``exact`` tier cannot see
(the line is longer than the item) and that ``ngram`` saw only from 8 tokens. Its out-of-domain test
queries are in no prompt: the clean control of the same pair. An item too short for any text tier
(under ``SHORT_MIN_N`` tokens) is unchecked: the verdict is ``incomplete`` and the report names it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from helpers import REPO, shared_file

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import DatasetSpec
from auditor.errors import ConfigError
from auditor.methods.ngram import SHORT_MIN_N, NgramIndex
from auditor.text.normalize import tokens

SEAL = REPO / "tests" / "data" / "foreign" / "seal-tools"
IN_DOMAIN = SEAL / "test_in_domain.jsonl.gz"
OUT_DOMAIN = SEAL / "test_out_domain.jsonl.gz"
PROMPTS = SEAL / "finetune_test_in_domain.json.gz"


def _lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _audit(tmp_path: Path, evals: list[str], train: list[str], methods=None, params=None, **spec) -> dict:
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", evals, role="eval", **spec),
            "tr": DatasetSpec("tr", train, role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=methods)],
        method_params=params or {},
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    return run_audit(config).to_dict()


@pytest.fixture(scope="module")
def seal_report(tmp_path_factory) -> dict:
    """Default methods: the 1,354 Seal-Tools test queries against the 700 in-domain fine-tuning prompts."""
    tmp = tmp_path_factory.mktemp("seal")
    return _audit(tmp, [str(IN_DOMAIN), str(OUT_DOMAIN)], [str(PROMPTS)])


def _items(report: dict, method: str, conclusive: bool | None = None) -> set[str]:
    return {
        f["eval_id"]
        for f in report["findings"]
        if f["method"] == method and (conclusive is None or f["conclusive"] == conclusive)
    }


def _janitor_only(report: dict) -> set[str]:
    """Eval items whose only findings are suspected ones for sharing 13-token runs (the janitor's rule)."""
    out: dict[str, bool] = {}
    for f in report["findings"]:
        if f["conclusive"] or f["evidence"].get("tier") == "suspected":
            why = f["evidence"].get("suspected_because", "")
            out[f["eval_id"]] = out.get(f["eval_id"], True) and why.startswith("shares 13-token runs")
    return {k for k, v in out.items() if v}


def test_seal_tools_every_in_domain_query_is_found_short_ones_as_suspected(seal_report):
    in_domain = {r["id"]: r["query"] for r in _lines(IN_DOMAIN)}
    short = {i for i, q in in_domain.items() if len(tokens(q)) < NgramIndex.Config().min_n}
    assert len(in_domain) == 700 and len(short) == 29  # the 5-7-word queries the issue names
    found = _items(seal_report, "ngram")
    assert found >= set(in_domain)  # 700/700
    assert _items(seal_report, "ngram", conclusive=True) == set(in_domain) - short  # 671 conclusive
    conclusive = _items(seal_report, "ngram", conclusive=True)
    suspected = {
        f["eval_id"]
        for f in seal_report["findings"]
        if f["method"] == "ngram"
        and not f["conclusive"]
        and f["eval_id"] in in_domain
        and f["eval_id"] not in conclusive
    }
    assert suspected == short
    tiers = {f["evidence"].get("tier") for f in seal_report["findings"] if f["eval_id"] in short}
    assert "suspected" in tiers
    check = seal_report["checks"][0]
    assert check["contaminated_items"] == 671
    assert check["suspected"] == 29 + len(_janitor_only(seal_report))  # + out-of-domain ones (below)
    assert "End the game with ID 37." in {in_domain[i] for i in short}


def test_seal_tools_out_of_domain_items_are_not_flagged(seal_report):
    out_domain = {r["id"] for r in _lines(OUT_DOMAIN)}
    assert len(out_domain) == 654
    flagged = [
        f
        for f in seal_report["findings"]
        if f["eval_id"] in out_domain and (f["conclusive"] or f["evidence"].get("tier") == "suspected")
    ]
    assert not any(f["conclusive"] for f in flagged)
    # out-of-domain queries that share a 13-token run with a fine-tuning prompt (Seal-Tools composes its
    # multi-task queries from the same sub-task sentences; one shares polygon coordinates
    # '40.7128,-74.0060;51.5074,...'): what lm-eval's janitor flags, so suspected, a small part of each
    assert {f["eval_id"] for f in flagged} == _janitor_only(seal_report)
    assert "test_out_domain-difficult-395" in _janitor_only(seal_report)
    assert all(f["method"] == "ngram" and f["evidence"]["coverage"] < 0.5 for f in flagged)
    assert len(flagged) <= 0.05 * len(out_domain)
    assert seal_report["checks"][0]["uncovered_items"] == 0  # every Seal-Tools query has >= 3 tokens


def test_without_the_short_band_the_29_are_missed(tmp_path):
    """The same audit with the suspected band turned off (``short_min_n = min_n``, the old behaviour)
    misses exactly the short items, so the test above can fail."""
    report = _audit(tmp_path, [str(IN_DOMAIN)], [str(PROMPTS)], methods=["ngram"], params={"ngram": {"short_min_n": 8}})
    assert len(_items(report, "ngram")) == 671
    ngram = next(m for m in report["checks"][0]["method_stats"] if m["method"] == "ngram")
    assert ngram["eval_not_indexed"] == 29


def test_an_item_too_short_for_every_tier_makes_the_check_incomplete_and_is_named(tmp_path):
    """Two real queries and two real two-word BFCL live items ("hi", "how are you" are 1 and 3 tokens;
    two-token ones are taken from the file): the short ones are unchecked, listed, and the verdict is
    never a plain pass."""
    live = shared_file("gorilla/berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_live_irrelevance.json")
    rows = [json.loads(line) for line in live.read_text(encoding="utf-8").splitlines() if line.strip()]
    tiny = [
        (r["id"], m["content"])
        for r in rows
        for turn in r["question"]
        for m in turn
        if m.get("role") == "user" and 0 < len(tokens(m["content"])) < SHORT_MIN_N
    ][:2]
    assert len(tiny) == 2
    queries = [(r["id"], r["query"]) for r in _lines(OUT_DOMAIN)[:2]]
    ev = tmp_path / "ev.jsonl"
    ev.write_text("".join(json.dumps({"id": i, "query": q}) + "\n" for i, q in [*queries, *tiny]))
    report = _audit(tmp_path, [str(ev)], [str(PROMPTS)])
    check = report["checks"][0]
    assert check["verdict"] == "incomplete"
    assert check["uncovered_items"] == 2
    note = next(n for n in check["notes"] if "could not be checked" in n)
    assert all(f"ev#{i}" in note for i, _ in tiny)
    assert not any(f"ev#{i}" in note for i, _ in queries)


def test_boilerplate_masking_still_applies_to_short_items(tmp_path):
    """A short out-of-domain query written into the shared header of every prompt is boilerplate, not
    evidence; the same query in one prompt's own ``task_instruction`` line is found (suspected)."""
    query = next(r for r in _lines(OUT_DOMAIN) if 4 <= len(tokens(r["query"])) < 8)
    with gzip.open(PROMPTS, "rt", encoding="utf-8") as f:
        prompts = json.load(f)[:200]
    header = "Please chooose the needed apis and return api_calling list according to the task_instruction."
    everywhere = []
    for p in prompts:
        human = p["conversations"][0]
        assert header in human["value"]
        human = dict(human, value=human["value"].replace(header, f"{header} Example: {query['query']}"))
        everywhere.append(dict(p, conversations=[human, *p["conversations"][1:]]))
    ev = tmp_path / "ev.jsonl"
    ev.write_text(json.dumps({"id": query["id"], "query": query["query"]}) + "\n")
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(everywhere))
    masked = _audit(tmp_path, [str(ev)], [str(shared)], methods=["ngram"])
    assert masked["findings"] == []
    unmasked = _audit(
        tmp_path, [str(ev)], [str(shared)], methods=["ngram"], params={"ngram": {"mask_boilerplate": False}}
    )
    assert unmasked["findings"] and unmasked["checks"][0]["suspected"] == 1  # what masking kept from being evidence
    assert masked["checks"][0]["boilerplate"]["masked_records"] > 0
    one = [dict(p) for p in prompts]
    human = one[7]["conversations"][0]
    line = next(x for x in human["value"].split("\n") if x.startswith("task_instruction = "))
    human = dict(human, value=human["value"].replace(line, f'task_instruction = "{query["query"]}"'))
    one[7] = dict(one[7], conversations=[human, *one[7]["conversations"][1:]])
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(one))
    found = _audit(tmp_path, [str(ev)], [str(planted)], methods=["ngram"])
    assert [(f["train_id"], f["conclusive"], f["evidence"]["tier"]) for f in found["findings"]] == [
        (one[7]["id"], False, "suspected")
    ]


def test_clean_controls_stay_clean(tmp_path):
    """WebShop goals 0:100 against 100:200, and (where present) StableToolBench against Tool-MVR's
    samples: no conclusive finding, and no item left unchecked."""
    webshop = _audit(tmp_path, ["webshop:0:100"], ["webshop:100:200"])
    assert webshop["checks"][0]["contaminated_items"] == 0
    assert webshop["checks"][0]["verdict"] == "pass"
    mvr = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    tool_mvr = _audit(tmp_path, ["stabletoolbench"], [str(p) for p in sorted(mvr.parent.glob("*.json"))])
    assert tool_mvr["checks"][0]["contaminated_items"] == 0
    assert tool_mvr["checks"][0]["verdict"] == "pass"


def test_short_min_n_above_min_n_is_a_config_error():
    with pytest.raises(ConfigError, match="short_min_n"):
        NgramIndex(short_min_n=9, min_n=8)


def test_a_short_item_that_is_a_whole_training_text_is_an_exact_copy(tmp_path):
    """WebShop goal 169 ("i would like a anti perspirant", 6 tokens) is training goal 1929 word for word:
    conclusive (``whole_text``), as the exact tier says; goal 30 ("i need gluten free popcorn") stands
    inside a longer goal ("… popcorn seasoning. make it the ranch flavored"): suspected."""
    report = _audit(tmp_path, ["webshop:0:500"], ["webshop:500:"], methods=["ngram"])
    by_item = {f["eval_id"]: f for f in report["findings"]}
    assert by_item["169"]["conclusive"] and by_item["169"]["evidence"]["whole_text"]
    assert not by_item["30"]["conclusive"] and by_item["30"]["evidence"]["tier"] == "suspected"
