"""The games by id: the ones Kifu plays (``domain.games.GAMES``), and any a test adds with ``register``
(the toy game of ``tests/support/toy_game.py``)."""

from __future__ import annotations

from domain.contract import Game
from domain.errors import UnknownGame
from domain.games import GAMES

_GAMES: dict[str, Game] = {game.id: game for game in GAMES}


def register(game: Game) -> Game:
    """Add ``game`` under its id (idempotent for the same object): for tests and games outside ``GAMES``."""
    existing = _GAMES.get(game.id)
    if existing is not None and existing is not game:
        raise ValueError(f"game id {game.id!r} registered twice")
    _GAMES[game.id] = game
    return game


def get_game(game_id: str) -> Game:
    """The game registered as ``game_id``, or ``UnknownGame``."""
    try:
        return _GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise UnknownGame(f"unknown game {game_id!r}; known games: {known}", ("game",)) from None


def all_games() -> list[Game]:
    """Every registered game, by id."""
    return [_GAMES[k] for k in sorted(_GAMES)]
