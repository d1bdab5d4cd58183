"""Provenance throughput: N synthetic trajectories built from WebShop goals, attributed to the 12,087 goals.

Sources: the bundled WebShop goals, 0:500 labelled ``test`` and 500: labelled ``train``. Derived: N chat
records, each a ToolBench-style prompt around one goal (every fifth with its words shuffled, so only
its id names the goal), with ids ``webshop-<goal index>``. Prints records/s, peak RSS and the split
counts. Usage::

    python -m benchmarks.bench_provenance [N] [methods, comma-separated]
"""

from __future__ import annotations

import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from auditor.audit.attribution import ProvenanceSpec, run_provenance
from auditor.datasets.dataset import Dataset, DatasetSpec


def main(n: int = 20000, methods: str = "exact,ngram") -> None:
    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop"])).records()]
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "derived.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for i in range(n):
                g = rng.randrange(len(goals))
                text = goals[g]
                if i % 5 == 4:
                    words = text.split()
                    rng.shuffle(words)
                    text = " ".join(words)
                f.write(
                    json.dumps(
                        {
                            "id": f"webshop-{g}",
                            "messages": [
                                {
                                    "role": "system",
                                    "content": "You are a shopping agent. Use search[...] and click[...].",
                                },
                                {"role": "user", "content": f"Task:\n{text}\nBegin!"},
                                {"role": "assistant", "content": "search[" + text[:60] + "]"},
                            ],
                        }
                    )
                    + "\n"
                )
        specs = [
            DatasetSpec("test", ["webshop:0:500"], role="eval", split_label="test"),
            DatasetSpec("train", ["webshop:500:"], role="eval", split_label="train"),
            DatasetSpec("derived", [str(path)]),
        ]
        spec = ProvenanceSpec(
            "bench", ["derived"], ["test", "train"], id_pattern=r"webshop-(?P<id>\d+)", methods=methods.split(",")
        )
        t0 = time.perf_counter()
        out = run_provenance(spec, {s.name: Dataset(s) for s in specs}, index_dir=None)
        secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"derived records: {out['records_total']}, source items: {sum(out['source_split_sizes'].values())}, "
        f"methods: {','.join(out['methods'])}"
    )
    print(f"seconds: {secs:.2f}, records/s: {out['records_total'] / secs:.0f}, peak RSS: {rss:.0f} MiB")
    print(
        f"by_split: {out['by_split']}, by_how: {out['by_how']}, ambiguous: {out['ambiguous']}, "
        f"conflicts: {out['conflicts']}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000, sys.argv[2] if len(sys.argv) > 2 else "exact,ngram")
