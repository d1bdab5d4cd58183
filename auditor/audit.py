"""Run an audit: build each check's eval indexes, stream its training sets, decide verdicts.

>>> cfg = AuditConfig(
...     datasets={"test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
...               "train": DatasetSpec("train", ["webshop:500:2000"], role="train")},
...     checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])])
>>> report = run_audit(cfg)
>>> report.verdict, report.checks[0]["contaminated_items"] > 0
('fail', True)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__, methods
from .datasets import Dataset, DatasetSpec
from .engine import ScanStats, get_engine
from .errors import ConfigError
from .methods.base import Finding
from .progress import peak_rss_mb
from .report import Report
from .store import FindingStore

VERDICTS = ("pass", "fail", "incomplete")


@dataclass
class CheckSpec:
    """One ``[[checks]]`` entry: which training sets must not contain which eval sets."""

    name: str
    train: list[str]
    eval: list[str]
    methods: list[str] | None = None  # None: every available method
    max_contaminated: float = 0  # an item count, or a share of eval items when < 1 and not 0

    def allowance(self, eval_items: int) -> int:
        if 0 < self.max_contaminated < 1:
            return int(self.max_contaminated * eval_items)
        return int(self.max_contaminated)


@dataclass
class AuditConfig:
    datasets: dict[str, DatasetSpec]
    checks: list[CheckSpec]
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    engine: str = "local"
    batch_size: int = 512
    workers: int | None = None  # engine workers; default: every core (local) / every cluster CPU (ray)
    ray_address: str | None = None  # engine "ray": cluster address; default: a local Ray
    findings_store: str = "duckdb"  # "duckdb" (on disk, scales to any number of findings) or "memory"
    findings_db: str | None = None  # keep the DuckDB file of every finding here (default: temporary)
    keep_per_item: int = 5
    report_dir: str | None = None
    index_dir: str | None = field(default_factory=lambda: default_index_dir())

    def validate(self) -> None:
        if not self.checks:
            raise ConfigError("no checks to run")
        seen = set()
        for check in self.checks:
            if check.name in seen:
                raise ConfigError(f"check '{check.name}' is defined twice")
            seen.add(check.name)
            for side, role in (("train", "train"), ("eval", "eval")):
                names = getattr(check, side)
                if not names:
                    raise ConfigError(f"check '{check.name}': no {side} dataset")
                for n in names:
                    if n not in self.datasets:
                        raise ConfigError(f"check '{check.name}': unknown dataset '{n}' "
                                          f"(defined: {', '.join(sorted(self.datasets)) or 'none'})")
                    if self.datasets[n].role != role:
                        raise ConfigError(f"check '{check.name}': dataset '{n}' has role "
                                          f"'{self.datasets[n].role}' but is used as {side}")
            for m in check.methods or []:
                methods.get(m)
        for m in self.method_params:
            methods.get(m)


def make_store(config: AuditConfig):
    """The findings store of a run: DuckDB on disk (default) or in memory; same interface."""
    if config.findings_store == "memory":
        return FindingStore(keep=config.keep_per_item)
    if config.findings_store == "duckdb":
        from .findings_db import DuckDBFindingStore

        return DuckDBFindingStore(keep=config.keep_per_item, path=config.findings_db)
    raise ConfigError(f"findings_store must be 'duckdb' or 'memory', not '{config.findings_store}'")


def default_index_dir() -> str:
    return os.environ.get("AUDITOR_INDEX_DIR", "indexes")


def default_report_dir(name: str = "audit") -> str:
    return os.path.join(os.environ.get("AUDITOR_REPORT_DIR", "reports"), name)


def run_audit(config: AuditConfig) -> Report:
    """Run every check of ``config`` and return the :class:`~auditor.report.Report` (not written)."""
    config.validate()
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    engine = get_engine(config.engine, batch_size=config.batch_size, workers=config.workers,
                        address=config.ray_address)
    datasets = {name: Dataset(spec) for name, spec in config.datasets.items()}
    store = make_store(config)
    checks: list[dict[str, Any]] = []
    scan_stats = ScanStats()
    try:
        for check in config.checks:
            checks.append(_run_check(check, config, datasets, engine, store, scan_stats))
        findings = store.findings()
        findings_total = store.total
    finally:
        if hasattr(store, "close"):
            store.close()
    verdict = "pass"
    if any(c["verdict"] == "fail" for c in checks):
        verdict = "fail"
    elif any(c["verdict"] == "incomplete" for c in checks):
        verdict = "incomplete"
    used = {n for c in config.checks for n in c.train + c.eval}
    described = {n: datasets[n].describe() for n in sorted(used)}
    return Report(
        verdict=verdict,
        datasets=described,
        checks=checks,
        findings=[f.to_dict() for f in findings],
        run={"tool": "auditor", "version": __version__, "engine": engine.name,
             "started": started.isoformat(timespec="seconds"),
             "seconds": round(time.perf_counter() - t0, 3), "scan": scan_stats.as_dict(),
             "workers": getattr(engine, "workers_used", engine.workers), "findings_store": config.findings_store,
             "findings_total": findings_total, "records_per_s": scan_stats.as_dict()["records_per_s"],
             "mb_per_s": scan_stats.as_dict()["mb_per_s"], "peak_rss_mb": peak_rss_mb(),
             "peak_worker_rss_mb": getattr(engine, "peak_worker_rss_mb", 0.0)},
        texts=_texts(findings, datasets),
    )


def _run_check(check: CheckSpec, config: AuditConfig, datasets: dict[str, Dataset], engine,
               store: FindingStore, scan_stats: ScanStats) -> dict[str, Any]:
    method_names = check.methods or methods.available()
    eval_records = [r for name in check.eval for r in datasets[name].records()]
    eval_skipped = sum(datasets[n].stats.skipped for n in check.eval)
    indexes = [build_index(m, config.method_params.get(m), eval_records, config.index_dir) for m in method_names]
    for name in check.train:
        for f in engine.scan(indexes, datasets[name], scan_stats):
            f.check = check.name
            store.add(f)
    train_skipped = sum(datasets[n].stats.skipped for n in check.train)
    contaminated = store.contaminated(check.name)
    allowance = check.allowance(len(eval_records))
    per_method: dict[str, int] = {}
    for f in store.findings():
        if f.check == check.name:
            per_method.setdefault(f.method, set()).add((f.eval_dataset, f.eval_ordinal))  # type: ignore[union-attr]
    notes = []
    if len(contaminated) > allowance:
        verdict = "fail"
    elif eval_skipped or train_skipped:
        verdict = "incomplete"
        notes.append(f"{eval_skipped} eval and {train_skipped} training records were skipped and not checked")
    else:
        verdict = "pass"
    if not eval_records:
        verdict = "incomplete"
        notes.append("the eval side has no records")
    return {
        "name": check.name, "train": check.train, "eval": check.eval, "methods": method_names,
        "eval_items": len(eval_records), "contaminated_items": len(contaminated),
        "contaminated_share": round(len(contaminated) / len(eval_records), 6) if eval_records else 0.0,
        "max_contaminated": check.max_contaminated, "allowance": allowance, "verdict": verdict,
        "items_by_method": {m: len(v) for m, v in sorted(per_method.items())},  # type: ignore[arg-type]
        "train_records": sum(datasets[n].stats.yielded for n in check.train),
        "skipped": {"eval": eval_skipped, "train": train_skipped},
        "method_stats": [ix.stats() for ix in indexes],
        "notes": notes,
    }


def build_index(method: str, params: dict[str, Any] | None, eval_records: list, index_dir: str | None):
    """Create and build a method's index, reusing a persisted one when eval data and params match."""
    index = methods.create(method, params)
    if index_dir is None or type(index).state is methods.Index.state:
        return index.build(eval_records)
    from .indexstore import fingerprint_records, load_index, save_index

    fp = fingerprint_records(eval_records, index.config.eval_view)
    try:
        arrays, meta = load_index(index_dir, method, index.params(), fp)
        return index.restore(eval_records, arrays, meta)
    except FileNotFoundError:
        pass
    index.build(eval_records)
    arrays, meta = index.state()
    save_index(index_dir, method, index.params(), fp, arrays, meta)
    return index


def _texts(findings: list[Finding], datasets: dict[str, Dataset], limit: int = 200) -> dict[str, str]:
    """Texts of the records behind the top findings, for the human-readable report."""
    wanted: dict[str, set[int]] = {}
    for f in findings[:limit]:
        wanted.setdefault(f.eval_dataset, set()).add(f.eval_ordinal)
        wanted.setdefault(f.train_dataset, set()).add(f.train_ordinal)
    out: dict[str, str] = {}
    for name, ords in wanted.items():
        ds = datasets[name]
        remaining = set(ords)
        for r in ds.records():
            if r.ordinal in remaining:
                view = "query" if ds.role == "eval" else "text"
                out[f"{name}#{r.ordinal}"] = r.view(view)[:4000]
                remaining.discard(r.ordinal)
                if not remaining:
                    break
    return out
