"""Scale: streaming readers, engines (local processes, Ray), findings stores, fast kernels."""

from __future__ import annotations

import gzip
import json
import os
import random
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.adapters._fields import extract
from auditor.adapters.generic_json import JsonLinesAdapter
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.manifest import parse_manifest
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanStats, get_engine
from auditor.methods import create
from auditor.methods.base import Index
from auditor.text.normalize import tokens
from auditor.text.tokens import ngram_hashes, token_hashes

EVAL = "webshop:0:300"


def _eval_records():
    return list(Dataset(DatasetSpec("ev", [EVAL], role="eval")).records())


def _docs(count: int, plant_every: int = 7, seed: int = 1) -> list[dict]:
    """Filler documents with webshop goals pasted in, some verbatim, some as one line of a chat."""
    goals = [r.view("query") for r in _eval_records()]
    words = " ".join(goals).split()
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        body = " ".join(rng.choices(words, k=60))
        if i % plant_every == 0:
            goal = goals[(i // plant_every) % len(goals)]
            body = f"{body}\n{goal}" if i % 2 else f"{body} {goal} {body}"
        docs.append({"id": f"d{i}", "text": body})
    return docs


def _config(train_paths, **kw) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [EVAL], role="eval"),
            "tr": DatasetSpec("tr", [str(p) for p in train_paths], role="train", format=kw.pop("format", None)),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["exact", "ngram"])],
        index_dir=None,
        **kw,
    )


def _key(f: dict) -> tuple:
    return (f["eval_id"], f["train_id"], f["method"], f["score"], json.dumps(f["evidence"], sort_keys=True))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    docs = _docs(1500)
    plain = d / "train.jsonl"
    plain.write_text("".join(json.dumps(x) + "\n" for x in docs))
    with gzip.open(d / "train.jsonl.gz", "wt") as f:
        f.write(plain.read_text())
    import zstandard

    (d / "train.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(docs), d / "train.parquet", row_group_size=200)
    (d / "train.json").write_text(json.dumps(docs, indent=1))
    return d


# -- streaming --------------------------------------------------------------------------------------


class _Probe(Index):
    """Records, at each batch, how far the input generator had run ahead of the scan."""

    def __init__(self, produced: list[int]):
        super().__init__()
        self.produced = produced
        self.seen = 0
        self.max_ahead = 0
        self.max_batch = 0

    def _build(self):
        pass

    def search(self, batch):
        self.seen += len(batch)
        self.max_ahead = max(self.max_ahead, self.produced[0] - self.seen)
        self.max_batch = max(self.max_batch, len(batch))
        return []


class _GeneratedLines(JsonLinesAdapter):
    """Test adapter: JSON lines from a generator instead of a file (a 300 MB corpus never on disk)."""

    name = "test-generated-jsonl"

    @classmethod
    def sniff(cls, path, sample):
        return False

    total = 150_000  # ~2 KB each: far more than fits in one batch
    produced = [0]

    def read(self, path):
        filler = "lorem ipsum dolor " * 110
        for i in range(self.total):
            line = json.dumps({"id": i, "text": f"record {i} {filler}"})
            self.produced[0] += 1
            yield extract(self, json.loads(line), i, f"{path}:{i + 1}")


def test_streaming_scan_never_holds_more_than_one_batch(tmp_path):
    """A generator yields 300 MB of JSON lines; the scan consumes them batch by batch."""
    stub = tmp_path / "huge.jsonl"
    stub.write_text("")
    _GeneratedLines.produced[0] = 0
    probe = _Probe(_GeneratedLines.produced)
    ds = Dataset(DatasetSpec("huge", [str(stub)], role="train", format=_GeneratedLines.name))
    stats = ScanStats()
    assert list(get_engine("local", workers=1, batch_size=256).scan([probe], ds, stats)) == []
    assert stats.records == probe.seen == _GeneratedLines.total
    assert probe.max_batch == 256
    # the reader is never more than one batch ahead of the scan: memory holds one batch, not the corpus
    assert probe.max_ahead <= 256, probe.max_ahead


def test_json_array_is_streamed_not_loaded(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "w") as f:
        f.write("[")
        for i in range(20_000):
            f.write(("," if i else "") + json.dumps({"id": i, "text": f"item {i} " + "word " * 200}))
        f.write("]")
    size = os.path.getsize(path)
    ds = Dataset(DatasetSpec("big", [str(path)], role="train"))
    tracemalloc.start()
    count = sum(1 for _ in ds.records())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 20_000
    assert peak < size / 5, (peak, size)  # json.load would hold the whole parsed document


def test_json_stream_errors_name_the_line(tmp_path):
    from auditor.errors import InputError

    path = tmp_path / "bad.json"
    path.write_text('[{"text": "a"},\n{"text": "b"},\n{"text": }]')
    ds = Dataset(DatasetSpec("bad", [str(path)], role="train", format="json"))
    with pytest.raises(InputError, match=r"bad.json:line 3: invalid JSON"):
        list(ds.records())


# -- formats give the same findings -----------------------------------------------------------------


def test_compressed_parquet_and_json_inputs_give_the_same_findings_as_plain_jsonl(corpus):
    results = {}
    for name in ("train.jsonl", "train.jsonl.gz", "train.jsonl.zst", "train.parquet", "train.json"):
        report = run_audit(_config([corpus / name], engine="local", workers=1))
        results[name] = sorted(_key(f) for f in report.findings)
    assert results["train.jsonl"], "the planted goals must be found"
    for name, found in results.items():
        assert found == results["train.jsonl"], name


# -- engines ---------------------------------------------------------------------------------------


def test_local_processes_give_the_serial_findings_in_the_same_order(corpus):
    ev = _eval_records()
    indexes = [create("exact").build(ev), create("ngram").build(ev)]
    ds = Dataset(DatasetSpec("tr", [str(corpus / "train.jsonl")], role="train"))
    whole = list(get_engine("local", workers=1, batch_size=100).scan(indexes, ds, ScanStats()))
    # the same units in-process and in two workers: the same findings in the same order
    serial = list(get_engine("local", workers=1, batch_size=100, split_bytes=100_000).scan(indexes, ds, ScanStats()))
    stats = ScanStats()
    engine = get_engine("local", workers=2, batch_size=100, min_parallel_bytes=0, split_bytes=100_000)
    parallel = list(engine.scan(indexes, ds, stats))
    assert serial and [f.to_dict() for f in parallel] == [f.to_dict() for f in serial]
    # the file read whole: the same findings (batches are cut at unit ends, so the order may differ)
    assert sorted(f.sort_key() for f in whole) == sorted(f.sort_key() for f in serial)
    assert sorted((f.train_id, f.train_source) for f in whole) == sorted((f.train_id, f.train_source) for f in serial)
    assert stats.records == 1500 and stats.units > 1
    assert engine.workers_used == 2 and engine.peak_worker_rss_mb > 0


@pytest.fixture(scope="session")
def ray_local():
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    if ray.is_initialized():  # another test module started it: share it
        yield ray
        return
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_engine_gives_the_local_engines_findings(corpus, ray_local):
    local = run_audit(_config([corpus / "train.jsonl"], engine="local", workers=2, batch_size=128))
    on_ray = run_audit(_config([corpus / "train.jsonl"], engine="ray", workers=2, batch_size=128))
    assert local.findings and on_ray.findings == local.findings
    assert [c["contaminated_items"] for c in on_ray.checks] == [c["contaminated_items"] for c in local.checks]
    assert on_ray.run["engine"] == "ray" and on_ray.run["workers"] == 2
    assert on_ray.run["scan"]["records"] == 1500


def test_unknown_engine_and_bad_workers_are_config_errors():
    from auditor.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown engine 'spark'"):
        get_engine("spark")
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        get_engine("local", workers=0)


# -- findings stores and run statistics ------------------------------------------------------------


def test_duckdb_store_report_equals_memory_store_report(corpus, tmp_path):
    db = tmp_path / "kept" / "findings.duckdb"
    on_disk = run_audit(_config([corpus / "train.jsonl"], workers=1, store_options={"duckdb": {"path": str(db)}}))
    in_memory = run_audit(_config([corpus / "train.jsonl"], workers=1, findings_store="memory"))
    assert on_disk.findings and on_disk.findings == in_memory.findings
    assert on_disk.checks == in_memory.checks
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM findings").fetchone()[0] == on_disk.run["findings_total"]
    run = on_disk.run
    assert run["findings_store"] == "duckdb" and run["scan"]["records"] == 1500
    assert run["records_per_s"] > 0 and run["mb_per_s"] > 0 and run["peak_rss_mb"] > 0


_FINDING = st.tuples(
    st.sampled_from(["c1", "c2"]), st.integers(0, 3), st.sampled_from(["exact", "ngram"]), st.sampled_from([0.5, 0.75, 1.0]),
    st.booleans(), st.sampled_from(["tr", "tr\u00e9", "a"]), st.integers(0, 4),
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_FINDING, max_size=40), st.integers(1, 3))
def test_a_duckdb_store_answers_from_its_buffer_as_duckdb_answers(rows, keep):
    """Fewer findings than its buffer holds: no DuckDB opened, and the same findings, counts and train hits
    as a store that wrote every finding to DuckDB (``flush_every=1``)."""
    from auditor.methods.base import Finding
    from auditor.store.findings_db import DuckDBFindingStore

    stores = DuckDBFindingStore(keep=keep), DuckDBFindingStore(keep=keep, flush_every=1)
    for check, ev, method, score, conclusive, train, tr in rows:
        for store in stores:
            store.add(Finding("ev", f"q{ev}", f"ev#{ev}", train, f"t{tr}", f"{train}:{tr}", method, score, check=check,
                              conclusive=conclusive, eval_ordinal=ev, train_ordinal=tr))  # fmt: skip
    memory, disk = stores
    assert memory._con is None and (disk._con is not None) == bool(rows)
    assert memory.findings() == disk.findings() and memory.match_counts == disk.match_counts
    assert memory.train_hits == disk.train_hits and memory.total == disk.total == len(rows)
    assert memory.contaminated("c1") == disk.contaminated("c1")
    for store in stores:
        store.close()


def test_a_duckdb_row_holds_the_finding_as_asdict_writes_it(corpus):
    """A row's JSON is ``dataclasses.asdict`` of the finding, written without its deep copy: the same
    text for real findings, and for evidence holding a dataclass (written as its dict)."""
    import dataclasses
    import json

    from auditor.methods.base import Finding
    from auditor.store.findings_db import DuckDBFindingStore

    report = run_audit(_config([corpus / "train.jsonl"], workers=1, findings_store="memory"))
    found = [Finding(**{k: v for k, v in f.items() if k in Finding.__dataclass_fields__}) for f in report.findings]
    found.append(dataclasses.replace(found[0], evidence={"inner": found[1], "values": (1, "a")}))
    store = DuckDBFindingStore()
    for f in found:
        store.add(f)
    rows = [row[-1] for row in store._buffer]
    assert rows == [json.dumps(dataclasses.asdict(f), ensure_ascii=False) for f in found] and len(rows) > 10
    assert Finding(**json.loads(rows[0])) == found[0]
    store.close()


def test_manifest_engine_keys(tmp_path):
    doc = {
        "engine": "ray",
        "workers": 3,
        "ray_address": "auto",
        "findings_store": "memory",
        "datasets": {"e": {"path": EVAL, "role": "eval"}, "t": {"path": "webshop:300:400", "role": "train"}},
        "checks": [{"name": "c", "train": ["t"], "eval": ["e"]}],
    }
    cfg = parse_manifest(doc, base_dir=tmp_path)
    assert (cfg.engine, cfg.workers, cfg.findings_store) == ("ray", 3, "memory")
    assert cfg.engine_options == {"ray": {"address": "auto"}}  # the Ray engine's own option, under its old key
    from auditor.errors import ManifestError

    with pytest.raises(ManifestError, match="'workers' must be an integer"):
        parse_manifest({**doc, "workers": "two"}, base_dir=tmp_path)


# -- the n-gram kernel equals the per-record reference ----------------------------------------------


def test_ngram_kernel_counts_equal_the_per_record_reference():
    ev = _eval_records()
    index = create("ngram", {"min_n": 5}).build(ev)
    texts = [d["text"] for d in _docs(300, plant_every=3, seed=5)] + ["", "ÉCOLE café naïve", "\n"]
    expected = []
    for d, text in enumerate(texts):
        th = token_hashes(tokens(text))
        counts: dict[int, int] = {}
        for n, (H, P) in index.tables.items():
            for g in np.unique(ngram_hashes(th, n)):
                for p in P[np.searchsorted(H, g, "left") : np.searchsorted(H, g, "right")]:
                    counts[int(p)] = counts.get(int(p), 0) + 1
        expected += [(d, p, c) for p, c in sorted(counts.items())]
    assert expected and index._scanner().matches(texts, len(ev)) == expected


def test_worker_processes_keep_boilerplate_and_error_type_accounting(tmp_path, monkeypatch):
    """Statistics gathered per training record (boilerplate masking, error types) are counted in the
    calling process, so a scan in worker processes reports the same as one in-process."""
    from helpers import shared_file

    import auditor.audit.run as audit_mod

    source = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    trajectories = tmp_path / "trajectories.jsonl"  # JSON Lines, so the file cuts into several units
    trajectories.write_text("".join(json.dumps(x) + "\n" for x in json.loads(source.read_text())))

    def config(workers):
        return AuditConfig(
            datasets={
                "ev": DatasetSpec("ev", ["tau2-airline:test"], role="eval"),
                "tr": DatasetSpec("tr", [str(trajectories)], role="train"),
            },
            checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["exact", "ngram", "calls"])],
            index_dir=str(tmp_path / "idx"),
            workers=workers,
            batch_size=32,
            findings_store="memory",
            split_bytes=200_000,
        )

    serial = run_audit(config(1))
    real_get_engine = audit_mod.get_engine
    monkeypatch.setattr(audit_mod, "get_engine", lambda name, **kw: real_get_engine(name, min_parallel_bytes=0, **kw))
    parallel = run_audit(config(2))
    assert parallel.run["workers"] == 2 and serial.run["workers"] == 1
    assert parallel.run["scan"]["units"] == serial.run["scan"]["units"] > 2
    assert parallel.findings == serial.findings and serial.findings
    assert serial.checks[0]["boilerplate"]["masked_records"] > 0
    assert parallel.checks[0]["boilerplate"] == serial.checks[0]["boilerplate"]
    assert serial.error_types["tr"] and parallel.error_types == serial.error_types
