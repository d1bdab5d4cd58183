"""Input files: regular-file checks, change detection while a file is read, checksums, OS error text."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from ..errors import ChangedFileError, InputError
from . import members, remote
from .filestate import FileState
from .remote import is_url


def check_regular_file(path: str | Path) -> None:
    """Raise :class:`InputError` unless ``path`` is a readable regular file (not a FIFO, folder,
    device, dangling symlink or symlink loop), so no reader blocks or fails with a traceback. A URL
    (:mod:`auditor.io.remote`) must name a file its filesystem can describe."""
    p = str(path)
    if members.lookup(p) is not None:  # a member of the archive being read (auditor.io.members)
        return
    if is_url(p):
        remote.info(p)
        return
    try:
        st = os.stat(p)
    except OSError as e:
        if os.path.islink(p):
            raise InputError(p, None, f"symlink loop or dangling symlink ({e.strerror or e})") from None
        raise InputError(p, None, f"cannot open: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(p, None, "is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise InputError(p, None, f"is {kind}, not a regular file")


def file_state(path: str | Path) -> FileState:
    """The size, modification time and identity of ``path`` now (follows symlinks).

    Raises :class:`InputError` when it cannot be examined. A URL's state is what its filesystem
    reports (:func:`auditor.io.remote.url_state`)."""
    p = str(path)
    if is_url(p):
        return remote.url_state(p)
    try:
        st = os.stat(p)
    except OSError as e:
        raise InputError(p, None, f"cannot open: {e.strerror or e}") from None
    return FileState(p, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def check_unchanged(before: FileState) -> None:
    """Raise :class:`ChangedFileError` unless ``before.path`` still has ``before``'s size, modification
    time and identity (inode, device).

    Call it after reading a unit of a file — the whole file, or one shard of it in a worker — with the
    :func:`file_state` taken before the unit was opened: a file truncated, appended to or replaced
    while it is read would otherwise yield part of its records and end as if complete, a silent
    partial scan. One line names the file and what changed.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> _ = open(p, "w").write('{"text": "a"}\\n{"text": "b"}\\n')
    >>> before = file_state(p)
    >>> check_unchanged(before)  # nothing changed: no error
    >>> os.truncate(p, 14)
    >>> check_unchanged(before)
    Traceback (most recent call last):
    ...
    auditor.errors.ChangedFileError: /...t.jsonl: changed while it was read (size 28 -> 14 bytes): ...
    """
    try:
        now = file_state(before.path)
    except InputError:
        raise ChangedFileError(before.path, "removed or made unreadable while it was read") from None
    what = []
    if (now.inode, now.device) != (before.inode, before.device):
        what.append("replaced by another file")
    if now.size != before.size:
        what.append(f"size {before.size} -> {now.size} bytes")
    elif now.mtime_ns != before.mtime_ns:
        what.append("rewritten (modification time changed)")
    if what:
        raise ChangedFileError(before.path, f"changed while it was read ({', '.join(what)})")


#: compressed names: the suffix is dropped to find the format
COMPRESSED_SUFFIXES = (".gz", ".zst", ".bz2", ".xz")


def base_suffix(path: str | Path) -> str:
    """Suffix without compression: ``a.jsonl.gz`` → ``.jsonl``, ``b.csv.xz`` → ``.csv``; an archive
    member's own (``data.zip!train.jsonl`` → ``.jsonl``)."""
    member = members.lookup(path)
    name = Path(member.name if member else path).name.lower()
    for comp in COMPRESSED_SUFFIXES:
        if name.endswith(comp):
            name = name[: -len(comp)]
            break
    return Path(name).suffix


def sha256_file(path: str | Path) -> str:
    """The SHA-256 (hex) of the file or URL at ``path``, read in 1 MiB blocks: the one file digest of
    the package (bundled sets, the output folders' ledger, the fetched releases); OSError when it
    cannot be read."""
    h = hashlib.sha256()
    with remote.open_url(str(path)) if is_url(path) else open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_size(path: str | Path) -> int:
    """Size in bytes of a local file, a URL or an archive member (as stored in the archive); OSError
    (local) or InputError (URL) when unknown."""
    member = members.lookup(path)
    if member is not None:
        return member.size
    return remote.url_state(str(path)).size if is_url(path) else os.path.getsize(path)


def describe_os_error(e: OSError) -> str:
    """The reason of a file-system error in words a user acts on (EFBIG names ``ulimit -f``)."""
    if e.errno == errno.EFBIG:
        return "file too large (the file size limit, ulimit -f, is reached)"
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    return e.strerror or str(e)
