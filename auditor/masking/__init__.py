"""Boilerplate masking: text shared by a large share of a check's training records, detected on a
sample and masked out of what the check's text-comparing indexes see (eval-item text never is).
"""
