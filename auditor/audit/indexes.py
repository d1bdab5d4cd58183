"""A check's eval indexes: created and built, or restored from ``index_dir`` when eval data and
parameters match what was persisted (:mod:`auditor.store.indexes`).

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> ev = list(Dataset(DatasetSpec("e", ["webshop:0:20"], role="eval")).records())
>>> build_index("exact", None, ev, None).name
'exact'
"""

from __future__ import annotations

from typing import Any

from .. import methods
from ..store.indexes import fingerprint_records, index_path, load_index, restore_verified, save_index


def build_index(method: str, params: dict[str, Any] | None, eval_records: list, index_dir: str | None):
    """Create and build a method's index, reusing a persisted one when eval data and params match."""
    index = methods.create(method, params)
    index.index_dir = index_dir
    if index_dir is None or type(index).state is methods.Index.state:
        return index.build(eval_records)

    fp = fingerprint_records(eval_records, index.config.eval_view)
    try:
        arrays, meta = load_index(index_dir, method, index.params(), fp)
        where = str(index_path(index_dir, method, index.params(), fp))
        return restore_verified(index, eval_records, arrays, meta, where)
    except FileNotFoundError:
        pass
    index.build(eval_records)
    state = index.state()
    if state is None:  # nothing worth keeping for this eval set
        return index
    arrays, meta = state
    save_index(index_dir, method, index.params(), fp, arrays, meta)
    return index
