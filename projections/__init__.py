"""Read models rebuilt from the log: the games list and per-game snapshots.

Every model here is disposable: ``kifu rebuild-projections`` drops them and
replays the global feed from the start.
"""
