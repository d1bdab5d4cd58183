"""Where results live: findings while a scan runs (memory or DuckDB), the texts a report shows beside
them, and persisted eval-side indexes.
"""
