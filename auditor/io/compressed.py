"""Compressed input: one binary/text opener for plain, gzip and zstd files, with change detection."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import IO

from ..errors import InputError
from .files import check_regular_file
from .remote import is_url, open_url


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a regular file (or a URL, :mod:`auditor.io.remote`) for reading, transparently
    decompressing ``.gz`` and ``.zst``."""
    p = str(path)
    check_regular_file(p)
    try:
        if p.endswith(".gz"):
            return io.BufferedReader(_GzipRaw(p), buffer_size=1 << 16)
        if p.endswith(".zst"):
            return io.BufferedReader(_ZstdRaw(p), buffer_size=1 << 16)
        return open_url(p) if is_url(p) else open(p, "rb")
    except OSError as e:
        raise InputError(p, None, f"cannot open: {e.strerror or e}") from None


class _GzipRaw(io.RawIOBase):
    """A gzip stream whose truncation or corruption is an :class:`InputError` naming the file
    (gzip raises EOFError / zlib.error, which nothing else would catch)."""

    def __init__(self, path: str):
        self._path = path
        self._f = gzip.open(open_url(path) if is_url(path) else path, "rb")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self._f.read(len(b))
        except EOFError:
            raise InputError(self._path, None, "truncated compressed data (gzip stream ends early)") from None
        except zlib.error as e:
            raise InputError(self._path, None, f"corrupt compressed data: {e}") from None
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()


class _ZstdRaw(io.RawIOBase):
    """A Zstandard stream (frames in sequence) fed in 16 KiB slices, so one read never expands
    without bound; a stream that ends inside a frame is an :class:`InputError` (the library's own
    stream reader would end silently)."""

    _SLICE = 1 << 14

    def __init__(self, path: str):
        import zstandard

        self._zstd = zstandard
        self._path = path
        self._f = open_url(path) if is_url(path) else open(path, "rb")
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""  # compressed input not yet fed
        self._out = b""
        self._fed = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self._out:
            if not self._pending:
                self._pending = self._f.read(1 << 17)
                if not self._pending:
                    if self._fed and not self._d.eof:
                        raise InputError(self._path, None, "truncated compressed data (zstd frame ends early)")
                    return 0
            piece, self._pending = self._pending[: self._SLICE], self._pending[self._SLICE :]
            if self._d.eof:  # a further frame
                self._d = self._zstd.ZstdDecompressor().decompressobj()
            try:
                self._out = self._d.decompress(piece)
            except self._zstd.ZstdError as e:
                raise InputError(self._path, None, f"corrupt compressed data: {e}") from None
            self._fed = True
            if self._d.eof and self._d.unused_data:
                self._pending = self._d.unused_data + self._pending
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


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
