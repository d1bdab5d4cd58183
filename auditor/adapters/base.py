"""The adapter protocol: one file per dataset format.

An adapter turns one file into :class:`~auditor.records.record.Record` objects (or :class:`~auditor.records.record.Skip`
for an item it cannot use, with the reason). Subclasses register themselves by ``name`` in
:data:`ADAPTERS`; format detection asks each adapter's :meth:`Adapter.sniff` in the order of
:data:`BUILTIN`, one list (:func:`in_sniff_order`).

A new format is one new module in :mod:`auditor.adapters` defining a subclass::

    class MyFormat(Adapter):
        name = "my-format"
        suffixes = (".json",)
        sniff_keys = frozenset({"my_key"})      # or a sniff(path, sample) of its own

        def read(self, path):
            for i, obj in enumerate(load_json(path)):
                yield self.record(str(obj["id"]), f"{path}#{i}", {"query": obj["q"]}, raw=obj)

        def writer(self, source, target):       # optional: cleaned output in this format
            return JsonArrayWriter(source, target)

and, for a built-in one, one line in :data:`BUILTIN` at the place it is to be sniffed (a plugin's
adapter, not listed, sniffs after every listed specific format, before the generic ones).

A format that can be written back declares it by returning a
:class:`~auditor.adapters.RecordWriter` from :meth:`Adapter.writer` (streamed, atomic; the
cleaned training sets of ``--write-clean`` use it). The default returns None: the cleaner then
writes JSON Lines of the records' views.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import InputError
from ..io.compressed import is_plain
from ..io.files import file_size
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS, LineSpan
from ..records.record import Record, Skip
from ..registry import Registry
from ._write import RecordWriter

#: every format by name (``--*-format``, a manifest's ``format``): the built-in ones declared from
#: :data:`BUILTIN` (imported on first use), any other subclass registered when its class is made
ADAPTERS: Registry[type[Adapter]] = Registry("format", plural="known formats")

#: every built-in adapter and its module, in the order detection sniffs them: the first whose
#: :meth:`Adapter.sniff` accepts a file's sample reads it. Specific formats first (one whose records are
#: a subset of another's shape before it: ``lmsys-chat`` before ``chat``), the generic readers last.
#: ``tests/test_registry.py`` checks that every built-in adapter is here exactly once.
BUILTIN: tuple[tuple[str, str], ...] = (
    ("llamafactory", "auditor.adapters.llamafactory"),
    ("tau2-tasks", "auditor.adapters.tau2_tasks"),
    ("tau-bench-tasks", "auditor.adapters.tau_bench_tasks"),
    ("refinetoolbench", "auditor.adapters.refinetoolbench"),
    ("toolbench-answers", "auditor.adapters.toolbench_answers"),
    ("api-bank", "auditor.adapters.api_bank"),
    ("toolalpaca", "auditor.adapters.toolalpaca"),
    ("bfcl", "auditor.adapters.bfcl"),
    ("apibench", "auditor.adapters.apibench"),
    ("nestful", "auditor.adapters.nestful"),
    ("toolbench-queries", "auditor.adapters.toolbench_queries"),
    ("glaive", "auditor.adapters.glaive"),
    ("xlam", "auditor.adapters.xlam"),
    ("toolace", "auditor.adapters.toolace"),
    ("mt-bench", "auditor.adapters.mt_bench"),
    ("caft", "auditor.adapters.caft"),
    ("dolly", "auditor.adapters.dolly"),
    ("alpaca", "auditor.adapters.alpaca"),
    ("trl", "auditor.adapters.trl"),
    ("lmsys-chat", "auditor.adapters.lmsys_chat"),
    ("chat", "auditor.adapters.chat"),
    ("webshop-goals", "auditor.adapters.webshop_goals"),
    # generic readers: chosen when no specific format matched, or by suffix
    ("jsonl", "auditor.adapters.generic_json"),
    ("archive", "auditor.adapters.archive"),
    ("arrow", "auditor.adapters.arrow_table"),
    ("csv", "auditor.adapters.csv_table"),
    ("json", "auditor.adapters.generic_json"),
    ("parquet", "auditor.adapters.parquet_table"),
    ("yaml", "auditor.adapters.yaml_file"),
)
_RANK = {name: float(i) for i, (name, _) in enumerate(BUILTIN)}
_PLUGINS = _RANK["jsonl"] - 0.5  # where an adapter not in BUILTIN sniffs: before the generic readers


@dataclass(frozen=True)
class AdapterOptions:
    """Per-dataset options an adapter may use. Fields are dotted paths into a record;
    ``max_record_chars`` bounds one record (line-based readers never hold a longer line)."""

    text_field: str | None = None
    id_field: str | None = None
    max_record_chars: int = DEFAULT_MAX_RECORD_CHARS
    #: message selector for chat-shaped fields (:mod:`auditor.records.messages`); None: each adapter's default
    messages: str | None = None
    #: dotted path of a field holding tool calls (generic formats; :mod:`auditor.records.callparse`)
    calls_field: str | None = None
    #: the format the members of an archive are read in (the dataset's ``format``); None: detected per member
    member_format: str | None = None


class Adapter(ABC):
    #: format name used in manifests and ``--*-format`` flags
    name: ClassVar[str] = ""
    #: file suffixes (without compression) this adapter can read; JSON-family adapters are chosen
    #: by content (``layouts``), whatever the suffix
    suffixes: ClassVar[tuple[str, ...]] = (".json", ".jsonl")
    #: file layouts (:func:`auditor.io.sniff.sniff` kinds) this adapter reads; empty for non-JSON formats
    layouts: ClassVar[tuple[str, ...]] = ("array", "object")
    #: keys the first record of a file in this format has: what the default :meth:`sniff` looks for
    sniff_keys: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            ADAPTERS.register(cls.name, cls)

    def __init__(self, dataset: str, options: AdapterOptions | None = None):
        self.dataset = dataset
        self.options = options or AdapterOptions()

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        """True when ``sample`` (see :func:`auditor.io.sniff.sniff`) looks like this format; by
        default, when its first record has every one of :attr:`sniff_keys` (and there are some)."""
        first = first_record(sample)
        return bool(cls.sniff_keys) and first is not None and cls.sniff_keys <= first.keys()

    @abstractmethod
    def read(self, path: Path) -> Iterator[Record | Skip]:
        """Yield one Record (or Skip) per item of ``path``, in file order."""

    def writer(self, source: Path, target: Path) -> RecordWriter | None:
        """A writer that puts records this adapter read from ``source`` back in its format at
        ``target`` (records arrive in file order, some left out), or None when it cannot."""
        return None

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[Any]:
        """How ``path`` cuts into parts that :meth:`read_part` reads independently, in file order;
        ``[]`` (the default) when the file is read whole. Parts are a
        :class:`~auditor.io.jsonread.LineSpan` (line-based formats) or a format's own object."""
        return []

    def read_part(self, path: Path, part: Any) -> Iterator[Record | Skip]:
        """Yield the items of one part of ``path`` (one of :meth:`parts`); sources and positional ids
        are those of the whole file, except line numbers and positions of a ``LineSpan`` after the
        first, which count from its start (the engine adds the earlier parts' counts)."""
        raise NotImplementedError(f"format '{self.name}' is read whole")

    def record(
        self, id: Any, source: str, views: dict[str, str], *, raw: Any = None, split: str | None = None, **meta: Any
    ) -> Record:
        """Build a Record of this adapter's dataset (``ordinal`` is set by the dataset loader)."""
        clean = {k: v for k, v in views.items() if isinstance(v, str) and v}
        return Record(dataset=self.dataset, id=str(id), source=source, views=clean, meta=meta, raw=raw, split=split)


def first_record(sample: Any) -> dict | None:
    """The first record of a sniffed sample when it is a JSON object, else None (what every
    adapter's :meth:`Adapter.sniff` looks at first).

    >>> first_record([{"id": 1}, {"id": 2}]), first_record([]), first_record(["a"]), first_record({"id": 1})
    ({'id': 1}, None, None, None)
    """
    if isinstance(sample, list) and sample and isinstance(sample[0], dict):
        return sample[0]
    return None


def line_spans(path: Path, split_bytes: int) -> list[LineSpan]:
    """Byte ranges of ``split_bytes`` of an uncompressed line-based file; [] when it fits one."""
    try:
        size = file_size(path)
    except (OSError, InputError):
        return []
    if size <= split_bytes or not is_plain(path):
        return []  # a compressed or transcoded stream, an archive member: cannot be entered in the middle
    cuts = list(range(0, size, split_bytes))
    return [LineSpan(a, b) for a, b in zip(cuts, [*cuts[1:], None])]


class GenericAdapter(Adapter):
    """Base of the generic formats (json, jsonl, csv, parquet): chosen by suffix when no specific
    adapter recognizes a file, configured by ``text_field`` / ``id_field``, written back as read."""

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        return True


def registry() -> dict[str, type[Adapter]]:
    """Every adapter by name, each imported (:data:`ADAPTERS` lists names without importing)."""
    return ADAPTERS.all()


def get_adapter(name: str) -> type[Adapter]:
    """The adapter of format ``name``; :class:`~auditor.errors.ConfigError` for an unknown one."""
    return ADAPTERS.get(name)


def is_generic(adapter: type[Adapter]) -> bool:
    """Is ``adapter`` a generic reader (json, jsonl, tables), chosen only when no specific format matched?"""
    return issubclass(adapter, GenericAdapter)


def in_sniff_order(adapters: Iterable[type[Adapter]]) -> list[type[Adapter]]:
    """``adapters`` in the order detection asks them, :data:`BUILTIN`'s; one not listed (a plugin's)
    after the listed specific ones and before the generic readers (those after ``jsonl``), by name.

    >>> [a.name for a in in_sniff_order([get_adapter("json"), get_adapter("chat"), get_adapter("lmsys-chat")])]
    ['lmsys-chat', 'chat', 'json']
    """
    return sorted(adapters, key=lambda a: (_RANK.get(a.name, _PLUGINS), a.name))


for _name, _module in BUILTIN:
    ADAPTERS.declare(_name, _module)
