"""Maintainer script: build ``auditor/data/releases.json``, the pinned public releases ``auditor data
fetch`` downloads (:mod:`auditor.fetch.releases`).

Run from the repository root, with the releases in ``../shared/data`` (or a folder given)::

    python scripts/build_releases.py [SHARED_DATA]

It reads that folder's ``PROVENANCE.md``: the "Sources" tables (short name = dataset name, repository,
full commit, licence) and the "Per-file listing" tables (local path, repository, commit prefix, path
upstream; a row whose paths end in ``*.jsonl`` stands for every file of that folder, listed here). Each
file's SHA-256 and size are those of the local copy, so a download is checked against the bytes the
tests and notebooks were written on. Every file of the folder but ``PROVENANCE.md`` must be listed
exactly once, every listed file must exist, and every commit prefix must name one full commit of a
Sources table: otherwise the script stops, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

from auditor.fetch.releases import RELEASES, RELEASES_FORMAT
from auditor.io.atomic import atomic_write_text

_COMMIT = re.compile(r"\b[0-9a-f]{40}\b")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def _code(cell: str) -> str:
    m = re.match(r"`([^`]+)`", cell)
    return m.group(1) if m else cell


def parse(provenance: str) -> tuple[dict[str, dict], list[tuple[str, str, str, str]]]:
    """The Sources rows (name → repo, commits, licence) and the per-file rows (local, repo, commit, upstream)."""
    sources: dict[str, dict] = {}
    files: list[tuple[str, str, str, str]] = []
    table = None
    for line in provenance.splitlines():
        if line.startswith("| short name |"):
            table = "sources"
        elif line.startswith("| local path"):
            table = "files"
        elif not line.startswith("|"):
            table = None
        elif table and not line.startswith("|---"):
            cells = _cells(line)
            if table == "sources":
                name, repo, commits, licence = cells[0], cells[1].split(" ")[0], cells[2], cells[4]
                sources[name] = {"repo": repo, "commits": _COMMIT.findall(commits), "licence": licence}
            elif cells[0].startswith("`"):  # "(not copied)" rows name no local file
                files.append((_code(cells[0]), cells[1], _code(cells[2]), _code(cells[3])))
    for source in sources.values():  # "(same caveat as tool-mvr)": that row's caveat, spelt out
        source["licence"] = re.sub(
            r"\(same caveat as ([\w-]+)\)",
            lambda m: sources[m.group(1)]["licence"][sources[m.group(1)]["licence"].rindex("(") :],
            source["licence"],
        )
    return sources, files


def build(shared: Path) -> dict:
    sources, rows = parse((shared / "PROVENANCE.md").read_text(encoding="utf-8"))
    datasets: dict[str, dict] = {}
    for local, repo, prefix, upstream in rows:
        name = local.split("/", 1)[0]
        source = sources[name]
        commits = [c for c in source["commits"] if c.startswith(prefix)]
        if source["repo"] != repo or len(commits) != 1:
            sys.exit(f"{local}: commit {prefix} of {repo} names no single commit of the Sources table")
        if local.endswith("/*.jsonl"):  # one row for a folder of files with the same names upstream
            found = sorted((shared / local).parent.glob("*.jsonl"))
            pairs = [(str(p.relative_to(shared)), upstream.rsplit("/", 1)[0] + "/" + p.name) for p in found]
        else:
            pairs = [(local, upstream)]
        entry = datasets.setdefault(name, {"repo": repo, "licence": source["licence"], "files": []})
        for path, up in pairs:
            data = (shared / path).read_bytes()  # a listed file that is absent stops the script here
            sha = hashlib.sha256(data).hexdigest()
            entry["files"].append(
                {"path": path, "commit": commits[0], "upstream": up, "sha256": sha, "bytes": len(data)}
            )
    listed = [f["path"] for d in datasets.values() for f in d["files"]]
    on_disk = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
    extra = sorted(set(on_disk) - set(listed) - {"PROVENANCE.md"})
    twice = sorted({p for p in listed if listed.count(p) > 1})
    if extra or twice:
        sys.exit(f"not listed in PROVENANCE.md: {extra[:5]}; listed twice: {twice[:5]}")
    for entry in datasets.values():
        entry["files"].sort(key=lambda f: f["path"])
    return {"format": RELEASES_FORMAT, "datasets": dict(sorted(datasets.items()))}


def main(shared: str | None = None, out: Path = RELEASES) -> None:
    folder = Path(shared) if shared else Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    registry = build(folder)
    atomic_write_text(out, json.dumps(registry, indent=1, ensure_ascii=False) + "\n")
    os.chmod(out, 0o644)  # package data, readable by all (the temp file it was written as is 0600)
    n = sum(len(d["files"]) for d in registry["datasets"].values())
    print(f"{out}: {len(registry['datasets'])} datasets, {n} files")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
