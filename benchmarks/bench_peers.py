"""Peer decontamination tools, run by bench_scale.py in their own virtual environment.

Usage: PEER_PYTHON -m benchmarks.bench_peers {janitor|datatrove} EVAL.jsonl TRAIN.jsonl TIME_LIMIT_S

Reads the eval texts, builds the peer's 13-gram index, scans TRAIN.jsonl until done or past the time
limit, and prints one JSON line: seconds (scan only), mb (scanned), flagged doc ids, peak RSS.
lm-eval's Janitor runs its pure-Python path (janitor_util, its optional C++ module, is not built by
pip). datatrove's indexer needs lighteval (which pulls CUDA torch), so the index is built here with
datatrove's own normalizer, word tokenizer and hash function, exactly as NGramsDecontIndexer does,
and written in its index format for NGramsDecontFilter.
"""

import json
import os
import resource
import sys
import tempfile
import time


def main():
    tool, eval_path, train_path, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    evals = [json.loads(line)["text"] for line in open(eval_path, encoding="utf-8")]
    if tool == "janitor":
        from lm_eval.decontamination.janitor import Janitor

        janitor = Janitor(ngram_n=13)
        for t in evals:
            janitor.register_contaminant_python(t)

        def flagged(text):
            return janitor.clean_python(text) != [text]
    else:
        import numpy as np
        from datatrove.data import Document
        from datatrove.pipeline.decont.n_grams import NGramsDecontConfig, NGramsDecontFilter
        from datatrove.utils.hashing import create_hash_func
        from datatrove.utils.text import ngrams, simplify_text
        from datatrove.utils.word_tokenizers import load_word_tokenizer

        config = NGramsDecontConfig(n_grams=13, find_query_ngrams=True, find_overlap_ngrams=False)
        tok = load_word_tokenizer("en")
        hash_func = create_hash_func(config.hash_config)
        hashes: set[int] = set()
        for t in evals:
            toks = tok.word_tokenize(simplify_text(t, config.norm_config))
            hashes.update(map(hash_func, map(" ".join, ngrams(toks, config.n_grams))))
        folder = tempfile.mkdtemp()
        np.array(sorted(hashes), dtype=config.hash_config.np_descr).tofile(os.path.join(folder, "bench.index.hashes"))
        filt = NGramsDecontFilter(folder, config=config)

        def flagged(text):
            return filt.filter(Document(text=text, id="x")) is not True

    found, mb, start = [], 0.0, time.perf_counter()
    with open(train_path, encoding="utf-8") as f:
        for line in f:
            mb += len(line) / 1e6
            doc = json.loads(line)
            if flagged(doc["text"]):
                found.append(doc["id"])
            if time.perf_counter() - start > limit:
                break
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - start,
                "mb": mb,
                "flagged": found,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
