"""The pinned public releases (``auditor/data/releases.json``) and their download.

Each release is a set of data files from one public repository, every file pinned by the commit it
was taken at, its path there and its SHA-256. :func:`fetch_releases` downloads the files of the
releases asked for from ``BASE/OWNER/NAME/COMMIT/PATH`` (``BASE``: raw.githubusercontent.com, or a
mirror), checks each one's bytes against its SHA-256 before anything is written, and writes it to
``DEST/<release>/...`` (the layout the tests and notebooks read) by a temp file and a rename. A file
already there whose SHA-256 is the pinned one is not downloaded again; one that differs is replaced.

>>> rel = releases()["webshop"]
>>> rel.repo, len(rel.files), rel.files[0].path
('princeton-nlp/WebShop', 2, 'webshop/baseline_models/data/goal_query_map.json')
>>> rel.files[0].url("https://raw.githubusercontent.com")
'https://raw.githubusercontent.com/princeton-nlp/WebShop/64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd/baseline_models/data/goal_query_map.json'
>>> [r.name for r in select("webshop")], len(select("all")) == len(releases())
(['webshop'], True)

Errors (:class:`~auditor.errors.FetchError`, one line each): a host that cannot be reached (naming
it and the URL), an HTTP error, bytes that are not the pinned ones (nothing is written); an unknown
release name is a :class:`~auditor.errors.ConfigError`; a destination that cannot be written, an
:class:`~auditor.errors.OutputError`.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import ConfigError, FetchError, OutputError, did_you_mean
from ..io.atomic import atomic_write_bytes
from ..io.files import sha256_file

RELEASES = Path(__file__).resolve().parent.parent / "data" / "releases.json"
RELEASES_FORMAT = 1
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
#: downloads in flight at once (small files: the time is the round trips)
PARALLEL = 8


@dataclass(frozen=True)
class ReleaseFile:
    path: str  # under the destination folder: <release>/<path upstream, or a folder of its own>
    repo: str  # owner/name on GitHub
    commit: str  # the full commit the file is pinned at
    upstream: str  # its path in the repository
    sha256: str
    bytes: int

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{urllib.parse.quote(self.upstream)}"


@dataclass(frozen=True)
class Release:
    name: str
    repo: str
    licence: str
    files: tuple[ReleaseFile, ...]

    @property
    def size(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def commits(self) -> list[str]:
        return list(dict.fromkeys(f.commit for f in self.files))


@dataclass
class Fetched:
    """What :func:`fetch_releases` did for one release."""

    release: Release
    downloaded: int = 0  # files written (absent before)
    replaced: int = 0  # files there whose bytes were not the pinned ones, written again
    present: int = 0  # files already there with the pinned SHA-256: not downloaded
    bytes: int = 0  # bytes downloaded


@cache
def releases() -> dict[str, Release]:
    """The releases of ``releases.json``, by name."""
    doc = json.loads(RELEASES.read_text(encoding="utf-8"))
    if doc.get("format") != RELEASES_FORMAT:
        raise ConfigError(f"{RELEASES}: format {doc.get('format')!r}, expected {RELEASES_FORMAT}")
    out = {}
    for name, entry in doc["datasets"].items():
        files = tuple(ReleaseFile(repo=entry["repo"], **f) for f in entry["files"])
        out[name] = Release(name, entry["repo"], entry["licence"], files)
    return out


def select(name: str) -> list[Release]:
    """The release called ``name``, or all of them for ``all``."""
    known = releases()
    if name == "all":
        return list(known.values())
    if name not in known:
        raise ConfigError(
            f"no public release named {name!r}{did_you_mean(name, known)}; known: all, {', '.join(known)}"
        )
    return [known[name]]


def checkout_data_folder() -> Path | None:
    """``shared/data`` beside the checkout this package runs from (where the tests and notebooks look
    without ``$AUDITOR_SHARED_DATA``), or None for an installed package (no checkout around it)."""
    root = Path(__file__).resolve().parent.parent.parent
    if (root / "pyproject.toml").is_file() and (root / "tests" / "helpers.py").is_file():
        return root.parent / "shared" / "data"
    return None


def _present_digest(path: Path) -> str | None:
    """The SHA-256 of the file at ``path`` (:func:`~auditor.io.files.sha256_file`), or None when there
    is none (or it cannot be read)."""
    try:
        return sha256_file(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


def status(release: Release, dest: Path) -> int:
    """How many of ``release``'s files are in ``dest`` with their pinned SHA-256."""
    return sum(_present_digest(dest / f.path) == f.sha256 for f in release.files)


def download(file: ReleaseFile, base: str, timeout: float = 60.0) -> bytes:
    """``file``'s bytes from ``base``, checked against its pinned size and SHA-256."""
    url = file.url(base)
    host = urllib.parse.urlsplit(url).netloc or url
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read(file.bytes + 1)  # one byte more than pinned: a longer file is caught
    except urllib.error.HTTPError as e:
        raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise FetchError(f"cannot reach {host} ({url}): {_one_line(e.reason)}") from None
    except TimeoutError:
        raise FetchError(f"cannot reach {host} ({url}): no answer in {timeout:g} s") from None
    except OSError as e:  # a connection reset mid-transfer, an incomplete read
        raise FetchError(f"download of {url} failed: {_one_line(e)}") from None
    got = hashlib.sha256(data).hexdigest()
    if got != file.sha256:
        raise FetchError(
            f"{url}: SHA-256 {got} ({len(data)} bytes) is not the pinned {file.sha256} ({file.bytes} bytes); "
            f"nothing written to {file.path}"
        )
    return data


def _one_line(reason: object) -> str:
    return " ".join(str(reason).split()) or type(reason).__name__


def _fetch_one(file: ReleaseFile, dest: Path, base: str, timeout: float) -> tuple[str, int]:
    target = dest / file.path
    before = _present_digest(target)
    if before == file.sha256:
        return "present", 0
    data = download(file, base, timeout)
    try:
        atomic_write_bytes(target, data)
        os.chmod(target, 0o644)  # a data file others may read, not the temp file's private 0600
    except OSError as e:
        raise OutputError(str(target), f"cannot write: {_one_line(e.strerror or e)}") from None
    return ("downloaded" if before is None else "replaced"), len(data)


def fetch_releases(
    names: list[Release], dest: Path, base: str = DEFAULT_BASE_URL, timeout: float = 60.0
) -> Iterator[Fetched]:
    """Download ``names``'s files into ``dest`` (see the module doc); one :class:`Fetched` per release,
    as each is complete. The first failure stops the fetch: files written before it are whole and
    verified, and a rerun fetches only what is missing."""
    with ThreadPoolExecutor(PARALLEL, thread_name_prefix="auditor-fetch") as pool:
        for release in names:
            done = Fetched(release)
            futures = [pool.submit(_fetch_one, f, dest, base, timeout) for f in release.files]
            try:
                for future in futures:
                    what, size = future.result()
                    setattr(done, what, getattr(done, what) + 1)
                    done.bytes += size
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
            yield done
