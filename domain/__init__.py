"""Kifu's pure rules layer: games, events, the seeded generator and the audit.

Nothing in this package performs I/O, reads the clock or uses global randomness.
"""
