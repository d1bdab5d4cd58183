"""Provenance attribution and split purity: trace every derived training record to its source item.

An overlap check asks "does this eval item leak into the training set?". Provenance asks the
reviewer's question the other way round: "which source item was this training record made from,
and which split is that item in?". A ``[[provenance]]`` manifest entry names the *derived*
datasets (ToolBench-V/R, StepTool's SFT data, agent trajectories) and the *source* datasets (the
item pools they were built from), each source record carrying a split label — the adapter's
(``tau2-tasks`` reads ``split_tasks.json``) or the dataset's ``split_label``
(``split_label = "test"`` on StableToolBench).

Nothing here matches text itself: the existing indexes are built over the source records and
searched with the derived records, exactly as a check builds them over eval items and searches
training batches. Ids are matched by the ``id`` method; ``id_pattern`` (a regex with a named group
``id`` and optionally ``group`` and ``source``) maps a derived id such as ``G1@33737`` to the
source id ``33737`` in group ``G1`` (``group`` is compared with the source record's
``meta['group']``, ``1`` and ``G1`` being the same group; ``source`` must name the source dataset).

Each derived record is attributed ``how``:

``both``         the id names a source item and the content matches that same item (confidence 1)
``content``      the content matches a source item and no id says otherwise (confidence = score)
``id``           only the id names a source item (confidence 0.6, 0.4 when the group is unverified,
                 divided among equally named items)
``conflicting``  the id names one item while the content matches another — a finding in itself;
                 the record is attributed by content and counts as held-out when either item is
``unattributed`` neither; listed, never dropped

The entry fails when more derived records than ``max_held_out`` trace to a ``held_out`` split.

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> ds = {"stb": Dataset(DatasetSpec("stb", ["stabletoolbench"], role="eval", split_label="test")),
...       "goals": Dataset(DatasetSpec("goals", ["webshop:0:3"]))}
>>> out = run_provenance(ProvenanceSpec("p", derived=["goals"], sources=["stb"], methods=["exact"]), ds)
>>> out["verdict"], out["by_split"], out["unattributed"]
('pass', {}, 3)

Errors: :class:`~auditor.errors.ConfigError` for an invalid ``id_pattern``, an unknown method, the
``id`` method listed as a content method, or a negative allowance.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import methods
from ..datasets.dataset import Dataset
from ..engines import Engine, get_engine
from ..errors import ConfigError, did_you_mean
from ..masking import masker as masking
from ..methods.base import Finding, Searcher
from ..records.record import Record
from ..report.results import ProvenanceResult
from ..scan.job import ScanJob, ScanStats
from ..scan.stages import MaskStage, SearchStage
from .indexes import build_index

if TYPE_CHECKING:
    pass

HOW = ("both", "content", "id", "conflicting", "unattributed")
UNLABELLED = "unlabelled"
_ID_CONFIDENCE, _ID_CONFIDENCE_UNVERIFIED, _CONFLICT_FACTOR = 0.6, 0.4, 0.5
_CANDIDATES = 5


@dataclass
class ProvenanceSpec:
    """One ``[[provenance]]`` entry."""

    name: str
    derived: list[str]
    sources: list[str]
    id_pattern: str | None = None
    methods: list[str] | None = None  # content methods; None: every available conclusive method
    held_out: list[str] = field(default_factory=lambda: ["test"])
    max_held_out: float = 0  # a record count, or a share of derived records when < 1 and not 0

    def __post_init__(self) -> None:
        self.regex = None
        if self.id_pattern:
            try:
                self.regex = re.compile(self.id_pattern)
            except re.error as e:
                raise ConfigError(f"provenance '{self.name}': invalid id_pattern {self.id_pattern!r}: {e}") from None
            if "id" not in self.regex.groupindex:
                raise ConfigError(
                    f"provenance '{self.name}': id_pattern {self.id_pattern!r} has no named "
                    "group 'id' (e.g. 'G(?P<group>\\d)@(?P<id>\\d+)')"
                )
        if (
            isinstance(self.max_held_out, bool)
            or not isinstance(self.max_held_out, (int, float))
            or self.max_held_out < 0
        ):
            raise ConfigError(f"provenance '{self.name}': max_held_out must be a non-negative number")

    def allowance(self, records: int) -> int:
        if 0 < self.max_held_out < 1:
            return int(self.max_held_out * records)
        return int(self.max_held_out)

    def content_methods(self) -> list[str]:
        if self.methods is None:
            return [m for m in methods.default_methods() if methods.get(m).conclusive]
        for m in self.methods:
            if not methods.get(m).conclusive:
                raise ConfigError(
                    f"provenance '{self.name}': '{m}' cannot attribute content (ids are "
                    "always compared; map them with id_pattern)"
                )
        return list(self.methods)

    def validate(self, datasets: dict) -> None:
        for side in ("derived", "sources"):
            names = getattr(self, side)
            if not names:
                raise ConfigError(f"provenance '{self.name}': no {side} dataset")
            for n in names:
                if n not in datasets:
                    raise ConfigError(
                        f"provenance '{self.name}': unknown dataset '{n}'{did_you_mean(n, datasets)} "
                        f"(defined: {', '.join(sorted(datasets)) or 'none'})"
                    )
        both = set(self.derived) & set(self.sources)
        if both:
            raise ConfigError(f"provenance '{self.name}': dataset '{sorted(both)[0]}' is both derived and source")
        self.content_methods()


def group_key(group: Any) -> str | None:
    """``'G1'``, ``'g1'`` and ``'1'`` are one group; None stays None."""
    if group is None or group == "":
        return None
    return re.sub(r"^[a-z]+(?=\d+$)", "", str(group).lower())


@dataclass(slots=True)
class _Source:
    dataset: str
    id: str
    source: str
    split: str
    group: str | None
    rank: int  # position of its dataset in the entry's sources


def run_provenance(
    spec: ProvenanceSpec,
    datasets: dict[str, Dataset],
    *,
    method_params: dict[str, dict[str, Any]] | None = None,
    index_dir: str | None = None,
    batch_size: int = 512,
    engine: Engine | None = None,
    stats: ScanStats | None = None,
) -> ProvenanceResult:
    """Attribute every record of ``spec.derived`` to the records of ``spec.sources``; the report entry.

    The derived datasets are scanned by ``engine`` (default: the local engine in this process) like a
    check's training sets: each worker reads, masks (training-set boilerplate, as a check masks it)
    and attributes its own work units; the rows come back in reading order, numbered as one serial
    read numbers them, so the entry is the same whatever the engine or the number of workers.
    ``stats`` (the run's :class:`~auditor.scan.job.ScanStats`) counts what the scans read.
    """
    spec.validate(datasets)
    method_params = method_params or {}
    engine = engine or get_engine("local", workers=1, batch_size=batch_size)
    stats = stats if stats is not None else ScanStats()
    source_records: list[Record] = []
    sources: dict[tuple[str, int], _Source] = {}
    for rank, name in enumerate(spec.sources):
        ds = datasets[name]
        label = ds.spec.split_label
        for r in ds.records():
            source_records.append(r)
            sources[r.key] = _Source(
                name, r.id, r.source, label or r.split or UNLABELLED, group_key(r.meta.get("group")), rank
            )
    content_names = spec.content_methods()
    indexes = [build_index(m, method_params.get(m), source_records, index_dir) for m in content_names]
    id_index = methods.create("id", method_params.get("id")).build(source_records)
    masker = masking.prepare(indexes, [datasets[n] for n in spec.derived], source_records)
    held = set(spec.held_out)
    attributor = _Attributor(spec, masker.indexes, id_index, sources, held)
    job = ScanJob([MaskStage(masker), SearchStage(spec.name, [attributor])], batch_size=batch_size)
    rows: list[dict[str, Any]] = []
    per_dataset: dict[str, dict[str, Any]] = {}
    for name in spec.derived:
        ds = datasets[name]
        start = len(rows)
        for f in engine.scan(job, ds, stats):
            row = f.evidence["row"]
            # the engine renumbered them as a serial read would (positional ids, lines in a later range)
            row["derived_id"], row["derived_source"] = f.train_id, f.train_source
            row["derived_ref"] = ds.ref(f.train_id, f.train_source)  # dataset, id and file where ids repeat
            if row["source_dataset"] is not None:
                row["source_ref"] = datasets[row["source_dataset"]].ref(row["source_id"], row["source_record"])
            rows.append(row)
        per_dataset[name] = _summary(rows[start:], skipped=ds.stats.skipped)
    total = _summary(rows, skipped=sum(datasets[n].stats.skipped for n in spec.derived))
    allowance = spec.allowance(total["records"])
    notes = []
    source_skipped = sum(datasets[n].stats.skipped for n in spec.sources)
    unread_files = sum(len(datasets[n].stats.skipped_files) for n in (*spec.derived, *spec.sources))
    if total["held_out_records"] > allowance:
        verdict = "fail"
    elif total["skipped"] or source_skipped or unread_files:
        verdict = "incomplete"
        notes.append(
            f"{total['skipped']} derived and {source_skipped} source records were skipped and not attributed"
            + (f"; {unread_files} files were not read" if unread_files else "")
        )
    elif not rows:
        verdict = "incomplete"
        notes.append("the derived datasets have no records")
    else:
        verdict = "pass"
    if not source_records:
        verdict = "incomplete" if verdict == "pass" else verdict
        notes.append("the source datasets have no records")
    bp = masker.boilerplate
    if bp is not None and bp.masked_records:
        notes.append(
            f"boilerplate masked in {bp.masked_records} derived records before content matching "
            f"({len(bp.lines)} lines, {len(bp.ngrams)} n-grams shared by at least {bp.config.share:.0%} "
            f"of {bp.sampled} sampled records; text shared with a source item is never masked)"
        )
    return ProvenanceResult(
        name=spec.name,
        derived=list(spec.derived),
        sources=list(spec.sources),
        held_out_splits=sorted(held),
        methods=content_names + ["id"],
        id_pattern=spec.id_pattern,
        records_total=total["records"],
        by_split=total["by_split"],
        share_by_split=total["share_by_split"],
        source_items_by_split=total["source_items_by_split"],
        by_how=total["by_how"],
        unattributed=total["unattributed"],
        conflicts=total["conflicts"],
        held_out_records=total["held_out_records"],
        ambiguous=total["ambiguous"],
        max_held_out=spec.max_held_out,
        allowance=allowance,
        verdict=verdict,
        skipped=total["skipped"],
        source_skipped=source_skipped,
        source_split_sizes=dict(sorted(Counter(s.split for s in sources.values()).items())),
        per_dataset=per_dataset,
        notes=notes,
        records=rows,
    )


class _Attributor(Searcher):
    """The scan's one :class:`~auditor.methods.base.Searcher` for a provenance entry: it attributes every record of a batch in the
    worker (content through the entry's masked indexes, ids through the ``id`` index) and returns one
    row per record, carried by a :class:`Finding` (``evidence["row"]``) so that the engine numbers
    it as it numbers findings. Shipped to the workers inside the :class:`ScanJob`."""

    method = "provenance"

    def __init__(self, spec: ProvenanceSpec, content: list, id_index, sources: dict, held: set[str]):
        self.spec, self.content, self.id_index, self.sources, self.held = spec, content, id_index, sources, held

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        content: dict[int, list[Finding]] = defaultdict(list)
        for ix in self.content:
            for f in ix.search(batch):
                if f.conclusive:  # a suspected match (a short item inside a longer one, a sibling) names no source
                    content[f.train_ordinal].append(f)
        ids = _id_hits(self.spec, self.id_index, batch, self.sources)
        out = []
        for r in batch:
            row = _attribute(r, ids.get(r.ordinal, []), content.get(r.ordinal, []), self.sources, self.held)
            out.append(
                Finding(
                    "", "", "", r.dataset, r.id, r.source, self.method, row["score"], False, {"row": row}, -1, r.ordinal
                )
            )
        return out  # the entry reports no per-method counters: take_counts / add_counts as declared


def _id_hits(
    spec: ProvenanceSpec, id_index, batch: Sequence[Record], sources: dict[tuple[str, int], _Source]
) -> dict[int, list[tuple[Finding, bool]]]:
    """Derived ordinal → [(id finding, group verified)] through the ``id`` index.

    Without ``id_pattern`` the records go in as they are (own id, adapter ``ref_ids``, ``group``).
    With it, each record's id is mapped first; a record whose id does not match is not id-matched.
    """
    scope: dict[int, tuple[str | None, str | None]] = {}
    if spec.regex is None:
        probes = list(batch)
        for r in batch:
            scope[r.ordinal] = (group_key(r.meta.get("group")), None)
    else:
        probes = []
        for r in batch:
            m = spec.regex.match(r.id)
            if not m or not m.group("id"):
                continue
            named = m.groupdict()
            scope[r.ordinal] = (group_key(named.get("group")), named.get("source"))
            probes.append(Record(r.dataset, m.group("id"), r.source, {}, ordinal=r.ordinal))
    out: dict[int, list[tuple[Finding, bool]]] = defaultdict(list)
    for f in id_index.search(probes):
        group, source_ds = scope[f.train_ordinal]
        src = sources[(f.eval_dataset, f.eval_ordinal)]
        if source_ds is not None and source_ds != src.dataset:
            continue
        if group is not None and src.group is not None and group != src.group:
            continue
        out[f.train_ordinal].append((f, group is not None and src.group is not None or source_ds is not None))
    return out


def _attribute(
    r: Record,
    id_hits: list[tuple[Finding, bool]],
    content: list[Finding],
    sources: dict[tuple[str, int], _Source],
    held: set[str],
) -> dict[str, Any]:
    best: dict[tuple[str, int], tuple[float, list[str]]] = {}
    for f in content:
        key = (f.eval_dataset, f.eval_ordinal)
        score, used = best.get(key, (0.0, []))
        best[key] = (max(score, f.score), sorted({*used, f.method}))
    id_keys = {(f.eval_dataset, f.eval_ordinal): verified for f, verified in id_hits}
    row: dict[str, Any] = {
        "derived_dataset": r.dataset,
        "derived_id": r.id,
        "derived_source": r.source,
        "source_dataset": None,
        "source_id": None,
        "source_split": None,
        "source_record": None,
        "how": "unattributed",
        "score": 0.0,
        "confidence": 0.0,
        "methods": [],
        "held_out": False,
    }
    # best score first; among equal scores a held-out item first (the conservative reading), then
    # the order of the sources in the entry, then file order
    ranked = sorted(best, key=lambda k: (-best[k][0], sources[k].split not in held, sources[k].rank, k[1]))
    agree = [k for k in ranked if k in id_keys]
    other_ids = sorted(id_keys)
    if agree:
        key, how, confidence = agree[0], "both", 1.0
    elif ranked and id_keys:
        key, how = ranked[0], "conflicting"
        confidence = _CONFLICT_FACTOR * best[key][0]
        idk = other_ids[0]
        row.update(
            id_source_dataset=sources[idk].dataset, id_source_id=sources[idk].id, id_source_split=sources[idk].split
        )
    elif ranked:
        key, how, confidence = ranked[0], "content", best[ranked[0]][0]
    elif id_keys:
        key, how = other_ids[0], "id"
        base = _ID_CONFIDENCE if id_keys[key] else _ID_CONFIDENCE_UNVERIFIED
        confidence = base / len(id_keys)
    else:
        return row
    src = sources[key]
    score, used = best.get(key, (1.0, []))
    row.update(
        source_dataset=src.dataset,
        source_id=src.id,
        source_split=src.split,
        how=how,
        score=round(float(score), 6),
        confidence=round(confidence, 6),
        methods=used + (["id"] if key in id_keys else []),
        source_record=src.source,
    )
    candidates = [sources[k] for k in dict.fromkeys(ranked + other_ids) if k != key][:_CANDIDATES]
    if candidates:
        row["candidates"] = [f"{c.dataset}:{c.id}" for c in candidates]
    tied = sorted({sources[k].split for k in ranked if best[k][0] == best[key][0]} - {src.split}) if ranked else []
    if tied:  # the same content is in another split too: attributed conservatively, flagged
        row["ambiguous_splits"] = tied
    row["held_out"] = src.split in held or (how == "conflicting" and row["id_source_split"] in held)
    return row


def _summary(rows: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
    by_split = Counter(r["source_split"] for r in rows if r["source_split"] is not None)
    items: dict[str, set] = defaultdict(set)
    for r in rows:
        if r["source_split"] is not None:
            items[r["source_split"]].add((r["source_dataset"], r["source_id"]))
    n = len(rows)
    return {
        "records": n,
        "by_split": dict(sorted(by_split.items())),
        "share_by_split": {s: round(c / n, 6) for s, c in sorted(by_split.items())},
        "source_items_by_split": {s: len(v) for s, v in sorted(items.items())},
        "by_how": {h: c for h in HOW if (c := sum(1 for r in rows if r["how"] == h))},
        "unattributed": sum(1 for r in rows if r["how"] == "unattributed"),
        "conflicts": sum(1 for r in rows if r["how"] == "conflicting"),
        "held_out_records": sum(1 for r in rows if r["held_out"]),
        "ambiguous": sum(1 for r in rows if r.get("ambiguous_splits")),
        "skipped": skipped,
    }
