"""Text shared by every detection tier: normalization (with evasion undone), token and n-gram hashes,
token batches, and where a match sits in a record.
"""
