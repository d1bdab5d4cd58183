"""Scan engines (see :mod:`auditor.engine` for the protocol and :func:`auditor.engine.get_engine`)."""
