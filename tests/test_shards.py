"""Shard-parallel scans: work units read by the workers themselves, merged into the serial report.

The corpus has every kind of unit: a JSON Lines file cut into byte ranges (with bad lines, blank
lines and a second file without ids, so positional ids and line numbers must be renumbered across
ranges), a gzip file (one unit), a Parquet file of several row groups. Whatever the engine, the
number of workers or the cut, report.json is the same.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys

import pytest

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats, get_engine
from auditor.errors import ScanError
from auditor.io.jsonread import LineSpan, iter_jsonl
from auditor.methods import create
from auditor.methods.base import Index

EVAL = "webshop:0:300"
SPLIT = 20_000  # bytes per unit in these tests: the 150 KB file becomes 8 units


def _goals() -> list[str]:
    return [r.view("query") for r in Dataset(DatasetSpec("ev", [EVAL], role="eval")).records()]


def _docs(count: int, seed: int, ids: bool = True) -> list[dict]:
    goals = _goals()
    words = " ".join(goals).split()
    rng = random.Random(seed)
    out = []
    for i in range(count):
        body = " ".join(rng.choices(words, k=25))
        if i % 9 == 0:
            body = f"{body}\n{goals[(i * 7 + seed) % len(goals)]}"
        out.append({"id": f"s{seed}-{i}", "text": body} if ids else {"text": body})
    return out


def _lines(docs: list[dict], bad_every: int = 0) -> str:
    out = []
    for i, d in enumerate(docs):
        out.append(json.dumps(d))
        if bad_every and i % bad_every == 3:
            out.append('{"id": "broken", "text": ')  # invalid JSON
            out.append("")  # a blank line (not a record, but a line)
            out.append('["not", "an", "object"]')
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("shards")
    (d / "big.jsonl").write_text(_lines(_docs(1200, seed=1), bad_every=97))
    (d / "noid.jsonl").write_text(_lines(_docs(400, seed=2, ids=False), bad_every=50))
    with gzip.open(d / "small.jsonl.gz", "wt") as f:
        f.write(_lines(_docs(300, seed=3), bad_every=40))
    pq.write_table(pa.Table.from_pylist(_docs(600, seed=4)), d / "rows.parquet", row_group_size=100)
    return d


def _config(corpus, checks: int = 1, **kw) -> AuditConfig:
    files = [str(corpus / n) for n in ("big.jsonl", "noid.jsonl", "small.jsonl.gz", "rows.parquet")]
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [EVAL], role="eval"),
            "tr": DatasetSpec("tr", files, role="train", on_error="skip", text_field="text"),
        },
        checks=[
            CheckSpec(f"c{k}", train=["tr"], eval=["ev"], methods=["exact", "ngram", "minhash"][: 3 - k % 2])
            for k in range(checks)
        ],
        **{"index_dir": None, "findings_store": "memory", "batch_size": 64, **kw},
    )


def _comparable(report) -> str:
    doc = report.to_dict()
    run = doc.pop("run")
    assert run["scan"]["records"] > 0
    return json.dumps(doc, sort_keys=True, indent=1)


def _units(config: AuditConfig) -> int:
    return len(Dataset(config.datasets["tr"]).plan(config.split_bytes))


@pytest.fixture(scope="module")
def serial_report(corpus):
    return run_audit(_config(corpus, workers=1, split_bytes=SPLIT))


def test_the_corpus_is_cut_into_every_kind_of_unit(corpus):
    units = Dataset(_config(corpus).datasets["tr"]).plan(SPLIT)
    kinds = {(os.path.basename(u.path), type(u.part).__name__, u.parts) for u in units}
    assert ("small.jsonl.gz", "NoneType", 1) in kinds  # compressed: one unit
    assert {k[1] for k in kinds if k[0] == "big.jsonl"} == {"LineSpan"}
    assert {k[1] for k in kinds if k[0] == "rows.parquet"} == {"RowGroups"}
    assert sum(1 for u in units if u.path.endswith("big.jsonl")) >= 6


@pytest.fixture
def small_inputs_in_parallel(monkeypatch):
    """The local engine runs in-process below 8 MB: these tests' inputs go to workers anyway."""
    import auditor.audit.run as audit_mod

    real = audit_mod.get_engine
    monkeypatch.setattr(audit_mod, "get_engine", lambda name, **kw: real(name, **kw, **_small(name)))


def _small(name: str) -> dict:
    return {"min_parallel_bytes": 0} if name == "local" else {}


def test_reports_are_identical_across_workers_and_cuts(corpus, serial_report, small_inputs_in_parallel):
    base = _comparable(serial_report)
    doc = serial_report.to_dict()
    tr = doc["datasets"]["tr"]
    assert doc["findings"] and tr["skipped"] > 0 and tr["skip_reasons"] and len(tr["skip_examples"]) == 10
    # positional ids and line numbers of later byte ranges are those of the whole file
    noid = sorted({f["train_id"] for f in doc["findings"] if "noid.jsonl" in f["train_source"]}, key=int)
    assert noid and int(noid[-1]) > 200
    two = run_audit(_config(corpus, workers=2, split_bytes=SPLIT, findings_store="duckdb"))
    assert two.run["workers"] == 2 and two.run["scan"]["units"] == _units(_config(corpus, split_bytes=SPLIT))
    assert _comparable(two) == base
    whole = run_audit(_config(corpus, workers=1))  # every file one unit: the serial read of old
    assert whole.run["scan"]["units"] == 4
    assert _comparable(whole) == base


def test_ray_gives_the_same_report(corpus, serial_report, ray_local):
    on_ray = run_audit(_config(corpus, engine="ray", workers=2, split_bytes=SPLIT))
    assert on_ray.run["engine"] == "ray"
    assert _comparable(on_ray) == _comparable(serial_report)


def test_a_line_at_a_byte_range_boundary_is_read_once(tmp_path):
    rows = [{"id": i, "text": "x" * (i % 7)} for i in range(40)]
    path = tmp_path / "a.jsonl"
    data = ("\n".join(json.dumps(r) for r in rows) + "\n\n").encode()
    path.write_bytes(data)
    everything = list(iter_jsonl(path))
    line_starts = {0} | {i + 1 for i, b in enumerate(data) if b == 0x0A}
    for cut in range(1, len(data)):
        first, second = LineSpan(0, cut), LineSpan(cut, None)
        a, b = list(iter_jsonl(path, span=first)), list(iter_jsonl(path, span=second))
        got = a + [(n + first.lines, obj, err) for n, obj, err in b]
        assert got == everything, cut
        if cut in line_starts:  # a line starting exactly at the cut belongs to the second range
            assert b and b[0][0] == 1 or cut == len(data) - 1


def test_range_split_selection_is_by_dataset_ordinal(corpus, small_inputs_in_parallel):
    """A position-range split needs ordinals before selection: a counting pass over the units."""

    def config(split_bytes, workers):
        cfg = _config(corpus, workers=workers, split_bytes=split_bytes)
        cfg.datasets["tr"].split = "500:1700"
        return cfg

    whole = run_audit(config(None, 1)).to_dict()
    cut = run_audit(config(SPLIT, 2)).to_dict()
    assert whole["datasets"]["tr"]["records"] == 1200
    assert cut["datasets"] == whole["datasets"] and cut["findings"] == whole["findings"]


def test_three_checks_read_the_training_set_once(corpus, monkeypatch):
    import auditor.engines.local as local

    scanned: list = []
    real = local.scan_unit

    def counting(job, reader, unit, numbered_from, count_only=False, live=None):
        scanned.append((unit.path, unit.part_no))
        return real(job, reader, unit, numbered_from, count_only, live)

    monkeypatch.setattr(local, "scan_unit", counting)
    config = _config(corpus, checks=3, workers=1, split_bytes=SPLIT)
    report = run_audit(config)
    assert len(report.checks) == 3 and all(c["contaminated_items"] > 0 for c in report.checks)
    assert len(scanned) == len(set(scanned)) == _units(config)  # every unit scanned once, for all three
    one = run_audit(_config(corpus, checks=1, workers=1, split_bytes=SPLIT))
    assert report.run["scan"]["records"] == one.run["scan"]["records"] == report.datasets["tr"]["records"]
    assert report.checks[0]["contaminated_items"] == one.checks[0]["contaminated_items"]


class _DiesInWorkers(Index):
    """Kills the process that runs its search unless it is the process that built it."""

    name = ""

    def _build(self):
        self.home = os.getpid()

    def search(self, batch):
        if os.getpid() != self.home:
            os._exit(3)
        return []


def _dying_scan(engine):
    ev = list(Dataset(DatasetSpec("ev", [EVAL], role="eval")).records())
    job = ScanJob.of([create("exact").build(ev), _DiesInWorkers().build(ev)])
    return list(engine.scan(job, Dataset(DatasetSpec("tr", [str(engine._corpus / "big.jsonl")])), ScanStats()))


@pytest.mark.timeout(120)
def test_a_worker_that_dies_is_an_error_not_a_hang_or_a_gap(corpus):
    engine = get_engine("local", workers=2, min_parallel_bytes=0, split_bytes=SPLIT)
    engine._corpus = corpus
    with pytest.raises(ScanError, match="worker process died"):
        _dying_scan(engine)


@pytest.mark.timeout(180)
def test_a_ray_worker_that_dies_is_an_error(corpus, ray_local):
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    engine = get_engine("ray", workers=2, split_bytes=SPLIT, retries=0)
    engine._corpus = corpus
    with pytest.raises(ScanError, match="Ray worker died"):
        _dying_scan(engine)


@pytest.fixture(scope="session")
def ray_local():
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    if ray.is_initialized():  # another test module started it: share it
        yield ray
        return
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_bad_line_in_a_later_range_is_named_by_its_line_in_the_file(tmp_path):
    """on_error = "fail": the error names the file's line, not the line within the byte range."""
    from auditor.errors import InputError

    rows = [json.dumps({"id": i, "text": f"record number {i} " * 8}) for i in range(3000)]
    rows[2500] = '{"id": 2500, "text": '
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(rows) + "\n")
    ds = Dataset(DatasetSpec("tr", [str(path)]))
    assert len(ds.plan(SPLIT)) > 5
    ev = list(Dataset(DatasetSpec("ev", [EVAL], role="eval")).records())
    job = ScanJob.of([create("exact").build(ev)])
    for workers in (1, 2):
        engine = get_engine("local", workers=workers, min_parallel_bytes=0, split_bytes=SPLIT)
        with pytest.raises(InputError, match=r"bad.jsonl:line 2501: invalid JSON"):
            list(engine.scan(job, ds, ScanStats()))


class _AppendsOnce(Index):
    """Appends a line to ``path`` during the first search: the file grows while it is scanned."""

    name = ""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def _build(self):
        pass

    def search(self, batch):
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(json.dumps({"id": "late", "text": "appended"}) + "\n")
            self.path = None
        return []


def test_a_file_that_changes_while_it_is_scanned_is_an_error(tmp_path):
    from auditor.errors import InputError

    path = tmp_path / "growing.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": f"line {i} " * 10}) + "\n" for i in range(2000)))
    ds = Dataset(DatasetSpec("tr", [str(path)], on_error="skip"))
    engine = get_engine("local", workers=1, split_bytes=SPLIT, batch_size=50)
    assert len(ds.plan(SPLIT)) > 1
    with pytest.raises(InputError, match="growing.jsonl: changed while it was read"):  # even on_error = skip
        list(engine.scan(ScanJob.of([_AppendsOnce(path).build([])], batch_size=50), ds, ScanStats()))


def test_ray_range_split_counts_units_first(corpus, ray_local):
    cfg = _config(corpus, engine="ray", workers=2, split_bytes=SPLIT)
    cfg.datasets["tr"].split = "500:1700"
    whole = _config(corpus, workers=1)
    whole.datasets["tr"].split = "500:1700"
    assert _comparable(run_audit(cfg)) == _comparable(run_audit(whole))


def test_files_are_fingerprinted_by_the_workers_block_by_block(tmp_path, monkeypatch):
    """A file's digest comes from the units' block hashes (the caller reads none of the corpus), and
    is the same whatever the cut: the file's SHA-256 when it is one block, else the SHA-256 of its
    blocks' SHA-256s."""
    import hashlib

    import auditor.datasets.fingerprint as fpmod

    monkeypatch.setattr(fpmod, "HASH_BLOCK", 4096)
    path = tmp_path / "t.jsonl"
    data = "".join(json.dumps({"id": i, "text": f"record {i} " * 9}) + "\n" for i in range(600)).encode()
    path.write_bytes(data)
    blocks = [hashlib.sha256(data[i : i + 4096]).digest() for i in range(0, len(data), 4096)]
    expected = hashlib.sha256(f"t.jsonl:{hashlib.sha256(b''.join(blocks)).hexdigest()}\n".encode()).hexdigest()
    digests = set()
    for split_bytes in (None, 5_000, 20_000):
        ds = Dataset(DatasetSpec("tr", [str(path)]))
        list(get_engine("local", workers=1, split_bytes=split_bytes).scan(ScanJob.of([]), ds, ScanStats()))
        assert str(path) in ds._file_digests  # from the units, before anyone asks for it
        monkeypatch.setattr(fpmod, "hash_blocks", None)  # no second read of the file here
        digests.add(ds.sha256())
        monkeypatch.undo()
        monkeypatch.setattr(fpmod, "HASH_BLOCK", 4096)
    assert digests == {expected}
    one = data[: data.index(b"\n", 3000) + 1]  # one block: the digest is the file's SHA-256
    (tmp_path / "s.jsonl").write_bytes(one)
    ds = Dataset(DatasetSpec("s", [str(tmp_path / "s.jsonl")]))
    list(ds.records())
    assert ds.sha256() == hashlib.sha256(f"s.jsonl:{hashlib.sha256(one).hexdigest()}\n".encode()).hexdigest()
