"""Cleaned training sets: each training dataset written again without the records behind conclusive findings.

This is the falsifier's "retrain with the overlapping items removed". For every training dataset of
an audit, :func:`write_clean` writes ``DIR/<dataset>/<file>`` (the dataset name made safe as a folder name) holding the dataset's selected records
(after its split selection) minus every record with a *conclusive* finding or a suspected one a
reviewer confirmed (``id`` evidence never removes a record), and ``DIR/removed.jsonl`` listing each removed record with the finding that
removed it (its best-scoring one).

Format: each file is written back under its own name by the writer its adapter declares
(:meth:`~auditor.adapters.base.Adapter.writer`: every built-in format, compressed as the input
was); a file that loses every record is a valid empty file of its format. An adapter without a
writer gets JSON Lines of ``{id, source, views, meta}`` (file name + ``.jsonl``).
:func:`~auditor.audit.clean_manifest.write_clean_manifest` writes ``DIR/split.toml``: the run's manifest with the cleaned
datasets in place of the originals, for ``auditor verify DIR/split.toml``.
Training records the dataset skipped (``on_error = "skip"``) have no parsed form and are not
written; their count is reported, and so are files it could not read at all (``not_written_files``).

>>> import json, tempfile, os
>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> from auditor.methods.base import Finding
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.jsonl")
>>> _ = open(p, "w").write('{"id": 1, "text": "a"}\\n{"id": 2, "text": "b"}\\n')
>>> ds = Dataset(DatasetSpec("t", [p]))
>>> hit = Finding("ev", "9", "ev#9", "t", "2", p + ":2", "exact", 1.0, train_ordinal=1)
>>> summary = write_clean(os.path.join(d, "clean"), [ds], {("t", 1): hit})
>>> summary["datasets"]["t"]["kept"], summary["datasets"]["t"]["removed"]
(1, 1)
>>> open(os.path.join(d, "clean", "t", "t.jsonl")).read()
'{"id": 1, "text": "a"}\\n'

Safety: the cleaned files never replace an input or a user's file. :func:`plan_clean` (run before the
audit starts) refuses a folder that holds any input file of the run or the run's manifest
(``--write-clean .`` next to the data, a manifest's ``write_clean = "."``), one that holds any file
auditor did not write there or that was changed since (the folder's ledger, :mod:`auditor.io.ledger`,
names each file auditor wrote with its SHA-256; a re-run replaces those and removes the ones it no
longer writes), and any target that would resolve outside the folder (a dataset named ``..``, a
symlinked subfolder). The report folder ``DIR/report`` of ``auditor verify DIR/split.toml`` is left to
its own ledger. Every file is written to a temp file and renamed into place: a failed write (a full
disk) leaves no partial or temp file, and the ledger then names what was written.
Files are streamed: memory holds one record, not the dataset.

Raises :class:`~auditor.errors.InputError` when a dataset cannot be re-read and
:class:`~auditor.errors.ConfigError` when ``out_dir`` is an existing file or unsafe (above).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..adapters import AtomicFile, RecordWriter, ViewsWriter
from ..datasets.dataset import Dataset
from ..datasets.registry import source_file
from ..errors import ConfigError, OutputError
from ..io.ledger import LEDGER, Ledger, shown
from ..io.members import archive_of
from ..io.remote import is_url
from ..methods.base import Finding
from ..records.record import Record, split_source
from ..report.publish import check_report_dir
from .decisions import CONFIRMED, Decisions


def _folder(name: str) -> str:
    """A dataset name as a folder name (``webshop:500:`` → ``webshop_500_``; ``..`` → ``__``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "dataset"
    return safe.replace(".", "_") if set(safe) == {"."} else safe


def _file_of(record: Record) -> str:
    """The dataset file a record came from (an archive for its members' records)."""
    return archive_of(source_file(split_source(record.source)[0]))


def _out_name(path: Path, taken: set[str]) -> str:
    """The file's own name; ``2-name`` … when two files of a dataset share one."""
    name = path.name
    base, i = name, 2
    while name in taken:
        name, i = f"{i}-{base}", i + 1
    taken.add(name)
    return name


#: the format name of the fallback output (JSON Lines of ``{id, source, views, meta}``)
VIEWS_FORMAT = "views-jsonl"


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, path]) == root


#: the report folder a cleaned manifest names (``report_dir = "report"``), kept by its own ledger
REPORT_SUBDIR = "report"
#: a temp file of :class:`~auditor.adapters.AtomicFile` (``.NAME.XXXXXXXX.tmp``) a killed run left
_TEMP = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")


def _ours_aside(out: Path, ledger: Ledger) -> Callable[[str], bool]:
    """What a clean folder may hold besides the ledger's files: a report folder of its own at
    ``report/`` and temp files of killed writes of files the ledger names."""
    sub = out / REPORT_SUBDIR
    report_ok = False
    if sub.is_dir() and not sub.is_symlink():
        try:
            check_report_dir(sub)
            report_ok = True
        except OutputError:
            pass

    def aside(rel: str) -> bool:
        if report_ok and (rel == REPORT_SUBDIR or rel.startswith(REPORT_SUBDIR + "/")):
            return True
        head, _, name = rel.rpartition("/")
        m = _TEMP.fullmatch(name)
        return m is not None and f"{head}/{m['name']}".lstrip("/") in ledger.files

    return aside


def clean_hits(
    train_hits: dict[tuple[str, int], Finding], findings: list[Finding], decisions: Decisions
) -> dict[tuple[str, int], Finding]:
    """The training records :func:`write_clean` removes: those behind conclusive findings
    (``train_hits``: the store's best conclusive finding per training record), and those behind
    suspected findings a reviewer confirmed (:mod:`auditor.audit.decisions`)."""
    hits = dict(train_hits)
    for f in findings:
        if f.suspected and decisions.decision_of(f) == CONFIRMED:
            hits.setdefault((f.train_dataset, f.train_ordinal), f)
    return hits


def plan_clean(
    out_dir: str | Path, train: Iterable[Dataset], inputs: Iterable[Dataset], protected: Iterable[str | None] = ()
) -> dict[str, list[tuple[Path, Path]]]:
    """Where each file of each training dataset will be written: dataset name → [(input, target)].

    Checked before anything is read or written: ``out_dir`` must not be a file, must not hold any
    file of ``inputs`` (every dataset of the run) nor any ``protected`` file (the manifest), must hold
    nothing but auditor's own unchanged output (its ledger, :mod:`auditor.io.ledger`), and every
    target must resolve inside it. Raises :class:`ConfigError` naming the folder and the problem.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"write_clean: {out} exists and is not a folder")
    root = os.path.realpath(out)
    train = list(train)
    for ds in train:
        urls = [f for f in ds.files if is_url(f)]
        if urls:
            raise ConfigError(
                f"write_clean: dataset '{ds.name}' is read from a URL ({urls[0]}); cleaned copies are "
                "written from local files only (copy it locally, or run without --write-clean)"
            )
    for ds in inputs:
        for f in ds.files:
            if is_url(f):
                continue
            real = os.path.realpath(f)
            if _inside(root, real):
                raise ConfigError(
                    f"write_clean: the folder {out} holds the input file {f} of dataset '{ds.name}'; "
                    "give a folder of its own (cleaned files must never replace their inputs)"
                )
    for p in protected:
        if p and _inside(root, os.path.realpath(p)):
            raise ConfigError(
                f"write_clean: the folder {out} holds the manifest {p}; the manifest is an input and is never "
                "written: give a folder of its own"
            )
    plan: dict[str, list[tuple[Path, Path]]] = {}
    folders: set[str] = set()
    for ds in train:
        taken: set[str] = set()
        folder = out / _out_name(Path(_folder(ds.name)), folders)  # one folder per dataset
        pairs = [(Path(f), folder / _out_name(Path(f), taken)) for f in ds.files]
        for _, target in pairs:
            if not _inside(root, os.path.realpath(target)) or os.path.realpath(target.parent) == root:
                raise ConfigError(
                    f"write_clean: dataset '{ds.name}' would be written to {target}, outside the folder {out}"
                )
        plan[ds.name] = pairs
    for name in ("removed.jsonl", "split.toml"):
        if not _inside(root, os.path.realpath(out / name)):
            raise ConfigError(f"write_clean: {out / name} leads outside the folder {out}")
    if out.is_dir():
        ledger = Ledger.load(out, "clean")
        try:
            foreign = ledger.foreign(ignore=_ours_aside(out, ledger))
        except OSError as e:
            raise ConfigError(f"write_clean: cannot read the folder {out}: {e.strerror or e}") from None
        if foreign:
            raise ConfigError(
                f"write_clean: the folder {out} holds files auditor did not write, or that were changed since it "
                f"wrote them ({shown(foreign)}); give a new or empty folder (auditor lists what it wrote in {LEDGER})"
            )
    return plan


def check_apart(clean_dir: str | Path, report_dir: str | Path) -> None:
    """Raise :class:`ConfigError` when the report folder is the clean folder, holds it, or lies inside
    it anywhere but at ``DIR/report`` (each is written whole by its own writer and ledger)."""
    clean, rep = os.path.realpath(clean_dir), os.path.realpath(report_dir)
    if os.path.commonpath([clean, rep]) in (clean, rep) and rep != os.path.join(clean, REPORT_SUBDIR):
        raise ConfigError(
            f"write_clean: the clean folder {clean_dir} and the report folder {report_dir} overlap; give each a "
            f"folder of its own (the clean folder may hold its report in {Path(clean_dir) / REPORT_SUBDIR})"
        )


def _open_writer(ds: Dataset, source: Path, target: Path) -> tuple[RecordWriter, str]:
    """The writer for one file: the one its adapter declares (:meth:`Adapter.writer`), else
    JSON Lines of the records' views (``NAME.jsonl``)."""
    adapter = ds.adapter(source)
    writer = adapter.writer(source, target)
    if writer is not None:
        return writer, adapter.name
    return ViewsWriter(source, target.with_name(target.name + ".jsonl")), VIEWS_FORMAT


def _removal(ds: Dataset, r: Record, hit: Finding) -> str:
    return (
        json.dumps(
            {
                "dataset": ds.name,
                "id": r.id,
                "source": r.source,
                "check": hit.check,
                "method": hit.method,
                "score": round(float(hit.score), 6),
                "eval_dataset": hit.eval_dataset,
                "eval_id": hit.eval_id,
                "eval_source": hit.eval_source,
                "evidence": hit.evidence,
            },
            ensure_ascii=False,
            default=str,
        )
        + "\n"
    )


def write_clean(
    out_dir: str | Path,
    datasets: list[Dataset],
    hits: dict[tuple[str, int], Finding],
    inputs: Iterable[Dataset] | None = None,
    protected: Iterable[str | None] = (),
) -> dict[str, Any]:
    """Write each training dataset without the records in ``hits``; return a summary for the report.

    ``inputs`` are every dataset of the run (default: ``datasets``), ``protected`` the manifest; see
    :func:`plan_clean`. The folder's ledger names every file written (``files_written`` in the
    summary), also when a write fails midway.
    """
    out = Path(out_dir)
    plan = plan_clean(out, datasets, datasets if inputs is None else inputs, protected)
    before = Ledger.load(out, "clean")
    ledger = Ledger(out, "clean", before.files)
    for tmp in out.rglob(".*.tmp") if out.is_dir() else ():  # a killed run's temp files of its own files
        rel = tmp.relative_to(out).as_posix()
        m = _TEMP.fullmatch(tmp.name)
        if (
            m
            and not rel.startswith(REPORT_SUBDIR + "/")
            and (tmp.parent / m["name"]).relative_to(out).as_posix() in before.files
        ):
            tmp.unlink(missing_ok=True)
    written: list[str] = []

    def wrote(path: Path) -> None:
        rel = Path(os.path.relpath(path, out)).as_posix()
        ledger.add(rel)
        written.append(rel)

    summary: dict[str, Any] = {"dir": str(out), "removed_file": str(out / "removed.jsonl"), "datasets": {}}
    out.mkdir(parents=True, exist_ok=True)
    removed_out: AtomicFile | None = None
    try:
        removed_out = AtomicFile(out / "removed.jsonl")
        for ds in datasets:
            summary["datasets"][ds.name] = _write_dataset(ds, plan[ds.name], hits, removed_out.stream, wrote)
        wrote(removed_out.commit())
        removed_out = None
    except BaseException:
        if removed_out is not None:
            removed_out.abort()
        _adopt(ledger, before)
        raise
    ledger.save()
    summary["files_written"] = sorted(written)
    return summary


def _adopt(ledger: Ledger, before: Ledger) -> None:
    """After a failed write: add to the ledger every file of the folder that is new or changed since
    ``before`` (whole files this run committed, e.g. a companion file), so a re-run may replace them;
    never raises (the write's own error is the one to report)."""
    try:
        for rel in ledger.foreign(ignore=_ours_aside(ledger.folder, ledger)):
            path = ledger.folder / rel
            if path.is_file() and not path.is_symlink() and not before.owns(rel):
                ledger.add(rel)
        ledger.save()
    except OSError:
        pass


def _write_dataset(ds: Dataset, pairs: list[tuple[Path, Path]], hits, removed_stream, wrote) -> dict[str, Any]:
    """Stream one dataset's kept records to their files (one open file at a time)."""
    files: list[dict[str, Any]] = []
    pending = list(pairs)  # files not yet opened, in dataset order
    current: tuple[str, RecordWriter, str] | None = None  # file, its writer, the format written
    removed = 0
    touched: set[str] = set()  # files with a selected record (kept or removed)

    def unread() -> set[str]:
        return {f["file"] for f in ds.stats.skipped_files}

    def finish() -> None:
        nonlocal current
        if current is not None:
            src, writer, fmt = current
            current = None
            if src in unread():  # a file the dataset could not read whole (on_error = "skip")
                writer.abort()
                return
            written = writer.close()
            for path in written:
                wrote(path)
            files.append({"source": src, "written": str(written[0]), "format": fmt, "records": writer.count})

    def open_until(src: str | None) -> None:
        nonlocal current
        while pending:
            source, target = pending.pop(0)
            if str(source) != src and (str(source) in unread() or (ds.split and str(source) not in touched)):
                continue  # unreadable, or no record of it selected: not part of the cleaned dataset
            writer, fmt = _open_writer(ds, source, target)
            current = (str(source), writer, fmt)
            if str(source) == src:
                return
            finish()

    try:
        for r in ds.records():
            hit = hits.get((ds.name, r.ordinal))
            touched.add(_file_of(r))
            if hit is not None:
                removed += 1
                removed_stream.write(_removal(ds, r, hit).encode("utf-8"))
                continue
            f = _file_of(r)
            if current is None or current[0] != f:
                finish()
                open_until(f)
            if current is None or current[0] != f:  # a record of no listed file: never expected
                raise ConfigError(f"write_clean: record {r.source} belongs to no file of dataset '{ds.name}'")
            current[1].write(r)
        finish()
        open_until(None)
        finish()
    except BaseException:
        if current is not None:
            current[1].abort()
        raise
    return {
        "kept": sum(e["records"] for e in files),
        "removed": removed,
        "not_written_skipped": ds.stats.skipped,
        "not_written_files": sorted(unread()),
        "files": files,
    }
