"""What the benchmark scripts share: where the checkout, the public releases and the results are; the
CPU of child processes, or of every process a command starts (this process as the child subreaper);
the environment that makes a child import this checkout's ``auditor``; a result written as JSON,
atomically; the records of a public release file.

The scripts are modules of the package ``benchmarks``, run from the repository root as
``python -m benchmarks.NAME``: the root is then on ``sys.path`` (no script edits it), and a script that
runs itself again in a child process runs ``python -m benchmarks.NAME`` too, from the same folder.
Standard library only at import: ``bench_real`` runs its peer workers with another Python (the peers'
venv), which imports this module and nothing of ``auditor``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auditor.records.record import Record

#: the checkout these scripts belong to
REPO = Path(__file__).resolve().parent.parent
#: the public releases (``auditor data fetch all``; ``$AUDITOR_SHARED_DATA`` picks the folder)
SHARED = Path(os.environ.get("AUDITOR_SHARED_DATA", REPO.parent / "shared" / "data"))
#: small copies of foreign releases kept in the repository
FOREIGN = REPO / "tests" / "data" / "foreign"
#: the frozen held-out sets
HELDOUT = REPO / "tests" / "data" / "heldout"
#: where the scripts that keep their figures write them (dated JSON files)
RESULTS = REPO / "benchmarks" / "results"


def repo_env(tree: Path | str = REPO) -> dict[str, str]:
    """This process's environment with ``tree`` first on ``PYTHONPATH``: a child imports its ``auditor``
    (no empty entry is added: one would put the child's working folder on its path). A child run as
    ``python -c`` (a forkserver) or ``-m`` still puts its working folder first: run it elsewhere than
    a checkout (``measure(..., cwd=...)``) when ``tree`` is another one."""
    rest = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": str(tree) + (os.pathsep + rest if rest else "")}


def command_line(module: str) -> str:
    """The command that runs this process again: ``python -m MODULE`` and its arguments (a result keeps it)."""
    return " ".join(["python", "-m", module, *sys.argv[1:]])


def write_json(path: Path, obj: Any) -> None:
    """``obj`` as indented JSON (UTF-8, one trailing newline), written atomically: a reader never sees
    half a result."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def shared_records(rel: str, name: str | None = None) -> list[Record]:
    """The records of the public release file ``rel`` (a path under :data:`SHARED`), read by auditor."""
    from auditor.datasets.dataset import Dataset
    from auditor.datasets.spec import DatasetSpec

    return list(Dataset(DatasetSpec(name or rel, [str(SHARED / rel)])).records())


# --- CPU of child processes -------------------------------------------------------------------------


def children_cpu() -> float:
    """User + system CPU seconds of the children this process has waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def become_subreaper() -> None:
    """Make this process the child subreaper: an orphan of its children's (a forkserver, a worker) is
    re-parented here, so RUSAGE_CHILDREN counts it once it is waited for."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def descendants(root: int) -> list[int]:
    """The process ids below ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (0 once it is gone)."""
    try:
        for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    except OSError:
        pass
    return 0


def measure(
    cmd: list[str], log: Path, env: dict[str, str] | None = None, timeout: float = 3600, cwd: Path | None = None
) -> dict:
    """Run ``cmd`` (in ``cwd``: this process's folder by default); CPU (user + system) of it and every
    process it started, wall time, peak tree RSS. Call :func:`become_subreaper` first, or the orphans'
    CPU is missed."""
    me = os.getpid()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, stdout=err, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        peak = 0
        while p.poll() is None:
            peak = max(peak, sum(rss_kb(q) for q in descendants(me)))
            if time.time() - t0 > timeout:
                p.kill()
            time.sleep(0.2)
        rc = p.returncode
        deadline = time.time() + 60  # orphans (forkserver, workers) re-parented here: wait for them too
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                peak = max(peak, sum(rss_kb(q) for q in descendants(me)))
                if time.time() > deadline:
                    for q in descendants(me):
                        os.kill(q, 9)
                time.sleep(0.1)
    wall = time.time() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {
        "rc": rc,
        "cpu_s": round(cpu, 2),
        "user_s": round(r1.ru_utime - r0.ru_utime, 2),
        "sys_s": round(r1.ru_stime - r0.ru_stime, 2),
        "wall_s": round(wall, 2),
        "peak_tree_rss_mb": round(peak / 1024, 1),
    }
