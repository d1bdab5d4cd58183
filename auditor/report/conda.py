"""A report as rows of the CONDA Data Contamination Database (``auditor report REPORT.json --format conda``).

The database (https://huggingface.co/spaces/CONDA-Workshop/Data-Contamination-Database) is one
file, ``contamination_report.csv``, separated by semicolons, with the columns :data:`COLUMNS`; a
contribution is a pull request that appends rows to it and fills in the database's template (what
is reported, the evaluation dataset, the contaminated corpus or model, the contaminated splits as a
percentage, the approach, a description, a citation).

One row per (evaluation set, training set) pair of every check: *Evaluation Dataset* is the bundled
set's source repository (a link, which the template accepts) or the dataset's name, *Subset* the split
auditor selected when it is not a train / dev / test label, *Contaminated Source* the training set,
*Model or corpus* ``corpus`` (auditor reads training data, not a model), the eval set's split column
the share of its items with a conclusive finding in that training set, as a percentage (``0`` is a
report of no contamination, which the database takes too), *Approach* ``data-based``. A report
cannot know *Reference* (your paper or report's link) or *PR* (the pull request's number), nor a
training set's Hugging Face path or the split of an eval set that has no split label:
:func:`conda_rows` names what each row leaves to the user. :func:`render_conda_pr` fills the pull
request's template from the same rows (``TODO`` where the user must write).

>>> from auditor.report import Report
>>> r = Report("fail", {"e": {"role": "eval", "records": 20, "split": "test"}, "t": {"role": "train"}},
...     [{"name": "c", "train": ["t"], "eval": ["e"], "methods": ["exact"], "eval_items": 20,
...       "contaminated_items": 3, "verdict": "fail",
...       "matrix": [{"train": "t", "eval": "e", "contaminated_items": 3}]}], [])
>>> print(render_conda(r), end="")
Evaluation Dataset;Subset;Contaminated Source;Model or corpus;Train Split;Development Split;Test Split;Approach;Reference;PR
e;;t;corpus;;;15;data-based;;
>>> [row.todo[0] for row in conda_rows(r)]
["Evaluation Dataset: 'e' is auditor's name for it; give its Hugging Face path or a link"]

Errors: none of its own; a report whose checks or datasets lack what a row needs raises KeyError or
TypeError, which :func:`auditor.report.rerender` turns into one InputError line.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from ._md import md
from .model import Report, register_format

#: the columns of the database's ``contamination_report.csv``, in its order
COLUMNS = (
    "Evaluation Dataset",
    "Subset",
    "Contaminated Source",
    "Model or corpus",
    "Train Split",
    "Development Split",
    "Test Split",
    "Approach",
    "Reference",
    "PR",
)
#: the database's separator
SEPARATOR = ";"
DATABASE = "https://huggingface.co/spaces/CONDA-Workshop/Data-Contamination-Database"

#: split labels → the column their contaminated share goes in
SPLIT_COLUMNS = {
    "train": "Train Split",
    "training": "Train Split",
    "dev": "Development Split",
    "development": "Development Split",
    "validation": "Development Split",
    "val": "Development Split",
    "valid": "Development Split",
    "test": "Test Split",
    "eval": "Test Split",
}


@dataclass
class CondaRow:
    """One row (``values``: column → text) and what it leaves to the user (``todo``: one line each)."""

    check: str
    eval_dataset: str
    train_dataset: str
    values: dict[str, str]
    found: int  # eval items of eval_dataset with a conclusive finding in train_dataset
    items: int  # eval items of eval_dataset the check read
    column: str | None  # the split column the share is in (None: the eval set's split is unknown)
    todo: list[str] = field(default_factory=list)


def _percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage with at most two decimals (``3, 20`` → ``15``)."""
    return f"{100 * part / whole:.2f}".rstrip("0").rstrip(".") if whole else ""


def _source_link(summary: dict[str, Any]) -> str | None:
    """The GitHub repository a bundled set was taken from (``registry.json``'s ``source``), else None."""
    name = summary.get("bundled")
    if not name:
        return None
    from ..datasets import registry

    entry = next((e for e in registry.describe() if e["name"] == name), None)
    source = str((entry or {}).get("source") or "")
    repo = source.split("@", 1)[0].split()[0] if source else ""
    return f"https://github.com/{repo}" if repo.count("/") == 1 else None


def _split_column(summary: dict[str, Any]) -> tuple[str | None, str]:
    """(the split column of an eval dataset or None, its subset text)."""
    label = str(summary.get("split_label") or "").lower()
    split = str(summary.get("split") or "")
    column = SPLIT_COLUMNS.get(label) or SPLIT_COLUMNS.get(split.lower())
    subset = "" if split.lower() in SPLIT_COLUMNS else split
    return column, subset


def _eval_items(check: dict[str, Any], eval_name: str, summary: dict[str, Any]) -> int:
    """The eval items of ``eval_name`` the check read (its eval subsets), else the dataset's records."""
    subsets = [s for s in check.get("eval_subsets") or [] if s.get("eval") == eval_name]
    if subsets:
        return sum(int(s["eval_items"]) for s in subsets)
    if check["eval"] == [eval_name]:
        return int(check["eval_items"])
    return int(summary["records"])


def conda_rows(report: Report) -> list[CondaRow]:
    """The database rows of ``report``: one per (eval dataset, training dataset) of every check."""
    rows = []
    datasets = {name: d.to_dict() for name, d in report.datasets.items()}
    for c in report.checks:
        check = c.to_dict()
        cells = {(m["train"], m["eval"]): int(m["contaminated_items"]) for m in check.get("matrix") or []}
        for e in check["eval"]:
            summary = datasets.get(e, {})
            items = _eval_items(check, e, summary)
            column, subset = _split_column(summary)
            link = _source_link(summary)
            for t in check["train"]:
                if (t, e) in cells:
                    found = cells[(t, e)]
                elif len(check["train"]) == 1 and len(check["eval"]) == 1:
                    found = int(check["contaminated_items"])
                else:
                    raise KeyError(f"check '{c.name}' has no matrix cell for {t} x {e}")
                share = _percent(found, items)
                values = dict.fromkeys(COLUMNS, "")
                values.update(
                    {
                        "Evaluation Dataset": link or e,
                        "Subset": subset,
                        "Contaminated Source": t,
                        "Model or corpus": "corpus",
                        "Approach": "data-based",
                    }
                )
                row = CondaRow(c.name, e, t, values, found, items, column)
                if not link:
                    row.todo.append(
                        f"Evaluation Dataset: '{e}' is auditor's name for it; give its Hugging Face path or a link"
                    )
                row.todo.append(
                    f"Contaminated Source: '{t}' is auditor's name for the training set; give its Hugging Face "
                    "path (or the model trained on it, with Model or corpus = model)"
                )
                figure = f"{share} ({found} of {items} eval items with a conclusive finding)"
                if column:
                    values[column] = share
                else:
                    row.todo.append(
                        f"Train / Development / Test Split: {figure} goes in the column of the eval set's split, "
                        "which the report does not name (set split_label on the eval dataset in the manifest)"
                    )
                if check.get("verdict") == "incomplete":
                    row.todo.append(
                        f"the check '{c.name}' is incomplete (some records or files were not checked): "
                        f"{share} is a lower bound"
                    )
                if check.get("suspected"):
                    row.todo.append(
                        f"{check['suspected']} eval items of check '{c.name}' have only suspected findings, not "
                        "counted: review them (report.md's review list) before you publish"
                    )
                row.todo += ["Reference: a link to your paper or report", "PR: the pull request's number"]
                rows.append(row)
    return rows


def render_conda(report: Report) -> str:
    """The rows of :func:`conda_rows` as ``contamination_report.csv`` text, header first."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=SEPARATOR, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in conda_rows(report):
        # a value starting with = + - @ is a formula to a spreadsheet: quoted and prefixed, it stays text
        writer.writerow([("'" + v) if v[:1] in ("=", "+", "-", "@") else v for v in row.values.values()])
    return out.getvalue()


def conda_todo(report: Report) -> list[str]:
    """One line per row naming the fields a user must fill in before the rows go to the database."""
    lines = []
    for n, row in enumerate(conda_rows(report), 1):
        lines.append(
            f"row {n} (check '{row.check}': {row.eval_dataset} in {row.train_dataset}): fill in " + "; ".join(row.todo)
        )
    return lines


def _method_lines(report: Report) -> list[str]:
    """One Markdown bullet per method the checks ran, with its one-line summary."""
    from .. import methods

    names = sorted({m for c in report.checks for m in c.methods})
    known = set(methods.names())
    return [
        f"  - {md(n)}: {md(methods.get(n).summary) if n in known else 'a method of another version'}" for n in names
    ]


def render_conda_pr(report: Report) -> str:
    """The database's pull-request template, filled from ``report`` (``TODO`` where only the user knows).

    >>> from auditor.report import Report
    >>> r = Report("fail", {"e": {"role": "eval", "records": 20, "split": "test"}, "t": {"role": "train"}},
    ...     [{"name": "c", "train": ["t"], "eval": ["e"], "methods": ["exact"], "eval_items": 20,
    ...       "contaminated_items": 3, "verdict": "fail",
    ...       "matrix": [{"train": "t", "eval": "e", "contaminated_items": 3}]}], [])
    >>> [ln for ln in render_conda_pr(r).splitlines() if ln.startswith("- e")]
    ['- e: test 15% (3 of 20 eval items) in t']
    """
    rows = conda_rows(report)
    evals = dict.fromkeys(f"{r.values['Evaluation Dataset']} ({md(r.eval_dataset)})" for r in rows)
    corpora = dict.fromkeys(md(r.train_dataset) for r in rows)
    splits = [
        f"- {md(r.eval_dataset)}: "
        + (r.column.split()[0].lower() if r.column else "TODO (its split)")
        + f" {_percent(r.found, r.items)}% ({r.found} of {r.items} eval items) in {md(r.train_dataset)}"
        for r in rows
    ]
    lines = [
        "## What are you reporting:",
        "- [x] Evaluation dataset(s) found in a pre-training corpus. (e.g. COPA found in ThePile)",
        "- [ ] Evaluation dataset(s) found in a pre-trained model. (e.g. FLAN T5 has been trained on ANLI)",
        "",
        "**Evaluation dataset(s)**: " + ", ".join(evals) + " (TODO: Hugging Face paths where they have one)",
        "",
        "**Contaminated model(s)**: TODO (models trained on the corpora below, if any)",
        "",
        "**Contaminated corpora**: " + ", ".join(corpora) + " (TODO: their Hugging Face paths)",
        "",
        "**Contaminated split(s)**: the share of eval items with a conclusive finding in the corpus",
        "",
        *splits,
        "",
        "## Briefly describe your method to detect data contamination",
        "",
        "- [x] Data-based approach",
        "- [ ] Model-based approach",
        "",
        f"Every eval item was searched for in every record of the training corpus with auditor "
        f"{md(report.run.version or '')} ({len(report.checks)} check{'s' if len(report.checks) != 1 else ''}), "
        "by these methods:",
        *_method_lines(report),
        "",
        "An item counts as contaminated when a method's finding is conclusive; suspected findings (possible "
        "paraphrases below the conclusive bar) are not counted. The report (report.json) names, per item, the "
        "training record that contains it, the method and the score.",
        "",
        "## Citation",
        "",
        "Is there a paper that reports the data contamination or describes the method used to detect data "
        "contamination? TODO",
        "",
        "url: TODO",
        "",
    ]
    return "\n".join(lines)


register_format("conda", render_conda)
register_format("conda-pr", render_conda_pr)
