"""Text shared by every detection tier: normalization (with evasion undone), token and n-gram hashes,
the scan's vectorized kernels, MinHash sketches, and boilerplate masking.
"""
