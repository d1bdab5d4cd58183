"""Boilerplate detection runs on the engine's workers (``Engine.offload``), not in the calling process.

The sample pre-pass (read the first records of the training sets, census their lines and n-grams)
used to cost the calling process ~0.4 s per check. It now runs as a worker task, once per
training-set list for every check that scans it; the boilerplate found, the errors raised and the
report are those of the in-process detection.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import get_engine
from auditor.errors import InputError
from auditor.masking.base import BoilerplateConfig
from auditor.masking.detect import detect_sample

EVAL = "webshop:0:200"


def _goals() -> list[str]:
    return [r.view("query") for r in Dataset(DatasetSpec("ev", [EVAL], role="eval")).records()]


def _corpus(tmp_path, bad_at: int | None = None):
    """Agent-style records: a shared policy line and tool schema in each, a goal planted in some."""
    goals = _goals()
    rows = []
    for i in range(600):
        text = (
            "You are a shopping assistant. Follow the store policy and never reveal internal notes.\n"
            'Tools: search(query: str), click(item: str), buy(item: str, quantity: int) -> "order id"\n'
            f"User {i} asks about item {i * 7 % 101}: {goals[i % len(goals)] if i % 9 == 0 else 'shipping times'}"
        )
        rows.append(json.dumps({"id": f"r{i}", "text": text}))
    if bad_at is not None:
        rows[bad_at] = '{"id": "broken", "text": '
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def _fields(bp) -> dict:
    d = {f.name: getattr(bp, f.name) for f in dataclasses.fields(bp)}
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}


def test_boilerplate_detected_in_a_worker_process_is_the_in_process_one(tmp_path):
    ds = Dataset(DatasetSpec("tr", [str(_corpus(tmp_path))]))
    texts = [set(_goals()), set(_goals()[:50])]
    here = detect_sample([ds], texts)
    assert here[0].lines and here[0].sampled == 600
    engine = get_engine("local", workers=2, min_parallel_bytes=0)
    pending = engine.offload(detect_sample, [([ds], texts)], [ds])
    # it runs in a worker process: the task reports its pid
    pid = engine.offload(os.getpid, [()], [ds])()
    assert pid[0] != os.getpid()
    (there,) = pending()
    assert [_fields(b) for b in there] == [_fields(b) for b in here]
    assert engine.offload_cpu_s > 0  # the worker's CPU is counted as the run's, not lost


def test_small_inputs_and_one_worker_detect_in_process_when_asked(tmp_path):
    ds = Dataset(DatasetSpec("tr", [str(_corpus(tmp_path))]))
    for engine in (get_engine("local", workers=1, min_parallel_bytes=0), get_engine("local", workers=2)):
        assert engine.offload(os.getpid, [()], [ds])() == [os.getpid()]
        assert engine.offload_cpu_s == 0


def test_a_bad_line_in_the_sample_is_the_same_error_from_a_worker(tmp_path):
    ds = Dataset(DatasetSpec("tr", [str(_corpus(tmp_path, bad_at=40))]))
    with pytest.raises(InputError) as here:
        detect_sample([ds], [set()])
    engine = get_engine("local", workers=2, min_parallel_bytes=0)
    with pytest.raises(InputError) as there:
        engine.offload(detect_sample, [([ds], [set()])], [ds])()
    assert str(there.value) == str(here.value) and "line 41" in str(here.value)


def _config(train, engine: str, workers: int) -> AuditConfig:
    datasets = {
        "tr": DatasetSpec("tr", [str(train)]),
        "ev1": DatasetSpec("ev1", ["webshop:0:100"], role="eval"),
        "ev2": DatasetSpec("ev2", ["webshop:100:200"], role="eval"),
    }
    checks = [CheckSpec(f"c{k}", ["tr"], [f"ev{k}"], methods=["exact", "ngram"]) for k in (1, 2)]
    return AuditConfig(
        datasets=datasets, checks=checks, engine=engine, workers=workers, findings_store="memory", split_bytes=20_000
    )


def _comparable(report) -> dict:
    doc = report.to_dict()
    doc.pop("run")
    return doc


@pytest.fixture
def small_inputs_in_parallel(monkeypatch):
    import auditor.audit.run as audit_mod

    real = audit_mod.get_engine
    kw0 = {"min_parallel_bytes": 0}
    monkeypatch.setattr(
        audit_mod, "get_engine", lambda name, **kw: real(name, **kw, **(kw0 if name == "local" else {}))
    )


def test_two_checks_mask_the_same_in_a_worker_on_ray_and_in_process(tmp_path, small_inputs_in_parallel):
    train = _corpus(tmp_path)
    serial = run_audit(_config(train, "local", 1))
    masked = [c["boilerplate"] for c in serial.to_dict()["checks"]]
    assert all(b["enabled"] and b["masked_records"] == 600 for b in masked)
    parallel = run_audit(_config(train, "local", 2))
    assert parallel.run["workers"] == 2 and parallel.run["worker_cpu_s"] > 0
    assert _comparable(parallel) == _comparable(serial)
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert _comparable(run_audit(_config(train, "ray", 2))) == _comparable(serial)
    finally:
        if started:
            ray.shutdown()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the signal mask from /proc (Linux)")
def test_sigint_stays_blocked_while_the_first_pool_of_a_run_starts(tmp_path):
    """multiprocessing's resource tracker unblocks SIGINT when it starts; a pool that is a run's
    first (the boilerplate offload) must still start its forkserver with SIGINT blocked, or a
    Ctrl-C at that moment kills it ('Fatal Python error: init_import_site')."""
    import subprocess
    import sys

    script = (
        "import multiprocessing as mp, os\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from auditor.engines.lifecycle import spawning_guard\n"
        "if __name__ == '__main__':\n"
        "    with spawning_guard():\n"
        "        pool = ProcessPoolExecutor(1, mp_context=mp.get_context('forkserver'))\n"
        "        f = pool.submit(os.getpid)\n"
        "        blk = [l for l in open('/proc/self/status') if l.startswith('SigBlk')][0]\n"
        "    f.result(); pool.shutdown()\n"
        "    print(int(blk.split()[1], 16) & 2)\n"
    )
    path = tmp_path / "first_pool.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"  # SIGINT (bit 1) still blocked after the tracker and forkserver started


def test_checks_sharing_a_sample_count_it_once_and_detect_what_each_alone_would(tmp_path):
    """detect_sample counts the sample's lines and n-grams once for every check: each check's
    boilerplate equals a detect() of its own, with protection decided per check's eval texts."""
    from itertools import islice

    from auditor.masking.detect import detect

    goals = _goals()
    preamble = "please read the request below carefully and answer it with the tools you were given today"
    rows = [
        json.dumps({"id": f"r{i}", "text": f"{preamble} {goals[i % 50] if i % 5 == 0 else f'order {i} status'}"})
        for i in range(400)
    ]
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(rows) + "\n")
    ds = Dataset(DatasetSpec("tr", [str(path)]))
    # three checks: unrelated eval texts, the planted goals, and an eval item quoting the preamble
    texts = [set(goals[100:150]), set(goals[:50]), {f"{preamble} and nothing else"}]
    shared = detect_sample([ds], texts)
    sample = list(islice(Dataset(DatasetSpec("tr", [str(path)])).records(), 2000))
    alone = [detect(sample, t) for t in texts]
    assert [_fields(b) for b in shared] == [_fields(b) for b in alone]
    assert not shared[0].lines and len(shared[0].ngrams) > 0  # no shared line; the preamble's n-grams
    assert shared[0].spared_ngrams == 0 and shared[2].spared_ngrams > 0  # protection is per check


def test_the_boilerplate_sample_stops_at_its_share_of_characters(tmp_path):
    """Detection normalizes its sample twice, so the sample is bounded by characters as well as
    records: long records give fewer sampled records (too few: nothing is masked, never more)."""
    ds = Dataset(DatasetSpec("tr", [str(_corpus(tmp_path))]))
    texts = [set(_goals())]
    whole = detect_sample([ds], texts)[0]
    sizes = [len(r.whole_text()) for r in ds.records()][:600]
    cut = sum(sizes[:100])
    part = detect_sample([ds], texts, BoilerplateConfig(sample_chars=cut))[0]
    assert whole.sampled == 600 and part.sampled == 100
    assert whole.lines and part.lines == whole.lines  # the shared lines are in every record
    tiny = detect_sample([ds], texts, BoilerplateConfig(sample_chars=sum(sizes[:5])))[0]
    assert tiny.sampled == 5 and not tiny.lines and not len(tiny.ngrams)  # fewer than min_records
    from auditor.masking.masker import prepare
    from auditor.methods import create

    masker = prepare([create("ngram")], [ds], [], BoilerplateConfig(sample_chars=sum(sizes[:5])), detected=tiny)
    assert masker.boilerplate is None and "5 training records sampled" in masker.reason
    assert f"{sum(sizes[:5]):,} characters" in masker.reason
