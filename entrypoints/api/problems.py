"""RFC 9457 problem+json answers for every error: no HTML, no stack traces."""

from __future__ import annotations

import logging
from typing import Any

import redis
from flask import Flask, Response, json
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from domain.errors import GameOver, IllegalAction, InvalidOptions, KifuError, NotYourTurn, UnknownGame
from service.errors import Conflict, ServiceError

log = logging.getLogger("kifu.api")

DOMAIN_STATUS: dict[type[KifuError], tuple[int, str]] = {
    IllegalAction: (422, "Illegal action"),
    InvalidOptions: (422, "Invalid game options"),
    UnknownGame: (422, "Unknown game"),
    NotYourTurn: (403, "Not your turn"),
    GameOver: (403, "The game is over"),
}


def problem(status: int, title: str, detail: str, **extra: Any) -> Response:
    """A problem+json response."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return Response(json.dumps(body), status=status, mimetype="application/problem+json")


def _field_errors(path: tuple[str, ...] | None, message: str) -> dict[str, Any]:
    """``{"errors": {"options": {"mode": [message]}}}`` for a field path; nothing without one."""
    if not path:
        return {}
    errors: Any = [message]
    for name in reversed(path):
        errors = {name: errors}
    return {"errors": errors}


def register(app: Flask) -> None:
    """Map every error to a problem response."""

    @app.errorhandler(ValidationError)
    def _invalid(exc: ValidationError) -> Response:
        messages = exc.messages if isinstance(exc.messages, dict) else {"_schema": exc.messages}
        return problem(422, "Invalid request", "the request does not match the schema", errors=messages)

    @app.errorhandler(ServiceError)
    def _service(exc: ServiceError) -> Response:
        extra = {"current_version": exc.current} if isinstance(exc, Conflict) else {}
        return problem(exc.status, exc.title, str(exc), **extra, **_field_errors(exc.field, str(exc)))

    @app.errorhandler(KifuError)
    def _domain(exc: KifuError) -> Response:
        status, title = next((v for k, v in DOMAIN_STATUS.items() if isinstance(exc, k)), (422, "Refused"))
        return problem(status, title, str(exc), **_field_errors(exc.field, str(exc)))

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def _storage(exc: redis.RedisError) -> Response:
        log.error("redis unavailable: %s", exc)
        return problem(503, "Service unavailable", "the event store is unreachable; try again shortly")

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        status = exc.code or 500
        detail = "the body is not valid JSON" if status == 400 else (exc.description or exc.name)
        return problem(status, exc.name, detail)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unexpected error")
        return problem(500, "Internal server error", "the server failed; the error was logged")
