"""The scan, below the engines: a job of per-batch stages, the work on one unit, the merger and the driver loop."""
