"""The benchmark scripts, run from the repository root as ``python -m benchmarks.NAME`` (each one's
docstring says what it measures and how); what they share is in :mod:`benchmarks.common`. Not part
of the installed package."""
