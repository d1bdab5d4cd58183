"""Input bytes: one opener for plain and compressed files (gzip, zstd, bzip2, xz: told by their magic
number, whatever the name) and for text in another encoding (a UTF-16 / UTF-32 byte-order mark, or
the encoding a dataset declares), handed to every reader as UTF-8.

Decompression and transcoding are streamed: memory holds one slice, whatever the file's size. A
truncated or corrupt stream, or text that does not decode, is an :class:`~auditor.errors.InputError`
naming the file (and, for text, the line).

>>> import bz2, os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "train")            # no suffix: the magic number decides
>>> _ = open(p, "wb").write(bz2.compress(b'{"text": "hi"}\\n'))
>>> open_binary(p).read()
b'{"text": "hi"}\\n'
>>> q = os.path.join(tempfile.mkdtemp(), "t.jsonl")
>>> _ = open(q, "wb").write('{"text": "café"}\\n'.encode("utf-16"))   # with a BOM: read as UTF-16
>>> open_binary(q).read().decode("utf-8")
'{"text": "café"}\\n'
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import zlib
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from . import members
from .files import COMPRESSED_SUFFIXES, check_regular_file
from .remote import is_url, open_url

#: first bytes → compression
MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
)
#: byte-order marks of the encodings read without being named (UTF-8's is dropped by the readers)
BOMS: tuple[tuple[bytes, str, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"),
    (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
    (b"\xff\xfe", "utf-16-le", "UTF-16"),
    (b"\xfe\xff", "utf-16-be", "UTF-16"),
)
#: what a reader adds to "not valid UTF-8": how to read a file in another encoding
ENCODING_HINT = (
    "if the file is in another encoding, name it: --encoding latin-1 (--train-encoding / --eval-encoding), "
    'or encoding = "latin-1" in the manifest'
)
NOT_UTF8 = f"not valid UTF-8 ({ENCODING_HINT})"

_ENCODINGS: dict[str, str] = {}


def declare_encoding(path: str | Path, encoding: str | None) -> None:
    """Read ``path`` (and the members of an archive at ``path``) as ``encoding`` from now on in this
    process; None or UTF-8: as UTF-8 (a BOM still decides). Datasets declare their files' encoding
    before reading them (:class:`~auditor.datasets.units.UnitReader`)."""
    if encoding is None or codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
        _ENCODINGS.pop(str(path), None)
    else:
        _ENCODINGS[str(path)] = encoding


def encoding_of(path: str | Path) -> str | None:
    """The encoding declared for ``path`` (or for the archive it is a member of), else None."""
    if not _ENCODINGS:
        return None
    p = str(path)
    return _ENCODINGS.get(p) or _ENCODINGS.get(members.archive_of(p))


def compression_of(head: bytes) -> str | None:
    """``gzip`` / ``zstd`` / ``xz`` / ``bzip2`` by the magic number at the start of ``head``, else None.

    >>> compression_of(b"\\x1f\\x8b\\x08"), compression_of(b"BZh91AY&SY"), compression_of(b'{"a": 1}')
    ('gzip', 'bzip2', None)
    """
    for magic, kind in MAGIC:
        if head.startswith(magic):
            if kind == "bzip2" and not _bzip2_header(head):
                continue  # "BZh", the block size 1-9, a block or end-of-stream magic: text starting "BZh" is not bzip2
            return kind
    return None


def _bzip2_header(head: bytes) -> bool:
    if len(head) >= 4 and not head[3:4].isdigit():
        return False
    return len(head) < 10 or head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")


#: the read buffer of a local file: JSON Lines are read a line at a time, and the default (the file
#: system's block, 4 KiB here) made 100 MB cost ~0.08 s of CPU in read calls where 64 KiB costs ~0.03
READ_BUFFER = 1 << 16


def _open_raw(p: str) -> IO[bytes]:
    """The file's own bytes: a registered archive member, a URL, or a regular local file."""
    member = members.lookup(p)
    if member is not None:
        return member.open()
    check_regular_file(p)
    try:
        return open_url(p) if is_url(p) else open(p, "rb", buffering=READ_BUFFER)
    except OSError as e:
        raise InputError(p, None, f"cannot open: {e.strerror or e}") from None


def _head(f: IO[bytes], n: int) -> tuple[bytes, IO[bytes]]:
    """The first ``n`` bytes of ``f`` and a reader that still starts at byte 0 (``f`` itself when it seeks)."""
    try:
        if f.seekable():
            start = f.tell()
            head = f.read(n)
            f.seek(start)
            return head, f
    except (OSError, ValueError):
        pass
    head = f.read(n)
    return head, io.BufferedReader(_Chain(head, f), buffer_size=1 << 16)


def open_decompressed(path: str | Path) -> IO[bytes]:
    """``path``'s bytes, decompressed when they are gzip, zstd, bzip2 or xz (by magic number); no
    transcoding (what archives and byte counts need)."""
    p = str(path)
    raw = _open_raw(p)
    try:
        head, raw = _head(raw, 10)
        kind = compression_of(head)
        if kind is None:
            return raw
        return io.BufferedReader(_decompressor(p, raw, kind), buffer_size=1 << 16)
    except OSError as e:
        raw.close()
        raise InputError(p, None, f"cannot read: {e.strerror or e}") from None
    except BaseException:
        raw.close()
        raise


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a regular file, an archive member (:mod:`auditor.io.members`) or a URL
    (:mod:`auditor.io.remote`) for reading: decompressed (:func:`open_decompressed`) and, when it
    starts with a UTF-16 / UTF-32 byte-order mark or its dataset declares another encoding
    (:func:`declare_encoding`), transcoded to UTF-8. A plain UTF-8 local file comes back as the file
    itself (seekable)."""
    p = str(path)
    f = open_decompressed(p)
    try:
        declared = encoding_of(p)
        head, f = _head(f, 4)
        if declared is not None:
            return io.BufferedReader(_Transcode(p, f, declared, declared, skip=0), buffer_size=1 << 16)
        for bom, codec, label in BOMS:
            if head.startswith(bom):
                return io.BufferedReader(_Transcode(p, f, codec, label, skip=len(bom)), buffer_size=1 << 16)
        return f
    except BaseException:
        f.close()
        raise


def is_plain(path: str | Path) -> bool:
    """True when ``path`` is a local or remote file read as its bytes are: not compressed, not an
    archive member, no other encoding (so it can be cut into byte ranges)."""
    p = str(path)
    if members.lookup(p) is not None or encoding_of(p) is not None:
        return False
    name = p.lower()
    if name.endswith(COMPRESSED_SUFFIXES):
        return False
    try:
        with _open_raw(p) as f:
            head = f.read(10)
    except (OSError, InputError):
        return False
    return compression_of(head) is None and not any(head.startswith(b) for b, _, _ in BOMS)


class RawReader(io.RawIOBase):
    """A raw stream made from ``f`` and closed with it: :meth:`more` makes the next bytes, which
    ``readinto`` hands out as asked (the base of every stream wrapper of :mod:`auditor.io`)."""

    def __init__(self, f: IO[bytes]):
        self._f = f
        self._out = b""  # made, not yet handed out

    def readable(self) -> bool:
        return True

    def more(self, n: int) -> bytes:
        """The next bytes (about ``n``; ``b""``: the end)."""
        return self._f.read(n)

    def readinto(self, b: Any) -> int:
        if not self._out:
            self._out = self.more(len(b))
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        try:
            self._f.close()
        finally:
            super().close()


class _Chain(RawReader):
    """``head`` and then the rest of ``f`` (what a peek at a stream that cannot seek gives back)."""

    def __init__(self, head: bytes, f: IO[bytes]):
        super().__init__(f)
        self._out = head


def _decompressor(path: str, raw: IO[bytes], kind: str) -> io.RawIOBase:
    if kind == "zstd":
        return _ZstdRaw(path, raw)
    if kind == "gzip":
        return _Stream(path, raw, gzip.GzipFile(fileobj=raw, mode="rb"), "gzip")
    if kind == "bzip2":
        return _Stream(path, raw, bz2.BZ2File(raw, "rb"), "bzip2")
    return _Stream(path, raw, lzma.LZMAFile(raw, "rb"), "xz")


class _Stream(RawReader):
    """A gzip / bzip2 / xz stream whose truncation or corruption is an :class:`InputError` naming the
    file (the libraries raise EOFError, zlib.error, OSError, lzma.LZMAError, which nothing else would catch)."""

    def __init__(self, path: str, raw: IO[bytes], f: Any, kind: str):
        super().__init__(f)
        self._path = path
        self._raw = raw
        self._kind = kind

    def more(self, n: int) -> bytes:
        try:
            return self._f.read(n)
        except EOFError:
            raise InputError(self._path, None, f"truncated compressed data ({self._kind} stream ends early)") from None
        except (zlib.error, lzma.LZMAError, gzip.BadGzipFile) as e:
            raise InputError(self._path, None, f"corrupt compressed data ({self._kind}): {e}") from None
        except OSError as e:
            if self._kind == "bzip2":  # "Invalid data stream"
                raise InputError(self._path, None, f"corrupt compressed data ({self._kind}): {e}") from None
            raise

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


class _ZstdRaw(RawReader):
    """A Zstandard stream (frames in sequence) fed in 16 KiB slices, so one read never expands
    without bound; a stream that ends inside a frame is an :class:`InputError` (the library's own
    stream reader would end silently)."""

    _SLICE = 1 << 14

    def __init__(self, path: str, raw: IO[bytes]):
        import zstandard

        super().__init__(raw)
        self._zstd = zstandard
        self._path = path
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""  # compressed input not yet fed
        self._fed = False

    def more(self, n: int) -> bytes:
        out = b""
        while not out:
            if not self._pending:
                self._pending = self._f.read(1 << 17)
                if not self._pending:
                    if self._fed and not self._d.eof:
                        raise InputError(self._path, None, "truncated compressed data (zstd frame ends early)")
                    return b""
            piece, self._pending = self._pending[: self._SLICE], self._pending[self._SLICE :]
            if self._d.eof:  # a further frame
                self._d = self._zstd.ZstdDecompressor().decompressobj()
            try:
                out = self._d.decompress(piece)
            except self._zstd.ZstdError as e:
                raise InputError(self._path, None, f"corrupt compressed data: {e}") from None
            self._fed = True
            if self._d.eof and self._d.unused_data:
                self._pending = self._d.unused_data + self._pending
        return out


class _Transcode(RawReader):
    """Text in ``codec`` re-encoded as UTF-8, 64 KiB at a time; bytes that do not decode are an
    :class:`InputError` naming the line (``label``: the encoding as the message names it)."""

    def __init__(self, path: str, f: IO[bytes], codec: str, label: str, skip: int):
        super().__init__(f)
        self._path = path
        self._codec = codec
        self._label = label
        self._decoder = codecs.getincrementaldecoder(codec)("strict")
        self._skip = skip  # the byte-order mark, dropped
        self._lines = 0
        self._done = False

    def more(self, n: int) -> bytes:
        while not self._done:
            chunk = self._f.read(1 << 16)
            if self._skip:
                chunk, self._skip = chunk[self._skip :], 0
            try:
                text = self._decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as e:
                before = bytes(e.object[: e.start]).decode(self._codec, "replace")
                line = self._lines + before.count("\n") + 1
                why = (
                    "truncated" if not chunk else f"{e.reason} at byte 0x{bytes(e.object[e.start : e.start + 1]).hex()}"
                )
                raise InputError(self._path, f"line {line}", f"not valid {self._label} ({why})") from None
            self._done = not chunk
            self._lines += text.count("\n")
            if text:
                return text.encode("utf-8")
        return b""


def open_text(path: str | Path) -> IO[str]:
    """Text reader (UTF-8, BOM tolerated, invalid bytes raise) over :func:`open_binary`."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors="strict", newline="")


def is_blank(path: str | Path) -> bool:
    """True when ``path`` (decompressed) holds nothing but whitespace (a BOM counts as nothing)."""
    with open_binary(path) as f:
        first = True
        while chunk := f.read(1 << 16):
            if first:
                chunk, first = chunk.removeprefix(b"\xef\xbb\xbf"), False
            if chunk.strip():
                return False
    return True
