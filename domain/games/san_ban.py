"""Placeholder until the San Ban module lands (lead engineer)."""
