"""A player's turns across games, as Server-Sent Events a browser can open (``/v1/stream-tickets``, ``/v1/stream``)."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from entrypoints.api.body import json_body
from entrypoints.api.context import kifu
from entrypoints.api.schemas import PlayerStreamQuerySchema, PlayerTicketSchema
from entrypoints.api.sse import Timing, player_stream
from service.streams import decode_seen

bp = Blueprint("streams", __name__, url_prefix="/v1")
PLAYER_TICKET_SCHEMA = PlayerTicketSchema()
PLAYER_STREAM_QUERY_SCHEMA = PlayerStreamQuerySchema()


@bp.post("/stream-tickets")
def player_ticket() -> ResponseReturnValue:
    """Trade the tokens of several seats (in the body, never a URL) for one ticket watching their turns."""
    body = PLAYER_TICKET_SCHEMA.load(json_body())
    seats = [(seat["game"], seat["token"]) for seat in body["seats"]]
    return jsonify(kifu().streams.player_ticket(seats)), 201


@bp.get("/stream")
def stream() -> ResponseReturnValue:
    """Resumed with ``Last-Event-ID`` (what was delivered), which also lets an expired ticket go on."""
    query = PLAYER_STREAM_QUERY_SCHEMA.load(request.args.to_dict())
    last_id = request.headers.get("Last-Event-ID")
    streams = kifu().streams
    seats = streams.watched(query["ticket"], resuming=last_id is not None)
    # an id this stream sent resumes it; any other is ignored (the stream starts afresh)
    delivered = decode_seen(last_id, len(seats)) if last_id is not None else None
    return player_stream(streams, seats, delivered or [None] * len(seats), Timing.of(current_app.config))
