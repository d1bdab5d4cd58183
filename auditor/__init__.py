"""auditor: tells whether a training set leaks an evaluation set, and proves it item by item."""

__version__ = "0.1.0"
