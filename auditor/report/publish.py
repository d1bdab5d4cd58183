"""Report folders written as one set: never a mix of two runs, never a write over another command's files.

A report folder holds report sets, each command's under its own file names (:data:`SETS`):
``audit`` / ``verify`` write ``report.json``, ``report.md``, ``report.html``, ``junit.xml``;
``provenance`` writes ``provenance.json`` and ``provenance.md``; so ``provenance`` after ``verify``
on one manifest leaves verify's report as it was. :func:`publish` builds the new folder beside the
old one (``.NAME.tmp-TOKEN``: the new set, plus hard links to the other sets already there) and
swaps it into place with one rename (``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere two renames,
between which the folder is briefly absent), then removes the old folder. A run killed at any
moment leaves either the old folder or the new one, complete; its leftovers (``.NAME.tmp-*``,
``.NAME.old-*``) are removed by the next publish into that parent folder. Publishing holds an
exclusive lock on the parent folder, so concurrent runs replace the folder one after the other.

A folder holding anything else (a user's files, sub-folders) is refused: a report folder is
auditor's alone, and nothing else is ever moved or deleted. Each folder keeps a ledger of what auditor
wrote into it (:mod:`auditor.io.ledger`, ``.auditor-written.json``: each file's SHA-256), so a file of
a report's name that auditor did not write, or that was edited since (a user's ``report.md``), is
refused too: the run stops before it starts, naming the folder and the files.

>>> import tempfile, os
>>> root = tempfile.mkdtemp()
>>> paths = publish(os.path.join(root, "r"), {"report.json": "{}", "report.md": "# r"})
>>> sorted(p.name for p in paths), sorted(os.listdir(root))
(['report.json', 'report.md'], ['r'])
>>> _ = publish(os.path.join(root, "r"), {"provenance.json": "{}"})
>>> sorted(os.listdir(os.path.join(root, "r")))  # and the ledger of what auditor wrote there
['.auditor-written.json', 'provenance.json', 'report.json', 'report.md']

Errors: :class:`~auditor.errors.OutputError` for a report folder that is a file, holds other
files, or cannot be written (read-only, disk full, file size limit), before or while writing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from ..errors import OutputError
from ..io.atomic import locked_folder
from ..io.files import describe_os_error
from ..io.ledger import LEDGER, Ledger, sha256_bytes, shown

#: the report sets a folder may hold: command → file names
SETS: dict[str, tuple[str, ...]] = {
    "report": ("report.json", "report.md", "report.html", "junit.xml"),
    "provenance": ("provenance.json", "provenance.md", "provenance.html", "provenance.junit.xml"),
}
KNOWN_FILES = frozenset(name for names in SETS.values() for name in names)
_LEFTOVER = re.compile(r"\..+\.(tmp|old)-[0-9a-f]{8}")  # what publish names its temp folders
_RENAME_EXCHANGE = 2  # <linux/fs.h>
_AT_FDCWD = -100


def check_report_dir(report_dir: str | Path) -> Path:
    """Raise :class:`OutputError` now, before any long work, when ``report_dir`` cannot take a report:
    it is a file, holds files that are not auditor reports, or its parent cannot be written."""
    out = Path(report_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(str(out), "is a file, not a folder (give a folder for the report)")
    if out.is_dir():
        foreign = _foreign_entries(out)
        if foreign:
            legacy = not (out / LEDGER).exists() and all(n in KNOWN_FILES for n in foreign)
            why = (
                f"no {LEDGER}: written by an earlier auditor, which kept no ledger, or not by auditor: remove the "
                "folder to write there"
                if legacy
                else f"auditor lists what it wrote in {LEDGER}"
            )
            raise OutputError(
                str(out),
                f"holds files that are not an auditor report (not written by auditor, or changed since: "
                f"{shown(foreign)}); give a new or empty folder ({why})",
            )
    parent = _existing_parent(out.absolute())
    if not parent.is_dir():
        raise OutputError(str(parent), "is a file, not a folder (cannot hold the report folder)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(str(parent), "is not writable (cannot create the report folder)")
    return out


def publish(report_dir: str | Path, files: Mapping[str, str | bytes]) -> list[Path]:
    """Write ``files`` (name → content) into ``report_dir`` as one set; returns exactly the paths written.

    Files of other sets already in the folder stay (hard-linked into the new folder, or copied);
    files of the same names are replaced. Raises :class:`OutputError` (see the module doc).
    """
    out = check_report_dir(report_dir).absolute()
    if out.is_symlink():  # a linked report folder: replace the folder it leads to, keep the link
        out = Path(os.path.realpath(out))
    for name in files:
        if name not in KNOWN_FILES:
            raise ValueError(f"not a report file name: {name}")
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with locked_folder(parent):
            clean_leftovers(parent)
            check_report_dir(out)  # again, under the lock
            tmp = parent / f".{out.name}.tmp-{secrets.token_hex(4)}"
            tmp.mkdir()
            try:
                _fill(tmp, out, files)
                _swap_into_place(tmp, out)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)  # the old folder after a swap, or a failed new one
    except OSError as e:
        raise OutputError(str(e.filename or out), f"cannot write the report: {describe_os_error(e)}") from None
    return [Path(report_dir) / name for name in files]


def clean_leftovers(parent: str | Path) -> list[str]:
    """Remove what killed runs left in ``parent``: ``.NAME.tmp-*`` / ``.NAME.old-*`` report folders and
    ``.FILE.*.tmp`` files of a single-file atomic write inside report folders. Returns the names removed.
    Call it under :func:`publish`'s lock (it is, from there)."""
    parent = Path(parent)
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            name = entry.name
            if _LEFTOVER.fullmatch(name) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(name)
            elif entry.is_dir(follow_symlinks=False) and not name.startswith("."):
                for inner in _stale_temp_files(Path(entry.path)):
                    with contextlib.suppress(OSError):
                        inner.unlink()
                        removed.append(f"{name}/{inner.name}")
    return removed


def _stale_temp_files(folder: Path) -> list[Path]:
    """``.FILE.XXXX.tmp`` files of a report file's single-file atomic write (``auditor report``)."""
    with contextlib.suppress(OSError):
        return [
            p
            for p in folder.iterdir()
            if p.name.endswith(".tmp") and any(p.name.startswith(f".{k}.") for k in (*KNOWN_FILES, LEDGER))
        ]
    return []


def _foreign_entries(folder: Path) -> list[str]:
    """Entries of a report folder that are not report files auditor wrote there, unchanged since."""
    stale = {p.name for p in _stale_temp_files(folder)}
    try:
        names = sorted(os.listdir(folder))
        ledger = Ledger.load(folder, "report")
        return [n for n in names if n != LEDGER and n not in stale and (n not in KNOWN_FILES or not ledger.owns(n))]
    except OSError as e:
        raise OutputError(str(folder), f"cannot read the report folder: {describe_os_error(e)}") from None


def _existing_parent(path: Path) -> Path:
    p = path.parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _fill(tmp: Path, out: Path, files: Mapping[str, str | bytes]) -> None:
    """The new folder's content: the other sets' files of ``out`` (checked as auditor's by the
    caller), the new ``files`` and the ledger naming them all."""
    ledger = Ledger(tmp, "report")
    if out.is_dir():
        old = Ledger.load(out, "report")
        for name in sorted(os.listdir(out)):
            if name in KNOWN_FILES and name not in files and name in old.files:
                try:
                    os.link(out / name, tmp / name)
                except OSError:
                    shutil.copy2(out / name, tmp / name)
                ledger.add(name, old.files[name])
    for name, content in files.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        with open(tmp / name, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        ledger.add(name, sha256_bytes(data))
    ledger.save()
    _fsync_dir(tmp)


def _swap_into_place(tmp: Path, out: Path) -> None:
    if not out.exists():
        os.rename(tmp, out)
    elif not _exchange(tmp, out):
        old = out.parent / f".{out.name}.old-{secrets.token_hex(4)}"
        os.rename(out, old)
        os.rename(tmp, out)
        os.rename(old, tmp)  # so the caller removes it
    _fsync_dir(out.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # old kernel, or a file system without it
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
