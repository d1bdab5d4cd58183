"""FileState: a file's size, modification time and identity, taken before a unit of it is read.

Local files (:func:`auditor.io.files.file_state`) and URLs (:func:`auditor.io.remote.url_state`) both
describe themselves with it; :func:`auditor.io.files.check_unchanged` compares two of them.

>>> FileState("a.jsonl", 28, 0, 1, 2).size
28
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileState:
    """A file as it was on disk before a unit of it was read (see :func:`check_unchanged`)."""

    path: str
    size: int
    mtime_ns: int
    inode: int
    device: int
