"""Kifu's service layer: the use cases (games, tables, streams, tournaments) over the ports of ``ports.py``;
no Flask, no Redis client (the adapters and entrypoints hold those)."""
