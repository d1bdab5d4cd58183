"""Zip and tar archives (``.zip``, ``.tar``, ``.tar.gz`` / ``.tgz``, ``.tar.bz2``, ``.tar.xz``, ``.tar.zst``,
or told by their content): each member read by its own format, one after the other, streamed.

A member is read as a file of its name would be: its format detected from its suffix and content,
or the dataset's ``format`` when one is given; its records' sources name it ``ARCHIVE!MEMBER``
(``data.zip!train.jsonl:3``). Left out, as not data: folders, links, macOS ``__MACOSX/`` and ``._*``
entries, documentation and code (:data:`NOT_DATA`: ``README.md``, ``LICENSE``, ``.txt``, ``.py`` …)
and the metadata JSON of a Hugging Face ``save_to_disk`` folder (its ``.arrow`` files are the data).
A member that cannot be read — encrypted, corrupt, of no format auditor reads, an archive itself — is
a bad record named by the member (an error, or skipped and counted with ``on_error = "skip"``); an
archive without any data member is an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ChangedFileError, InputError
from ..io import members as _members
from ..io.archive import archive_kind, members
from ..io.compressed import is_blank
from ..io.hfdisk import METADATA
from ..io.jsonread import load_json
from ..records.record import Record, Skip
from .base import Adapter, get_adapter

#: member suffixes (after compression) that are documentation, code or media, never read as data
NOT_DATA = (
    ".md", ".rst", ".txt", ".html", ".htm", ".pdf", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp",
    ".py", ".ipynb", ".sh", ".cfg", ".ini", ".toml", ".lock", ".gitattributes", ".gitignore",
)  # fmt: skip
#: member names (without suffix, any case) that are documentation
NOT_DATA_NAMES = ("readme", "license", "licence", "notice", "copying", "authors", "changelog", ".ds_store", "thumbs")


def is_data_member(name: str) -> bool:
    """Is the archive member ``name`` read (see the module doc)?

    >>> [is_data_member(n) for n in ("train.jsonl", "README.md", "__MACOSX/._a.json", "LICENSE", "d/q.csv.gz")]
    [True, False, False, False, True]
    """
    p = PurePosixPath(name)
    if p.parts[:1] == ("__MACOSX",) or p.name.startswith("._"):
        return False
    low = p.name.lower()
    for comp in (".gz", ".zst", ".bz2", ".xz"):
        low = low.removesuffix(comp)
    stem, _, _ = low.partition(".")
    return not low.endswith(NOT_DATA) and stem not in NOT_DATA_NAMES


def _hf_metadata(member: _members.Member) -> bool:
    """A Hugging Face ``save_to_disk`` / cache metadata file (``state.json`` ...), not data."""
    if PurePosixPath(member.name).name not in METADATA or member.size > 16 * 1024 * 1024:
        return False
    try:
        doc = load_json(member.path)
    except InputError:
        return False
    keys = {"_data_files", "_fingerprint", "features", "builder_name", "splits", "download_checksums"}
    return isinstance(doc, dict) and bool(keys & set(doc))


class ArchiveAdapter(Adapter):
    """Zip and tar archives (plain or compressed): each member read by its own format."""

    name = "archive"
    suffixes = (".zip", ".tar", ".tgz", ".tbz2", ".txz")
    layouts = ()

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        return archive_kind(path, by_content=True) is not None

    def read(self, path: Path) -> Iterator[Record | Skip]:
        if _members.lookup(path) is not None:
            yield Skip(str(path), "an archive inside an archive: extract it first")
            return
        fmt = self.options.member_format if self.options.member_format != self.name else None
        read_any = False
        left_out: list[str] = []

        def want(name: str) -> bool:
            if not is_data_member(name):
                left_out.append(name)
                return False
            return True

        for member in members(path, want):
            if member.problem is not None:
                read_any = True
                yield Skip(member.path, member.problem)
                continue
            if archive_kind(member.path) is not None:
                read_any = True
                yield Skip(member.path, "an archive inside an archive: extract it first")
                continue
            if fmt is None and _hf_metadata(member):
                left_out.append(member.name)
                continue
            read_any = True
            yield from self._member(member, fmt)
        if not read_any:
            shown = ", ".join(left_out[:5]) + (f" … ({len(left_out)} in all)" if len(left_out) > 5 else "")
            raise InputError(
                str(path), None, "no data file in the archive" + (f" (left out as not data: {shown})" if shown else "")
            )

    def _member(self, member: _members.Member, fmt: str | None) -> Iterator[Record | Skip]:
        from . import detect  # the package's detection (every registered adapter)

        path = member.path
        try:
            adapter = (get_adapter(fmt) if fmt else detect(path))(self.dataset, self.options)
            n = 0
            for item in adapter.read(Path(path)):
                n += 1
                yield item
            if n == 0 and is_blank(path):
                yield Skip(path, "no records in the file (empty)")
        except ChangedFileError:
            raise
        except InputError as e:  # the member is bad: the next one is read (on_error = "skip")
            yield Skip(f"{e.path}:{e.where}" if e.where else e.path, e.problem)

    @classmethod
    def describe(cls, path: Path) -> str:
        """The members read and left out (``auditor inspect``)."""
        read: list[str] = []
        left: list[str] = []

        def want(name: str) -> bool:
            if is_data_member(name):
                return True
            left.append(name)
            return False

        try:
            for member in members(path, want):
                (left if _hf_metadata(member) else read).append(member.name)
        except InputError as e:
            return f"unreadable archive: {e.problem}"
        out = f"{len(read)} member{'s' if len(read) != 1 else ''} read ({', '.join(read[:8])}{' …' if len(read) > 8 else ''})"
        if left:
            out += f"; left out as not data: {', '.join(left[:8])}{' …' if len(left) > 8 else ''}"
        return out
