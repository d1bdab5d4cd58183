"""Fingerprints of a dataset's files, block by block: a file's digest is its SHA-256 up to
:data:`HASH_BLOCK` bytes, else the SHA-256 of its blocks' SHA-256s, so the workers of a scan hash
their own units' share of a file and the calling process reads none of the corpus to fingerprint it.

>>> combine_blocks(["ab" * 32]) == "ab" * 32, block_count(0), block_count(HASH_BLOCK + 1)
(True, 1, 2)
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..errors import InputError
from ..io.files import file_size
from ..io.remote import is_url, open_url

#: a file is fingerprinted by blocks of this size, each hashed by the worker reading that part of it
HASH_BLOCK = 8 * 1024 * 1024


def block_count(size: int) -> int:
    """Blocks of :data:`HASH_BLOCK` bytes in a file of ``size`` bytes (an empty file is one empty block)."""
    return max(1, -(-size // HASH_BLOCK))


def hash_blocks(path: str, blocks: range) -> list[str]:
    """SHA-256 of each block in ``blocks`` of the file's bytes as stored (compressed files too)."""
    out = []
    try:
        with open_url(path) if is_url(path) else open(path, "rb") as f:
            f.seek(blocks.start * HASH_BLOCK)
            for _ in blocks:
                h, left = hashlib.sha256(), HASH_BLOCK
                while left and (chunk := f.read(min(left, 1 << 20))):
                    h.update(chunk)
                    left -= len(chunk)
                out.append(h.hexdigest())
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
    return out


def combine_blocks(digests: list[str]) -> str:
    """A file's digest from its blocks' SHA-256s: the one block's (= the file's SHA-256) when it is
    one block, else the SHA-256 of the blocks' digests."""
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256(b"".join(bytes.fromhex(d) for d in digests)).hexdigest()


def file_digest(path: Any) -> str:
    """A file's digest (:func:`combine_blocks`) computed here, in one read."""
    return combine_blocks(hash_blocks(str(path), range(block_count(file_size(path)))))
