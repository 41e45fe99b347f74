"""Kifu's service layer and adapters: the event store, commands, the REST API, the CLI."""
