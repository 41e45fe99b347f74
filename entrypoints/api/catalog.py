"""GET /v1/catalog: the games, player counts, options and bots."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from domain import search
from domain.contract import Game
from domain.engine import COMMON_OPTIONS, bot_levels
from domain.registry import all_games

bp = Blueprint("catalog", __name__)


def describe(game: Game) -> dict[str, Any]:
    """A game's catalogue entry: each option as a JSON Schema fragment (with default and description)."""
    options = {name: spec.describe() for name, spec in {**game.options, **COMMON_OPTIONS}.items()}
    return {
        "id": game.id,
        "name": game.name,
        "rules_version": game.rules_version,
        "players": {"min": game.min_players, "max": game.max_players},
        "options": options,
        "bots": bot_levels(game),
        "bot_settings": {level: search.settings(game, level) for level in search.levels_for(game)},
        "bot_settings_by_options": search.settings_by_options(game),
    }


@bp.get("/v1/catalog")
def catalog() -> ResponseReturnValue:
    return jsonify({"games": [describe(g) for g in all_games()]})
