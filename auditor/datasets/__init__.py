"""Datasets: named sets of files (or bundled registry names) read through adapters into records, split
selection, work units for the engines, accounting of what was read and skipped.
"""
