"""``entities``: identifiers that ground an eval item, found in training records — evidence only.

Built-in extractors (``kinds``) for known formats, plus user regexes (``patterns``, name → regex, from
``[methods.entities]`` in the manifest):

================  ========================================  ==================================
kind              pattern                                   example
================  ========================================  ==================================
``user_id``       tau-bench / tau2 user ids                 ``emma_kim_9957``
``order_id``      tau retail order ids                      ``#W2378156``
``payment_id``    tau payment method ids                    ``credit_card_4421486``
``flight_number`` tau airline flight numbers                ``HAT136``
``reservation``   6-character codes with letters and digits ``EHGLP3``
``asin``          WebShop / Amazon product ids              ``B07XJ8C8F5``
``toolbench_qid`` group-scoped ToolBench query ids          ``G2_13487``, ``G1@33737``
``email``         e-mail addresses                          ``mia.li3818@example.com``
================  ========================================  ==================================

An eval item's identifiers come from its ``eval_views`` (default ``query`` and ``text``; a tau2 task's
text holds its expected actions' arguments), and an eval item with a ``group`` and a native id also
yields its scoped id (``G1_588``). A training record's ``train_views`` (default ``text``) are scanned;
each finding lists the identifiers found with their view, character span and — for trajectories —
turn. Score: share of the eval item's distinct identifiers found in the record, where an identifier the
record holds only inside tool results (a flight number in a search result) counts
:data:`TOOL_RESULT_WEIGHT` (0.25) and is marked ``in_tool_results_only``; it never counts toward
``conclusive_min_ids``.

False friends: a ``reservation``-shaped code (6 upper-case letters and digits) is not one when it is a
hex colour (after ``#`` or ``0x``, or all-hex after "colour", "hex", "rgb", "hash", "sha" …), or a
price or quantity (``100USD``, ``USD250``, ``512GB1``).

Why evidence only (``conclusive = False``): identifiers name entities of a shared environment (tau's
user and order database, Amazon's catalogue), and train and test tasks of the same benchmark
legitimately share users, flights and products; an id alone does not show that the *task* leaked.
Findings point a reviewer at the exact place to look. Set ``conclusive_min_ids`` (e.g. 3) to make
a finding conclusive when that many distinct identifiers of one eval item co-occur in one record.

Raises :class:`~auditor.errors.ConfigError` for an unknown kind, a pattern name that is not a word or a
regex that does not compile.

>>> from auditor.records.record import Record
>>> ev = Record("tau2", "0", "t#0", {"query": "You are emma_kim_9957 and want to cancel EHGLP3."})
>>> tr = Record("train", "x", "x:1", {"text": "user: my id is emma_kim_9957"})
>>> f = EntitiesIndex().build([ev]).search([tr])[0]
>>> f.score, f.evidence["identifiers"][0]["id"], f.evidence["identifiers"][0]["span"], f.conclusive
(0.5, 'emma_kim_9957', [15, 28], False)
>>> [k for _, k, *_ in EntitiesIndex().extract("Brand colour #E11D48, booking EHGLP3, total 100USD")]
['reservation']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..records.record import QUERY, TEXT, Record
from ..records.trajectory import turn_of
from .base import Finding, Index, MethodConfig

try:  # Aho-Corasick over the eval identifiers (a Rust wheel); without it every training text is extracted
    import ahocorasick_rs
except ImportError:  # pragma: no cover - a platform without the wheel: same findings, slower
    ahocorasick_rs = None  # type: ignore[assignment]

BUILTIN: dict[str, str] = {
    "user_id": r"\b[a-z]+_[a-z]+_\d{4}\b",
    "order_id": r"#W\d{7}\b",
    "payment_id": r"\b(?:credit_card|gift_card|certificate|paypal)_\d{5,}\b",
    "flight_number": r"\bHAT\d{3}\b",
    "reservation": r"\b[A-Z0-9]{6}\b",
    "asin": r"\bB0[0-9A-Z]{8}\b",
    "toolbench_qid": r"\bG[1-3][@_]\d+\b",
    "email": r"[\w.+-]+@[\w-]+\.[\w.]+\b",
}
#: cheap substring tests that must pass before a kind's regex runs
_PREFILTER = {"order_id": "#W", "flight_number": "HAT", "email": "@", "user_id": "_", "payment_id": "_"}
#: kinds whose pattern opens with a repeated character class and no anchor: each is searched from
#: the start of a run of that class only (:func:`_run_starts`), the same matches in linear time. Plain
#: ``finditer`` tries every position inside a run and rescans the rest of it from there: quadratic
#: in the run's length (a 30,000-character token of a tool result held ``entities`` for ~20 s)
_RUN_CLASS = {"email": r"[\w.+-]"}
_MIXED = re.compile(r"(?=.*\d)(?=.*[A-Z])")
#: a 6-character code that is a quantity: currency or unit after digits, or before them (``100USD``, ``USD100``, ``512GB1``)
_QUANTITY = re.compile(
    r"^(?:\d+(?:USD|EUR|GBP|JPY|CNY|INR|CAD|AUD|CHF|RMB|KG|KM|CM|MM|LB|LBS|OZ|GB|MB|KB|TB|MP|PX|HZ|KHZ|MHZ|GHZ|MAH|"
    r"ML|W|V|K|P|FPS|DPI)\d*|(?:USD|EUR|GBP|JPY|CNY|INR|CAD|AUD|CHF|RMB)\d+)$"
)
_HEX = re.compile(r"^[0-9A-F]{6}$")
#: words before a 6-character hex code that make it a colour or a digest, not a booking code
_NOT_A_CODE = re.compile(
    r"(?:colou?r|hex|rgb|fill|stroke|background|hash|sha\w*|md5|digest|checksum|commit)\W{0,3}\Z", re.I
)
#: weight of an identifier a training record holds only inside tool results (search results list
#: flight numbers and ids of many entities; the user's request names the one a task is about)
TOOL_RESULT_WEIGHT = 0.25


def _false_friend(kind: str, code: str, text: str, start: int) -> bool:
    """True when a ``reservation``-shaped match is something else by its form or its context: a hex
    colour (``#E11D48``, or hex after "colour"/"hex"/"rgb"), a digest, a price or a quantity with its unit."""
    if kind != "reservation":
        return False
    if not _MIXED.match(code) or _QUANTITY.match(code):
        return True
    before = text[max(0, start - 24) : start]
    if before.endswith("#") or before.endswith("0x"):
        return True
    return bool(_HEX.match(code) and _NOT_A_CODE.search(before.rstrip(" :=\"'")))


def _run_starts(
    rx: re.Pattern, starts: re.Pattern, text: str, pos: int = 0, end: int | None = None
) -> Iterator[re.Match]:
    """The matches ``rx.finditer(text)`` gives, for a pattern opening with ``C+`` (a character
    class ``C``), searched in linear time: ``starts`` is ``rx`` behind ``(?<!C)``.

    Where a match may start: right where the previous one ended (``rx.match`` there), or else at
    the first position whose left neighbour is not in ``C`` — a later start inside a run of ``C``
    would mean the position before it matches too (one more character of the run), so the leftmost
    match never starts inside a run. Each run is thus scanned a bounded number of times.

    >>> rx = re.compile(BUILTIN["email"])
    >>> starts = re.compile(r"(?<![\\w.+-])" + BUILTIN["email"])
    >>> text = "a@b.com-x@y.org, " + "z" * 50 + " mia.li3818@example.com."
    >>> [m.group(0) for m in _run_starts(rx, starts, text)] == [m.group(0) for m in rx.finditer(text)]
    True
    """
    end = len(text) if end is None else end
    while pos <= end:
        m = rx.match(text, pos, end) or starts.search(text, pos + 1, end)
        if m is None:
            return
        yield m
        pos = m.end() if m.end() > m.start() else m.end() + 1


def _canon(kind: str, value: str) -> str:
    return value.replace("@", "_") if kind == "toolbench_qid" else value


_QID = re.compile(r"G[1-3]_\d+")


def literal_matcher(identifiers: Sequence[str]) -> Any | None:
    """An Aho-Corasick automaton over every spelling a training text can hold ``identifiers`` in
    (the identifier itself; a ToolBench id also with ``@``, which :func:`_canon` folds), or None when
    there is none to look for, one is empty (a user regex matching nothing) or the wheel is missing.

    Every identifier :meth:`EntitiesIndex.extract` yields is a substring of its text in one of these
    spellings, so a text in which the automaton finds none holds no identifier of the index: the
    scan skips extracting it (the regexes cost ~15x the automaton on real text).

    >>> m = literal_matcher(["G1_588", "EHGLP3"])
    >>> bool(m.find_matches_as_indexes("see G1@588")), bool(m.find_matches_as_indexes("G1_58 EHGLP"))
    (True, False)
    """
    if ahocorasick_rs is None or not identifiers or "" in identifiers:
        return None
    spellings = sorted({*identifiers, *(i.replace("_", "@") for i in identifiers if _QID.fullmatch(i))})
    small = sum(map(len, spellings)) <= DFA_CHARS
    return ahocorasick_rs.AhoCorasick(spellings, implementation=ahocorasick_rs.Implementation.DFA if small else None)


#: spellings of at most this many characters in all are searched by a DFA (~0.3 kB of memory a
#: character, in each worker: 32 K characters, ~10 MB), over twice as fast as the automaton the wheel
#: picks for more than a few patterns (StableToolBench's 787 identifiers on 100 MB of real text:
#: 0.44 -> 0.19 CPU-s); more are searched by the wheel's choice (100 K identifiers: ~50 MB, not 290)
DFA_CHARS = 1 << 15


@dataclass
class EntitiesConfig(MethodConfig):
    eval_views: tuple[str, ...] = (QUERY, TEXT)
    train_views: tuple[str, ...] = (TEXT,)
    #: built-in extractors to use (default: all)
    kinds: tuple[str, ...] = tuple(BUILTIN)
    #: user extractors: name → regular expression (the whole match is the identifier)
    patterns: dict[str, str] = field(default_factory=dict)
    #: 0: never conclusive; k > 0: conclusive when k distinct identifiers of an item co-occur
    conclusive_min_ids: int = 0
    mask_boilerplate: bool = False


class EntitiesIndex(Index[EntitiesConfig]):
    name = "entities"
    Config = EntitiesConfig
    conclusive = False
    summary = (
        "identifiers grounding an eval item (tau user/order/reservation ids, flight numbers, ASINs, "
        "ToolBench scoped ids, user regexes) found in training records; evidence, with location"
    )

    def __init__(self, config: EntitiesConfig | None = None, **params: Any):
        for key in ("eval_views", "kinds"):
            if isinstance(params.get(key), (list, str)):
                params[key] = (params[key],) if isinstance(params[key], str) else tuple(params[key])
        super().__init__(config, **params)
        unknown = [k for k in self.config.kinds if k not in BUILTIN]
        if unknown:
            raise ConfigError(f"method 'entities': unknown kinds {', '.join(unknown)} (kinds: {', '.join(BUILTIN)})")
        if not isinstance(self.config.patterns, dict):
            raise ConfigError("method 'entities': 'patterns' must be a table of name = regex")
        self.regexes: list[tuple[str, re.Pattern]] = []
        #: per pattern of ``regexes``: a built-in one behind ``(?<!C)`` (:data:`_RUN_CLASS`), else None
        self.run_starts: list[re.Pattern | None] = []
        for name, rx in [*((k, BUILTIN[k]) for k in self.config.kinds), *self.config.patterns.items()]:
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise ConfigError(f"method 'entities': pattern name '{name}' must be a word")
            try:
                self.regexes.append((name, re.compile(rx)))
            except (re.error, TypeError) as e:
                raise ConfigError(f"method 'entities': pattern '{name}' is not a valid regex: {e}") from None
            builtin = name in _RUN_CLASS and rx == BUILTIN[name]
            self.run_starts.append(re.compile(f"(?<!{_RUN_CLASS[name]})" + rx) if builtin else None)

    def extract(self, text: str, lines: Sequence[tuple[int, int]] | None = None) -> list[tuple[str, str, int, int]]:
        """``(identifier, kind, start, end)`` for each identifier in ``text`` (earlier kinds win a span);
        only those inside ``lines`` (ranges of whole lines, in order) where given: no built-in pattern
        matches across a line break, so each line reads as it does in the whole text."""
        if not text:
            return []
        out: list[tuple[str, str, int, int]] = []
        taken: set[int] = set()
        for (kind, rx), starts in zip(self.regexes, self.run_starts):
            pre = _PREFILTER.get(kind)
            if pre and pre not in text:
                continue
            for a, b in ((0, len(text)),) if lines is None else lines:
                for m in _run_starts(rx, starts, text, a, b) if starts is not None else rx.finditer(text, a, b):
                    if m.start() in taken or _false_friend(kind, m.group(0), text, m.start()):
                        continue
                    taken.add(m.start())
                    out.append((_canon(kind, m.group(0)), kind, m.start(), m.end()))
        out.sort(key=lambda t: t[2])
        return out

    def _lines_to_read(self, text: str) -> list[tuple[int, int]] | None:
        """The lines of ``text`` a training text is extracted in (:meth:`extract`): those holding a
        spelling of an identifier of the index (:func:`literal_matcher`, overlapping matches); an
        identifier the index does not hold makes no finding, and every one it holds is such a
        spelling. Empty when there is none; None (the whole text) without the automaton or with user
        patterns (a user pattern may span lines, and a built-in match anywhere keeps it off its start).

        >>> index = EntitiesIndex().build([Record("e", "0", "e#0", {"query": "Rebook EHGLP3 please"})])
        >>> index._lines_to_read("hi\\nmy code: EHGLP3\\nthanks\\nEHGLP3 again")
        [(3, 18), (26, 38)]
        """
        if self.literals is None or self.config.patterns:
            return None
        lines: list[tuple[int, int]] = []
        for start, end in sorted((s, e) for _, s, e in self.literals.find_matches_as_indexes(text, overlapping=True)):
            if lines and start < lines[-1][1]:  # on the last line taken (a spelling holds no line break)
                continue
            b = text.find("\n", end)
            lines.append((text.rfind("\n", 0, start) + 1, len(text) if b < 0 else b))
        return lines

    def _tool_result_only(self, tr: Record) -> set[str]:
        """Identifiers the record holds in its tool results (``observations``) and nowhere else
        (not in the user's turns, its calls, its answer)."""
        obs = tr.views.get("observations", "")
        if not obs:
            return set()
        in_results = {i for i, *_ in self.extract(obs)}
        elsewhere = {
            i for v, text in tr.views.items() if v not in ("observations", TEXT) for i, *_ in self.extract(text)
        }
        return in_results - elsewhere

    def _build(self) -> None:
        self.table: dict[str, set[int]] = {}
        self.totals: list[int] = []
        for pos, ev in enumerate(self.eval_records):
            texts = dict.fromkeys(ev.views.get(v, "") for v in self.config.eval_views)  # a view that is another's: once
            ids = {i for text in texts for i, *_ in self.extract(text)}
            group = ev.meta.get("group")
            if group and not ev.meta.get("positional_id") and ev.id.isdigit() and "toolbench_qid" in self.config.kinds:
                ids.add(f"{group}_{ev.id}")
            self.totals.append(len(ids))
            if not ids:
                self.not_indexed["no identifier found"] += 1
            for i in ids:
                self.table.setdefault(i, set()).add(pos)

    @functools.cached_property
    def literals(self) -> Any | None:
        """:func:`literal_matcher` of the index's identifiers, made where the scan runs (a worker
        process builds its own: the automaton does not pickle)."""
        return literal_matcher(list(self.table))

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("literals", None)
        return state

    def proof_target(self, ev: Record, evidence: dict[str, Any]) -> str:
        """The identifiers matched (the values the report shows in the training record)."""
        return " ".join(str(i.get("id", "")) for i in evidence.get("identifiers", ()))

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        out: list[Finding] = []
        if not self.table:
            return out
        for tr in batch:
            hits: dict[int, dict[str, dict[str, Any]]] = {}
            for view in self.config.train_views:
                text = tr.view(view) if view == TEXT else tr.views.get(view, "")
                if not text:
                    continue
                lines = self._lines_to_read(text)
                if lines == []:
                    continue
                for ident, kind, start, end in self.extract(text, lines):
                    for pos in self.table.get(ident, ()):
                        where = hits.setdefault(pos, {})
                        if ident not in where:
                            loc: dict[str, Any] = {"id": ident, "kind": kind, "view": view, "span": [start, end]}
                            if view == TEXT:
                                turn = turn_of(tr.meta.get("turn_starts"), start)
                                if turn is not None:
                                    loc["turn"] = turn
                            where[ident] = loc
            tool_only = self._tool_result_only(tr) if hits else set()
            for pos, where in sorted(hits.items()):
                ev = self.eval_records[pos]
                if ev.dataset == tr.dataset and ev.ordinal == tr.ordinal:
                    continue
                weight = 0.0
                for ident, loc in where.items():
                    if ident in tool_only:
                        loc["in_tool_results_only"] = True
                        weight += TOOL_RESULT_WEIGHT
                    else:
                        weight += 1.0
                f = self.finding(
                    ev,
                    tr,
                    round(weight / self.totals[pos], 6),
                    identifiers=list(where.values())[:20],
                    matched_ids=len(where),
                    eval_ids=self.totals[pos],
                    in_tool_results_only=sum(1 for i in where if i in tool_only),
                )
                k = self.config.conclusive_min_ids
                f.conclusive = bool(k) and len([i for i in where if i not in tool_only]) >= k
                out.append(f)
        return out
