"""Pipeline integrations of :class:`auditor.Detector` that need a third-party library (an optional extra).

Hugging Face ``datasets`` and Ray Data need none: their callables are the detector's own methods
(:meth:`~auditor.integrations.detector.Detector.keep_batch`, :meth:`~auditor.integrations.detector.Detector.drop_batch`).
:mod:`auditor.integrations.datatrove` is a datatrove filter step (``pip install "auditor[datatrove]"``).
"""
