"""The ``minhash`` tier on real inputs: datasketch compatibility, verified findings, persistence."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from datasketch import MinHash, MinHashLSH
from datasketch.lsh import _optimal_param
from hypothesis import example, given, settings
from hypothesis import strategies as st

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.indexes import build_index
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, IndexFileError
from auditor.methods import _minhash_sketch as sk
from auditor.methods._shingles import packed, shingle_hashes, sized_sets
from auditor.methods.minhash import MinHashIndex
from auditor.text.tokens import distinct


def bundled(name: str) -> list:
    return list(Dataset(DatasetSpec(name, [name], role="eval")).records())


@pytest.fixture(scope="module")
def stb():
    return bundled("stabletoolbench:G1_instruction")


def chat_train(tmp_path, queries: dict[str, str], name: str = "train"):
    """Real chat-format training file (Task: ... Begin!) read through the chat adapter."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": k,
                    "messages": [
                        {"role": "system", "content": "You are an AutoGPT, capable of utilizing numerous APIs."},
                        {"role": "user", "content": f"Task:\n{q}\nBegin!"},
                        {"role": "assistant", "content": "Thought: call the API first."},
                    ],
                }
            )
            for k, q in queries.items()
        )
    )
    return path


def exact_jaccard(a: str, b: str, size: int = 3) -> float:
    sa, sb = set(shingle_hashes(a, "word", size).tolist()), set(shingle_hashes(b, "word", size).tolist())
    return len(sa & sb) / len(sa | sb)


@pytest.mark.parametrize("scheme", sk.SCHEMES)
def test_signatures_identical_to_datasketch(stb, scheme):
    docs = [np.unique(sk.fold(shingle_hashes(r.view("query")), scheme)) for r in stb[:40]]
    offsets = np.concatenate(([0], np.cumsum([len(d) for d in docs])[:-1]))
    sigs = sk.signatures(np.concatenate(docs), offsets, sk.permutations(128, 42, scheme))
    for doc, sig in zip(docs, sigs):
        m = MinHash(num_perm=128, seed=42, hashfunc=int, scheme=scheme)
        m.update_batch(doc.tolist())
        assert m.hashvalues.dtype == sig.dtype
        assert np.array_equal(m.hashvalues, sig)
    # a different seed gives other values
    assert not np.array_equal(sigs, sk.signatures(np.concatenate(docs), offsets, sk.permutations(128, 43, scheme)))


def test_window_signatures_are_signatures_of_each_window(stb):
    hv = sk.fold(np.concatenate([shingle_hashes(r.view("query")) for r in stb[:10]]))
    perms = sk.permutations(64, 1)
    wins = sk.window_signatures(hv, perms, 5, 6)
    assert len(wins) == -(-len(hv) // 5) - 6 + 1
    for i in (0, 7, len(wins) - 1):
        assert np.array_equal(wins[i], sk.signatures(hv[i * 5 : i * 5 + 30], np.array([0]), perms)[0])


def test_band_parameters_are_datasketchs():
    """The vectorized optimiser picks what datasketch's (scipy quad) picks, over thresholds, permutation
    counts and weights (264 such cases were checked when it was written; each quad run costs ~0.1 s,
    so the test keeps a spread of them), and past its range datasketch itself answers."""
    cases = [(round(0.1 * k, 1), 128, w) for k in range(1, 10) for w in ((0.5, 0.5), (0.3, 0.7))]
    cases += [(0.6 - 0.2, 128, (0.5, 0.5)), (0.05, 64, (0.5, 0.5)), (0.95, 64, (0.9, 0.1)), (0.7, 256, (0.5, 0.5))]
    for t, p, weights in cases:
        # the optimiser MinHashLSH runs (it refuses a result of one band; lsh_params takes it)
        assert sk.lsh_params(t, p, *weights) == _optimal_param(t, p, *weights), (t, p, weights)
    lsh = MinHashLSH(threshold=0.5, num_perm=1024)
    assert sk.lsh_params(0.5, 1024) == (lsh.b, lsh.r)


def test_planted_near_duplicate_found_with_verified_score(tmp_path, stb):
    target, other = stb[3], stb[50]
    words = target.view("query").split()
    rng = random.Random(1)
    del words[rng.randrange(len(words))]  # one word dropped
    i = rng.randrange(len(words) - 1)
    words[i], words[i + 1] = words[i + 1], words[i]  # one swap
    planted = " ".join(words).upper() + "!!"  # case and punctuation changes
    path = chat_train(tmp_path, {"planted": planted, "other": other.view("query")[:200] + " and thanks"})
    train = list(Dataset(DatasetSpec("train", [str(path)], format="chat")).records())
    index = MinHashIndex().build(stb)
    findings = index.search(train)
    hits = [f for f in findings if f.train_id == "planted"]
    assert [f.eval_id for f in hits] == [target.id]
    assert hits[0].score == pytest.approx(exact_jaccard(target.view("query"), planted), abs=1e-6)
    assert hits[0].score >= index.config.threshold
    assert hits[0].evidence["measure"] == "jaccard" and hits[0].evidence["train_view"] == "query"
    # no finding pairs the planted record with another eval item, nor the unrelated record with the target
    assert all(f.eval_id == other.id for f in findings if f.train_id == "other")
    assert index.stats()["verified"] == len(findings)


def test_candidate_below_threshold_after_verification_is_not_reported(tmp_path, stb):
    target = stb[10].view("query")
    words = target.split()
    half = " ".join(words[: len(words) // 2]) + " " + " ".join(reversed(words[len(words) // 2 :]))
    jac = exact_jaccard(target, half)
    assert 0.2 < jac < 0.9
    path = chat_train(tmp_path, {"half": half})
    train = list(Dataset(DatasetSpec("train", [str(path)], format="chat")).records())
    # shingles only; the suspected band from 0.1, so that the view may reach a reported score and is sketched
    index = MinHashIndex(threshold=0.9, suspected_threshold=0.1, lsh_threshold=0.1, word_set_threshold=0).build(stb)
    assert index.search(train) == []
    st = index.stats()
    assert st["candidates"] >= 1 and st["rejected"] == st["candidates"] and st["verified"] == 0
    # with the band from 0.5 (the default), too few of its shingles are in any eval item for Jaccard 0.5:
    # the view is not even sketched, so there is no candidate to reject
    pruned = MinHashIndex(threshold=0.9, lsh_threshold=0.1, word_set_threshold=0).build(stb)
    shared = len(np.intersect1d(distinct(shingle_hashes(half)), pruned._union("eval_sh").sorted))
    assert shared < 0.5 * len(distinct(shingle_hashes(half)))
    assert pruned.search(train) == [] and pruned.stats()["candidates"] == 0
    # the same pair with a threshold below its Jaccard is reported, with that score
    low = MinHashIndex(threshold=round(jac - 0.01, 2), lsh_threshold=0.1).build(stb)
    assert [round(f.score, 6) for f in low.search(train) if f.eval_id == stb[10].id] == [round(jac, 6)]
    # the word-set channel (default) finds the reordered half whatever the shingles say: same words, Jaccard 1;
    # its values (1000, 1100, 1200) now stand in reverse order, as in another instance of the template: suspected
    words_hit = [f for f in MinHashIndex(threshold=0.9).build(stb).search(train) if f.eval_id == stb[10].id]
    assert [(f.evidence["measure"], f.score, f.conclusive) for f in words_hit] == [("word_set", 1.0, False)]
    # reordered where no value stands: the same words, the values in place, conclusive
    front = " ".join(reversed(words[: len(words) // 2])) + " " + " ".join(words[len(words) // 2 :])
    path = chat_train(tmp_path, {"front": front}, name="front")
    train = list(Dataset(DatasetSpec("train", [str(path)], format="chat")).records())
    words_hit = [f for f in MinHashIndex(threshold=0.9).build(stb).search(train) if f.eval_id == stb[10].id]
    assert [(f.evidence["measure"], f.score, f.conclusive) for f in words_hit] == [("word_set", 1.0, True)]


def test_containment_mode_finds_short_item_in_long_record(tmp_path):
    evals = bundled("tau2-airline")
    item = evals[5].view("query")
    filler = " ".join(r.view("text") for r in bundled("tau2-retail")[:30])
    long_text = filler[: len(filler) // 2] + "\n" + item + "\n" + filler[len(filler) // 2 :]
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"id": "long", "text": long_text}) + "\n")
    train = list(Dataset(DatasetSpec("train", [str(path)], format="jsonl", text_field="text")).records())
    contain = MinHashIndex(mode="containment", train_views=("text",)).build(evals)
    hits = [f for f in contain.search(train) if f.eval_id == evals[5].id]
    assert len(hits) == 1 and hits[0].score == 1.0 and hits[0].evidence["measure"] == "containment"
    # Jaccard is the wrong measure here: the same record is not a near-duplicate of the item
    jac = MinHashIndex(train_views=("text",)).build(evals)
    assert not [f for f in jac.search(train) if f.eval_id == evals[5].id]


def test_index_round_trip_and_corrupted_file_refused(tmp_path, stb, monkeypatch):
    queries = {"p": stb[7].view("query").replace(",", "") + " please"}
    train = list(Dataset(DatasetSpec("train", [str(chat_train(tmp_path, queries))], format="chat")).records())
    first = build_index("minhash", None, stb, str(tmp_path / "ix"))
    expected = [f.to_dict() for f in first.search(train)]
    assert expected and expected[0]["eval_id"] == stb[7].id
    folders = list((tmp_path / "ix").iterdir())
    assert len(folders) == 1 and (folders[0] / "index.json").exists()

    def no_build(self):
        raise AssertionError("index was rebuilt instead of reused")

    monkeypatch.setattr(MinHashIndex, "_build", no_build)
    again = build_index("minhash", None, stb, str(tmp_path / "ix"))
    assert [f.to_dict() for f in again.search(train)] == expected

    keys = folders[0] / "keys.npy"
    data = bytearray(keys.read_bytes())
    data[-3] ^= 0xFF
    keys.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="keys.npy: checksum mismatch"):
        build_index("minhash", None, stb, str(tmp_path / "ix"))


def test_bad_parameters_are_config_errors():
    for params in (
        {"mode": "cosine"},
        {"shingle": "line"},
        {"threshold": 0},
        {"scheme": "affine16"},
        {"lsh_threshold": 1.5},
        {"nperm": 3},
        {"threshold": "high"},
    ):
        with pytest.raises(ConfigError):
            MinHashIndex(**params)


def test_audit_reports_rejected_candidates(tmp_path, stb):
    target = stb[20].view("query")
    path = chat_train(tmp_path, {"dup": target.lower() + " thanks", "far": " ".join(reversed(target.split()))})
    cfg = AuditConfig(
        datasets={
            "stb": DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval"),
            "train": DatasetSpec("train", [str(path)], format="chat"),
        },
        checks=[CheckSpec("c", train=["train"], eval=["stb"], methods=["minhash"])],
        # the shingle channel alone: the reversed text has the item's very word set (the word-set channel finds it)
        method_params={"minhash": {"lsh_threshold": 0.1, "word_set_threshold": 0}},
    )
    report = run_audit(cfg)
    assert report.verdict == "fail"
    assert [(f["eval_id"], f["train_id"]) for f in report.findings] == [(stb[20].id, "dup")]
    st = report.checks[0]["method_stats"][0]
    assert st["method"] == "minhash" and st["verified"] == 1 and st["rejected"] >= 1


def test_short_items_are_left_to_other_tiers_and_counted(tmp_path):
    goals = bundled("webshop:0:3000")
    speaker = next(r for r in goals if r.view("query") == "i need a black wireless bluetooth speaker")
    train_path = tmp_path / "goals.jsonl"
    train_path.write_text(json.dumps({"id": "g", "text": "i need a black wireless bluetooth soundbar"}) + "\n")
    train = list(Dataset(DatasetSpec("train", [str(train_path)], format="jsonl", text_field="text")).records())
    # 5 shingles, Jaccard 0.67: a different product, which the default min_shingles keeps out
    assert exact_jaccard(speaker.view("query"), train[0].view("text")) > 0.6
    index = MinHashIndex(train_views=("text",)).build(goals)
    assert index.search(train) == []
    st = index.stats()
    assert st["not_indexed_reasons"] == {"fewer than min_shingles=10 word 3-grams": st["eval_not_indexed"]}
    assert 0 < st["eval_not_indexed"] < len(goals)
    loose = MinHashIndex(train_views=("text",), min_shingles=1).build(goals)
    assert [f.eval_id for f in loose.search(train)] == [speaker.id]


def test_word_set_channel_keeps_attribute_swaps_suspected():
    """WebShop goal 233 ("a blue ottomans") and training goal 5153 ("a green ottomans") share 8 of 10
    words: a sibling goal, not a copy. Goal 177 and training goal 7136 differ by one added word: a copy."""
    goals = Dataset(DatasetSpec("w", ["webshop"], role="eval")).records()
    by_id = {r.id: r for r in goals}
    index = build_index("minhash", None, [by_id["233"], by_id["177"]], None)
    found = {f.eval_id: f for f in index.search([by_id["5153"], by_id["7136"]])}
    assert found["233"].evidence["measure"] == "word_set" and not found["233"].conclusive
    assert found["177"].conclusive


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 40), max_size=60), min_size=1, max_size=8),
    st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=12), min_size=1, max_size=4),
    st.sampled_from([0.3, 0.5, 0.6, 0.8, 1.0]),
)
@example([[0, 1, 2, 3, 3]], [[0, 1, 2]], 0.75)  # 4 distinct of 5, at the bound: Jaccard 0.75, kept
def test_a_set_left_out_for_its_size_reaches_no_eval_set(train, evals, share):
    """``sized_sets`` leaves out only sets whose Jaccard with every eval set is below ``share`` (by
    their distinct hashes, told from a prefix), and gives each kept set's distinct hashes."""
    as_sets = [np.array(t, dtype=np.uint64) for t in train]
    eval_sets = [distinct(np.array(e, dtype=np.uint64)) for e in evals]
    fit, (kept, offsets) = sized_sets(*packed(as_sets), packed(eval_sets)[1], share)
    for i, t in enumerate(as_sets):
        mine = kept[offsets[i] : offsets[i + 1]]
        if i in fit:
            assert mine.tolist() == distinct(t).tolist()
            continue
        assert not len(mine)
        a = set(t.tolist())
        assert all(len(a & set(e.tolist())) / len(a | set(e.tolist())) < share for e in eval_sets)
    assert [i for i, t in enumerate(train) if len(set(t)) <= max(map(len, eval_sets))] == [
        i for i in fit.tolist() if len(set(train[i])) <= max(map(len, eval_sets))
    ]  # a set no larger than the largest eval set is always kept


def test_long_training_texts_are_left_out_of_the_sketch_by_size_with_the_same_findings(stb, monkeypatch):
    """A long document (50 other StableToolBench queries in a row: far more distinct shingles and words
    than any query has over the Jaccard bar) is not sketched, and the findings are those of sketching
    every view."""
    from auditor.methods import _shingles
    from auditor.records.record import Record

    q = stb[3].view("query")
    document = " ".join(r.view("query") for r in stb[10:60])
    batch = [Record("t", str(i), f"t:{i}", {"text": t}) for i, t in enumerate([q, document, q + " Thanks!"])]
    ix = MinHashIndex().build(stb)
    left_out = []
    real = _shingles.sized_sets

    def spy(values, offsets, eval_offsets, share):
        fit, sets = real(values, offsets, eval_offsets, share)
        left_out.append(sorted(set(range(len(offsets) - 1)) - set(fit.tolist())))
        return fit, sets

    monkeypatch.setattr(_shingles, "sized_sets", spy)
    found = [(f.train_id, f.eval_id, f.score) for f in ix.search(batch)]
    assert left_out == [[1], [1]]  # the document, in the shingle and the word channels

    def every(values, offsets, eval_offsets, share):  # every view sketched (share 0: none left out)
        return real(values, offsets, eval_offsets, 0)

    monkeypatch.setattr(_shingles, "sized_sets", every)
    assert [(f.train_id, f.eval_id, f.score) for f in ix.search(batch)] == found
    assert {t for t, _, _ in found} == {"0", "2"}


@pytest.mark.parametrize("source", ["stabletoolbench", "webshop", "bfcl"])
def test_the_index_holds_each_items_own_shingles_and_words(source):
    """The build normalizes a whole eval set in one token batch (word shingles): each item's distinct
    shingles, shingle count and distinct words are what its own text gives (``shingle_hashes`` and
    ``tokens`` of it alone), on real eval sets."""
    from auditor.text.normalize import tokens
    from auditor.text.tokens import token_hashes

    ev = list(Dataset(DatasetSpec("ev", [source], role="eval")).records())
    ix = MinHashIndex().build(ev)
    cfg = ix.config
    assert cfg.shingle == "word" and ix.word_sets
    for pos, r in enumerate(ev):
        h = shingle_hashes(r.view(cfg.eval_view), cfg.shingle, cfg.shingle_size)
        own = distinct(h) if len(distinct(h)) >= max(1, cfg.min_shingles) else np.empty(0, np.uint64)
        assert ix.eval_sh[ix.eval_off[pos] : ix.eval_off[pos + 1]].tolist() == own.tolist(), r.id
        assert ix.item_len[pos] == (len(h) if len(own) else 0)
        words = distinct(token_hashes(tokens(r.view(cfg.eval_view))))
        words = words if len(words) >= cfg.word_set_min_words else np.empty(0, np.uint64)
        assert ix.word_sh[ix.word_off[pos] : ix.word_off[pos + 1]].tolist() == words.tolist(), r.id
