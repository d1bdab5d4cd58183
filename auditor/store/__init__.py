"""Where results live: findings while a scan runs (memory or DuckDB), the texts a report shows beside
them, and persisted eval-side indexes.

Finding stores register themselves by ``name`` (:class:`~auditor.store.findings.FindingStore`;
manifest ``findings_store``), each with a nested ``Config`` of its own options; importing this
package registers the built-in ones (``memory``, ``duckdb``).
"""

from __future__ import annotations

from . import findings_db  # noqa: F401 (registers the DuckDB store)
