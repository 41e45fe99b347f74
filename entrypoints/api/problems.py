"""RFC 9457 problem+json answers for every error: a stable ``type`` per kind, no HTML, no stack traces.

Each kind of problem has a slug; its ``type`` is ``/problems/<slug>`` and its
``title`` never changes, so a client can switch on either. ``GET /problems``
and ``GET /problems/<slug>`` serve a page about each kind (what happened, what
to do). ``detail`` says what went wrong this time; field errors name the exact
field as a path (``players[2].bot``, ``options.mode``).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Flask, Response, abort, json
from flask.typing import ResponseReturnValue
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from adapters.redis_client import UNAVAILABLE
from domain.errors import (
    GameOver,
    IllegalAction,
    InvalidOptions,
    KifuError,
    NoSuchSeat,
    NotYourTurn,
    SeatTaken,
    UnknownGame,
)
from domain.tournament.commands import InvalidCommand, NotInTournament, TournamentStateError
from service.errors import Conflict, ServiceError
from service.ports import WriteUnconfirmed

log = logging.getLogger("kifu.api")
UNAVAILABLE_RETRY_S = 1  # Retry-After of a 503 from the event store: a failover takes seconds
bp = Blueprint("problems", __name__)


@dataclass(frozen=True)
class Kind:
    """One kind of problem: its slug, status, fixed title, and what a client should do."""

    slug: str
    status: int
    title: str
    about: str

    @property
    def type(self) -> str:
        return f"/problems/{self.slug}"


KINDS: dict[str, Kind] = {
    k.slug: k
    for k in (
        Kind(
            "malformed-request",
            400,
            "Malformed request",
            "The body is not strict JSON (UTF-8 without a byte-order mark, no lone surrogate, no repeated key, "
            "numbers finite, integers within 64 bits, at most 64 levels deep), or the request could not be "
            "parsed. Nothing was done. Fix the request; retrying it unchanged will fail again.",
        ),
        Kind(
            "unauthorized",
            401,
            "Unknown or missing token",
            "The request needs a token (`Authorization: Bearer <token>`): a seat token, or a tournament's "
            "organiser token for its organiser commands; or the token given is not a seat of this game (nor "
            "the organiser's or an entrant's of this tournament), or the stream ticket has expired. Use the "
            "token returned when the game (tournament) was created or the seat joined.",
        ),
        Kind(
            "forbidden",
            403,
            "Not allowed",
            "The token is valid but may not do this, e.g. replay another seat's view while the game runs.",
        ),
        Kind(
            "not-your-turn",
            403,
            "Not your turn",
            "The seat may not act now: another seat is to act, or its secret choice for this step is already "
            "in. Read `to_act` in the game view, or wait for the next event.",
        ),
        Kind(
            "game-over",
            403,
            "The game is over",
            "The game has ended; it accepts no more actions. Its record is complete and can be verified.",
        ),
        Kind("game-not-found", 404, "Game not found", "There is no game with this id."),
        Kind("tournament-not-found", 404, "Tournament not found", "There is no tournament with this id."),
        Kind("not-found", 404, "Not found", "There is no resource at this path. The paths are in openapi.yaml."),
        Kind(
            "not-logged",
            404,
            "Not in the transparency log",
            "The transparency log does not hold this game, or not within the tree size asked for: a game is "
            "logged once it is sealed (within moments); one sealed before records were signed never is.",
        ),
        Kind(
            "not-analysed",
            404,
            "Not analysed",
            "Nobody has asked for this game's analysis yet: `POST /v1/games/{id}/analysis` asks for it "
            "(a finished game only).",
        ),
        Kind(
            "game-not-finished",
            409,
            "Game not finished",
            "The game is still being played (or its last event is moments away): only a finished game is "
            "analysed, so that the analysis cannot help anyone playing it. Ask again once it is over.",
        ),
        Kind(
            "bad-tree-size",
            404,
            "No such tree or proof",
            "The transparency log has no tree of this size yet (it is beyond the log's current size: "
            "`GET /v1/log/head`), or no consistency proof from a larger tree to a smaller one.",
        ),
        Kind(
            "method-not-allowed",
            405,
            "Method not allowed",
            "The path exists but not with this method; the `Allow` header lists the methods it takes.",
        ),
        Kind(
            "version-conflict",
            409,
            "Version conflict",
            "`expected_version` (or `If-Match`) is not the game's version any more: another action came "
            "first. `current_version` says the version now; reload the game and decide again.",
        ),
        Kind("seat-taken", 409, "Seat taken", "The seat is not open: it was joined already, or never was open."),
        Kind(
            "tournament-state",
            409,
            "Not now in this tournament",
            "The tournament's state does not allow this now: it was started already, is not paused, the "
            "entrant has withdrawn, the game is over. `GET /v1/tournaments/{id}` shows its state.",
        ),
        Kind(
            "request-timeout",
            408,
            "Request timeout",
            "The request's body did not arrive in time: all of it must be in within `KIFU_BODY_READ_SECONDS` "
            "(10 s by default) of the request's head. The connection is closed. Send the body at once.",
        ),
        Kind(
            "payload-too-large",
            413,
            "Payload too large",
            "The request body is larger than the server accepts: `KIFU_MAX_BODY_BYTES` (2 MiB by default), or "
            "for an uploaded record (`POST /v1/audits`) `KIFU_MAX_RECORD_BYTES` (16 MiB). A `Content-Length` "
            "over the limit is refused before the body is read; a chunked body as soon as it passes it. The "
            "connection is closed.",
        ),
        Kind(
            "uri-too-long",
            414,
            "URI too long",
            "The request line (method, path and query) is longer than the server accepts: 4,094 bytes "
            "(gunicorn's `limit_request_line`). It is refused before the app sees it; nothing was done.",
        ),
        Kind(
            "unsupported-media-type",
            415,
            "Unsupported media type",
            "A request with a body must say that the body is JSON: `Content-Type: application/json` (a "
            "`charset` parameter, if any, must be `utf-8`). Anything else (`text/plain`, a form, no "
            "`Content-Type` at all, or another `+json` type) is refused before anything is done, so that "
            "no page of another site can send a body without the browser asking this server first (a CORS "
            "preflight). Send the same body with `Content-Type: application/json`.",
        ),
        Kind(
            "invalid-request",
            422,
            "Invalid request",
            "The request is well-formed JSON but does not match its schema (see openapi.yaml); `errors` maps "
            "each field at fault, as a path such as `players[2].bot`, to its messages.",
        ),
        Kind(
            "invalid-game-settings",
            422,
            "Invalid game settings",
            "The players, options or fixed deal are not acceptable for this game; `errors` names the field "
            "(`players`, `players[1].bot`, `options.<name>`, `deal`) and `detail` the rule. The catalogue "
            "(`GET /v1/catalog`) lists each game's options and player counts.",
        ),
        Kind("unknown-game", 422, "Unknown game", "No game is registered under that id; see `GET /v1/catalog`."),
        Kind(
            "illegal-action",
            422,
            "Illegal action",
            "The action breaks a rule of the game; `detail` names the rule and the card. `GET .../actions` "
            "lists the legal actions of your seat now.",
        ),
        Kind(
            "idempotency-key-reused",
            422,
            "Idempotency key reused",
            "This `Idempotency-Key` was used before for a different request. Use a new key for a new request.",
        ),
        Kind(
            "audit-too-long",
            422,
            "Audit took too long",
            "The uploaded record took longer to verify than the server allows one verification "
            "(`KIFU_AUDIT_SECONDS`, 30 s by default; the largest real record takes about a second), so it "
            "was stopped. Retrying it unchanged will most likely fail again: verify it offline "
            "(`kifu verify RECORD.json`).",
        ),
        Kind(
            "rate-limited",
            429,
            "Too many requests",
            "A rate limit was reached: games and tournaments created per client address, uploaded records "
            "audited per client address, actions per seat, "
            "refused tokens and tickets per client address (past it, each further refused one is answered "
            "429 instead of 401), or connections open at once per client address. `Retry-After` says in how "
            "many seconds to try again; nothing was done.",
        ),
        Kind(
            "request-header-fields-too-large",
            431,
            "Request header fields too large",
            "The request's headers are more than the server accepts: over 100 header fields, or one over "
            "8,190 bytes (gunicorn's `limit_request_fields` and `limit_request_field_size`). It is refused "
            "before the app sees it; nothing was done. Send fewer or shorter headers (cookies included).",
        ),
        Kind(
            "internal-error",
            500,
            "Internal server error",
            "The server failed; the error was logged. Retrying may help; if it persists, report it.",
        ),
        Kind(
            "service-unavailable",
            503,
            "Service unavailable",
            "The event store is unreachable for a moment (or failing over); nothing was written. Retry "
            "after `Retry-After` seconds.",
        ),
        Kind(
            "write-unconfirmed",
            503,
            "Write unconfirmed",
            "The write reached the event store, but its replicas did not confirm it in time, so it may or "
            "may not survive the loss of a node. Retry with the same `Idempotency-Key`: the answer says "
            "whether it was done. `Retry-After` says when.",
        ),
        Kind(
            "audits-busy",
            503,
            "Audits busy",
            "Every verifier of uploaded records is busy and the queue waiting for them is full (per server "
            "process: `KIFU_AUDIT_PROCESSES` at once, 1 by default, and `KIFU_AUDIT_QUEUE` waiting, 4). "
            "Nothing was done. `Retry-After` says in how many seconds to try again.",
        ),
        Kind("http-error", 400, "HTTP error", "An HTTP-level error; `status` and `detail` say which."),
    )
}

DOMAIN_KINDS: dict[type[KifuError], str] = {
    IllegalAction: "illegal-action",
    InvalidOptions: "invalid-game-settings",
    UnknownGame: "unknown-game",
    NotYourTurn: "not-your-turn",
    GameOver: "game-over",
    SeatTaken: "seat-taken",
    NoSuchSeat: "not-found",
    NotInTournament: "not-found",
    InvalidCommand: "invalid-request",
    TournamentStateError: "tournament-state",
}
HTTP_KINDS = {
    400: "malformed-request",
    404: "not-found",
    405: "method-not-allowed",
    408: "request-timeout",
    413: "payload-too-large",
    414: "uri-too-long",
    415: "unsupported-media-type",
    429: "rate-limited",
    431: "request-header-fields-too-large",
    500: "internal-error",
    503: "service-unavailable",
}
# Answered before the body was read whole: the server closes the connection rather than read (drain)
# the rest of it (gunicorn: ``post_request`` in entrypoints/gunicorn_conf.py; werkzeug's server closes
# every connection).
CLOSE_AFTER = frozenset({408, 413})


def kind_for_status(status: int) -> Kind:
    """The kind of an HTTP-level error with this status (``http-error`` when none is more precise)."""
    return KINDS[HTTP_KINDS.get(status, "http-error")]


def problem_body(kind: Kind, detail: str, status: int | None = None, **extra: Any) -> dict[str, Any]:
    """The problem document of ``kind`` (``status`` overrides it only for the generic ``http-error``)."""
    return {"type": kind.type, "title": kind.title, "status": status or kind.status, "detail": detail, **extra}


def problem(slug: str, detail: str, status: int | None = None, **extra: Any) -> Response:
    """A problem+json response of kind ``slug``."""
    body = problem_body(KINDS[slug], detail, status, **extra)
    return Response(json.dumps(body), status=body["status"], mimetype="application/problem+json")


def field_path(path: Sequence[str | int]) -> str:
    """``("players", 2, "bot")`` -> ``players[2].bot``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def flat_errors(messages: Any, prefix: Sequence[str | int] = ()) -> dict[str, list[str]]:
    """marshmallow's nested messages as ``{"players[2].bot": [...]}`` (``_schema`` for the whole body)."""
    if isinstance(messages, Mapping):
        out: dict[str, list[str]] = {}
        for key, value in messages.items():
            digits = isinstance(key, str) and key.isascii() and key.isdigit()  # not "¹": isdigit alone takes it
            part: str | int = int(key) if isinstance(key, int) or digits else key
            out |= flat_errors(value, (*prefix, part))
        return out
    texts = messages if isinstance(messages, list) else [messages]
    return {field_path(prefix) or "_schema": [str(t) for t in texts]}


def _errors(path: Sequence[str | int] | None, message: str) -> dict[str, Any]:
    return {"errors": {field_path(path): [message]}} if path else {}


def register(app: Flask) -> None:
    """Map every error to a problem response, and serve the problem pages."""
    app.register_blueprint(bp)

    @app.errorhandler(ValidationError)
    def _invalid(exc: ValidationError) -> Response:
        return problem("invalid-request", "the request does not match the schema", errors=flat_errors(exc.messages))

    @app.errorhandler(ServiceError)
    def _service(exc: ServiceError) -> Response:
        extra = {"current_version": exc.current} if isinstance(exc, Conflict) else {}
        return problem(exc.kind, str(exc), **extra, **_errors(exc.field, str(exc)))

    @app.errorhandler(KifuError)
    def _domain(exc: KifuError) -> Response:
        slug = next((s for k, s in DOMAIN_KINDS.items() if isinstance(exc, k)), "illegal-action")
        return problem(slug, str(exc), **_errors(exc.field, str(exc)))

    @app.errorhandler(WriteUnconfirmed)
    def _unconfirmed(exc: WriteUnconfirmed) -> Response:
        log.warning("a write's replicas did not confirm it: %s", exc)
        response = problem("write-unconfirmed", "the replicas did not confirm the write in time; retry with the key")
        response.headers["Retry-After"] = str(UNAVAILABLE_RETRY_S)
        return response

    def _storage(exc: Exception) -> Response:
        log.error("redis unavailable: %s: %s", type(exc).__name__, exc)
        response = problem("service-unavailable", "the event store is unreachable; try again shortly")
        response.headers["Retry-After"] = str(UNAVAILABLE_RETRY_S)
        return response

    for unavailable in UNAVAILABLE:
        app.register_error_handler(unavailable, _storage)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        status = exc.code or 500
        kind = kind_for_status(status)
        detail = exc.description or exc.name
        response = problem(kind.slug, detail, status)
        if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
            response.headers["Allow"] = ", ".join(sorted(exc.valid_methods))
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unexpected error")
        return problem("internal-error", "the server failed; the error was logged")


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>
<body><main>{body}</main></body></html>
"""


@bp.get("/problems")
def index() -> ResponseReturnValue:
    items = "".join(
        f'<li><a href="{k.type}"><code>{k.slug}</code></a> ({k.status}) {html.escape(k.title)}</li>'
        for k in KINDS.values()
    )
    body = f"<h1>Kifu problem types</h1><p>Every error is <code>application/problem+json</code>.</p><ul>{items}</ul>"
    return Response(PAGE.format(title="Kifu problem types", body=body), mimetype="text/html")


@bp.get("/problems/<slug>")
def page(slug: str) -> ResponseReturnValue:
    kind = KINDS.get(slug)
    if kind is None:
        abort(404)
    body = (
        f"<h1>{html.escape(kind.title)}</h1><p>HTTP {kind.status}; <code>type</code>: "
        f"<code>{kind.type}</code></p><p>{html.escape(kind.about)}</p>"
        '<p><a href="/problems">All problem types</a></p>'
    )
    return Response(PAGE.format(title=html.escape(kind.title), body=body), mimetype="text/html")
