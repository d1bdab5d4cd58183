# The fields view's walk in C (auditor/records/_fieldsc.c): auditor.records.fields.walked_fields_view's twin.
from collections.abc import Callable
from typing import Any

def fields_view(raw: Any, texts: list[str], known: tuple[str, ...], decoded: Callable[[str], Any]) -> str | None: ...
