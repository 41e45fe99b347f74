"""RQ jobs: bot turns and move timeouts, each acting through the service like a player."""
