"""N-gram scanners of several checks share one token-id space (one pass, several checks).

A batch's tokens are mapped once per process onto the shared vocabulary and each scanner looks its
own ids up; the matches must be exactly those of a scanner mapping the batch on its own, also for
a scanner built after the batch was first mapped (its tokens were not in the shared vocabulary
then: a stale mapping would miss them, a false PASS), and after pickling (a worker process).
"""

from __future__ import annotations

import pickle

import numpy as np

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods import _ngram_kernel as kernels
from auditor.methods._ngram_kernel import NgramScanner
from auditor.text.normalize import tokens
from auditor.text.tokens import ngram_hashes, token_hashes


def _scanner(evals: list[str], n: int = 8) -> NgramScanner:
    hashes, owners = [], []
    for pos, text in enumerate(evals):
        h = np.unique(ngram_hashes(token_hashes(tokens(text)), n))
        hashes.append(h)
        owners.append(np.full(len(h), pos, dtype=np.int64))
    H, P = np.concatenate(hashes), np.concatenate(owners)
    order = np.argsort(H, kind="stable")
    return NgramScanner((t for e in evals for t in tokens(e)), {n: (H[order], P[order])})


def _alone(scanner: NgramScanner, texts: list[str], n_eval: int):
    """The scanner's matches with the shared state reset (as if it were the only one)."""
    saved = dict(kernels._SHARED_VOCAB)
    kernels.reset_shared_vocabulary()
    try:
        return pickle.loads(pickle.dumps(scanner)).matches(texts, n_eval)
    finally:
        kernels.reset_shared_vocabulary()
        kernels._SHARED_VOCAB.update(saved)


def test_scanners_sharing_a_batch_match_as_they_would_alone():
    recs = Dataset(DatasetSpec("ev", ["webshop:0:200"], role="eval")).records()
    goals = [g for g in (r.view("query") for r in recs) if len(tokens(g)) >= 10][:90]
    assert len(goals) == 90
    thirds = [goals[:30], goals[30:60], goals[60:]]
    texts = [f"record {i}: please {goals[(i * 7) % 90]} thanks, and more words follow here" for i in range(120)]
    texts += ["nothing to see in this one at all, just unrelated words"] * 5
    first = _scanner(thirds[0])
    got = [first.matches(texts, 30)]
    # built after the batch was mapped: the shared vocabulary grows, the batch is mapped again
    later = [_scanner(thirds[1]), _scanner(thirds[2])]
    got += [s.matches(texts, 30) for s in later]
    for scanner, matches in zip([first, *later], got):
        assert matches and matches == _alone(scanner, texts, 30)
    # every planted goal is found by the scanner of its third
    found = {(k, d) for k, m in enumerate(got) for d, _, _ in m}
    assert all((((i * 7) % 90) // 30, i) in found for i in range(120))


def test_the_first_scanner_reads_shared_ids_as_its_own_until_the_vocabulary_grows():
    """The first scanner of a process (most runs hold one) has the shared ids as its own and skips
    the mapping; once another scanner adds tokens, those must read as 0 (not its own) for it."""
    recs = Dataset(DatasetSpec("ev", ["webshop:0:200"], role="eval")).records()
    goals = [g for g in (r.view("query") for r in recs) if len(tokens(g)) >= 10][:60]
    texts = [f"record {i}: please {goals[(i * 7) % 60]} thanks" for i in range(80)]
    saved = dict(kernels._SHARED_VOCAB)
    kernels.reset_shared_vocabulary()
    try:
        first = _scanner(goals[:30])
        assert first._same
        before = first.matches(texts, 30)
        other = _scanner(goals[30:])  # new tokens: the shared vocabulary grows
        assert other.matches(texts, 30) and before
        assert first.matches(texts, 30) == before == _alone(first, texts, 30)
        assert not first._same
    finally:
        kernels.reset_shared_vocabulary()
        kernels._SHARED_VOCAB.update(saved)
