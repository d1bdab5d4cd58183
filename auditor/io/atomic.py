"""Atomic output: write-then-rename files, a folder lock, and cleanup of dead runs' leftovers."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def locked_folder(folder: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (``flock`` on the folder itself; no lock file is left).

    Writers that replace things inside one folder, and clean what killed writers left there, hold it
    so that they never remove a live writer's temp files. Where ``flock`` is missing it does nothing.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def remove_dead_owner_dirs(parent: str | Path, prefix: str) -> list[str]:
    """Remove ``parent/<prefix><pid>-*`` folders whose process ``pid`` no longer runs (a killed run's
    temporary files). Returns the names removed."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its run is alive
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.name)
    return removed


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def replace_folder(final: str | Path, fill: Callable[[Path], None]) -> Path:
    """Put the folder ``fill(tmp)`` writes (into ``.<name>.XXXX``, a temporary sibling) at ``final``,
    the folder there before moved aside (``.<name>.old.XXXX``) and removed after: a kill leaves one
    whole folder or the other, never half of one (a temporary sibling at most: the caller's to clean).
    A failure in ``fill`` leaves ``final`` as it was."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        fill(tmp)
        old = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
            os.replace(final, old / final.name)
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def build_folder(final: str | Path, fill: Callable[[Path], None], marker: str) -> Path:
    """Make the folder ``final`` appear whole or not at all: ``fill(tmp)`` writes into a temporary
    sibling, which is then renamed to ``final``. When another process renamed its own first (its
    ``marker`` file is there), theirs is kept; a failure in ``fill`` leaves nothing behind.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> out = build_folder(root / "model", lambda tmp: (tmp / "done.json").write_text("{}"), "done.json")
    >>> sorted(p.name for p in out.iterdir()), [p.name for p in root.iterdir()]
    (['done.json'], ['model'])
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, final)
        except OSError:  # another process built it first: keep theirs
            if not (final / marker).exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final
