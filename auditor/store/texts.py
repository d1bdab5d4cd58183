"""The record texts a report shows beside its findings, captured during the scan.

The report's Markdown and HTML show the eval item and the training record side by side. Re-reading a
training corpus after the scan to fetch them would be a second full pass over it, so the workers send
back the texts of the records behind their findings (:meth:`TextCapture.offer`), and the calling
process keeps those of the findings it reports. Only texts the window missed are read again afterwards.

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

MAX_CHARS = 4000
#: texts of finding records a unit sends back (the report shows those of the top findings)
TEXTS_PER_UNIT = 500


class TextCapture:
    """Keeps the last ``window`` records' texts and, on request, up to ``limit`` of them for good."""

    def __init__(self, window: int, limit: int = 2000):
        self.window = max(1, window)
        self.limit = limit
        self._recent: OrderedDict[tuple[str, int], str] = OrderedDict()
        self.texts: dict[str, str] = {}

    def offer(self, dataset: str, ordinal: int, text: str) -> None:
        """A text a worker sent back with findings: held in the window like an observed record's."""
        self._recent[(dataset, ordinal)] = text[:MAX_CHARS]
        if len(self._recent) > self.window:
            self._recent.popitem(last=False)

    def keep(self, dataset: str, ordinal: int) -> bool:
        """Keep the text of a record that produced a finding; False when it left the window."""
        key = f"{dataset}#{ordinal}"
        if key in self.texts:
            return True
        text = self._recent.get((dataset, ordinal))
        if text is None or len(self.texts) >= self.limit:
            return False
        self.texts[key] = text
        return True

    def keep_eval(self, records: Iterable[Record]) -> None:
        """Eval items are in memory anyway: keep their query texts for the findings."""
        for r in records:
            self.texts.setdefault(f"{r.dataset}#{r.ordinal}", r.view(QUERY)[:MAX_CHARS])


class CaptureStage(Stage[dict[int, str]]):
    """The scan stage that sends back the texts of the records behind a unit's findings (the first
    :data:`TEXTS_PER_UNIT` of them, local ordinal → text) to the caller's ``capture``, renumbered."""

    def __init__(self, capture: TextCapture | None, dataset: str):
        self.capture = capture
        self.dataset = dataset
        self.texts: dict[int, str] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "capture": None}  # the caller's capture stays with the caller

    def run(self, batch: Batch) -> None:
        if not batch.findings:
            return
        by_ordinal = batch.by_ordinal()
        for f in batch.findings:
            r = by_ordinal[f.train_ordinal]
            if r.ordinal not in self.texts and len(self.texts) < TEXTS_PER_UNIT:
                self.texts[r.ordinal] = r.whole_text()[:MAX_CHARS]  # text, then fields

    def take_counts(self) -> dict[int, str]:
        texts, self.texts = self.texts, {}
        return texts

    def add_counts(self, counts: dict[int, str], shift: Shift) -> None:
        if self.capture is not None:
            for ordinal, text in counts.items():
                self.capture.offer(self.dataset, ordinal + shift.ordinal, text)


def collect_texts(findings, datasets, captured: dict[str, str], limit: int = 200) -> dict[str, str]:
    """Texts of the records behind the top ``limit`` findings: captured ones, the rest read again."""
    wanted: dict[str, set[int]] = {}
    for f in findings[:limit]:
        for name, ordinal in ((f.eval_dataset, f.eval_ordinal), (f.train_dataset, f.train_ordinal)):
            if f"{name}#{ordinal}" not in captured:
                wanted.setdefault(name, set()).add(ordinal)
    out = {}
    for f in findings[:limit]:
        for key in (f"{f.eval_dataset}#{f.eval_ordinal}", f"{f.train_dataset}#{f.train_ordinal}"):
            if key in captured:
                out[key] = captured[key]
    for name, ords in wanted.items():
        ds = datasets[name]
        remaining = set(ords)
        for r in ds.records():
            if r.ordinal in remaining:
                out[f"{name}#{r.ordinal}"] = (r.view(QUERY) if ds.role == "eval" else r.whole_text())[:MAX_CHARS]
                remaining.discard(r.ordinal)
                if not remaining:
                    break
    return dict(sorted(out.items()))
