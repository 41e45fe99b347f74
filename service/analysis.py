"""Analyses of finished games: asked for, run by a worker, read back (``domain.analysis``).

Only a sealed game is analysed: the analysis judges each decision from the seat's information alone,
but its answers would still help whoever plays a game that runs. The analysis is a read model kept by
``Analyses`` (Redis), never written into the game's log; asking again for a done one answers it as it
is, a failed one (or one whose job was lost) is queued again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain import analysis
from domain.record import rfc3339
from service.errors import GameNotFinished, NotAnalysed
from service.games import GameService
from service.ports import Analyses


class AnalysisService:
    def __init__(self, games: GameService, analyses: Analyses, clock: Callable[[], datetime]) -> None:
        self.games = games
        self.analyses = analyses
        self.clock = clock

    def request(self, game_id: str) -> dict[str, Any]:
        """Queue the analysis of a finished game (idempotent); its state now."""
        table, _head = self.games.reader.load(game_id)  # GameNotFound for an unknown game
        if not table.sealed:
            raise GameNotFinished(f"game {game_id} is not over: only a finished game is analysed")
        self.analyses.request(game_id, analysis.DEFAULT_LEVEL, rfc3339(self.clock()))
        return self.get(game_id)

    def get(self, game_id: str) -> dict[str, Any]:
        """The game's analysis: its status, progress and, once done, every decision judged."""
        self.games.reader.load(game_id)
        found = self.analyses.get(game_id)
        if found is None:
            raise NotAnalysed(f"nobody has asked for the analysis of game {game_id} yet")
        return {"game_id": game_id, **found}

    def run(self, game_id: str) -> int:
        """Analyse the game (the worker's job); the number of decisions judged."""
        self.analyses.started(game_id)
        try:
            record = self.games.record(game_id)
            found = analysis.analyse(record, progress=lambda done, total: self.analyses.progress(game_id, done, total))
        except Exception as exc:
            self.analyses.fail(game_id, f"{type(exc).__name__}: {exc}", rfc3339(self.clock()))
            raise
        self.analyses.finish(game_id, found, rfc3339(self.clock()))
        return len(found)
