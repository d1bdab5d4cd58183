"""The index protocol every detection method implements.

A method is one module in :mod:`auditor.methods` defining one :class:`Index` subclass with a
``name``, a ``Config`` dataclass, :meth:`Index._build` over the eval records and
:meth:`Index.search` over a batch of training records. The engine owns the loop, batching and
I/O; the index only answers "which eval items does this batch contain, and how strongly".

    class ShoutIndex(Index):
        name = "shout"

        def _build(self):
            self.by_text = {r.view("query").upper(): r for r in self.eval_records}

        def search(self, batch):
            return [self.finding(self.by_text[t.view("text").upper()], t, 1.0)
                    for t in batch if t.view("text").upper() in self.by_text]

Optional dependencies are declared in ``requires`` (module → extra) and checked at construction,
raising :class:`~auditor.errors.MissingDependencyError`.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib.util
import math
import typing
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypedDict, TypeVar, cast

from ..errors import ConfigError, MissingDependencyError
from ..records.fields import with_text_key
from ..records.record import QUERY, TEXT, Record
from ..registry import Registry
from ..text.locate import locate_span
from ._located import hash_memo, locate_later, locating, place

#: every method by name: the built-in ones declared in :mod:`auditor.methods` (imported on first use),
#: any other :class:`Index` subclass with a ``name`` registered when its class is made
METHODS: Registry[type[Index]] = Registry("method")


class FindingFields(TypedDict):
    """What :meth:`Finding.to_dict` gives, keys in the order ``report.json`` writes them (a report's
    finding adds its records' names: :class:`auditor.report.results.FindingRow`)."""

    check: str
    eval_dataset: str
    eval_id: str | int  # str here; a report of an older version or written by hand may hold a whole number
    eval_source: str
    train_dataset: str
    train_id: str | int
    train_source: str
    method: str
    score: float
    conclusive: bool
    evidence: dict[str, Any]  # method-specific; every tier's has ``field`` and ``span`` (docs/report.md)
    eval_ordinal: int
    train_ordinal: int
    eval_hash: str  # content hashes of the compared texts: what review decisions are keyed on
    train_hash: str


@dataclass(slots=True)
class Finding:
    """One piece of evidence that an eval item occurs in a training record."""

    eval_dataset: str
    eval_id: str
    eval_source: str
    train_dataset: str
    train_id: str
    train_source: str
    method: str
    score: float
    conclusive: bool = True
    evidence: dict[str, Any] = field(default_factory=dict)
    eval_ordinal: int = -1
    train_ordinal: int = -1
    check: str = ""
    #: content hashes of the compared texts (:func:`content_hash`): the eval item's view and the training
    #: text that matched; what a reviewer's decision is keyed on (:mod:`auditor.audit.decisions`), so it
    #: survives re-ordered or re-numbered training files
    eval_hash: str = ""
    train_hash: str = ""

    @property
    def suspected(self) -> bool:
        """A non-conclusive finding of a recall-oriented band (e.g. a possible paraphrase), kept for review."""
        return not self.conclusive and self.evidence.get("tier") == "suspected"

    def sort_key(self) -> tuple:
        return (
            self.check,
            self.eval_dataset,
            self.eval_ordinal,
            self.method,
            -self.score,
            self.train_dataset,
            self.train_ordinal,
        )

    def to_dict(self) -> FindingFields:
        return {
            "check": self.check,
            "eval_dataset": self.eval_dataset,
            "eval_id": self.eval_id,
            "eval_source": self.eval_source,
            "train_dataset": self.train_dataset,
            "train_id": self.train_id,
            "train_source": self.train_source,
            "method": self.method,
            "score": round(float(self.score), 6),
            "conclusive": self.conclusive,
            "evidence": self.evidence,
            "eval_ordinal": self.eval_ordinal,
            "train_ordinal": self.train_ordinal,
            "eval_hash": self.eval_hash,
            "train_hash": self.train_hash,
        }


#: default bounds of integer and float method parameters (see :attr:`MethodConfig.BOUNDS`)
INT_RANGE = (0, 1_000_000)
FLOAT_RANGE = (-1_000_000.0, 1_000_000.0)


@dataclass
class MethodConfig:
    """Options every method has: which view of an eval item is compared with which train views."""

    eval_view: str = QUERY
    train_views: tuple[str, ...] = (QUERY, TEXT)
    #: ignore training-set boilerplate (lines / n-grams in a large share of training records; auditor.masking.boilerplate)
    mask_boilerplate: bool = True

    #: parameter → (lowest, highest) allowed; every other int parameter is bounded by
    #: :data:`INT_RANGE`, every float one by :data:`FLOAT_RANGE`. A value outside (``num_perm = 1e9``
    #: would allocate gigabytes, then hang) is a ConfigError before anything is built.
    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {}

    @classmethod
    def from_params(cls: type[C], params: dict[str, Any]) -> C:
        """The config of ``params`` (a manifest's ``[methods.NAME]`` table, a Detector's or a CLI's
        ``--param``s); TypeError naming an unknown parameter."""
        return cls(**params)

    @classmethod
    def param_names(cls) -> list[str]:
        return [name for name, _, _ in cls().typed_params()]

    def typed_params(self) -> Iterator[tuple[str, Any, Any]]:
        """``(name, value, type)`` of every parameter, named as :meth:`from_params` takes it."""
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            yield f.name, getattr(self, f.name), hints[f.name]

    def as_params(self) -> dict[str, Any]:
        """Every parameter by name (the report's ``params``, the persisted index's key)."""
        return {name: copy.deepcopy(value) for name, value, _ in self.typed_params()}

    def check_numbers(self, method: str) -> None:
        """Raise :class:`ConfigError` for a numeric parameter of the wrong type, not finite, or out of bounds.

        >>> MethodConfig().check_numbers("exact")
        """
        for name, value, hint in self.typed_params():
            kinds = set(typing.get_args(hint)) or {hint}
            if not kinds & {int, float} or (value is None and type(None) in kinds):
                continue
            integer = float not in kinds
            if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
                raise ConfigError(
                    f"method '{method}': {name} must be {'an integer' if integer else 'a number'}, got {value!r}"
                )
            low, high = self.BOUNDS.get(name, INT_RANGE if integer else FLOAT_RANGE)
            if not (math.isfinite(value) and low <= value <= high):
                raise ConfigError(f"method '{method}': {name} must be between {low:g} and {high:g}, got {value!r}")


C = TypeVar("C", bound="MethodConfig")


@dataclass(eq=False)
class SharedModel:
    """A model a searcher runs that an engine may load once per node and lend to every task (the Ray
    engine's embedding actors, :mod:`auditor.engines.ray_embed`), as :meth:`Searcher.shared_models`
    offers it: what to load (``model``, ``backend``, ``device``, ``model_cache``; ``key`` the loaded
    model's id, which must match), what stays in the task (``dim``), and ``lend(stand_in)``: the
    searcher's copies shipped meanwhile run ``stand_in`` instead of the model (``lend(None)``: its own
    model again). ``owner`` is the searcher (one offer each)."""

    key: str
    model: str
    backend: str
    device: str
    model_cache: str
    dim: int
    owner: object
    lend: Callable[[Any], None]


class Searcher(Protocol):
    """What an engine needs of what it searches (a :class:`~auditor.scan.stages.SearchStage` of a :class:`~auditor.scan.job.ScanJob`): findings for
    a batch of training records, and the counters a worker's copy kept while searching.

    Every :class:`Index` is one; so are the scan's wrappers that are not a method of their own:
    :class:`~auditor.masking.masker.MaskingIndex` (an index that sees masked records) and the
    provenance attributor (:mod:`auditor.audit.attribution`). Findings carry the training record's
    ``train_ordinal`` as the engine numbered it, so the engine can renumber them across work units.
    """

    @abstractmethod
    def search(self, batch: Sequence[Record]) -> list[Finding]:
        """Findings for a batch of training records."""

    def take_counts(self) -> Counter:
        """Counters kept while searching (an index reports them in its ``stats``), handed over and
        reset: an engine worker sends them back to the caller's searcher (:meth:`add_counts`), so the
        report counts every worker's searches. Default: none."""
        return Counter()

    def add_counts(self, counts: Counter) -> None:
        """Add counters :meth:`take_counts` took from a copy of this searcher in a worker."""
        return None  # an optional hook: no counters by default

    def shared_models(self) -> list[SharedModel]:
        """The models this searcher runs that an engine may host once and lend to its tasks
        (:class:`SharedModel`). Default: none."""
        return []

    def prepare_workers(self) -> None:
        """Build here, once, what every worker's copy of this searcher needs, before an engine starts
        its workers (forked from this process or sent a pickled copy), so that no worker builds it
        again. Default: nothing."""
        return None


class Index(Searcher, ABC, Generic[C]):
    name: ClassVar[str] = ""
    Config: ClassVar[type[MethodConfig]] = MethodConfig
    #: False for methods whose findings are evidence but never proof (e.g. id equality)
    conclusive: ClassVar[bool] = True
    #: module → extra, checked at construction
    requires: ClassVar[dict[str, str]] = {}
    #: one line for ``auditor methods`` and the README
    summary: ClassVar[str] = ""
    #: False for methods a check runs only when named (slow, model-based tiers such as ``embedding``)
    in_default: ClassVar[bool] = True
    #: the score a finding needs when the method has no ``threshold`` parameter (``exact``: 1.0);
    #: drawn as the threshold line of the report's score histogram. None: no fixed threshold
    fixed_threshold: ClassVar[float | None] = None
    #: the run's folder of persisted state, set by the audit before :meth:`build` (None: persist
    #: nothing); a method keeping a cache of its own keeps it under this folder (embedding: ``embeddings/``)
    index_dir: str | None = None

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            METHODS.register(cls.name, cls)

    def __init__(self, config: MethodConfig | None = None, **params: Any):
        missing = self.missing_requirements()
        if missing:
            module, extra = missing[0]
            raise MissingDependencyError(module, extra, f"method '{self.name}'")
        if config is None:
            try:
                config = self.Config.from_params(params)
            except TypeError as e:
                known = ", ".join(self.Config.param_names())
                raise ConfigError(
                    f"method '{self.name}': {e.args[0].split(')')[-1].strip() or e} (parameters: {known})"
                ) from None
            config.check_numbers(self.name)
            if isinstance(config.train_views, (list, str)):
                config.train_views = (
                    (config.train_views,) if isinstance(config.train_views, str) else tuple(config.train_views)
                )
        self.config: C = cast(C, config)
        self.eval_records: list[Record] = []
        self.not_indexed: Counter = Counter()

    @classmethod
    def missing_requirements(cls) -> list[tuple[str, str]]:
        return [(m, e) for m, e in cls.requires.items() if importlib.util.find_spec(m) is None]

    def build(self, eval_records: Sequence[Record]) -> Index:
        """Index the eval side. Records keep their order; ``eval_records[i].ordinal`` need not be i."""
        self.eval_records = list(eval_records)
        self.not_indexed = Counter()
        self._build()
        return self

    @abstractmethod
    def _build(self) -> None:
        """Build the index over ``self.eval_records``; count unindexable items in ``self.not_indexed``."""

    def __getstate__(self) -> dict[str, Any]:
        """A pickled copy (an engine's worker's) holds what :meth:`prepare_workers` builds, built here once."""
        self.prepare_workers()
        return self.__dict__.copy()

    def searched_views(self) -> tuple[str, ...]:
        """Every view of a training record :meth:`search` reads (what boilerplate masking masks for this
        method): ``config.train_views`` unless the method reads more."""
        return tuple(self.config.train_views)

    def reads(self, record: Record) -> bool:
        """Does :meth:`search` read anything of training ``record``? By default: it has text in one of
        :meth:`searched_views` (``text`` as :meth:`Record.view` gives it). The audit counts the records
        each method read per training set: one that read none of a set's records checked nothing there
        (``checks[].not_checked``, :mod:`auditor.audit.unchecked`)."""
        for v in self.searched_views():
            if record.has_view(v):
                return True
        return False

    def unread(self) -> str:
        """Why a training record is not one :meth:`reads` reads, for the report."""
        return f"none has text in the views it reads ({', '.join(self.searched_views())})"

    def covered(self, records: Sequence[Record]) -> list[bool]:
        """Can this method prove contamination of each eval record of ``records``? (False: too short,
        no calls ...); all of them at once (a method normalizes them in one batch).

        The audit uses it to find eval items that no conclusive method checked: such a check is
        never reported as a plain pass."""
        return [self.conclusive] * len(records)

    # -- persistence (optional): methods whose index is worth keeping return arrays here --------
    def state(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``(arrays, meta)`` describing the built index for :mod:`auditor.store.indexes`, or None."""
        return None

    def restore(self, eval_records: Sequence[Record], arrays: dict[str, Any], meta: dict[str, Any]) -> Index:
        """Rebuild from :meth:`state` output instead of :meth:`_build`."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        return _jsonable(self.config.as_params())

    def stats(self) -> dict[str, Any]:
        """Parameters and coverage for the report."""
        return {
            "method": self.name,
            "conclusive": self.conclusive,
            "params": self.params(),
            "eval_items": len(self.eval_records),
            "eval_not_indexed": sum(self.not_indexed.values()),
            "not_indexed_reasons": dict(sorted(self.not_indexed.items())),
        }

    def notes(self) -> list[str]:
        """Lines for the check's notes about how this index read the eval side (e.g. template text
        it left out of the items). Default: none."""
        return []

    def proof_target(self, ev: Record, evidence: dict[str, Any]) -> str:
        """The text of ``ev`` a finding located in the training record (:meth:`finding`): by default
        the eval view the method compares; a method matching something else (ids, values) says so."""
        return ev.view(self.config.eval_view)

    def finding(self, ev: Record, tr: Record, score: float, **evidence: Any) -> Finding:
        """A finding of ``ev`` in ``tr``, naming where the match sits in the training record: the
        field (``evidence["field"]``, a path such as ``input``, ``messages[3].content`` or
        ``tools[0].function.description``) and the character range in it (``evidence["span"]``:
        :func:`auditor.text.locate.locate_span`), which the report shows beside the eval text."""
        later = None
        if tr.raw is not None and "field" not in evidence:
            target = self.proof_target(ev, evidence)
            if locating():  # the scan's batch: located with the record's other findings (located_by_record)
                later = (tr, target, len(evidence))
            else:
                place(evidence, locate_span(with_text_key(tr.raw, tr.meta.get("json_key")), target), len(evidence))
        view = evidence.get("train_view")
        train_views = (view,) if isinstance(view, str) else self.searched_views()
        f = Finding(
            eval_dataset=ev.dataset,
            eval_id=ev.id,
            eval_source=ev.source,
            train_dataset=tr.dataset,
            train_id=tr.id,
            train_source=tr.source,
            method=self.name,
            score=float(score),
            conclusive=self.conclusive,
            evidence=evidence,
            eval_ordinal=ev.ordinal,
            train_ordinal=tr.ordinal,
            eval_hash=content_hash(ev.view(self.config.eval_view)),
            train_hash=_train_hash(tr, tuple(train_views)),  # a plug-in's views may come as a list
        )
        if later is not None:
            locate_later(f, *later)
        return f


def _train_hash(tr: Record, views: tuple[str, ...]) -> str:
    """:func:`content_hash` of ``tr``'s ``views``; in the scan's search stage once per record and views
    (:func:`~auditor.methods._located.hash_memo`: each finding of a 2 MB record hashed its text again)."""
    memo = hash_memo()
    if memo is not None and (known := memo.get((id(tr), views))) is not None:
        return known[1]
    digest = content_hash(*(tr.view(v) for v in views))
    if memo is not None:
        memo[(id(tr), views)] = (tr, digest)
    return digest


def content_hash(*texts: str) -> str:
    """A short content hash of ``texts`` (SHA-256 of them joined by a unit separator, 16 hex digits):
    the same text gives the same hash wherever and in whichever record order it is read.

    >>> content_hash("book a flight") == content_hash("book a flight"), len(content_hash("a", "b"))
    (True, 16)
    >>> content_hash("a", "b") == content_hash("ab")
    False
    """
    return hashlib.sha256("\x1f".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


def registry() -> dict[str, type[Index]]:
    """Every method by name, each imported (:data:`METHODS` lists names without importing)."""
    return METHODS.all()
