"""Kifu for its users: ``kifu.client`` is the Python client of Kifu's public REST API.

Nothing under ``kifu`` imports the server's packages (``domain``, ``service``, ...): it
speaks only the HTTP contract (``openapi.yaml``), as any other client would.
"""
