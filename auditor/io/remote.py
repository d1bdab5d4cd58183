"""Dataset paths given as URLs (``s3://``, ``gs://``, ``hf://``, ``file://``, ``memory://`` …), read through fsspec.

A training or eval file may be a URL instead of a local path; every worker opens it itself through
the filesystem fsspec names for its scheme (``s3fs``, ``gcsfs`` … installed beside ``fsspec``;
credentials come from that library's usual sources — environment, config files, instance roles).
URLs are kept as plain strings (``pathlib.Path`` would fold ``s3://b/k`` into ``s3:/b/k``).

Change detection: a URL's :class:`~auditor.io.files.FileState` holds its size, its modification time
and a version tag (ETag, generation, inode) when the filesystem reports them, so a file replaced
or rewritten while it is read is an error as for a local file — as far as the store tells: an
object store that reports only a size lets a same-size rewrite through, and the ``memory://``
filesystem lives in one process (workers of another process do not see it).

>>> import fsspec
>>> fsspec.filesystem("memory").pipe("/doc/a.jsonl", b'{"text": "a"}\\n')
>>> is_url("memory://doc/a.jsonl"), is_url("/tmp/a.jsonl"), is_url("C:/data/a.jsonl")
(True, False, False)
>>> url_state("memory://doc/a.jsonl").size
14
>>> open_url("memory://doc/a.jsonl").read()
b'{"text": "a"}\\n'

Errors: :class:`~auditor.errors.MissingDependencyError` without ``fsspec`` (``pip install
'auditor[remote]'``); :class:`~auditor.errors.InputError` for a URL that cannot be opened or listed,
or whose scheme's filesystem package (``s3fs``, ``gcsfs`` …) is not installed (one line naming it).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import IO, Any

from ..errors import InputError, MissingDependencyError
from .filestate import FileState

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
#: info() keys that name one version of an object (S3 ETag, GCS generation, a local inode …)
_VERSION_KEYS = ("ETag", "etag", "generation", "version_id", "VersionId", "md5Hash", "ino")
_MTIME_KEYS = ("mtime", "LastModified", "last_modified", "updated", "modified", "created")


def is_url(path: Any) -> bool:
    """True for ``scheme://…`` (a Windows drive ``C:/`` is not a URL)."""
    return isinstance(path, str) and bool(_URL.match(path))


def filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem for ``url`` and the path inside it."""
    try:
        import fsspec
    except ImportError:
        raise MissingDependencyError("fsspec", "remote", f"reading the URL {url}") from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as e:  # the scheme's implementation (s3fs, gcsfs …) is not installed
        raise InputError(url, None, f"no filesystem for this scheme here: {e}") from None
    except (ValueError, OSError) as e:
        raise InputError(url, None, f"cannot open: {e}") from None


def info(url: str) -> dict[str, Any]:
    """The filesystem's description of ``url``; InputError when it is missing, a folder or unreadable."""
    fs, path = filesystem(url)
    try:
        found = fs.info(path)
    except FileNotFoundError:
        raise InputError(url, None, "no such file") from None
    except (OSError, ValueError) as e:
        raise InputError(url, None, f"cannot open: {e}") from None
    if found.get("type") == "directory":
        raise InputError(url, None, "is a folder, not a file")
    return found


def url_state(url: str):
    """The :class:`~auditor.io.filestate.FileState` of ``url``: size, modification time (ns, 0 when not
    reported) and a version tag (0 when not reported) in place of the inode."""
    found = info(url)
    mtime = next((found[k] for k in _MTIME_KEYS if found.get(k) is not None), None)
    if isinstance(mtime, datetime):
        mtime_ns = int(mtime.timestamp() * 1e9)
    elif isinstance(mtime, (int, float)):
        mtime_ns = int(mtime * 1e9)
    else:
        mtime_ns = 0
    version = next((found[k] for k in _VERSION_KEYS if found.get(k) is not None), 0)
    tag = version if isinstance(version, int) else hash(str(version)) & (2**63 - 1)
    return FileState(url, int(found.get("size") or 0), mtime_ns, tag, 0)


def open_url(url: str) -> IO[bytes]:
    """``url`` opened for binary reading (a seekable file object of its filesystem)."""
    info(url)
    fs, path = filesystem(url)
    try:
        return fs.open(path, "rb")
    except (OSError, ValueError) as e:
        raise InputError(url, None, f"cannot open: {e}") from None


def glob_urls(pattern: str) -> list[str]:
    """The files a URL glob matches, as URLs, sorted (folders left out)."""
    fs, _ = filesystem(pattern)
    try:
        found = fs.glob(pattern, detail=True)
    except (OSError, ValueError) as e:
        raise InputError(pattern, None, f"cannot list: {e}") from None
    return sorted(_unstrip(fs, pattern, p) for p, d in found.items() if d.get("type") != "directory")


def _unstrip(fs: Any, pattern: str, path: str) -> str:
    """``path`` (as the filesystem lists it) as a URL spelled like ``pattern`` (its scheme, and a
    leading ``/`` only where the pattern has one: ``memory://b/x`` and ``memory:///b/x`` are one file)."""
    scheme, rest = pattern.split("://", 1)
    listed = fs._strip_protocol(path)
    if not rest.startswith("/"):
        listed = listed.lstrip("/")
    return f"{scheme}://{listed}"
