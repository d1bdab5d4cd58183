"""Error-type coverage: a deterministic taxonomy of tool-use failures, counted per dataset.

Training sets that teach error recovery (ToolBench-R reflections, RefineToolBench cases, CAFT
incorrect turns) and eval sets of erroneous calls carry structured traces (``meta['trace']``: steps
``{name, args, observation}``; ``meta['tools']``: tool name → parameter schema; ``meta['mistake']``).
:func:`label` applies these rules, in this order, and returns the set of labels:

``unknown_tool``              a call to a name missing from the known tools, or a result saying so
``schema_invalid_arguments``  a required parameter missing, an undeclared parameter, a value of the
                              wrong JSON type, or a result complaining about parameters
``ungrounded_identifier``     an id-like argument value (letters+digits, 5+ digits, tau/WebShop ids)
                              found neither in the user's text nor in an earlier tool result
``ignored_error_result``      a failed tool result followed by the same call again or by the end of
                              the trajectory (no retry, no recovery)
``repeated_identical_call``   the same canonical call twice in a row
``missing_precondition_step`` a write call (book / cancel / update / modify ...) with no read call
                              (get / search / list / find ...) before it
``answered_without_call``     tools were available but the record answers without any call (or a
                              CAFT turn answered where its correction is a call)
``claimed_without_success``   the final answer claims a completed action ("has been cancelled", "I have
                              booked …") but no write call (book / cancel / update …) succeeded: none
                              was made, or every one returned an error
``step_budget_exhausted``     the run hit a step budget (a result or the answer says the maximum number
                              of steps / turns / iterations was reached, or ToolBench's
                              ``give_up_and_restart``), or it ends in a loop of failures: its last
                              three or more tool results are all errors and no answer follows
``injection_followed``        a tool result carries instructions ("ignore previous instructions", "you
                              must now call …", "instead, call …") and the next call is one that result
                              names while the user's request does not

The report gets ``error_types`` → dataset → label → count, and each check ``novel_error_types``:
labels that occur on its eval side and never on its training side (the error types the training
distribution does not represent).

>>> from auditor.records.record import Record
>>> tools = {"get_order": {"properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}
>>> r = Record("d", "1", "d:1", {"query": "Where is order #W1234567?"},
...            meta={"tools": tools, "trace": [{"name": "get_order", "args": {}, "observation": None}]})
>>> sorted(label(r))
['schema_invalid_arguments']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..records.record import Record
from ..records.toolcalls import canonical_call, canonical_value
from ..records.trajectory import is_error
from ..scan.stage import Batch, Stage

if TYPE_CHECKING:
    from ..datasets.account import Shift

LABELS = (
    "unknown_tool",
    "schema_invalid_arguments",
    "ungrounded_identifier",
    "ignored_error_result",
    "repeated_identical_call",
    "missing_precondition_step",
    "answered_without_call",
    "claimed_without_success",
    "step_budget_exhausted",
    "injection_followed",
)
_CLAIM = re.compile(
    r"\b(?:has|have|had) been (?:successfully )?(?:booked|cancell?ed|updated|modified|changed|sent|created|"
    r"deleted|removed|transferred|refunded|exchanged|returned|scheduled|reserved|placed|added|submitted|processed)\b|"
    r"\bI(?: have|'ve)? (?:successfully )?(?:booked|cancell?ed|updated|modified|changed|sent|created|deleted|removed|"
    r"transferred|refunded|exchanged|returned|scheduled|reserved|placed|added|submitted|processed)\b|"
    r"\bsuccessfully (?:booked|cancell?ed|updated|modified|changed|sent|created|deleted|removed|transferred|"
    r"refunded|exchanged|returned|scheduled|reserved|placed|added|submitted|processed)\b",
    re.I,
)
_BUDGET = re.compile(
    r"max(?:imum)?[ _](?:number of )?(?:steps|turns|iterations|calls)|step (?:budget|limit)|"
    r"(?:steps?|turns?|iterations?) (?:limit|budget) (?:reached|exceeded)|exceeded the (?:maximum|step|turn)",
    re.I,
)
_GIVE_UP = "give_up_and_restart"
_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier) instructions|disregard (?:the |all )?(?:previous|prior|"
    r"user'?s?) |you must (?:now |immediately )?(?:call|use|run|invoke)|instead,? (?:you should |please )?(?:call|use|"
    r"run|invoke)|new instructions?:|system (?:override|instruction)|\bassistant,? (?:now |please )?(?:call|run)",
    re.I,
)
#: trailing failed tool results that make a failure loop
FAILURE_LOOP = 3

_UNKNOWN_TOOL = re.compile(
    r"invalid api name|no such (?:tool|function|api)|unknown (?:tool|function|api)|"
    r"(?:tool|function|api) .{0,40}(?:does not exist|not found)",
    re.I,
)
_BAD_ARGS = re.compile(
    r"missing (?:required )?param|required param\w* .{0,40}missing|invalid (?:param|argument)|"
    r"unexpected (?:keyword )?argument|parameters? (?:are |is )?(?:missing|invalid|incomplete)",
    re.I,
)
_IDLIKE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_#@.\-]{5,}$|^#?W?\d{5,}$|^[a-z]+_[a-z]+_\d{4}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WRITE = re.compile(
    r"^(?:book|cancel|update|modify|exchange|return|create|delete|remove|send|transfer|pay|"
    r"purchase|buy|submit|post|place|add|edit|set)(?:_|$)",
    re.I,
)
_READ = re.compile(r"^(?:get|search|list|find|check|lookup|fetch|query|retrieve|read|view|calculate|show)(?:_|$)", re.I)
_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _schema_problems(args: dict[str, Any], schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else None
    required = schema["required"] if isinstance(schema.get("required"), list) else []
    if any(r not in args for r in required):
        return True
    if props is not None and any(k not in props for k in args if k != "_raw"):
        return True
    for k, v in args.items():
        spec = props.get(k) if props else None
        expected = (
            _JSON_TYPES.get(spec["type"]) if isinstance(spec, dict) and isinstance(spec.get("type"), str) else None
        )
        if expected and v is not None:
            cv = canonical_value(v)
            if isinstance(cv, bool) and bool not in expected:
                return True
            if not isinstance(cv, expected) and not (expected == (str,) and isinstance(cv, (int, float))):
                return True
    return False


def _id_values(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _id_values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _id_values(v)
    elif isinstance(value, (str, int)) and not isinstance(value, bool):
        s = str(value).strip()
        if _IDLIKE.match(s) and not _DATE.match(s) and "://" not in s:
            yield s


def label(record: Record) -> set[str]:
    """The taxonomy labels of one record (empty for a clean record or one without a trace)."""
    meta = record.meta
    trace = [s for s in meta.get("trace") or [] if isinstance(s, dict) and s.get("name")]
    tools = meta.get("tools") or {}
    labels: set[str] = set()
    grounding = "\n".join([record.views.get("query", ""), record.views.get("user", "")]).lower()
    canon = [canonical_call(s["name"], s.get("args") or {}) for s in trace]
    seen_read = False
    for k, s in enumerate(trace):
        name, args, obs = s["name"], s.get("args") or {}, s.get("observation") or ""
        if (tools and name not in tools) or _UNKNOWN_TOOL.search(obs[:2000]):
            labels.add("unknown_tool")
        if _schema_problems(args, tools.get(name)) or _BAD_ARGS.search(obs[:2000]):
            labels.add("schema_invalid_arguments")
        for value in _id_values(args):
            if value.lower() not in grounding:
                labels.add("ungrounded_identifier")
        if is_error(obs) and (k == len(trace) - 1 or canon[k + 1] == canon[k]):
            if k < len(trace) - 1 or (record.views.get("answer") and not meta.get("corrected")):
                labels.add("ignored_error_result")
        if k and canon[k] == canon[k - 1]:
            labels.add("repeated_identical_call")
        if _WRITE.match(name) and not seen_read:
            labels.add("missing_precondition_step")
        if _READ.match(name):
            seen_read = True
        if obs:
            grounding += "\n" + obs.lower()
    if meta.get("answered_instead_of_call") or (not trace and tools and record.views.get("answer")):
        labels.add("answered_without_call")
    labels |= _run_labels(record, trace, canon)
    return labels


def _run_labels(record: Record, trace: list[dict[str, Any]], canon: list[str]) -> set[str]:
    """The three whole-run signatures: claimed_without_success, step_budget_exhausted, injection_followed."""
    out: set[str] = set()
    answer = record.views.get("answer", "")
    observations = [s.get("observation") or "" for s in trace]
    if answer and _CLAIM.search(answer[-4000:]):
        writes = [o for s, o in zip(trace, observations, strict=True) if _WRITE.match(s["name"])]
        if not any(not is_error(o) for o in writes):
            out.add("claimed_without_success")
    failed_tail = 0
    for o in reversed(observations):
        if not is_error(o):
            break
        failed_tail += 1
    if (
        any(_BUDGET.search(o[:2000]) for o in observations[-3:])
        or (answer and _BUDGET.search(answer[-2000:]))
        or any(s["name"].lower() == _GIVE_UP for s in trace)
        or (failed_tail >= FAILURE_LOOP and not answer)
    ):
        out.add("step_budget_exhausted")
    request = "\n".join([record.views.get("query", ""), record.views.get("user", "")]).lower()
    for k in range(len(trace) - 1):
        obs = observations[k]
        if obs and _INJECTION.search(obs[:4000]):
            nxt = trace[k + 1]["name"]
            if nxt.lower() in obs.lower() and nxt.lower() not in request and canon[k + 1] != canon[k]:
                out.add("injection_followed")
                break
    return out


class ErrorTypes:
    """Label counts per dataset for one run; :meth:`tap` makes the pseudo-index that counts a scan."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter] = {}
        self.labeled: Counter = Counter()

    def add(self, records: Iterable[Record]) -> None:
        for r in records:
            if not (r.meta.get("trace") or r.meta.get("mistake")):
                continue
            c = self.counts.setdefault(r.dataset, Counter())
            found = label(r)
            if found:
                self.labeled[r.dataset] += 1
            c.update(found)

    def count_dataset(self, name: str, records: Iterable[Record]) -> None:
        if name not in self.counts:
            self.counts[name] = Counter()
            self.add(records)

    def merge(self, dataset: str, counts: Counter, labeled: int) -> None:
        """Add the label counts a worker made of some of ``dataset``'s records."""
        self.counts.setdefault(dataset, Counter()).update(counts)
        if labeled:
            self.labeled[dataset] += labeled

    def novel(self, eval_names: Sequence[str], train_names: Sequence[str]) -> list[str]:
        ev = set().union(*(self.counts.get(n, Counter()) for n in eval_names)) if eval_names else set()
        tr = set().union(*(self.counts.get(n, Counter()) for n in train_names)) if train_names else set()
        return sorted(ev - tr)

    def report(self) -> dict[str, dict[str, int]]:
        return {name: dict(sorted(c.items())) for name, c in sorted(self.counts.items())}


class ErrorTypeStage(Stage[tuple[Counter, int]]):
    """The scan stage that counts the error-type labels of a training dataset's records (each
    dataset once per run) into the caller's ``sink``."""

    def __init__(self, sink: ErrorTypes | None, dataset: str):
        self.sink = sink
        self.dataset = dataset
        self.counts = ErrorTypes()

    def __getstate__(self) -> dict:
        return {**self.__dict__, "sink": None}  # the run's counts stay with the caller

    def run(self, batch: Batch) -> None:
        self.counts.add(batch.records)

    def take_counts(self) -> tuple[Counter, int]:
        counts, self.counts = self.counts, ErrorTypes()
        return counts.counts.get(self.dataset, Counter()), counts.labeled.get(self.dataset, 0)

    def add_counts(self, counts: tuple[Counter, int], shift: Shift) -> None:
        if self.sink is not None:
            self.sink.merge(self.dataset, *counts)
