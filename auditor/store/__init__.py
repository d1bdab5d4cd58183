"""Where results live: findings while a scan runs (memory or DuckDB), the texts a report shows beside
them, and persisted eval-side indexes.

Finding stores register themselves by ``name`` (:class:`~auditor.store.findings.FindingStore`;
manifest ``findings_store``) in :data:`~auditor.store.findings.STORES`, each with a nested ``Config``
of its own options; the built-in ``duckdb`` store is declared there and imported when first used.
"""

from __future__ import annotations
