"""What the error-type labels mean, in words, for the "Error types" section of report.md / report.html.

The rules are :mod:`auditor.audit.errortypes`'s; docs/report.md (section *Error types*) has the same
list. A label not named here (a report from a later version) is shown without a meaning.

>>> MEANINGS["schema_invalid_arguments"][:40]
'a call with a required parameter missing'
"""

from __future__ import annotations

#: where the labels are explained at length (a path in the auditor repository)
DOCS = "docs/report.md#error-types"

INTRO = (
    "Error types are deterministic labels of tool-use failures in records that carry a tool trace "
    "(calls, their arguments and results): each cell counts the dataset's records with that label "
    "(a record may have several). A label on the eval side that the training side never has is a failure the "
    "training data does not teach (the check's `novel_error_types`)."
)

MEANINGS = {
    "unknown_tool": "a call to a tool name missing from the known tools, or a result saying so",
    "schema_invalid_arguments": "a call with a required parameter missing, an undeclared parameter or a value of "
    "the wrong type, or a result complaining about its parameters",
    "ungrounded_identifier": "an id-like argument found neither in the user's text nor in an earlier tool result",
    "ignored_error_result": "a failed tool result followed by the same call again or by the end (no recovery)",
    "repeated_identical_call": "the same call twice in a row",
    "missing_precondition_step": "a write call (book, cancel, update …) with no read call (get, search …) before it",
    "answered_without_call": "tools were available but the record answers without calling any",
    "claimed_without_success": "the answer claims a completed action but no write call succeeded",
    "step_budget_exhausted": "the run hit a step budget or ends in a loop of failed tool results",
    "injection_followed": "a tool result carries instructions and the next call follows them, unasked",
}
