"""The record model and how agent data becomes comparable text: :class:`~auditor.records.record.Record`
(named text views), message selectors, tool-call parsing and canonical calls, trajectories.
"""
