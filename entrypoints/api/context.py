"""What a request handler gets: the wired ``Kifu`` of its app, and the caller's token."""

from __future__ import annotations

import threading

from flask import current_app, request

from adapters.redis_client import connect
from bootstrap import Kifu, build, events_from
from service.commands import Commands
from service.errors import Unauthorized
from service.games import GameService


def kifu() -> Kifu:
    """The app's ``Kifu``, wired on first use (nothing connects at import or app creation)."""
    ext = current_app.extensions
    if "kifu" not in ext:
        client = current_app.config.get("REDIS_CLIENT") or connect(current_app.config["REDIS_URL"])
        config = current_app.config
        events = config.get("EVENTS")  # (tests: an ``Events``)
        if events is None and config.get("EVENTS_URL"):
            events = events_from(config["EVENTS_URL"], config.get("EVENTS_WAIT_REPLICAS"), config.get("EVENTS_WAIT_MS"))
        ext["kifu"] = build(
            client,
            events=events,
            scheduler=current_app.config.get("SCHEDULER"),
            ticket_ttl_s=int(current_app.config["STREAM_TICKET_SECONDS"]),
            ticket_resume_s=int(current_app.config["STREAM_TICKET_RESUME_SECONDS"]),
        )
        following = current_app.config["FOLLOW_APPENDS"]
        if following if following is not None else not current_app.testing:
            ext["kifu"].follow_appends(threading.Event())  # for the life of the process
    wired: Kifu = ext["kifu"]
    return wired


def games() -> GameService:
    """The game service of the app."""
    return kifu().games


def commands() -> Commands:
    """The commands on games (the write path) of the app."""
    return kifu().commands


def bearer_token() -> str | None:
    """The bearer token of the request, if any (a malformed header is refused)."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("use 'Authorization: Bearer <seat token>'")
    return token.strip()
