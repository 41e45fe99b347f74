"""The tournaments resource: create, list, view, organiser commands, standings, games, events (and SSE),
record (the archive) and audit."""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from domain.events import Event
from domain.tournament import commands
from domain.tournament.model import TOURNAMENT_FINISHED, Tournament
from entrypoints.api import limits
from entrypoints.api.body import idempotency_key, json_object, whole_number
from entrypoints.api.context import bearer_token, kifu
from entrypoints.api.schemas import (
    MAX_SEQ,
    CreateTournamentSchema,
    EventsQuerySchema,
    ForfeitSchema,
    ReasonSchema,
    TournamentGamesQuerySchema,
    TournamentListQuerySchema,
)
from entrypoints.api.sse import Timing, log_stream
from service.tournaments import TournamentService

bp = Blueprint("tournaments", __name__, url_prefix="/v1/tournaments")
CREATE_SCHEMA = CreateTournamentSchema()
REASON_SCHEMA = ReasonSchema()
FORFEIT_SCHEMA = ForfeitSchema()
GAMES_QUERY_SCHEMA = TournamentGamesQuerySchema()
EVENTS_QUERY_SCHEMA = EventsQuerySchema()
LIST_QUERY_SCHEMA = TournamentListQuerySchema()


def tournaments() -> TournamentService:
    return kifu().tournaments


def _organiser(tid: str, decide: Callable[[Tournament], list[Event]]) -> ResponseReturnValue:
    return jsonify(tournaments().command(tid, bearer_token(), decide))


@bp.post("")
@limits.creation
def create_tournament() -> ResponseReturnValue:
    answer = tournaments().create(CREATE_SCHEMA.load(json_object()), idempotency_key())
    return jsonify(answer.body), 201, {"Idempotent-Replayed": "true"} if answer.replayed else {}


@bp.get("")
def list_tournaments() -> ResponseReturnValue:
    """The tournaments list read model (public: it holds no token, seed or deal), newest first."""
    query = LIST_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(kifu().tournaments_list.query(**query))


@bp.get("/<tid>")
def get_tournament(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    return jsonify(tournaments().view(tid))


@bp.post("/<tid>/start")
def start(tid: str) -> ResponseReturnValue:
    return _organiser(tid, commands.start)


@bp.post("/<tid>/pause")
def pause(tid: str) -> ResponseReturnValue:
    reason = REASON_SCHEMA.load(json_object() if request.content_length else {})["reason"]
    return _organiser(tid, lambda t: commands.pause(t, reason))


@bp.post("/<tid>/resume")
def resume(tid: str) -> ResponseReturnValue:
    return _organiser(tid, commands.resume)


@bp.post("/<tid>/entrants/<int:entrant>/withdraw")
def withdraw(tid: str, entrant: int) -> ResponseReturnValue:
    reason = REASON_SCHEMA.load(json_object() if request.content_length else {})["reason"]
    return _organiser(tid, lambda t: commands.withdraw(t, entrant, reason))


@bp.post("/<tid>/games/<game_id>/forfeit")
def forfeit(tid: str, game_id: str) -> ResponseReturnValue:
    body = FORFEIT_SCHEMA.load(json_object())
    return jsonify(tournaments().forfeit(tid, bearer_token(), game_id, body["seat"], body["reason"]))


@bp.get("/<tid>/standings")
def standings(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    return jsonify(kifu().standings.get(tid))


@bp.get("/<tid>/games")
def tournament_games(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    query = GAMES_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(tournaments().games_page(tid, query["limit"], query["cursor"]))


@bp.get("/<tid>/events")
def tournament_events(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    query = EVENTS_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(tournaments().events(tid, query["after"], query["limit"]))


@bp.get("/<tid>/events/stream")
def tournament_stream(tid: str) -> ResponseReturnValue:
    """The live log of the tournament (public: its only hidden parts are the deals, shown when revealed)."""
    tournaments().identify(tid, None)
    query = EVENTS_QUERY_SCHEMA.load(request.args.to_dict())
    last_id = whole_number(request.headers.get("Last-Event-ID", ""))
    after = last_id if last_id is not None and last_id <= MAX_SEQ else query["after"]
    svc = tournaments()
    if svc.log_complete(tid, after):
        return "", 204  # nothing will ever come: an EventSource stops reconnecting on 204
    timing = Timing.of(current_app.config)
    return log_stream(lambda a, ms: svc.wait_events(tid, a, ms), after, TOURNAMENT_FINISHED, timing, tid)


@bp.get("/<tid>/record")
def tournament_record(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    return jsonify(tournaments().archive(tid))


@bp.get("/<tid>/audit")
def tournament_audit(tid: str) -> ResponseReturnValue:
    tournaments().identify(tid, bearer_token())
    return jsonify(tournaments().audit(tid))
