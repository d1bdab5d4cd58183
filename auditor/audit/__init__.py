"""The orchestration: a split manifest becomes checks; each check builds its eval indexes, streams its
training sets through an engine and decides a verdict (:mod:`auditor.audit.run`); provenance attribution,
error-type coverage and cleaned training sets build on the same scan.
"""
