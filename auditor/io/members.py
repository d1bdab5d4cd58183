"""Members of an archive as paths: ``ARCHIVE!MEMBER`` names one file inside a zip or tar archive.

While an archive is read (:func:`auditor.io.archive.members`), each member it hands out is
*registered* here under its path, so the readers every format already uses — :func:`auditor.io.compressed.open_binary`,
:func:`auditor.io.files.file_size`, the Parquet / Arrow sources — open the member as they open a file,
and record sources name it (``data.zip!train.jsonl:3``, ``data.tar.gz!qa.json#2``). A member path
means nothing once its archive has moved on to the next member: it is never a path on disk.

>>> m = Member("a.zip", "d/x.jsonl", 3, lambda: __import__("io").BytesIO(b"{}\\n"))
>>> with registered(m):
...     lookup("a.zip!d/x.jsonl").size, lookup("a.zip!d/x.jsonl").open().read()
(3, b'{}\\n')
>>> lookup("a.zip!d/x.jsonl") is None
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: between an archive's path and a member's name inside it
SEP = "!"


@dataclass(frozen=True)
class Member:
    """One regular file inside ``archive``: its ``name`` there, its (stored, uncompressed-by-the-archive)
    ``size``, and how to open its bytes (a binary reader; seekable where the archive allows).
    ``problem``: why it cannot be read at all (an encrypted zip member ...), else None."""

    archive: str
    name: str
    size: int
    open: Callable[[], IO[bytes]]
    problem: str | None = None

    @property
    def path(self) -> str:
        return member_path(self.archive, self.name)


def member_path(archive: str, name: str) -> str:
    """``data.zip`` + ``train.jsonl`` → ``data.zip!train.jsonl`` (as :class:`~pathlib.Path` spells it,
    so a reader that makes a Path of it finds it: ``./a//b`` → ``a/b``)."""
    return str(Path(f"{archive}{SEP}{name}"))


_LIVE: dict[str, tuple[Member, int]] = {}
_LOCK = threading.Lock()


@contextmanager
def registered(member: Member) -> Iterator[Member]:
    """Make ``member.path`` openable while the block runs (nested registrations of one path count)."""
    key = member.path
    with _LOCK:
        _, n = _LIVE.get(key, (member, 0))
        _LIVE[key] = (member, n + 1)
    try:
        yield member
    finally:
        with _LOCK:
            _, n = _LIVE.get(key, (member, 1))
            if n <= 1:
                _LIVE.pop(key, None)
            else:
                _LIVE[key] = (member, n - 1)


def lookup(path: object) -> Member | None:
    """The registered member that ``path`` names, else None (cheap: no file system access)."""
    if not _LIVE:
        return None
    found = _LIVE.get(str(path))
    return found[0] if found else None


def archive_of(path: str) -> str:
    """The archive a registered member path belongs to; ``path`` itself for anything else."""
    m = lookup(path)
    return m.archive if m else path
