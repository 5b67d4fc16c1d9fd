"""Tunables: read, validate, apply with the journal first, verify, and always revert."""
