"""Dataset paths as URLs, read through fsspec by the workers themselves (auditor.io.remote).

Real filesystems, no mocks: ``file://`` URLs (fsspec's local filesystem, seen by every worker
process and Ray task) and ``memory://`` (fsspec's in-memory filesystem, one process: in-process
scans only). A corpus read through URLs gives the report of the same files read by path.
"""

from __future__ import annotations

import gzip
import json
import random

import pytest

from auditor.audit.config import AuditConfig, CheckSpec, OutputOptions
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanJob, ScanStats, get_engine
from auditor.errors import ChangedFileError, InputError
from auditor.methods.base import Index

fsspec = pytest.importorskip("fsspec", reason="the [remote] extra is not installed")

EVAL = "webshop:0:200"
SPLIT = 20_000


def _files() -> dict[str, bytes]:
    """A JSON Lines file of several byte ranges (with a bad line), a gzip file and a Parquet file
    of several row groups; goals of the eval range planted in every 7th record."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    goals = [r.view("query") for r in Dataset(DatasetSpec("ev", [EVAL], role="eval")).records()]
    words = " ".join(goals).split()
    rng = random.Random(7)

    def docs(n, tag):
        out = []
        for i in range(n):
            text = " ".join(rng.choices(words, k=30))
            if i % 7 == 0:
                text += "\n" + goals[(i * 3) % len(goals)]
            out.append({"id": f"{tag}{i}", "text": text})
        return out

    lines = [json.dumps(d) for d in docs(600, "a")]
    lines.insert(250, '{"id": "broken", "text": ')
    table = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(docs(300, "p")), table, row_group_size=60)
    return {
        "big.jsonl": ("\n".join(lines) + "\n").encode(),
        "small.jsonl.gz": gzip.compress(("\n".join(json.dumps(d) for d in docs(100, "g")) + "\n").encode()),
        "rows.parquet": table.getvalue(),
    }


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return _files()


@pytest.fixture(scope="module")
def folder(tmp_path_factory, files):
    d = tmp_path_factory.mktemp("urls")
    for name, data in files.items():
        (d / name).write_bytes(data)
    return d


def _config(paths: list[str], **kw) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [EVAL], role="eval"),
            "tr": DatasetSpec("tr", paths, role="train", on_error="skip", text_field="text"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["exact", "ngram"])],
        **{"index_dir": None, "findings_store": "memory", "batch_size": 64, "split_bytes": SPLIT, **kw},
    )


def _comparable(report, prefix: str) -> str:
    doc = report.to_dict()
    run = doc.pop("run")
    assert run["scan"]["records"] > 0
    return json.dumps(doc, sort_keys=True, indent=1).replace(prefix, "<data>")


@pytest.fixture(scope="module")
def by_path(folder):
    paths = [str(folder / n) for n in ("big.jsonl", "small.jsonl.gz", "rows.parquet")]
    report = run_audit(_config(paths, workers=1))
    assert report.findings and report.to_dict()["datasets"]["tr"]["skipped"] == 1
    return _comparable(report, str(folder))


def test_file_urls_read_by_worker_processes_give_the_path_report(folder, by_path, monkeypatch):
    import auditor.audit.run as audit_mod

    real = audit_mod.get_engine  # the local engine runs in-process below 8 MB: use workers anyway
    monkeypatch.setattr(audit_mod, "get_engine", lambda name, **kw: real(name, **kw, min_parallel_bytes=0))
    urls = [f"file://{folder}/big.jsonl", f"file://{folder}/*.gz", f"file://{folder}/rows.parquet"]
    assert len(Dataset(_config(urls).datasets["tr"]).plan(SPLIT)) > 6  # byte ranges and row groups of URLs
    report = run_audit(_config(urls, workers=2))
    assert report.run["workers"] == 2
    assert _comparable(report, f"file://{folder}") == by_path


def test_file_urls_on_ray(folder, by_path):
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        urls = [f"file://{folder}/{n}" for n in ("big.jsonl", "small.jsonl.gz", "rows.parquet")]
        report = run_audit(_config(urls, engine="ray", workers=2))
    finally:
        if started:
            ray.shutdown()
    assert _comparable(report, f"file://{folder}") == by_path


def test_memory_urls_in_process(files, by_path):
    mem = fsspec.filesystem("memory")
    for name, data in files.items():
        mem.pipe(f"/h15/{name}", data)
    report = run_audit(_config(["memory://h15/big.jsonl", "memory://h15/small.jsonl.gz", "memory://h15/*.parquet"]))
    assert _comparable(report, "memory://h15") == by_path


class _RewritesOnce(Index):
    """Rewrites ``url`` (shorter) during the first search: the object changes while it is scanned."""

    name = ""

    def __init__(self, url):
        super().__init__()
        self.url = url

    def _build(self):
        pass

    def search(self, batch):
        if self.url is not None:
            fsspec.filesystem("memory").pipe(self.url.removeprefix("memory:/"), b'{"id": "x", "text": "new"}\n')
            self.url = None
        return []


def test_a_url_that_changes_while_it_is_read_is_an_error():
    url = "memory://h15-change/t.jsonl"
    body = "".join(json.dumps({"id": i, "text": f"line {i} " * 10}) + "\n" for i in range(2000))
    fsspec.filesystem("memory").pipe("/h15-change/t.jsonl", body.encode())
    ds = Dataset(DatasetSpec("tr", [url], on_error="skip"))
    assert len(ds.plan(SPLIT)) > 1
    engine = get_engine("local", workers=1, split_bytes=SPLIT, batch_size=50)
    with pytest.raises(ChangedFileError, match="t.jsonl: changed while it was read"):  # even on_error = skip
        list(engine.scan(ScanJob.of([_RewritesOnce(url).build([])], batch_size=50), ds, ScanStats()))


def test_missing_url_and_empty_glob_are_one_line_errors():
    with pytest.raises(InputError, match="memory://h15-none/a.jsonl: no such file"):
        list(Dataset(DatasetSpec("tr", ["memory://h15-none/a.jsonl"])).records())
    with pytest.raises(InputError, match="glob matches no file"):
        Dataset(DatasetSpec("tr", ["memory://h15-none/*.jsonl"]))


def test_write_clean_refuses_a_url_training_set(folder, tmp_path):
    from auditor.errors import ConfigError

    cfg = _config([f"file://{folder}/big.jsonl"], output=OutputOptions(write_clean=str(tmp_path / "clean")))
    with pytest.raises(ConfigError, match="read from a URL .*copy it locally"):
        run_audit(cfg)
    assert not (tmp_path / "clean").exists()
