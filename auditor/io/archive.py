"""Zip and tar archives read member by member, never extracted onto the disk they came from.

:func:`members` hands out an archive's regular files in archive order, each registered under its
path ``ARCHIVE!NAME`` (:mod:`auditor.io.members`) while the caller reads it, so every reader opens a
member as it opens a file. Memory stays bounded: a zip member is decompressed as it is read; a tar
member is read in place (an uncompressed local ``.tar``: a byte range of the file) or, from a
compressed tar stream that cannot be entered in the middle, copied once into memory (up to
:data:`SPOOL_MEMORY`) or into a private temp file that is removed when the member is done.

A corrupt archive, a truncated one, a member with a bad CRC: :class:`~auditor.errors.InputError`
naming the archive (or the member) and the problem. An encrypted zip member is handed out with its
``problem`` set: auditor reads no password-protected data.

>>> import io, os, tempfile, zipfile
>>> p = os.path.join(tempfile.mkdtemp(), "d.zip")
>>> with zipfile.ZipFile(p, "w") as z:
...     z.writestr("train.jsonl", '{"text": "hi"}\\n')
>>> [(m.name, m.open().read()) for m in members(p)]
[('train.jsonl', b'{"text": "hi"}\\n')]
"""

from __future__ import annotations

import io
import lzma
import os
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from .compressed import RawReader, compression_of, open_decompressed
from .files import COMPRESSED_SUFFIXES
from .members import Member, member_path, registered
from .remote import is_url, open_url

#: a tar member of a compressed stream up to this size is held in memory while it is read, a larger one in a temp file
SPOOL_MEMORY = 64 * 1024 * 1024
TAR_SUFFIXES = (".tar", ".tgz", ".tbz", ".tbz2", ".txz", ".tzst")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def archive_kind(path: str | Path, by_content: bool = False) -> str | None:
    """``zip`` or ``tar`` by the name (``.zip``; ``.tar``, ``.tgz``, ``.tar.gz``, ``.tar.xz`` …), else,
    with ``by_content``, by the content (a zip's local header; ``ustar`` at byte 257 of the decompressed
    data); None when it is no archive."""
    name = Path(str(path)).name.lower()
    if name.endswith(".zip"):
        return "zip"
    base = name
    for comp in COMPRESSED_SUFFIXES:
        if base.endswith(comp):
            base = base[: -len(comp)]
            break
    if base.endswith(TAR_SUFFIXES) or name.endswith(TAR_SUFFIXES):
        return "tar"
    if not by_content:
        return None
    try:
        with open_decompressed(path) as f:
            head = f.read(512)
    except (OSError, InputError):
        return None
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    return None


def members(path: str | Path, want: Callable[[str], bool] = lambda name: True) -> Iterator[Member]:
    """The regular files of the zip or tar archive ``path`` that ``want(name)`` accepts, in archive
    order, each registered (openable by its path) until the next one is asked for."""
    p = str(path)
    kind = archive_kind(p, by_content=True)
    if kind == "zip":
        yield from _zip_members(p, want)
    elif kind == "tar":
        yield from _tar_members(p, want)
    else:
        raise InputError(p, None, "not a zip or tar archive")


def _zip_open(p: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(open_url(p) if is_url(p) else p)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as e:
        raise InputError(p, None, f"corrupt zip archive: {e}") from None
    except OSError as e:
        raise InputError(p, None, f"cannot read the zip archive: {e.strerror or e}") from None


#: the zip compression methods Python reads (stored, deflate, bzip2, lzma)
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2"}
_ZIP_METHODS[zipfile.ZIP_LZMA] = "lzma"
#: what reading a damaged member raises (a bad CRC, corrupt deflate / bzip2 / lzma data, a cut archive)
_MEMBER_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


def _zip_members(p: str, want: Callable[[str], bool]) -> Iterator[Member]:
    with _zip_open(p) as zf:  # one archive open for all its members (each member stream its own handle)
        for info in zf.infolist():
            if info.is_dir() or not want(info.filename):
                continue
            problem = None
            if info.flag_bits & 0x1:
                problem = "encrypted (password-protected) zip member: auditor reads no encrypted data; extract it first"
            elif info.compress_type not in _ZIP_METHODS:
                problem = (
                    f"zip member compressed with method {info.compress_type}, which Python cannot read; re-pack it"
                )
            path = member_path(p, info.filename)

            def opener(info: zipfile.ZipInfo = info, path: str = path) -> IO[bytes]:
                try:
                    f = zf.open(info)
                except _MEMBER_ERRORS as e:
                    raise InputError(path, None, f"corrupt zip member: {e}") from None
                return io.BufferedReader(_Guarded(f, path, "zip member"), buffer_size=1 << 16)

            with registered(Member(p, info.filename, info.file_size, opener, problem)) as m:
                yield m


def _tar_error(p: str, e: BaseException) -> InputError:
    if isinstance(e, InputError):
        return e
    return InputError(p, None, f"corrupt tar archive: {e}")


def _tar_members(p: str, want: Callable[[str], bool]) -> Iterator[Member]:
    if not is_url(p) and _plain_file(p):
        yield from _tar_in_place(p, want)
        return
    try:
        stream = _Tail(open_decompressed(p))
    except OSError as e:
        raise InputError(p, None, f"cannot read: {e.strerror or e}") from None
    with io.BufferedReader(stream) as buffered:
        try:
            tf = tarfile.open(fileobj=buffered, mode="r|")
        except (tarfile.TarError, EOFError, OSError) as e:
            raise _tar_error(p, e) from None
        with tf:
            for info in _wanted(p, tf, want, stream.zeros_at):
                try:
                    spooled = _spool(tf, info)
                except (tarfile.TarError, EOFError, OSError) as e:
                    raise _tar_error(p, e) from None
                try:
                    with registered(Member(p, _name(info.name), info.size, spooled.open)) as m:
                        yield m
                finally:
                    spooled.discard()


def _wanted(
    p: str, tf: tarfile.TarFile, want: Callable[[str], bool], zeros_at: Callable[[int], bool]
) -> Iterator[tarfile.TarInfo]:
    """The regular members of ``tf`` that ``want`` names, then a check that the archive ends with its
    end-of-archive marker (``zeros_at(offset)``: are the 512 bytes where the headers stop all zero?)."""
    while True:
        try:
            info = tf.next()
        except (tarfile.TarError, EOFError, OSError) as e:
            raise _tar_error(p, e) from None
        if info is None:
            if not zeros_at(tf.offset):
                raise InputError(
                    p,
                    None,
                    f"truncated or corrupt tar archive (no end-of-archive marker where it stops, at byte {tf.offset})",
                )
            return
        if info.isreg() and want(info.name):
            yield info


def _name(name: str) -> str:
    """A tar member's name as sources show it: ``./train/a.json`` → ``train/a.json``."""
    while name.startswith("./"):
        name = name[2:]
    return name


def _plain_file(p: str) -> bool:
    try:
        with open(p, "rb") as f:
            return compression_of(f.read(10)) is None
    except OSError:
        return False


def _tar_in_place(p: str, want: Callable[[str], bool]) -> Iterator[Member]:
    """An uncompressed local tar: headers read, each member opened as a byte range of the file."""
    try:
        tf = tarfile.open(p, mode="r:")
    except (tarfile.TarError, EOFError, OSError) as e:
        raise _tar_error(p, e) from None
    size = os.path.getsize(p)

    def zeros_at(offset: int) -> bool:
        with open(p, "rb") as f:
            f.seek(offset)
            block = f.read(512)
        return len(block) == 512 and not block.strip(b"\0")

    with tf:
        for info in _wanted(p, tf, want, zeros_at):
            if info.offset_data + info.size > size:
                raise InputError(
                    member_path(p, info.name), None, "truncated tar archive (the member's data ends early)"
                )

            def opener(info: tarfile.TarInfo = info) -> IO[bytes]:
                return io.BufferedReader(_Slice(open(p, "rb"), info.offset_data, info.size), buffer_size=1 << 16)

            with registered(Member(p, _name(info.name), info.size, opener)) as m:
                yield m


class _Tail(RawReader):
    """A stream that counts the bytes it delivers and keeps the last :data:`KEEP` of them, so the
    block where a tar stream stopped can be checked for the end-of-archive marker."""

    KEEP = 64 * 1024

    def __init__(self, f: IO[bytes]):
        super().__init__(f)
        self.delivered = 0
        self._tail = bytearray()

    def more(self, n: int) -> bytes:
        data = self._f.read(n)
        self.delivered += len(data)
        self._tail += data
        if len(self._tail) > 2 * self.KEEP:
            del self._tail[: len(self._tail) - self.KEEP]
        return data

    def zeros_at(self, offset: int) -> bool:
        """Are the 512 bytes at stream ``offset`` (still kept) all zero? At the end of the stream,
        bytes not yet read are read first."""
        while len(self._tail) < offset - (self.delivered - len(self._tail)) + 512:
            chunk = self._f.read(1 << 16)
            if not chunk:
                break
            self.delivered += len(chunk)
            self._tail += chunk
        start = offset - (self.delivered - len(self._tail))
        if start < 0:
            return False
        block = bytes(self._tail[start : start + 512])
        return len(block) == 512 and not block.strip(b"\0")


class _Spooled:
    """A tar member's bytes copied out of its stream: in memory, or a private temp file."""

    def __init__(self, data: bytes | None, tmp: str | None):
        self.data, self.tmp = data, tmp

    def open(self) -> IO[bytes]:
        if self.tmp is not None:
            return open(self.tmp, "rb")
        return io.BytesIO(self.data or b"")

    def discard(self) -> None:
        self.data = None
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def _spool(tf: tarfile.TarFile, info: tarfile.TarInfo) -> _Spooled:
    f = tf.extractfile(info)
    if f is None:  # callers pass regular members only; a link or device has no data to read
        raise tarfile.TarError(f"{info.name} is not a regular file")
    if info.size <= SPOOL_MEMORY:
        data = f.read()
        if len(data) != info.size:
            raise EOFError("unexpected end of data")
        return _Spooled(data, None)
    fd, tmp = tempfile.mkstemp(prefix="auditor-member-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
    except BaseException:
        os.unlink(tmp)
        raise
    return _Spooled(None, tmp)


class _Slice(RawReader):
    """Bytes ``start`` .. ``start + size`` of ``f``, seekable."""

    def __init__(self, f: IO[bytes], start: int, size: int):
        super().__init__(f)
        self._start, self._size, self._pos = start, size, 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, b: Any) -> int:
        n = max(0, min(len(b), self._size - self._pos))
        if not n:
            return 0
        self._f.seek(self._start + self._pos)
        data = self._f.read(n)
        b[: len(data)] = data
        self._pos += len(data)
        return len(data)


class _Guarded(RawReader):
    """A member stream whose failures (bad CRC, corrupt deflate data, a cut archive) are an
    :class:`InputError` naming the member."""

    def __init__(self, f: Any, path: str, what: str):
        super().__init__(f)
        self._path, self._what = path, what

    def seekable(self) -> bool:
        return bool(self._f.seekable())

    def tell(self) -> int:
        return int(self._f.tell())

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return int(self._f.seek(offset, whence))
        except _MEMBER_ERRORS as e:
            raise InputError(self._path, None, f"corrupt {self._what}: {e}") from None

    def more(self, n: int) -> bytes:  # at most n bytes: nothing is left over to a seek
        try:
            return self._f.read(n)
        except (*_MEMBER_ERRORS, OSError) as e:  # OSError: a bzip2 / lzma member's "Invalid data stream"
            raise InputError(self._path, None, f"corrupt {self._what}: {e}") from None
