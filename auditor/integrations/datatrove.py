"""A datatrove filter step: drop (or tag) documents holding an eval item, and write the findings.

>>> from auditor import Detector
>>> step = DecontaminationFilter(Detector(["Book a table for two at an Italian place tonight"], methods=["exact"]))
>>> step.name
'auditor decontamination'

Put it in a pipeline's step list, after a reader (``pip install "auditor[datatrove]"``)::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    detector = Detector.load("stabletoolbench-detector")   # workers map its index files
    LocalPipelineExecutor(pipeline=[
        JsonlReader("data/"),
        DecontaminationFilter(detector, findings_folder="findings/"),
        JsonlWriter("clean/"),
    ], tasks=2).run()

A document is searched as the JSON object it was read from: ``{id_key: doc.id, text_key: doc.text,
**doc.metadata}`` (without the ``file_path`` readers add), so it gives the findings ``auditor audit``
gives for that line of the input file. ``drop=True`` (default) drops a document with a conclusive
finding (with ``suspected=True``, a suspected one too), its reason ``auditor: <eval set>#<id>``;
``drop=False`` keeps every document and tags it, ``metadata["auditor_findings"]`` holding its
findings (``Finding.to_dict()``; ``[]`` for none). ``findings_folder``: a local folder that gets each
task's findings as JSON Lines (``<rank>.jsonl``, one :meth:`~auditor.methods.base.Finding.to_dict` a
line, ``train_id`` the document's id).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import MissingDependencyError
from .detector import Detector

try:
    from datatrove.pipeline.filters.base_filter import BaseFilter
except ImportError:  # the [datatrove] extra is not installed: the step says so when made
    BaseFilter = object

__all__ = ["DecontaminationFilter"]


class DecontaminationFilter(BaseFilter):
    name = "auditor decontamination"
    type = "🔻 - FILTER"

    def __init__(
        self,
        detector: Detector,
        *,
        drop: bool = True,
        suspected: bool = False,
        findings_folder: str | None = None,
        text_key: str = "text",
        id_key: str = "id",
        batch_size: int = 256,
        exclusion_writer: Any = None,
    ):
        if BaseFilter is object:
            raise MissingDependencyError("datatrove", "datatrove", "the datatrove filter step")
        super().__init__(exclusion_writer=exclusion_writer, batch_size=batch_size)
        self.detector = detector
        self.drop = drop
        self.suspected = suspected
        self.findings_folder = findings_folder
        self.text_key = text_key
        self.id_key = id_key
        self._out: Any = None

    def _row(self, doc: Any) -> dict[str, Any]:
        meta = {k: v for k, v in (doc.metadata or {}).items() if k != "file_path"}
        return {self.id_key: doc.id, self.text_key: doc.text, **meta}

    def filter(self, doc: Any) -> bool | tuple[bool, str]:
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: list[Any]) -> list[bool | tuple[bool, str]]:
        findings = self.detector.search([self._row(doc) for doc in batch])
        by_doc: dict[int, list[dict[str, Any]]] = {}
        for f in findings:
            by_doc.setdefault(f.train_ordinal, []).append(dict(f.to_dict()))
        if self._out is not None:
            for f in findings:
                self._out.write(json.dumps(dict(f.to_dict()), ensure_ascii=False) + "\n")
            self._out.flush()
        results: list[bool | tuple[bool, str]] = []
        for i, doc in enumerate(batch):
            mine = by_doc.get(i, [])
            if not self.drop:
                doc.metadata["auditor_findings"] = mine
                results.append(True)
                continue
            bad = [f for f in mine if f["conclusive"] or (self.suspected and f["evidence"].get("tier") == "suspected")]
            if bad:
                results.append((False, f"auditor: {bad[0]['eval_dataset']}#{bad[0]['eval_id']}"))
            else:
                results.append(True)
        return results

    def run(self, data: Any, rank: int = 0, world_size: int = 1) -> Any:
        if self.findings_folder is None:
            yield from super().run(data, rank, world_size)
            return
        folder = Path(self.findings_folder)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{rank:05d}.jsonl", "w", encoding="utf-8") as out:
            self._out = out
            try:
                yield from super().run(data, rank, world_size)
            finally:
                self._out = None
