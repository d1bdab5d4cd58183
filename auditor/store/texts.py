"""The record texts a report shows beside its findings, captured during the scan.

The report's Markdown and HTML show the eval item and the training record side by side. Re-reading a
training corpus after the scan to fetch them would be a second full pass over it, so the workers send
back the texts of the records behind their findings (:meth:`TextCapture.offer`), and the calling
process keeps those of the findings it reports. Only texts the window missed are read again afterwards.
A training record's texts are the strings its findings matched, each windowed around its match and
keyed by field (:func:`auditor.text.proof.proof_keys`); its whole text only for a finding that names
no span (:func:`auditor.text.proof.record_texts`).

>>> cap = TextCapture(window=2, limit=10)
>>> for i in range(3):
...     cap.offer("tr", i, f"record {i}")
>>> cap.keep("tr", 2), cap.keep("tr", 0)
(True, False)
>>> cap.texts
{'tr#2': 'record 2'}
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from ..datasets.account import Shift
from ..records.record import QUERY, Record
from ..scan.stage import Batch, Stage
from ..text.proof import MAX_CHARS, proof_keys, record_texts

__all__ = ["MAX_CHARS", "TEXTS_PER_UNIT", "CaptureStage", "TextCapture", "collect_texts"]

#: records whose texts a unit sends back (the report shows those of the top findings)
TEXTS_PER_UNIT = 500


class TextCapture:
    """Keeps the last ``window`` records' texts and, on request, up to ``limit`` of them for good."""

    def __init__(self, window: int, limit: int = 2000):
        self.window = max(1, window)
        self.limit = limit
        self._recent: OrderedDict[tuple[str, int], dict[str, str]] = OrderedDict()
        self._kept: set[tuple[str, int]] = set()
        self.texts: dict[str, str] = {}

    def offer(self, dataset: str, ordinal: int, text: str | dict[str, str]) -> None:
        """A record's texts a worker sent back with findings (:func:`auditor.text.proof.record_texts`:
        key suffix → text; a plain string is the record's own text): held in the window like an
        observed record's."""
        self._recent[(dataset, ordinal)] = {"": text[:MAX_CHARS]} if isinstance(text, str) else dict(text)
        if len(self._recent) > self.window:
            self._recent.popitem(last=False)

    def keep(self, dataset: str, ordinal: int) -> bool:
        """Keep the texts of a record that produced a finding; False when it left the window."""
        if (dataset, ordinal) in self._kept:
            return True
        texts = self._recent.get((dataset, ordinal))
        if texts is None or len(self.texts) >= self.limit:
            return False
        self._kept.add((dataset, ordinal))
        for suffix, text in texts.items():
            self.texts[f"{dataset}#{ordinal}{suffix}"] = text
        return True

    def keep_eval(self, records: Iterable[Record]) -> None:
        """Eval items are in memory anyway: keep their query texts for the findings."""
        for r in records:
            self.texts.setdefault(f"{r.dataset}#{r.ordinal}", r.view(QUERY)[:MAX_CHARS])


class CaptureStage(Stage[dict[int, dict[str, str]]]):
    """The scan stage that sends back the texts of the records behind a unit's findings (the first
    :data:`TEXTS_PER_UNIT` of them, local ordinal → :func:`~auditor.text.proof.record_texts`: what each
    finding matched) to the caller's ``capture``, renumbered."""

    def __init__(self, capture: TextCapture | None, dataset: str):
        self.capture = capture
        self.dataset = dataset
        self.texts: dict[int, dict[str, str]] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "capture": None}  # the caller's capture stays with the caller

    def run(self, batch: Batch) -> None:
        if not batch.findings:
            return
        by_ordinal = batch.by_ordinal()
        evidences: dict[int, list[dict]] = {}
        for f in batch.findings:
            evidences.setdefault(f.train_ordinal, []).append(f.evidence)
        for f in batch.findings:
            r = by_ordinal[f.train_ordinal]
            if r.ordinal not in self.texts and len(self.texts) < TEXTS_PER_UNIT:
                self.texts[r.ordinal] = record_texts(r, evidences[r.ordinal])  # what each finding matched

    def take_counts(self) -> dict[int, dict[str, str]]:
        texts, self.texts = self.texts, {}
        return texts

    def add_counts(self, counts: dict[int, dict[str, str]], shift: Shift) -> None:
        if self.capture is not None:
            for ordinal, texts in counts.items():
                self.capture.offer(self.dataset, ordinal + shift.ordinal, texts)


def collect_texts(findings, datasets, captured: dict[str, str], limit: int = 200) -> dict[str, str]:
    """Texts behind the top ``limit`` findings: each eval item's query, and the training text each
    finding matched (:func:`~auditor.text.proof.proof_keys`); captured ones, the rest read again."""
    wanted: dict[str, dict[int, list]] = {}  # dataset → ordinal → evidences of the findings (eval: [])
    out = {}
    for f in findings[:limit]:
        for name, ordinal, keys, evidence in (
            (f.eval_dataset, f.eval_ordinal, [f"{f.eval_dataset}#{f.eval_ordinal}"], None),
            (f.train_dataset, f.train_ordinal, proof_keys(f.train_dataset, f.train_ordinal, f.evidence), f.evidence),
        ):
            key = next((k for k in keys if k in captured), None)
            if key is not None:
                out[key] = captured[key]
            else:
                evs = wanted.setdefault(name, {}).setdefault(ordinal, [])
                if evidence is not None:
                    evs.append(evidence)
    for name, ords in wanted.items():
        ds = datasets[name]
        remaining = set(ords)
        for r in ds.records():
            if r.ordinal in remaining:
                if ds.role == "eval":
                    out[f"{name}#{r.ordinal}"] = r.view(QUERY)[:MAX_CHARS]
                else:
                    for suffix, text in record_texts(r, ords[r.ordinal]).items():
                        out[f"{name}#{r.ordinal}{suffix}"] = text
                remaining.discard(r.ordinal)
                if not remaining:
                    break
    return dict(sorted(out.items()))
