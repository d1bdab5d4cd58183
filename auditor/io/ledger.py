"""What the tool wrote into an output folder, so that a re-run replaces its own files and nobody else's.

Every output folder auditor writes (a report folder, a ``--write-clean`` folder) holds a ledger,
:data:`LEDGER` (``.auditor-written.json``): its kind (``report`` / ``clean``) and, per file it
wrote, the path inside the folder and the SHA-256 of what it wrote. Before a run writes into a
folder that exists, :meth:`Ledger.foreign` lists every file there that the ledger does not name with
its present content — a user's file, a file the user edited since, anything of another kind of
folder — and the run is refused before it starts (one line naming the folder and the files). A
folder without a ledger is not auditor's: every file in it is foreign.

>>> import tempfile, os
>>> from pathlib import Path
>>> d = Path(tempfile.mkdtemp())
>>> _ = (d / "report.md").write_text("# mine")
>>> Ledger.load(d, "report").foreign()
['report.md']
>>> ledger = Ledger.load(d, "report"); ledger.add("report.md"); ledger.save().name
'.auditor-written.json'
>>> Ledger.load(d, "report").foreign(), Ledger.load(d, "clean").foreign()
([], ['report.md'])
>>> _ = (d / "report.md").write_text("# edited by hand")
>>> Ledger.load(d, "report").foreign()
['report.md']

Raises OSError when the folder cannot be read (callers name it: :class:`~auditor.errors.OutputError`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from .atomic import atomic_write_bytes
from .files import sha256_file

#: the ledger's file name in every output folder
LEDGER = ".auditor-written.json"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Ledger:
    """The ledger of output folder ``folder`` of kind ``kind``: ``files`` maps a path inside the
    folder (``/``-separated) to the SHA-256 of the content auditor wrote there."""

    def __init__(self, folder: str | Path, kind: str, files: dict[str, str] | None = None):
        self.folder = Path(folder)
        self.kind = kind
        self.files: dict[str, str] = dict(files or {})

    @classmethod
    def load(cls, folder: str | Path, kind: str) -> Ledger:
        """The folder's ledger; an empty one when there is none, it is unreadable, or of another kind."""
        try:
            doc = json.loads((Path(folder) / LEDGER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(folder, kind)
        files = doc.get("files") if isinstance(doc, dict) and doc.get("kind") == kind else None
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return cls(folder, kind)
        return cls(folder, kind, files)

    def owns(self, rel: str) -> bool:
        """Is ``rel`` a file auditor wrote here, unchanged since (its SHA-256 is the ledger's)?"""
        path = self.folder / rel
        expected = self.files.get(rel)
        if expected is None or path.is_symlink() or not path.is_file():
            return False
        return sha256_file(path) == expected

    def foreign(self, ignore: Callable[[str], bool] | None = None) -> list[str]:
        """Paths (inside the folder, sorted) of the files and links that are not auditor's unchanged
        output; folders are walked, the ledger itself and paths ``ignore`` accepts are left out."""
        out: list[str] = []
        if not self.folder.is_dir():
            return out
        for root, dirs, names in os.walk(self.folder):
            base = Path(root).relative_to(self.folder)
            for d in list(dirs):
                rel = (base / d).as_posix()
                if ignore is not None and ignore(rel):
                    dirs.remove(d)
                elif (Path(root) / d).is_symlink():
                    out.append(rel)  # os.walk does not follow it: a link is never auditor's
            for name in names:
                rel = (base / name).as_posix()
                if rel == LEDGER or (ignore is not None and ignore(rel)):
                    continue
                if not self.owns(rel):
                    out.append(rel)
        return sorted(out)

    def add(self, rel: str, digest: str | None = None) -> None:
        """Record ``rel`` as written by auditor (its SHA-256: ``digest``, else read from the file)."""
        self.files[rel] = digest if digest is not None else sha256_file(self.folder / rel)

    def save(self) -> Path:
        """Write the ledger into the folder (atomically); returns its path."""
        doc = {"written_by": "auditor", "kind": self.kind, "files": dict(sorted(self.files.items()))}
        target = self.folder / LEDGER
        atomic_write_bytes(target, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
        return target


def shown(paths: list[str], limit: int = 5) -> str:
    """The first ``limit`` paths, comma-separated, with ``…`` when there are more."""
    return ", ".join(paths[:limit]) + (f" … ({len(paths)} in all)" if len(paths) > limit else "")
