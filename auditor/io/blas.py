"""One BLAS thread a process, for the processes an audit runs in.

numpy's wheels link OpenBLAS, which starts a thread per core when numpy is imported and wakes them
for a matrix product; each thread then spins (busy-waits) for a while before it sleeps. An audit uses
one process per core (the local engine's workers, Ray's), so those threads only burn CPU: on two
cores, ~0.25 s of a run's calling process (a 1-record audit: 0.77 -> 0.55 CPU-s) and ~0.07 s of the
forkserver's, and more where there are more cores (a spinning thread a core).

:func:`limit_blas_threads` sets ``OPENBLAS_NUM_THREADS=1`` unless it is set already (what the user
chose is kept): in a process that has not imported numpy yet (the ``auditor`` command does so before
it imports any) and in every process started afterwards. :func:`children_blas_limited` sets it only
while processes are started (the local engine's forkserver and workers), so that a program calling
the library keeps its own BLAS threads. Nothing is raised.

>>> env = {}
>>> limit_blas_threads(env); env
{'OPENBLAS_NUM_THREADS': '1'}
>>> env = {"OPENBLAS_NUM_THREADS": "8"}
>>> limit_blas_threads(env); env
{'OPENBLAS_NUM_THREADS': '8'}
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, MutableMapping

#: the variable OpenBLAS reads for its thread count (before ``GOTO_NUM_THREADS`` and ``OMP_NUM_THREADS``)
BLAS_THREADS_VAR = "OPENBLAS_NUM_THREADS"


def limit_blas_threads(environ: MutableMapping[str, str] | None = None) -> None:
    """Set :data:`BLAS_THREADS_VAR` to 1 in ``environ`` (default: this process's environment) unless
    it is set; takes effect in this process only if numpy is not imported yet."""
    (os.environ if environ is None else environ).setdefault(BLAS_THREADS_VAR, "1")


@contextlib.contextmanager
def children_blas_limited() -> Iterator[None]:
    """Processes started inside run with one BLAS thread (unless this process's environment names a
    count); this process's environment is as it was afterwards.

    >>> before = os.environ.get(BLAS_THREADS_VAR)
    >>> with children_blas_limited():
    ...     os.environ.get(BLAS_THREADS_VAR) == (before or "1")
    True
    >>> os.environ.get(BLAS_THREADS_VAR) == before
    True
    """
    if BLAS_THREADS_VAR in os.environ:
        yield
        return
    os.environ[BLAS_THREADS_VAR] = "1"
    try:
        yield
    finally:
        os.environ.pop(BLAS_THREADS_VAR, None)
