"""Scan engines (see :mod:`auditor.engines.base` for the protocol and :func:`auditor.engines.base.get_engine`)."""
