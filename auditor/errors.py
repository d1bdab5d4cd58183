"""One exception hierarchy for the whole toolkit.

Every error a user can provoke derives from :class:`AuditorError`; the CLI turns any of them into a
one-line message and exit code 2. Nothing here prints a traceback.

>>> try:
...     raise InputError("data.jsonl", "line 3", "invalid JSON: Expecting value")
... except AuditorError as e:
...     print(e)
data.jsonl:line 3: invalid JSON: Expecting value
"""

from __future__ import annotations

import difflib


class AuditorError(Exception):
    """Base class of every error raised on purpose by auditor."""


class InputError(AuditorError):
    """Unreadable or malformed input data: names the file, the place in it and the problem."""

    def __init__(self, path: str, where: str | None, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        loc = f"{self.path}:{where}" if where else self.path
        super().__init__(f"{loc}: {problem}")

    def __reduce__(self):  # rebuilt from its parts when it crosses a process boundary
        return (type(self), (self.path, self.where, self.problem))


class ChangedFileError(InputError):
    """An input file that changed (truncated, appended to, replaced) while it was being read.

    Always an error, even with ``on_error = "skip"``: part of the file was already scanned, and
    the rest may never be; the audit cannot say what it checked."""

    def __init__(self, path: str, problem: str):
        self.reason = problem
        super().__init__(
            path, None, f"{problem}: the scan would be partial; audit a copy that nothing writes to while it runs"
        )

    def __reduce__(self):
        return (type(self), (self.path, self.reason))


class ManifestError(AuditorError):
    """A manifest (split.toml) that is malformed, has unknown keys, or names what does not exist."""


class RegistryError(AuditorError):
    """A bundled evaluation set is unknown, or its files fail their fingerprint check."""


class ConfigError(AuditorError):
    """Bad parameters for a method, an adapter or a run."""


class MissingDependencyError(AuditorError):
    """An optional dependency (an extra) is needed but not installed."""

    def __init__(self, package: str, extra: str, purpose: str):
        self.parts = (package, extra, purpose)
        super().__init__(f"{purpose} needs the package '{package}'; install it with: pip install 'auditor[{extra}]'")

    def __reduce__(self):
        return (type(self), self.parts)


class ScanError(AuditorError):
    """A scan that could not finish (e.g. a worker process died)."""


class IndexFileError(AuditorError):
    """A persisted index that is missing, truncated, tampered with or of another format version."""


class OutputError(AuditorError):
    """An output (report folder, cleaned data, index) that cannot be written where asked."""

    def __init__(self, path: str, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class FetchError(AuditorError):
    """A public release that could not be downloaded (a host not reached, an HTTP error) or whose bytes
    are not the pinned ones (``auditor data fetch``)."""


class InternalError(RuntimeError):
    """A bug in auditor, never bad input: deliberately *not* an :class:`AuditorError`, so the CLI does
    not turn it into a one-line "bad input" message but shows it, traceback and cause, to be reported
    (e.g. a renderer failing on a report.json that passed validation: :func:`auditor.report.rerender`)."""


def did_you_mean(word: str, choices, what: str = "") -> str:
    """A hint for an unknown name: `` (did you mean 'embedding'?)`` when one of ``choices`` is close
    (difflib), else an empty string.

    >>> did_you_mean("embeding", ["exact", "embedding", "ngram"])
    " (did you mean 'embedding'?)"
    >>> did_you_mean("zzz", ["exact"])
    ''
    """
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {what}'{close[0]}'?)" if close else ""
