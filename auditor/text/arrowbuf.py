"""Arrow arrays built from, and read through, their buffers: what :mod:`auditor.text.batch` hands to
Arrow's hash tables and reads back. ``pa.array`` on a list and ``np.asarray`` on an Arrow array import
pandas (~0.2 s of CPU in every worker process); these do not. pyarrow itself is imported when the
first array is built, not when this module is (issue 36's start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def large_binary(n: int, offsets: np.ndarray, data: bytes | np.ndarray) -> pa.Array:
    """``n`` values, value ``i`` being ``data[offsets[i] : offsets[i + 1]]``, as an Arrow ``large_binary``
    array over those two buffers (no copy)."""
    import pyarrow as pa

    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def binary_array(items: list[bytes]) -> pa.Array:
    """``items`` as an Arrow ``large_binary`` array, built from two buffers.

    >>> binary_array([b"ab", b"", b"c"]).to_pylist()
    [b'ab', b'', b'c']
    """
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=offsets[1:])
    return large_binary(len(items), offsets, b"".join(items))


def int32s(array: pa.Array) -> np.ndarray:
    """The values of an Arrow int32 array without nulls, read from its buffer."""
    return np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + array.offset)[array.offset :]


def plus_one_or_zero(found: pa.Array) -> np.ndarray:
    """An Arrow int32 array of positions (null: absent) as ids: position + 1, absent 0. Read from
    its buffers (validity bits unpacked) — several times cheaper than ``fill_null`` and a copy.

    >>> import pyarrow as pa
    >>> plus_one_or_zero(pa.array([2, None, 0], pa.int32())).tolist()
    [3, 0, 1]
    """
    ids = int32s(found) + np.int32(1)
    if found.null_count:
        n, offset = len(found), found.offset
        bits = np.unpackbits(np.frombuffer(found.buffers()[0], dtype=np.uint8), count=n + offset, bitorder="little")
        ids *= bits[offset:]
    return ids
