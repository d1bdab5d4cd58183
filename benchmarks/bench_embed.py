"""Embedding throughput and recall: today's encoder (``backend = "torch"``) against the ONNX ones.

Run from the repository root (about 2–3 minutes on 2 shared cores once the ONNX models are built;
building one takes ~30–60 s, once, into ``$AUDITOR_MODEL_CACHE``)::

    python -m benchmarks.bench_embed                        # torch vs onnx-int8: throughput + recall
    python -m benchmarks.bench_embed --backends torch onnx onnx-int8 --no-recall
    python -m benchmarks.bench_embed --cold 256 --warm 512 --repeat 2

Texts: the eval sides of the three frozen held-out sets (StableToolBench queries, BFCL simple_python
questions, WebShop goals; real data, deduplicated, in a fixed shuffled order).

**Throughput** (each figure in a fresh Python process per backend, backends interleaved, ``--repeat``
times; the median is printed):

* ``cold s/s`` — ``--cold`` texts over the wall time from *before importing the encoder* to their
  vectors: imports, model load (the built ONNX model from its cache; the build itself is reported
  separately), tokenization and encoding. What a CLI run pays for its first batch.
* ``warm s/s`` — ``--warm`` further texts (not seen before) over their encoding wall time, in the same
  process after the cold batch.
* ``warm s/CPU-s`` — the same texts per CPU-second of the process (all threads): less sensitive to other
  load on a shared machine than wall time.
* ``agreement`` — cosine of each text's vector with today's encoder (min / mean) and the share of texts
  whose nearest other text is the same as with today's encoder.

**Recall** on the held-out sets (``tests/data/heldout``; 50 paraphrases + 50 negatives each), with the
shipped decision: paraphrases found (conclusive or suspected, matched to their own item), conclusive
recall, negatives with a conclusive finding. The decision's thresholds were chosen on these files with
today's encoder, so every recall figure is **in-sample** for the decision; the comparison between
encoders is what this benchmark is for (the issue's target: within 0.02 of today's encoder).

**Ray scan** (``--ray``; each mode in a fresh process, one run each): an ``embedding`` scan on a local
Ray of ``--ray-train`` training texts (held-out eval-side texts not in the eval index, every 10th
an eval text copied verbatim) against ``--ray-eval`` eval texts, the training file cut into about 8
work units. Modes ``task:W`` (the encoder in the tasks, as before) and ``pool:W:A`` (``W`` task
workers and ``A`` embedding actors, ``embed_actors = A``); the local Ray gets ``W + A`` CPUs. Printed
per mode: the scan's wall time (from ``ray.init``: Ray's start, the pool's start and every unit;
the eval index is built before, in the calling process), the units' share of it (from the first
unit submitted to the last merged), training texts encoded per second of the whole,
CPU seconds (the calling process's from ``ray.init``, the tasks' units and the actors' encode calls:
model loads are left out on both sides), model loads in Ray's processes (every ONNX session a worker or
actor opened, counted by a ``worker_process_setup_hook``; with ``--ray-backend torch``, every
process that imported sentence-transformers to load the torch model, not timed), and a digest of the findings (the same in
every mode)::

    python -m benchmarks.bench_embed --ray --no-throughput --no-recall          # ~1–2 min
    python -m benchmarks.bench_embed --ray --ray-modes task:2 pool:2:1 pool:1:1 --ray-train 1200
    python -m benchmarks.bench_embed --ray --no-throughput --no-recall --ray-backend torch --ray-train 300 --ray-modes task:2 pool:2:1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import repo_env
from benchmarks.paraphrase_data import HELDOUT_SETS, heldout_case, heldout_eval

CHILD = r"""
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from auditor.methods.embedding.model import load_encoder_model
backend, cold, warm, cache, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
texts = json.load(open(out + ".texts"))
model, mid, chosen, device = load_encoder_model("bundled", backend, "cpu", cache)
t1 = time.perf_counter()
a = model.encode(texts[:cold], batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
t2, c2 = time.perf_counter(), time.process_time()
b = model.encode(texts[cold:cold + warm], batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
t3, c3 = time.perf_counter(), time.process_time()
import numpy as np
np.save(out + ".npy", np.concatenate([a, b]).astype(np.float32), allow_pickle=False)
json.dump({"model_id": mid, "backend": chosen, "load_s": t1 - t0, "cold_s": t2 - t0, "warm_s": t3 - t2,
           "warm_cpu_s": c3 - c2}, open(out + ".json", "w"))
"""


RAY_CHILD = r"""
import hashlib, json, os, sys, time
workers, actors, split, base, backend = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
import ray
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats, get_engine
from auditor.methods.embedding import EmbeddingIndex

def count_loads():  # in every Ray worker process: note each ONNX session opened, and a torch model's import
    import os, sys, time

    class Spy:  # a process that imports sentence-transformers loads the torch model (not timed)
        def find_spec(self, name, path=None, target=None):
            if name == "sentence_transformers":
                sys.meta_path.remove(self)
                with open(base + ".loads", "a") as f:
                    f.write(f"{os.getpid()} nan\n")
            return None

    sys.meta_path.insert(0, Spy())
    from auditor.methods.embedding import onnx
    real = onnx.OnnxSentenceModel._open
    def counted(self):
        t = time.perf_counter()
        real(self)
        with open(base + ".loads", "a") as f:
            f.write(f"{os.getpid()} {time.perf_counter() - t:.3f}\n")
    onnx.OnnxSentenceModel._open = counted

spec = dict(text_field="text", id_field="id")
ev = list(Dataset(DatasetSpec("ev", [base + ".eval.jsonl"], role="eval", **spec)).records())
index = EmbeddingIndex(cache_dir="none", backend=backend, device="cpu").build(ev)
built = index.encoder.encoded
train = Dataset(DatasetSpec("tr", [base + ".train.jsonl"], **spec))
c0 = time.process_time()
t0 = time.perf_counter()
ray.init(num_cpus=workers + actors, include_dashboard=False, log_to_driver=False,
         runtime_env={"worker_process_setup_hook": count_loads})
engine = get_engine("ray", workers=workers, embed_actors=actors, split_bytes=split)
stats = ScanStats()
found = list(engine.scan(ScanJob.of([index], batch_size=64), train, stats))
wall = time.perf_counter() - t0
index.add_counts(index.take_counts())
digest = hashlib.sha256(json.dumps(sorted((f.train_id, f.eval_id, f.score, f.conclusive) for f in found)).encode())
ray.shutdown()
json.dump({"wall_s": wall, "units_s": stats.seconds, "encoded": index.encoder.encoded - built, "units": stats.units, "findings": len(found),
           "digest": digest.hexdigest()[:12], "pool": engine.embed_pool,
           "cpu_s": time.process_time() - c0 + stats.worker_cpu_s + engine.embed_pool.get("cpu_s", 0.0)},
          open(base + ".json", "w"))
"""


def corpus() -> list[str]:
    texts = [r.view("query") for name in HELDOUT_SETS for r in heldout_eval(name)]
    texts = list(dict.fromkeys(t for t in texts if t.strip()))
    rng = np.random.default_rng(0)
    return [texts[i] for i in rng.permutation(len(texts))]


def build_models(backends: list[str], cache: str) -> None:
    from auditor.methods.embedding.model import load_encoder_model

    for b in backends:
        if b == "torch":
            continue
        t0 = time.perf_counter()
        _m, mid, _b, _d = load_encoder_model("bundled", b, "cpu", cache)
        print(f"  {b:10s} model {mid}: ready in {time.perf_counter() - t0:.1f} s (built once, then cached)")


def throughput(backends: list[str], cold: int, warm: int, repeat: int, cache: str) -> dict:
    texts = corpus()[: cold + warm]
    runs: dict[str, list[dict]] = {b: [] for b in backends}
    vecs: dict[str, np.ndarray] = {}
    env = repo_env()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "run")
        Path(base + ".texts").write_text(json.dumps(texts))
        for _ in range(repeat):
            for b in backends:
                cmd = [sys.executable, "-c", CHILD, b, str(cold), str(warm), cache, base]
                subprocess.run(cmd, check=True, env=env, cwd=tmp)
                runs[b].append(json.loads(Path(base + ".json").read_text()))
                vecs[b] = np.load(base + ".npy", allow_pickle=False)
    ref = vecs[backends[0]]
    nn_ref = (ref @ ref.T - 2 * np.eye(len(ref))).argmax(1)
    base_cold = None
    print(
        f"\nthroughput: {cold} cold + {warm} warm texts, median of {repeat} fresh processes per backend "
        f"(texts: held-out eval sides; machine load now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"  {'backend':10s} {'load s':>7s} {'cold s/s':>9s} {'warm s/s':>9s} {'warm s/CPU-s':>13s}  agreement with {backends[0]}"
    )
    out = {}
    for b in backends:
        r = runs[b]
        load = statistics.median(x["load_s"] for x in r)
        c = cold / statistics.median(x["cold_s"] for x in r)
        w = warm / statistics.median(x["warm_s"] for x in r)
        wc = warm / statistics.median(x["warm_cpu_s"] for x in r)
        cos = (vecs[b] * ref).sum(1)
        nn = (vecs[b] @ vecs[b].T - 2 * np.eye(len(ref))).argmax(1)
        base_cold = base_cold or c
        out[b] = {"cold": c, "warm": w, "warm_cpu": wc}
        print(
            f"  {b:10s} {load:7.2f} {c:9.1f} {w:9.1f} {wc:13.1f}  cos min {cos.min():.4f} mean {cos.mean():.4f}, "
            f"same nearest {float((nn == nn_ref).mean()):.3f}   cold ×{c / base_cold:.1f}"
        )
    return out


def recall(backends: list[str], cache: str) -> None:
    from auditor.methods.embedding import EmbeddingIndex

    print("\nrecall on the held-out sets (decision in-sample for every encoder; conclusive + suspected)")
    print(f"  {'set':20s} {'backend':10s} {'recall':>7s} {'concl.':>7s} {'neg concl.':>10s} {'seconds':>8s}")
    totals: dict[str, list[float]] = {b: [] for b in backends}
    for name in HELDOUT_SETS:
        ev, tr, truth = heldout_case(name)
        pos = sum(1 for t in tr if t.meta["kind"] == "paraphrase")
        neg = sum(1 for t in tr if t.meta["kind"] == "negative")
        for b in backends:
            t0 = time.perf_counter()
            index = EmbeddingIndex(backend=b, device="cpu", cache_dir="none", model_cache=cache).build(ev)
            found, found_c, neg_c = set(), set(), set()
            evk = {(e.dataset, e.ordinal): e for e in ev}
            trk = {t.ordinal: t for t in tr}
            for f in index.search(tr):
                e, t = evk[(f.eval_dataset, f.eval_ordinal)], trk[f.train_ordinal]
                if truth(e, t):
                    found.add(t.ordinal)
                    if f.conclusive:
                        found_c.add(t.ordinal)
                if t.meta["kind"] == "negative" and f.conclusive:
                    neg_c.add(t.ordinal)
            r = len(found) / pos
            totals[b].append(r)
            print(
                f"  {name:20s} {b:10s} {r:7.2f} {len(found_c) / pos:7.2f} {len(neg_c) / neg:10.2f} "
                f"{time.perf_counter() - t0:8.1f}"
            )
    for b in backends:
        print(f"  {'mean':20s} {b:10s} {statistics.mean(totals[b]):7.3f}")


def ray_scan(modes: list[str], n_eval: int, n_train: int, backend: str) -> None:
    """The embedding scan on a local Ray, the encoder in the tasks or in an actor pool (see the top)."""
    texts = corpus()
    ev, rest = texts[:n_eval], texts[n_eval:]
    train = [ev[(i // 10) % len(ev)] if i % 10 == 0 else rest[i % len(rest)] for i in range(n_train)]
    env = repo_env()
    print(
        f"\nRay embedding scan ({backend}): {n_train} training texts against {n_eval} eval texts, one fresh process per mode "
        f"(machine load now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"  {'mode':9s} {'units':>5s} {'scan s':>7s} {'units s':>8s} {'texts/s':>8s} {'CPU s':>6s} {'loads':>6s} "
        f"{'load s':>7s}  "
        "findings (digest)  pool: texts + token texts, calls"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "scan")
        for name, rows in (("eval", ev), ("train", train)):
            with open(f"{base}.{name}.jsonl", "w") as f:
                for i, t in enumerate(rows):
                    f.write(json.dumps({"id": f"{name[0]}{i}", "text": t}) + "\n")
        split = max(1000, os.path.getsize(base + ".train.jsonl") // 8)
        for mode in modes:
            kind, *nums = mode.split(":")
            workers, actors = int(nums[0]), int(nums[1]) if kind == "pool" else 0
            Path(base + ".loads").write_text("")
            cmd = [sys.executable, "-c", RAY_CHILD, str(workers), str(actors), str(split), base, backend]
            subprocess.run(cmd, check=True, env=env, cwd=tmp)
            r = json.loads(Path(base + ".json").read_text())
            loads = [float(x.split()[1]) for x in Path(base + ".loads").read_text().split("\n") if x]
            timed = [x for x in loads if x == x]  # the torch loads are counted, not timed
            load_s = f"{sum(timed):7.2f}" if len(timed) == len(loads) else f"{'-':>7s}"
            p = r["pool"]
            pool = f"{p['texts']} + {p['token_texts']}, {p['calls']}" if p else "-"
            print(
                f"  {mode:9s} {r['units']:5d} {r['wall_s']:7.1f} {r['units_s']:8.1f} {r['encoded'] / r['wall_s']:8.1f} "
                f"{r['cpu_s']:6.1f} "
                f"{len(loads):6d} {load_s}  {r['findings']} ({r['digest']})  {pool}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", nargs="+", default=["torch", "onnx-int8"], help="first one is the reference")
    ap.add_argument("--cold", type=int, default=256, help="texts in the cold batch")
    ap.add_argument("--warm", type=int, default=512, help="texts in the warm batch")
    ap.add_argument("--repeat", type=int, default=2, help="fresh processes per backend")
    ap.add_argument("--no-recall", action="store_true", help="skip the held-out recall")
    ap.add_argument("--no-throughput", action="store_true", help="skip the throughput runs")
    ap.add_argument("--ray", action="store_true", help="time an embedding scan on a local Ray, with and without actors")
    ap.add_argument("--ray-modes", nargs="+", default=["task:2", "pool:2:1", "pool:1:1"], help="task:W or pool:W:A")
    ap.add_argument("--ray-eval", type=int, default=200, help="eval texts of the Ray scan")
    ap.add_argument("--ray-train", type=int, default=800, help="training texts of the Ray scan")
    ap.add_argument("--ray-backend", default="onnx-int8", help="encoder of the Ray scan (onnx-int8, torch, onnx)")
    ap.add_argument("--model-cache", default=os.environ.get("AUDITOR_MODEL_CACHE", ""), help="built ONNX models")
    a = ap.parse_args()
    from auditor.methods.embedding.onnx import default_model_cache

    cache = a.model_cache or str(default_model_cache())
    print(f"ONNX models in {cache}")
    if not (a.no_throughput and a.no_recall):
        build_models(a.backends, cache)
    if not a.no_throughput:
        throughput(a.backends, a.cold, a.warm, a.repeat, cache)
    if not a.no_recall:
        recall(a.backends, cache)
    if a.ray:
        ray_scan(a.ray_modes, a.ray_eval, a.ray_train, a.ray_backend)


if __name__ == "__main__":
    main()
