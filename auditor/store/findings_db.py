"""A findings store on disk (DuckDB): every finding is appended as the scan runs; the report's best
findings per eval item and method are a query over it.

Same interface as :class:`auditor.store.findings.FindingStore` (``add``, ``findings``,
``contaminated``, ``match_counts``, ``total``) and the same result: per eval item
and method, the ``keep`` best findings by score, ties broken by training dataset then position.
Memory holds one buffer of ``flush_every`` findings, so a corpus with millions of findings still
yields a report. ``path``: keep the database there (table ``findings``, one row per finding with
its JSON); without it a temporary file is used and removed by :meth:`close`, and DuckDB is imported
and the file made only when the buffer first fills: a run with fewer findings than that (most runs)
is answered from the buffer by the same ranking in Python (:func:`_ranked`), and loads no DuckDB
(~0.15 s of CPU: issue 36's start-up).

>>> from auditor.methods.base import Finding
>>> store = DuckDBFindingStore(keep=1)
>>> for score, tr in ((0.6, 3), (0.9, 7)):
...     store.add(Finding("ev", "q1", "ev#0", "tr", f"t{tr}", f"tr:{tr}", "ngram", score, check="c",
...                       eval_ordinal=0, train_ordinal=tr))
>>> [(f.train_id, f.score) for f in store.findings()], store.total, store.match_counts
([('t7', 0.9)], 2, {('c', 'ev', 0, 'ngram'): 2})
>>> store.close()

Errors: :class:`~auditor.errors.ConfigError` when ``path`` cannot be opened as a DuckDB database.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engines.lifecycle import held_interrupts
from ..errors import ConfigError
from ..io.atomic import remove_dead_owner_dirs
from ..methods.base import Finding
from .findings import FindingStore, StoreConfig

_COLUMNS = (
    "check_name",
    "eval_dataset",
    "eval_ordinal",
    "method",
    "score",
    "conclusive",
    "train_dataset",
    "train_ordinal",
    "seq",
    "finding",
)


_TYPES = ("VARCHAR", "VARCHAR", "BIGINT", "VARCHAR", "DOUBLE", "BOOLEAN", "VARCHAR", "BIGINT", "BIGINT", "VARCHAR")
_JSON_COLUMNS = "{" + ", ".join(f"'{c}': '{t}'" for c, t in zip(_COLUMNS, _TYPES)) + "}"
#: up to this many buffered findings go in as bound parameters, more through a JSON Lines file
_SMALL_FLUSH = 1000

#: a finding's fields, in order: a row holds them as JSON (what ``dataclasses.asdict`` gives, without
#: its deep copy of the evidence: 35 µs a real finding, 8 without)
_FIELDS = tuple(f.name for f in dataclasses.fields(Finding))


def _plain(value: Any) -> Any:
    """A value ``json`` cannot write as it is: a dataclass as ``dataclasses.asdict`` gives it (what a
    row held before); anything else is a ``TypeError``, as ``json.dumps`` says."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


@dataclass
class DuckDBOptions(StoreConfig):
    """The DuckDB store's own option: keep the file of every finding at ``path`` (manifest ``findings_db``)."""

    path: str | None = field(default=None, metadata={"manifest": "findings_db", "folder": True})


class DuckDBFindingStore(FindingStore):
    """A :class:`~auditor.store.findings.FindingStore` in a DuckDB file (temporary unless ``path``
    is given); :meth:`close` flushes, closes and removes a temporary file."""

    name = "duckdb"
    summary = "every finding in a DuckDB file, the best ones by query (default; scales to any number)"
    Config = DuckDBOptions

    def __init__(self, keep: int = 5, path: str | None = None, flush_every: int = 20_000):
        self.keep = keep
        self.flush_every = flush_every
        self._tmpdir = None
        if path is None:
            remove_dead_owner_dirs(tempfile.gettempdir(), "auditor-findings-")  # killed runs' databases
            self._tmpdir = tempfile.mkdtemp(prefix=f"auditor-findings-{os.getpid()}-")
            path = os.path.join(self._tmpdir, "findings.duckdb")
        else:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self._con: Any = None  # duckdb.DuckDBPyConnection once opened (_db)
        self._buffer: list[tuple] = []
        self._kept: list[Finding] | None = None
        self.total = 0
        if self._tmpdir is None:
            self._db()  # a file the user named: made now (a bad path is an error before any work)

    def _db(self) -> Any:
        """The open connection, the ``findings`` table made on first use."""
        if self._con is None:
            with held_interrupts():  # a Ctrl-C while DuckDB's extension initializes would abort the process
                import duckdb

            try:
                con = duckdb.connect(self.path)
            except duckdb.Error as e:
                raise ConfigError(f"findings database {self.path}: {e}") from None
            con.execute("DROP TABLE IF EXISTS findings")
            con.execute(
                "CREATE TABLE findings (check_name VARCHAR, eval_dataset VARCHAR, eval_ordinal BIGINT, "
                "method VARCHAR, score DOUBLE, conclusive BOOLEAN, train_dataset VARCHAR, "
                "train_ordinal BIGINT, seq BIGINT, finding VARCHAR)"
            )
            self._con = con
        return self._con

    def add(self, f: Finding) -> None:
        self._buffer.append(
            (
                f.check,
                f.eval_dataset,
                f.eval_ordinal,
                f.method,
                float(f.score),
                bool(f.conclusive),
                f.train_dataset,
                f.train_ordinal,
                self.total,
                json.dumps({k: getattr(f, k) for k in _FIELDS}, ensure_ascii=False, default=_plain),
            )
        )
        self.total += 1
        self._kept = None
        if len(self._buffer) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """The buffer written to DuckDB (opened now, the first time)."""
        if not self._buffer:
            return
        if len(self._buffer) <= _SMALL_FLUSH:
            # a few findings: bound parameters (pyarrow's conversion from Python objects imports
            # pandas, ~0.25 s of the calling process, more than these rows cost)
            for k in range(0, len(self._buffer), 500):
                chunk = self._buffer[k : k + 500]
                values = ",".join([f"({','.join('?' * len(_COLUMNS))})"] * len(chunk))
                self._db().execute(f"INSERT INTO findings VALUES {values}", [v for row in chunk for v in row])
            self._buffer = []
            return
        # more: one JSON Lines file read by DuckDB's own reader (pyarrow's conversion of Python
        # objects would import pandas: +40 MB and ~0.25 s of the calling process)
        fd, staged = tempfile.mkstemp(
            prefix=".findings-", suffix=".jsonl", dir=os.path.dirname(os.path.abspath(self.path))
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for row in self._buffer:
                    f.write(json.dumps(dict(zip(_COLUMNS, row)), allow_nan=False) + "\n")
            self._db().execute(
                f"INSERT INTO findings SELECT {', '.join(_COLUMNS)} FROM read_json(?, "
                f"format = 'newline_delimited', columns = {_JSON_COLUMNS})",
                [staged],
            )
        finally:
            os.remove(staged)
        self._buffer = []

    @property
    def match_counts(self) -> dict[tuple, int]:
        if self._in_memory():
            return dict(sorted(Counter(row[:4] for row in self._buffer).items()))
        rows = self._query("SELECT check_name, eval_dataset, eval_ordinal, method, count(*) FROM findings GROUP BY ALL")
        return {tuple(r[:4]): r[4] for r in sorted(rows)}

    @property
    def train_hits(self) -> dict[tuple[str, int], Finding]:
        """(train dataset, train ordinal) → its best conclusive finding (for --write-clean)."""
        if self._in_memory():
            best = _ranked([r for r in self._buffer if r[5]], lambda r: (r[6], r[7]), lambda r: (-r[4], r[8]), 1)
            rows = [(r[9],) for r in best]
        else:
            rows = self._query(
                "SELECT finding FROM (SELECT finding, row_number() OVER (PARTITION BY train_dataset, train_ordinal "
                "ORDER BY score DESC, seq) AS rn FROM findings WHERE conclusive) WHERE rn = 1"
            )
        hits = (Finding(**json.loads(r[0])) for r in rows)
        return {(f.train_dataset, f.train_ordinal): f for f in hits}

    def findings(self) -> list[Finding]:
        """The kept findings (``keep`` best per eval item and method) in a deterministic order."""
        if self._kept is None and self._in_memory():
            rows = [(r[9],) for r in _ranked(self._buffer, lambda r: r[:4], _finding_rank, self.keep)]
            self._kept = sorted((Finding(**json.loads(r[0])) for r in rows), key=Finding.sort_key)
        if self._kept is None:
            rows = self._query(
                "SELECT finding FROM (SELECT finding, row_number() OVER (PARTITION BY check_name, "
                "eval_dataset, eval_ordinal, method ORDER BY conclusive DESC, score DESC, train_dataset, train_ordinal, seq) "
                "AS rn FROM findings) WHERE rn <= ?",
                [self.keep],
            )
            self._kept = sorted((Finding(**json.loads(r[0])) for r in rows), key=Finding.sort_key)
        return list(self._kept)

    def contaminated(self, check: str, conclusive_only: bool = True) -> set[tuple[str, int]]:
        return {
            (f.eval_dataset, f.eval_ordinal)
            for f in self.findings()
            if f.check == check and (f.conclusive or not conclusive_only)
        }

    def _query(self, sql: str, params: list | None = None) -> list[tuple]:
        """The rows of ``sql`` over every finding added (DuckDB open: every finding is in it)."""
        self.flush()
        return self._con.execute(sql, params or []).fetchall()

    def _in_memory(self) -> bool:
        """Every finding is still in the buffer, no DuckDB open (a temporary store that never filled it)."""
        return self._con is None

    def close(self) -> None:
        if self._con is not None:
            self.flush()
            self._con.close()
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)


def _finding_rank(row: tuple) -> tuple:
    """A finding's row ranked as :meth:`DuckDBFindingStore.findings`' query orders it."""
    return (not row[5], -row[4], row[6], row[7], row[8])


def _ranked(rows: list[tuple], group: Callable[[tuple], Any], rank: Callable[[tuple], Any], keep: int) -> list[tuple]:
    """The ``keep`` first rows of each group by ``rank``: what the store's window queries select
    (``row_number() OVER (PARTITION BY … ORDER BY …) <= keep``), for rows still in memory.

    >>> _ranked([("a", 1), ("b", 5), ("a", 3)], lambda r: r[0], lambda r: -r[1], 1)
    [('a', 3), ('b', 5)]
    """
    groups: dict[Any, list[tuple]] = {}
    for row in rows:
        groups.setdefault(group(row), []).append(row)
    return [row for members in groups.values() for row in sorted(members, key=rank)[:keep]]
