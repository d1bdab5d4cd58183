"""Helpers shared by CLI commands, and the CLI's defaults from the environment.

The environment is read here, at the edge, and nowhere in the library: ``$AUDITOR_INDEX_DIR``
(``--index-dir``) and ``$AUDITOR_EMBED_CACHE`` (``--embed-cache``) through click's ``envvar``, and
``$AUDITOR_REPORT_DIR``, the parent of report folders chosen by default (:func:`reports_root`).
The library takes every folder as an explicit argument (:class:`~auditor.audit.config.AuditConfig`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from ..errors import AuditorError
from ..io.files import describe_os_error

if TYPE_CHECKING:  # a type only: a command that makes no audit does not import the pipeline
    from ..audit.config import AuditConfig

#: where persisted indexes go when neither --index-dir, $AUDITOR_INDEX_DIR nor the manifest says
DEFAULT_INDEX_DIR = "indexes"
#: where report folders go when neither --report-dir, $AUDITOR_REPORT_DIR nor the manifest says
DEFAULT_REPORTS_ROOT = "reports"

EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT: an interrupted run is neither a pass nor a finding


class AuditorClickError(click.ClickException):
    exit_code = EXIT_ERROR


@contextlib.contextmanager
def library_errors() -> Iterator[None]:
    """Turn library errors into one clean line on stderr and exit code 2; Ctrl-C into one line and
    exit code 130 (outputs are written atomically, so nothing half-written is left)."""
    try:
        yield
    except AuditorError as e:
        raise AuditorClickError(str(e)) from None
    except BrokenPipeError:  # the reader of stdout closed it (`| head`): a quiet end, not an error
        raise
    except OSError as e:  # a file system fault no check caught first: still one line, exit 2
        where = f"{e.filename}: " if e.filename else ""
        raise AuditorClickError(f"{where}{describe_os_error(e)}") from None
    except RecursionError:
        raise AuditorClickError("input nested too deeply to process (Python's recursion limit)") from None
    except MemoryError:
        raise AuditorClickError("out of memory; give the run more memory or smaller inputs") from None
    except KeyboardInterrupt:
        click.echo("auditor: interrupted; no report written", err=True)
        _forget_interrupt()
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


def _forget_interrupt() -> None:
    """Make the exit status 130, as promised, even when Ctrl-C landed inside a string ``exec``.

    CPython (3.11, 3.12) records a KeyboardInterrupt that ends a string ``exec``/``eval`` (libraries
    run some at import, e.g. scipy's ``exec(f"from numpy import *", ...)``) in a process-wide flag;
    under ``python -m`` the interpreter then ends by killing itself with SIGINT (status -2) whatever
    exit code was asked for, even though the interrupt was caught. The flag is reset at the start of
    every string evaluation, so one empty evaluation clears it.
    """
    exec("None", {})


def exit_for(verdict: str) -> int:
    return EXIT_PASS if verdict == "pass" else EXIT_FAIL


def reports_root() -> str:
    """The parent of report folders chosen by default: ``$AUDITOR_REPORT_DIR``, else ``reports``."""
    return os.environ.get("AUDITOR_REPORT_DIR") or DEFAULT_REPORTS_ROOT


def default_report_dir(name: str = "audit") -> str:
    """``<reports root>/<name>`` (see :func:`reports_root`)."""
    return os.path.join(reports_root(), name)


def fresh_report_dir(config: AuditConfig, name: str = "audit") -> str:
    """A new report folder for one run: ``<reports>/<name>-<UTC time>-<config hash>`` (``-2``, ``-3`` ...
    when that exists), so runs without a chosen folder never replace each other's reports."""
    digest = hashlib.sha256(repr((config.datasets, config.checks, config.method_params)).encode()).hexdigest()[:6]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = default_report_dir(f"{name}-{stamp}-{digest}")
    path, i = base, 2
    while os.path.lexists(path):
        path, i = f"{base}-{i}", i + 1
    return path


def _typed(name: str) -> bool:
    """Was option ``name`` given on the command line (not taken from the environment or its default)?"""
    return click.get_current_context().get_parameter_source(name) is ParameterSource.COMMANDLINE


#: how a dataset's records are read (DatasetSpec fields): flag and help of each option
FIELD_OPTIONS = (
    ("text-field", "Dotted path of the text field, for generic formats"),
    ("id-field", "Dotted path of the id field, for generic formats"),
    ("messages", "Message selector for chat-shaped fields: first-user, last-user, all-user (default), WHICH-ROLE"),
    ("calls-field", "Dotted path of a field holding tool calls (JSON or Python-style call strings)"),
    (
        "encoding",
        "Text encoding of the files (latin-1, cp1252, utf-16 ...; default UTF-8, or as a byte-order mark says)",
    ),
)


def dataset_field_options(f: Any) -> Any:
    """``--text-field`` / ``--id-field`` / ``--messages`` / ``--calls-field`` / ``--encoding`` of one dataset."""
    for flag, text in reversed(FIELD_OPTIONS):
        f = click.option(f"--{flag}", default=None, help=f"{text}.")(f)
    return f


def index_dir_option(help: str) -> Callable[[Any], Any]:
    """``--index-dir`` (``$AUDITOR_INDEX_DIR``); apply it with :func:`apply_index_dir`."""
    return click.option("--index-dir", envvar="AUDITOR_INDEX_DIR", default=None, help=help)


def apply_index_dir(config: AuditConfig, index_dir: str | None) -> None:
    """``--index-dir`` given on the command line wins over the manifest's ``index_dir``;
    ``$AUDITOR_INDEX_DIR``, else ``indexes``, applies when the manifest names none."""
    if index_dir and _typed("index_dir"):
        config.index_dir = index_dir
    elif config.index_dir is None:
        config.index_dir = index_dir or DEFAULT_INDEX_DIR


EMBED_CACHE_HELP = (
    "Where the embedding method caches embeddings (default: $AUDITOR_EMBED_CACHE, else <index dir>/embeddings)."
)
MODEL_CACHE_HELP = "Where the embedding method keeps the encoders it builds (default: $AUDITOR_MODEL_CACHE, else ~/.cache/auditor/models)."


EMBED_GATE_HELP = (
    "The embedding method's lexical gate: 'lexical' (the default) encodes only training text sharing enough "
    "words with some eval item (the report says how many segments it stopped); 'none' encodes every segment "
    "(the manifest's [methods.embedding] gate)."
)


def _keep_embed_gate(ctx: click.Context, _param: Any, value: str | None) -> None:
    ctx.meta["auditor.embed_gate"] = value


def embed_cache_option(help: str = EMBED_CACHE_HELP) -> Callable[[Any], Any]:
    """``--embed-cache`` (``$AUDITOR_EMBED_CACHE``): the ``embedding`` method's ``cache_dir``,
    ``--model-cache`` (``$AUDITOR_MODEL_CACHE``): its ``model_cache``, and ``--embed-gate``: its
    ``gate`` (kept in the click context, applied by :func:`apply_embed_cache`)."""

    def decorate(f: Any) -> Any:
        f = click.option(
            "--embed-gate",
            type=click.Choice(["lexical", "none"]),
            default=None,
            expose_value=False,
            callback=_keep_embed_gate,
            help=EMBED_GATE_HELP,
        )(f)
        f = click.option(
            "--model-cache", envvar="AUDITOR_MODEL_CACHE", default=None, metavar="DIR", help=MODEL_CACHE_HELP
        )(f)
        return click.option("--embed-cache", envvar="AUDITOR_EMBED_CACHE", default=None, metavar="DIR", help=help)(f)

    return decorate


def _embedding_param(config: AuditConfig, option: str, key: str, value: str | None) -> None:
    named = {m for c in config.checks for m in c.methods or []} | {
        m for p in config.provenance for m in p.methods or []
    }
    if not value or "embedding" not in named:
        return
    params = config.method_params.setdefault("embedding", {})
    if isinstance(params.get(key), dict):  # a nested table ([methods.embedding.gate]): the flag sets its rule
        params[key] = {**params[key], "rule": value}
    elif _typed(option) or key not in params:
        params[key] = value


def apply_embed_cache(config: AuditConfig, embed_cache: str | None, model_cache: str | None = None) -> None:
    """``--embed-cache`` / ``--model-cache`` / ``--embed-gate`` as ``[methods.embedding] cache_dir`` /
    ``model_cache`` / ``gate`` of a run that names the embedding method: given on the command line
    they win over the manifest's; from ``$AUDITOR_EMBED_CACHE`` / ``$AUDITOR_MODEL_CACHE`` they apply
    when the manifest sets none. A run without the method is left as it is."""
    _embedding_param(config, "embed_cache", "cache_dir", embed_cache)
    _embedding_param(config, "model_cache", "model_cache", model_cache)
    ctx = click.get_current_context(silent=True)
    gate = ctx.meta.get("auditor.embed_gate") if ctx is not None else None
    _embedding_param(config, "embed_gate", "gate", gate)
