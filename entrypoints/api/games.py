"""The games resource: create, list, view, act, events (and SSE), replay (a step, or pages of steps), record,
audit, and the export of finished games (NDJSON)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from flask.typing import ResponseReturnValue
from marshmallow import ValidationError

from entrypoints.api import limits
from entrypoints.api.body import idempotency_key, json_object, whole_number
from entrypoints.api.compression import accepts_gzip, gzipped
from entrypoints.api.context import bearer_token, commands, games, kifu
from entrypoints.api.schemas import (
    EXPORT_QUERY_SCHEMA,
    MAX_SEQ,
    ActionSchema,
    CreateGameSchema,
    EventsQuerySchema,
    JoinSchema,
    ListQuerySchema,
    ReplayQuerySchema,
    StepsQuerySchema,
    StreamQuerySchema,
)
from entrypoints.api.sse import Timing, event_stream
from projections.export import ExportFilter, finished_records
from service.commands import Answer, CreateGame, JoinSeat, TakeAction
from service.reader import Caller

bp = Blueprint("games", __name__, url_prefix="/v1/games")

# Schemas are built once: ``load`` keeps no state between calls.
ACTION_SCHEMA = ActionSchema()
CREATE_GAME_SCHEMA = CreateGameSchema()
JOIN_SCHEMA = JoinSchema()
EVENTS_QUERY_SCHEMA = EventsQuerySchema()
LIST_QUERY_SCHEMA = ListQuerySchema()
REPLAY_QUERY_SCHEMA = ReplayQuerySchema()
STEPS_QUERY_SCHEMA = StepsQuerySchema()
STREAM_QUERY_SCHEMA = StreamQuerySchema()


def _caller(game_id: str) -> Caller:
    return games().identify(game_id, bearer_token())


@bp.post("")
@limits.creation
def create_game() -> ResponseReturnValue:
    body = CREATE_GAME_SCHEMA.load(json_object())
    command = CreateGame(body["game"], body["players"], body["options"], body["deal"], idempotency_key())
    return _answered(commands().create_game(command))


@bp.get("")
def list_games() -> ResponseReturnValue:
    query = LIST_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(kifu().games_list.query(**query))


@bp.get("/export")
def export_games() -> ResponseReturnValue:
    """Finished games as NDJSON, one record a line (``projections.export``); gzip for a client that takes it."""
    query = EXPORT_QUERY_SCHEMA.load(request.args.to_dict())
    records = finished_records(kifu().games_list, games(), ExportFilter(**query))
    lines: Iterator[bytes] = (json.dumps(record, ensure_ascii=False).encode() + b"\n" for record in records)
    headers = {"Content-Disposition": 'attachment; filename="kifu-games.ndjson"', "Vary": "Accept-Encoding"}
    if accepts_gzip():
        headers["Content-Encoding"] = "gzip"
        lines = gzipped(lines)
    return Response(stream_with_context(lines), mimetype="application/x-ndjson", headers=headers)


@bp.get("/<game_id>")
def get_game(game_id: str) -> ResponseReturnValue:
    caller = _caller(game_id)
    return jsonify(games().view(game_id, caller.seat, caller.head))


@bp.get("/<game_id>/actions")
def legal_actions(game_id: str) -> ResponseReturnValue:
    caller = _caller(game_id)
    return jsonify(games().legal_actions(game_id, caller.seat, caller.head))


@bp.post("/<game_id>/actions")
@limits.per_seat
def take_action(game_id: str) -> ResponseReturnValue:
    token = bearer_token()
    actor = commands().identify_actor(game_id, token)  # 404 or 401 before the body is judged
    body = ACTION_SCHEMA.load(json_object())
    if_match = _if_match_version() if "If-Match" in request.headers else None  # judged even when not used
    expected = body["expected_version"] if body["expected_version"] is not None else if_match
    command = TakeAction(game_id, actor, body["action"], expected, idempotency_key(), token, quotas=limits.quotas())
    return _answered(commands().take_action(command))


@bp.post("/<game_id>/seats/<int:seat>/join")
def join_seat(game_id: str, seat: int) -> ResponseReturnValue:
    """Take an open seat: the answer holds its token, shown only this once."""
    games().identify(game_id, None)  # 404 for an unknown game before the body is judged
    body = JOIN_SCHEMA.load(json_object())
    return _answered(commands().join_seat(JoinSeat(game_id, seat, body["name"], idempotency_key())))


def _answered(answer: Answer) -> ResponseReturnValue:
    """201 with the answer; a replay of an idempotency key says so in ``Idempotent-Replayed``."""
    headers = {"Idempotent-Replayed": "true"} if answer.replayed else {}
    return jsonify(answer.body), 201, headers


def _if_match_version() -> int:
    """The version ``If-Match`` expects; any number but the version now is stale (409), however large."""
    version = whole_number(request.headers["If-Match"].strip().strip('"'))
    if version is None:
        raise ValidationError({"If-Match": ["must be the expected version number"]})
    return version


@bp.get("/<game_id>/events")
def events(game_id: str) -> ResponseReturnValue:
    query = EVENTS_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(games().events(game_id, _caller(game_id).seat, query["after"], query["limit"]))


@bp.get("/<game_id>/events/stream")
def events_stream(game_id: str) -> ResponseReturnValue:
    """The live log; a browser authenticates with ``?ticket=`` (``POST .../stream-tickets``), never a token."""
    query = STREAM_QUERY_SCHEMA.load(request.args.to_dict())
    ticket = query["ticket"]
    last_id = whole_number(request.headers.get("Last-Event-ID", ""))
    if last_id is not None and last_id > MAX_SEQ:
        last_id = None  # no id this stream sent: ignored like any other (the player stream does the same)
    # the ticket's seat is the caller, as its token would be: also in a game a tournament holds; past its
    # opening minutes a ticket only resumes the stream it opened (service/streams.py)
    resuming = "Last-Event-ID" in request.headers  # a reconnect (the header proves nothing: docs/api.md)
    by_ticket = (lambda: kifu().streams.seat_of(game_id, ticket, resuming)) if ticket is not None else None
    caller = games().identify(game_id, bearer_token(), ticket_seat=by_ticket)
    viewer = caller.seat
    after = last_id if last_id is not None else query["after"]
    if after >= caller.head.version and games().log_complete(game_id):
        return "", 204  # nothing will ever come: an EventSource stops reconnecting on 204
    return event_stream(games(), game_id, viewer, after, Timing.of(current_app.config))


@bp.post("/<game_id>/stream-tickets")
def stream_ticket(game_id: str) -> ResponseReturnValue:
    """Trade the seat token (in the header) for a short-lived ticket an ``EventSource`` URL may carry."""
    return jsonify(kifu().streams.game_ticket(game_id, _caller(game_id).seat)), 201


@bp.get("/<game_id>/replay")
def replay(game_id: str) -> ResponseReturnValue:
    viewer = _caller(game_id).seat
    query = REPLAY_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(games().replay(game_id, query["step"], query["as_"], viewer))


@bp.get("/<game_id>/steps")
def steps(game_id: str) -> ResponseReturnValue:
    """Every step's ``replay`` answer from ``from``, a page at a time, computed in one pass over the log."""
    viewer = _caller(game_id).seat
    query = STEPS_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(games().steps(game_id, query["from_"], query["limit"], query["as_"], viewer))


@bp.get("/<game_id>/record")
def record(game_id: str) -> ResponseReturnValue:
    _caller(game_id)
    return jsonify(games().record(game_id))


@bp.get("/<game_id>/audit")
def audit(game_id: str) -> ResponseReturnValue:
    _caller(game_id)
    return jsonify(games().audit(game_id))
