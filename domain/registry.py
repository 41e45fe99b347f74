"""Games registered by id. Each game module calls ``register`` on its last line."""

from __future__ import annotations

from domain.contract import Game
from domain.errors import UnknownGame

_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add ``game`` under its id (idempotent for the same object)."""
    existing = _GAMES.get(game.id)
    if existing is not None and existing is not game:
        raise ValueError(f"game id {game.id!r} registered twice")
    _GAMES[game.id] = game
    return game


def _load_all() -> None:
    import domain.games  # noqa: F401  (registers every game)


def get_game(game_id: str) -> Game:
    """The game registered as ``game_id``, or ``UnknownGame``."""
    game = _GAMES.get(game_id)
    if game is not None:
        return game
    _load_all()
    try:
        return _GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise UnknownGame(f"unknown game {game_id!r}; known games: {known}", ("game",)) from None


def all_games() -> list[Game]:
    """Every registered game, by id."""
    _load_all()

    return [_GAMES[k] for k in sorted(_GAMES)]
