"""What a run is given: :class:`AuditConfig` (every option of a run, a manifest key of the same name)
and :class:`CheckSpec` (one ``[[checks]]`` entry), checked by :meth:`AuditConfig.validate`.

>>> cfg = AuditConfig(
...     datasets={"test": DatasetSpec("test", ["webshop:0:500"], role="eval"),
...               "train": DatasetSpec("train", ["webshop:500:2000"], role="train")},
...     checks=[CheckSpec("webshop", train=["train"], eval=["test"], methods=["exact"])])
>>> cfg.validate(); cfg.checks[0].allowance(500)
0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import methods
from ..datasets.dataset import DatasetSpec
from ..engines import engine_class
from ..errors import ConfigError, did_you_mean
from ..store import findings as stores
from ..store.findings import FindingStore
from .verdict import FAIL_ON


@dataclass
class CheckSpec:
    """One ``[[checks]]`` entry: which training sets must not contain which eval sets."""

    name: str
    train: list[str]
    eval: list[str]
    methods: list[str] | None = None  # None: the default methods (every available one but embedding)
    max_contaminated: float = 0  # an item count, or a share of eval items when < 1 and not 0

    def allowance(self, eval_items: int) -> int:
        if 0 < self.max_contaminated < 1:
            return int(self.max_contaminated * eval_items)
        return int(self.max_contaminated)


@dataclass
class OutputOptions:
    """What a run writes: the report's folder, the training matches it keeps per eval item and method,
    and the cleaned training sets' folder."""

    report_dir: str | None = field(default=None, metadata={"folder": True})
    keep_per_item: int = field(default=5, metadata={"manifest": None})
    #: folder for the training sets without the records behind findings
    write_clean: str | None = field(default=None, metadata={"folder": True})


@dataclass
class ReviewOptions:
    """How suspected findings count (:mod:`auditor.audit.verdict`, :mod:`auditor.audit.decisions`)."""

    #: what counts against the allowance: "conclusive" findings and confirmed suspected ones;
    #: "suspected": unreviewed suspected ones too; "unreviewed": any unreviewed suspected finding fails
    fail_on: str = "conclusive"
    #: the review decisions file (a manifest's default: the one beside it); None: no decisions, every
    #: suspected finding unreviewed
    decisions: str | None = field(default=None, metadata={"folder": True})


@dataclass
class AuditConfig:
    """Everything a run needs. Each field is a manifest key of the same name unless its metadata
    says otherwise (``manifest``: the key's name, None for none; ``folder``: a path confined to the
    manifest's folder; ``group``: its own fields are top-level keys; :mod:`auditor.audit.manifest`)."""

    datasets: dict[str, DatasetSpec]
    checks: list[CheckSpec]
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={"manifest": "methods"})
    engine: str = "local"
    batch_size: int = 512
    workers: int | None = None  # engine workers; default: the free cores (local) / every cluster CPU (ray)
    split_bytes: int | None = None  # work units cut from a large JSON Lines / Parquet file (default 16 MiB)
    #: engine name → that engine's own options (its nested ``Config``, e.g. ``{"ray": {"address": "auto",
    #: "embed_actors": 2}}``); the manifest keys and flags each engine declares (``ray_address``, ...)
    engine_options: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={"manifest": None})
    findings_store: str = "duckdb"  # "duckdb" (on disk, scales to any number of findings) or "memory"
    #: store name → that store's own options (its nested ``Config``; ``{"duckdb": {"path": ...}}``: keep
    #: the DuckDB file of every finding there, manifest ``findings_db``)
    store_options: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={"manifest": None})
    #: persisted eval indexes and the embedding cache (``<index_dir>/embeddings``); None: nothing persisted
    index_dir: str | None = field(default=None, metadata={"folder": True})
    provenance: list[Any] = field(default_factory=list)  # ProvenanceSpec entries (auditor.audit.attribution)
    output: OutputOptions = field(default_factory=OutputOptions, metadata={"group": True})
    review: ReviewOptions = field(default_factory=ReviewOptions, metadata={"group": True})
    #: the manifest this config was read from (:func:`~auditor.audit.manifest.load_manifest`): an
    #: input, never written (a clean folder holding it is refused)
    manifest_path: str | None = field(default=None, metadata={"manifest": None})

    def validate(self) -> None:
        if self.review.fail_on not in FAIL_ON:
            raise ConfigError(f"fail_on must be one of {', '.join(FAIL_ON)}, not '{self.review.fail_on}'")
        if not self.checks and not self.provenance:
            raise ConfigError("no checks to run")
        limits = (
            ("batch_size", 1, 1_000_000),
            ("workers", 1, 4096),
            ("keep_per_item", 1, 1000),
        )
        for key, low, high in limits:
            value = getattr(self.output if key == "keep_per_item" else self, key)
            if value is None and key == "workers":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"{key} must be an integer from {low} to {high:,}, not {value!r}")
        engine_class(self.engine)
        stores.store_class(self.findings_store)
        for name, options in self.engine_options.items():
            _check_options(f"engine '{name}'", engine_class(name).Config, options)
            engine_class(name).Config(**options).validate()
        for name, options in self.store_options.items():
            _check_options(f"findings store '{name}'", stores.store_class(name).Config, options)
        for check in self.checks:
            mc = check.max_contaminated
            if isinstance(mc, bool) or not isinstance(mc, (int, float)) or not (math.isfinite(mc) and mc >= 0):
                raise ConfigError(f"check '{check.name}': max_contaminated must be a non-negative number, not {mc!r}")
        names = [p.name for p in self.provenance]
        for p in self.provenance:
            if names.count(p.name) > 1:
                raise ConfigError(f"provenance '{p.name}' is defined twice")
            p.validate(self.datasets)
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
                        raise ConfigError(
                            f"check '{check.name}': unknown dataset '{n}'{did_you_mean(n, self.datasets)} "
                            f"(defined: {', '.join(sorted(self.datasets)) or 'none'})"
                        )
                    if self.datasets[n].role != role:
                        raise ConfigError(
                            f"check '{check.name}': dataset '{n}' has role "
                            f"'{self.datasets[n].role}' but is used as {side}"
                        )
            for m in check.methods or []:
                methods.get(m)
        for m in self.method_params:
            methods.get(m)


def _check_options(what: str, config: Any, options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(config.options()))
    if unknown:
        allowed = ", ".join(sorted(config.options())) or "none"
        raise ConfigError(f"{what} has no option {', '.join(map(repr, unknown))} (options: {allowed})")


def make_store(config: AuditConfig) -> FindingStore:
    """The findings store of a run (:func:`auditor.store.findings.make_store`; DuckDB on disk by default)."""
    return stores.make_store(
        config.findings_store, keep=config.output.keep_per_item, **config.store_options.get(config.findings_store, {})
    )
