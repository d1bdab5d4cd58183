"""How much of an eval set one text holds: the figures behind the rule of ``auditor/datasets/sameness.py``.

For every bundled eval set (whole and split by split) and every data file in ``../shared/data`` read as an
eval set with its detected format, the share of items holding the commonest normalized ``query``; files
that do not read as an eval set as they are (no text field ...) are counted and left out. Prints one
tab-separated line per set, largest share first, then the largest share among sets of at least
``MIN_ITEMS`` items in each group.

Usage::

    python -m benchmarks.eval_sameness [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import os

from auditor.datasets import registry
from auditor.datasets.dataset import Dataset
from auditor.datasets.sameness import MIN_ITEMS, most_shared
from auditor.datasets.spec import DatasetSpec
from auditor.errors import AuditorError
from benchmarks.common import SHARED

SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz", ".csv", ".parquet")


def _records(name: str, paths: list[str]) -> list:
    return list(Dataset(DatasetSpec(name=name, paths=paths, role="eval", allow_empty=True)).records())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(SHARED))
    args = ap.parse_args()
    rows: list[tuple[float, int, int, str, str]] = []
    for name in registry.names():
        recs = _records(name, [name])
        groups: dict = {None: recs}
        for r in recs:
            groups.setdefault(r.split or "", []).append(r)
        for split, group in groups.items():
            text, count, total, _ = most_shared(group)
            rows.append((count / max(total, 1), count, total, f"bundled {name}" + (f":{split}" if split else ""), text))
    unreadable = 0
    for folder, _, files in os.walk(args.shared):
        for f in sorted(files):
            if not f.endswith(SUFFIXES):
                continue
            path = os.path.join(folder, f)
            try:
                recs = _records("f", [path])
            except AuditorError:
                unreadable += 1
                continue
            text, count, total, _ = most_shared(recs)
            rows.append((count / max(total, 1), count, total, "file " + os.path.relpath(path, args.shared), text))
    rows.sort(key=lambda r: -r[0])
    for share, count, total, where, text in rows:
        print(f"{share:6.1%}\t{count}/{total}\t{where}\t{text[:70]!r}")
    for group in ("bundled", "file"):
        big = [r for r in rows if r[3].startswith(group) and r[2] >= MIN_ITEMS]
        if big:
            top = max(big, key=lambda r: r[0])
            print(f"# {group}: largest share among {len(big)} sets of >= {MIN_ITEMS} items: {top[0]:.1%} ({top[3]})")
    print(f"# files not readable as an eval set as they are: {unreadable}")


if __name__ == "__main__":
    main()
