"""The analysis of a finished game (``service.analysis``, ``domain.analysis``): ``POST`` asks for it
(202, or 200 when it is done already), ``GET`` reads its state and, once done, every decision judged.
Public, no token: only a finished game is analysed, and a finished game is public."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from entrypoints.api.context import kifu
from entrypoints.api.limits import analysis_request

bp = Blueprint("analysis", __name__)


@bp.post("/v1/games/<game_id>/analysis")
@analysis_request
def request_analysis(game_id: str) -> ResponseReturnValue:
    found = kifu().analysis.request(game_id)
    headers = {"Location": f"/v1/games/{game_id}/analysis"}
    return jsonify(found), 200 if found["status"] == "done" else 202, headers


@bp.get("/v1/games/<game_id>/analysis")
def get_analysis(game_id: str) -> ResponseReturnValue:
    return jsonify(kifu().analysis.get(game_id))
