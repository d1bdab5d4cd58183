"""The memory of a process that scans: glibc's ``malloc`` told to keep freed memory for the next batch
instead of handing it back to the system after every batch (:func:`tune_allocator`), and Python's
garbage collector told to trace fewer times and never what was loaded before the scan
(:func:`tune_collector`); the calling process hands back what it holds free before it waits out a
scan in worker processes (:func:`release_free_memory`).

A scan allocates and frees the same large buffers batch after batch (a batch's bytes, token offsets and
hashes, MinHash signatures: megabytes each). glibc returns freed memory at the top of its heap to
the system as soon as 128 kB are free there, and serves a block of more than 128 kB (a threshold it
raises as large blocks are freed, up to 32 MB) by ``mmap``, unmapped when freed; so each batch faults
its buffers' pages in again (the kernel zeroes each one): on 40 MB of real text, ~0.3 of 5.4 CPU-s
were this system time. :func:`tune_allocator` sets what glibc's ``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_`` set (:data:`SETTINGS`): at most
``MALLOC_TRIM_THRESHOLD_`` of free memory stays mapped, reused by the next batch. Blocks larger than a
short-record batch's arrays are still mapped and unmapped: a 2 MB record's copies kept in the heap
raised a worker's peak memory by a third (100 MB of 2 MB records, 2 workers: peak RSS of the process
tree 454-481 MB with a 32 MB threshold, 434-438 MB with 4 MB; CPU the same within noise, for short
records too).

A batch also makes and drops hundreds of thousands of small objects (records, views, units): Python's
collector traced its youngest objects every 700 allocations and all objects (modules, indexes) every
~70,000; :func:`tune_collector` freezes what is alive (never traced again) and traces the youngest every
:data:`YOUNG` allocations (time in collections on 40 MB: 0.135 -> 0.036 s).

Only processes the toolkit owns are tuned: the local engine's workers, both ways
(:func:`auditor.engines.lifecycle.init_worker`), and the allocator of the commands that run an audit
(:mod:`auditor.cli.run`: its collector is left as it is, for a program that invokes the command in its
own process, a test runner say, whose objects must stay collectable); a Python program that imports
:mod:`auditor` keeps its allocator and collector as they are. A user's own ``MALLOC_*`` or
``GLIBC_TUNABLES`` settings win: the allocator is not changed where one is set, nor elsewhere than
glibc (macOS, musl). No error is raised here.

>>> tune_allocator(environ={"MALLOC_TRIM_THRESHOLD_": "0"})  # the user's setting is left in force
False
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from collections.abc import Mapping

#: ``mallopt`` parameters (``<malloc.h>``) and their values: blocks up to 4 MB from the heap (a batch
#: of short records: ~2 M characters, ~3 MB an array of its tokens), larger ones (a long record's
#: copies: a 2 MB record as UTF-32 is 8 MB) mapped and handed back when freed, so they do not stay in
#: the heap; up to 64 MB of free memory kept at its top, 16 MB more asked of the system each time it grows
SETTINGS = {
    "MALLOC_MMAP_THRESHOLD_": (-3, 4 << 20),  # M_MMAP_THRESHOLD
    "MALLOC_TRIM_THRESHOLD_": (-1, 64 << 20),  # M_TRIM_THRESHOLD
    "MALLOC_TOP_PAD_": (-2, 16 << 20),  # M_TOP_PAD
}


#: allocations between two collections of the youngest objects (Python's default: 700)
YOUNG = 10_000


def tune_collector() -> None:
    """Freeze every object alive now (:func:`gc.freeze`: the modules, a worker's job and indexes are
    never traced again) and collect the youngest objects every :data:`YOUNG` allocations; the older
    generations keep their thresholds. Objects that form cycles are still collected."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)


def _glibc() -> ctypes.CDLL | None:
    """This process's C library where it is glibc (Linux, ``gnu_get_libc_version`` found: musl's
    ``mallopt`` does nothing); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
    except (OSError, AttributeError):
        return None
    return libc


def tune_allocator(environ: Mapping[str, str] | None = None) -> bool:
    """Set glibc's allocator as :data:`SETTINGS` says, for this process and those it forks; True when
    it was set, False where it is not glibc's or where the environment (``environ``, by default
    ``os.environ``) already sets one of these or holds ``GLIBC_TUNABLES``."""
    env = os.environ if environ is None else environ
    if "GLIBC_TUNABLES" in env or any(name in env for name in SETTINGS) or (libc := _glibc()) is None:
        return False
    return all(libc.mallopt(param, value) == 1 for param, value in SETTINGS.values())


def release_free_memory() -> bool:
    """Hand back to the system what glibc's allocator holds free in this process (``malloc_trim(0)``,
    which trims every arena, not only the top of the heap): the calling process, before it waits out a
    scan in worker processes, keeps none of what it freed reading eval sets, building indexes and
    sniffing a training file (its first line parsed: ~20 MB freed for a 2 MB record, which the tuned
    allocator would keep). True when it was called; False where the allocator is not glibc's."""
    if (libc := _glibc()) is None:
        return False
    libc.malloc_trim(0)
    return True
