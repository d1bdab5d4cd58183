"""The Ray engine (``--engine ray``): the same scan as the local engine, on a Ray cluster with Ray Data.

The eval indexes are built once by the caller, put in Ray's object store once per scan
(``ray.put``) and fetched by each worker process once (cached by object id), so workers never
rebuild them. The caller reads the training dataset in order (ordinals, skips and split selection
are exactly the local engine's) and feeds it to Ray Data in chunks of ``chunk_batches`` batches;
each chunk is one ``ray.data.from_items(...).map_batches(...)`` pipeline whose tasks run every tier
(``search_all``) and return the findings, which are put back in the local engine's order. Memory on
the caller is bounded by one chunk.

``address``: a cluster address (``"ray://host:10001"``, ``"auto"``); without it a local Ray is
started with ``workers`` CPUs (default: every core). A Ray already initialised in this process is
used as is.

>>> engine = RayEngine(workers=2, address=None)  # Ray itself starts at the first scan
>>> engine.name, engine.workers, engine.chunk_batches
('ray', 2, 16)

Errors: :class:`~auditor.errors.MissingDependencyError` (``pip install 'auditor[ray]'``) when Ray
is not installed; :class:`~auditor.errors.ConfigError` for bad options.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..datasets import Dataset
from ..engine import ScanStats, batched
from ..errors import ConfigError, MissingDependencyError
from ..methods.base import Finding, Index
from ..progress import ScanProgress
from ..records import Record
from .local import dataset_bytes

_INDEX_CACHE: dict[str, list[Index]] = {}


def _indexes(ref_holder: list) -> list[Index]:
    import ray

    ref = ref_holder[0]
    key = ref.hex()
    if key not in _INDEX_CACHE:
        _INDEX_CACHE.clear()
        _INDEX_CACHE[key] = ray.get(ref)
    return _INDEX_CACHE[key]


def _record_row(batch_no: int, r: Record) -> dict[str, Any]:
    return {
        "batch": batch_no,
        "dataset": r.dataset,
        "id": r.id,
        "source": r.source,
        "ordinal": r.ordinal,
        "split": r.split or "",
        "views": json.dumps(r.views),
        "meta": json.dumps(r.meta, default=str),
    }


def _scan_batch(cols: dict, ref_holder: list) -> dict:
    """Ray Data UDF: rebuild the records of one Ray batch, run every tier per engine batch."""
    import numpy as np

    indexes = _indexes(ref_holder)
    groups: dict[int, list[Record]] = {}
    for i in range(len(cols["ordinal"])):
        rec = Record(
            dataset=str(cols["dataset"][i]),
            id=str(cols["id"][i]),
            source=str(cols["source"][i]),
            views=json.loads(cols["views"][i]),
            meta=json.loads(cols["meta"][i]),
            split=str(cols["split"][i]) or None,
            ordinal=int(cols["ordinal"][i]),
        )
        groups.setdefault(int(cols["batch"][i]), []).append(rec)
    keys, findings = [], []
    for batch_no, records in groups.items():
        for index_no, index in enumerate(indexes):
            for seq, f in enumerate(index.search(records)):
                keys.append((batch_no, index_no, f.train_ordinal, seq))
                findings.append(json.dumps(dataclasses.asdict(f)))
    return {"key": np.array([json.dumps(k) for k in keys], dtype=object), "finding": np.array(findings, dtype=object)}


@dataclass
class RayEngine:
    batch_size: int = 512
    workers: int | None = None  # default: every CPU of the cluster
    address: str | None = None
    chunk_batches: int = 16
    progress: bool | None = None
    name: str = field(default="ray", init=False)

    def __post_init__(self) -> None:
        if importlib.util.find_spec("ray") is None:
            raise MissingDependencyError("ray", "ray", "engine 'ray'")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            raise ConfigError(f"workers must be a positive integer, not {self.workers!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, not {self.batch_size!r}")
        if self.address and str(self.address).startswith("ray://") and importlib.util.find_spec("grpc") is None:
            raise ConfigError(
                f"ray address '{self.address}': a ray:// address needs Ray's client (package 'grpcio'), "
                "which is not installed; install it with: pip install 'ray[client]'"
            )

    def _init(self) -> None:
        import ray

        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.WARNING,
            }
            if self.address:
                kwargs["address"] = self.address
            else:
                kwargs["num_cpus"] = self.workers or os.cpu_count() or 1
            ray.init(**kwargs)
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # the scan has its own progress bar
        ctx.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        if self.workers is None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def scan(self, indexes: Sequence[Index], dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        import ray

        self._init()
        start = time.perf_counter()
        size = dataset_bytes(dataset)
        stats.bytes += size
        progress = ScanProgress(dataset.name, size, enabled=self.progress)
        holder = [ray.put(list(indexes))]  # a list so Ray passes the reference, not its value
        try:
            rows: list[dict] = []
            for batch_no, batch in enumerate(batched(dataset.records(), self.batch_size)):
                chars = sum(len(r.view("text")) for r in batch)
                stats.records += len(batch)
                stats.chars += chars
                progress.advance(len(batch), chars)
                rows.extend(_record_row(batch_no, r) for r in batch)
                if len(rows) >= self.chunk_batches * self.batch_size:
                    yield from self._run(rows, holder)
                    rows = []
            if rows:
                yield from self._run(rows, holder)
        finally:
            progress.close()
            stats.seconds += time.perf_counter() - start

    def _run(self, rows: list[dict], holder: list) -> list[Finding]:
        import ray.data

        blocks = max(1, min(len(rows) // self.batch_size, 4 * (self.workers or 1)))
        ds = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
            _scan_batch,
            fn_kwargs={"ref_holder": holder},
            batch_size=self.batch_size,
            batch_format="numpy",
            compute=ray.data.TaskPoolStrategy(size=self.workers),
            num_cpus=1,
        )
        out = [(json.loads(r["key"]), r["finding"]) for r in ds.iter_rows()]
        out.sort(key=lambda kv: kv[0])
        return [Finding(**json.loads(f)) for _, f in out]
