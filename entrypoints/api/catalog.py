"""GET /v1/catalog: the games, player counts, options and bots."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from domain.engine import bot_levels
from domain.registry import all_games

bp = Blueprint("catalog", __name__)

COMMON_OPTIONS = {
    "move_timeout_s": {
        "default": None,
        "type": "integer",
        "description": "seconds a human seat may take before a random legal "
        "action is played for it, 1-604800 (null: no limit)",
    }
}


def describe(game: Any) -> dict[str, Any]:
    options = {name: spec.describe() for name, spec in game.options.items()}
    return {
        "id": game.id,
        "name": game.name,
        "rules_version": game.rules_version,
        "players": {"min": game.min_players, "max": game.max_players},
        "options": {**options, **COMMON_OPTIONS},
        "bots": bot_levels(game),
    }


@bp.get("/v1/catalog")
def catalog() -> ResponseReturnValue:
    return jsonify({"games": [describe(g) for g in all_games()]})
