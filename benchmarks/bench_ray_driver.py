"""Where the Ray engine's calling process (the driver) spends its CPU (a script, not a test).

    python -m benchmarks.bench_ray_driver [--workers 2] [--idle 5] [--tasks 50] [--runs 2]

Each run is a fresh process that first imports what an audit has imported by then (numpy, the
audit module), so only Ray's share is counted, then measures ``time.process_time()`` (every thread
of the process) around: ``import ray``; starting Ray the engine's way (``RayEngine._init``:
``ray.init`` with the engine's options, a local Ray of ``--workers`` CPUs); the engine's first task
(``RayEngine.offload`` of a trivial call, submitted and fetched: the driver's serialization context,
the remote function's export and one round trip); the same again (a task in steady state, averaged
over ``--tasks``); and ``--idle`` seconds with two tasks running and the driver blocked in
``ray.wait`` (the CPU of Ray's own driver threads: gRPC, the core worker's event loops, task-event
and metrics reporting). On Linux it then lists the CPU of the driver's threads by name
(``/proc/self/task``). Ray's shutdown at exit is not measured (a run's ``caller_cpu_s`` stops
before it). Prints one line per figure and run, then the median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import REPO


def _threads() -> dict[str, float]:
    """CPU seconds of this process's live threads, by thread name (Linux; {} elsewhere)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        name = "main" if int(tid) == os.getpid() else name
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _sleep(seconds: float) -> int:
    time.sleep(seconds)
    return 0


def measure(workers: int, idle: float, tasks: int) -> dict:
    """One fresh driver's figures (run in a child process)."""
    import numpy  # noqa: F401  (an audit has imported these before the engine starts Ray)

    import auditor.audit.run  # noqa: F401
    from auditor.engines.ray_engine import RayEngine

    out: dict = {}
    cpu = time.process_time()

    def lap(key: str, per: int = 1) -> None:
        nonlocal cpu
        now = time.process_time()
        out[key] = (now - cpu) / per
        cpu = now

    import ray

    lap("import_ray_s")
    engine = RayEngine(workers=workers)
    engine._init()
    lap("ray_init_s")
    engine.offload(divmod, [(7, 2)], [])()
    lap("first_task_s")
    for _ in range(tasks):
        engine.offload(divmod, [(7, 2)], [])()
    lap("task_ms", tasks)
    out["task_ms"] *= 1000
    task = engine._task()
    running = [task.remote(_sleep, idle) for _ in range(workers)]
    cpu = time.process_time()
    ray.wait(running, num_returns=len(running))
    lap("idle_ms_per_s", 1)
    out["idle_ms_per_s"] *= 1000 / idle
    out["threads"] = {k: round(v, 2) for k, v in sorted(_threads().items(), key=lambda kv: -kv[1]) if v}
    out["ray"] = ray.__version__
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--idle", type=float, default=5.0, help="seconds the driver waits on running tasks")
    ap.add_argument("--tasks", type=int, default=50, help="tasks averaged for the steady-state figure")
    ap.add_argument("--runs", type=int, default=2, help="fresh driver processes")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.workers, args.idle, args.tasks)))
        return
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_ray_driver",
        "--child",
        "--workers",
        str(args.workers),
        "--idle",
        str(args.idle),
    ]
    cmd += ["--tasks", str(args.tasks)]
    runs = []
    for i in range(args.runs):
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"run {i + 1} failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        runs.append(res)
        print(
            f"run {i + 1} (ray {res['ray']}, load {load:.2f}): import ray {res['import_ray_s']:.3f} s, "
            f"ray.init {res['ray_init_s']:.3f} s, first task {res['first_task_s']:.3f} s, "
            f"then {res['task_ms']:.2f} ms per task, {res['idle_ms_per_s']:.1f} ms per s waiting"
        )
        print(f"  driver threads (CPU s): {res['threads']}")
    keys = ("import_ray_s", "ray_init_s", "first_task_s")
    med = {k: statistics.median(r[k] for r in runs) for k in (*keys, "task_ms", "idle_ms_per_s")}
    print(
        f"median: Ray's fixed driver cost {sum(med[k] for k in keys):.3f} s "
        f"(import {med['import_ray_s']:.3f} + init {med['ray_init_s']:.3f} + first task {med['first_task_s']:.3f}); "
        f"{med['task_ms']:.2f} ms per task; {med['idle_ms_per_s']:.1f} ms of CPU per second of scan"
    )


if __name__ == "__main__":
    main()
