"""The memory of the processes that scan (auditor.engines.memory): freed memory is kept for the
next batch, so a batch's buffers do not fault their pages in again; a user's own malloc settings win;
a worker's collector traces what it loaded never again, its youngest objects less often.

Measured by page faults (``ru_minflt``): a 3 MB buffer (a short-record batch's array is ~3 MB) freed
and made again faults its ~770 pages in a second time under glibc's defaults (it hands the first one
back), and not once when tuned; a 20 MB buffer (a long record's copy) is handed back when tuned too.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys

import pytest
from helpers import REPO

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import get_engine
from auditor.engines.memory import SETTINGS, YOUNG, tune_allocator

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or "GLIBC_TUNABLES" in os.environ or any(k in os.environ for k in SETTINGS),
    reason="glibc's allocator, with no MALLOC_* setting of the environment's own",
)

_MB3, _MB20 = 3 << 20, 20 << 20
_PAGES = _MB3 // resource.getpagesize()


def fault_rounds(rounds: int = 3, size: int = _MB3) -> list[int]:
    """Page faults of making (and zeroing) a buffer of ``size`` bytes, then freeing it, ``rounds``
    times over."""
    out = []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        buffer = bytearray(size)
        del buffer
        out.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return out


def _fresh(env: dict[str, str], size: int = _MB3, then: str = "") -> tuple[bool, list[int]]:
    """``tune_allocator()``, the code ``then``, and :func:`fault_rounds` of ``size`` in a fresh interpreter
    with ``env`` added."""
    code = (
        "import json\nfrom auditor.engines import memory\nfrom auditor.engines.memory import tune_allocator\n"
        f"from test_memory import fault_rounds\ntuned = tune_allocator()\n{then}\n"
        f"print(json.dumps([tuned, fault_rounds(size={size})]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO)]), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    tuned, rounds = json.loads(out.stdout)
    return tuned, rounds


def test_a_tuned_process_reuses_freed_memory_where_glibc_hands_it_back():
    tuned, rounds = _fresh({})
    assert tuned and rounds[0] > _PAGES // 2  # the first buffer is new memory
    assert max(rounds[1:]) < _PAGES // 10, rounds  # the next ones are made of it
    untuned, default = _fresh({"GLIBC_TUNABLES": "glibc.malloc.perturb=0"})
    assert not untuned
    assert default[1] > _PAGES // 2, default  # glibc's defaults: the freed buffer went back to the system


def test_a_tuned_process_hands_back_a_buffer_past_the_mmap_threshold():
    # a long record's copies (a 2 MB record as UTF-32: 8 MB) are not kept in the heap after its batch
    assert SETTINGS["MALLOC_MMAP_THRESHOLD_"][1] < _MB20
    tuned, rounds = _fresh({}, _MB20)
    assert tuned and min(rounds) > (_MB20 // resource.getpagesize()) // 2, rounds


def test_memory_released_before_a_scan_is_handed_back():
    # the calling process hands back what it freed (a sniffed 2 MB first line, say) before the workers scan
    freed = f"buffer = bytearray({_MB3})\ndel buffer\nassert memory.release_free_memory()"
    tuned, rounds = _fresh({}, then=freed)
    assert tuned and rounds[0] > _PAGES // 2, rounds  # the buffer freed before was not kept: new memory


def test_the_users_own_malloc_settings_win():
    assert tune_allocator(environ={"MALLOC_MMAP_THRESHOLD_": "131072"}) is False
    assert tune_allocator(environ={"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"}) is False
    assert _fresh({"MALLOC_TOP_PAD_": "0"})[0] is False


def test_the_local_engines_workers_run_tuned(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "a record"}\n')
    ds = Dataset(DatasetSpec("tr", [str(path)]))
    engine = get_engine("local", workers=2, min_parallel_bytes=0)
    (pid, rounds, young, frozen), *_ = engine.offload(_worker_state, [()], [ds])()
    assert pid != os.getpid()  # a worker process
    assert max(rounds[1:]) < _PAGES // 10, rounds
    assert young == YOUNG and frozen > 10_000  # the modules and the job loaded are never traced again
    assert gc.get_threshold()[0] != YOUNG or gc.get_freeze_count() == 0  # the calling process is left as it is


def _worker_state() -> tuple[int, list[int], int, int]:
    return os.getpid(), fault_rounds(), gc.get_threshold()[0], gc.get_freeze_count()
