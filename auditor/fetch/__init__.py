"""Fetching the public releases the tests and notebooks read (``auditor data fetch``): each file from
its upstream repository at a pinned commit, checked against its pinned SHA-256, written atomically
(:mod:`auditor.fetch.releases`; the pins: ``auditor/data/releases.json``)."""
