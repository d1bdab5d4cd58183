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


def int32s(array: pa.Array) -> np.ndarray:
    """The values of an Arrow int32 array without nulls, read from its buffer."""
    return np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + array.offset)[array.offset :]
