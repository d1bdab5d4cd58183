"""A dataset's accounting in the report: where its records came from and what was read, kept, skipped.

``report.json``'s ``datasets`` maps each dataset's name to the ``to_dict()`` of its
:class:`DatasetSummary` (built by :meth:`auditor.datasets.dataset.Dataset.describe` after the run has
read it, from its :class:`~auditor.datasets.account.DatasetStats`; the running totals of a read are
kept by :class:`~auditor.datasets.account.DatasetAccount`).

>>> a = DatasetSummary(role="eval", files=["goals.json"], read=3, records=2, skipped=1,
...                    skip_reasons={"no text": 1})
>>> a.records, a.to_dict()["skip_reasons"], DatasetSummary.from_dict(a.to_dict()) == a
(2, {'no text': 1}, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..io.jsonable import JsonObject


@dataclass(kw_only=True)
class DatasetSummary(JsonObject):
    """What a dataset is (role, files, format, split, fingerprints, bundled set and licence) and what
    reading it gave (records read, kept, skipped with reasons, left out by the split, duplicate ids)."""

    role: str = ""
    files: list[str] = field(default_factory=list)
    format: str = "auto"
    split: str | None = None
    split_label: str | None = None
    sha256: str | None = None  # of the selected records (ids and views), in order
    files_sha256: str | None = None  # of the files' bytes
    bundled: str | None = None  # the registry name of a bundled set
    licence: str | None = None
    read: int = 0
    records: int = 0
    skipped: int = 0
    filtered_by_split: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    skip_examples: list[str] = field(default_factory=list)
    skipped_files: list[dict[str, str]] = field(default_factory=list)  # {"file", "reason"}: not read at all
    duplicate_ids: int = 0
    duplicate_id_examples: list[str] = field(default_factory=list)
    ids_in_several_files: int = 0
