"""What the client raises: ``ApiError`` for every answer that is an error (an RFC 9457 problem),
with a subclass for each kind a program reacts to; ``TransportError`` when no answer came.

Catch ``ClientError`` for both. Every problem kind (``/problems/<kind>``, ``docs/api.md``,
"Errors") has its ``kind``; the subclasses group the common ones::

    try:
        client.act(game_id, action, token, expected_version=view["version"])
    except VersionConflict as stale:
        ...  # stale.current_version: reload and decide again
    except IllegalAction as illegal:
        ...  # illegal.detail names the rule
"""

from __future__ import annotations

from typing import Any, cast

import requests

from kifu.client.types import Problem

PROBLEMS = "/problems/"


class ClientError(Exception):
    """Anything this client raises."""


class TransportError(ClientError):
    """No usable answer came: the connection failed or dropped (after the retries that were safe)."""


class ApiError(ClientError):
    """The server answered with an error: its problem document, as RFC 9457 shapes it.

    ``kind`` is the slug of ``type`` (``version-conflict``, ``illegal-action``, ...), or None
    for an answer that was not one of Kifu's problems (a proxy's error page, say).
    ``retry_after`` is the ``Retry-After`` header in seconds, when the answer had one.
    """

    def __init__(self, problem: Problem, retry_after: float | None = None) -> None:
        self.problem = problem
        self.type = problem["type"]
        self.title = problem["title"]
        self.status = problem["status"]
        self.detail = problem["detail"]
        self.errors: dict[str, list[str]] = problem.get("errors", {})
        self.kind = self.type.removeprefix(PROBLEMS) if self.type.startswith(PROBLEMS) else None
        self.retry_after = retry_after
        super().__init__(f"{self.status} {self.title}: {self.detail}")


class InvalidRequest(ApiError):
    """400, 413, 414, 415, 422 or 431 for what was sent: malformed, too large, against the schema,
    settings a game refuses (``errors`` names the field), an unknown game, an idempotency key reused
    for another request. Sending it again unchanged fails again."""


class Unauthorized(ApiError):
    """401: a token is needed, or the token or stream ticket is unknown or expired."""


class Forbidden(ApiError):
    """403: the token is valid but may not do this (another seat's replay while the game runs, ...)."""


class NotYourTurn(Forbidden):
    """403: another seat is to act, or this seat's secret choice for the step is already in."""


class GameOver(Forbidden):
    """403: the game has ended and takes no more actions."""


class NotFound(ApiError):
    """404: no such game, tournament, seat, entrant or path."""


class Conflict(ApiError):
    """409: the state does not allow it now (a seat taken, a tournament command out of order)."""


class VersionConflict(Conflict):
    """409: ``expected_version`` was stale; ``current_version`` is the game's version now."""

    def __init__(self, problem: Problem, retry_after: float | None = None) -> None:
        super().__init__(problem, retry_after)
        self.current_version: int = problem.get("current_version", 0)


class IllegalAction(InvalidRequest):
    """422: the rules forbid the action; ``detail`` names the rule."""


class RateLimited(ApiError):
    """429: a rate limit was reached; nothing was done. Try again after ``retry_after`` seconds."""


class Unavailable(ApiError):
    """503: the event store is unreachable or the verifiers are busy; nothing was done."""


BY_KIND: dict[str, type[ApiError]] = {
    "version-conflict": VersionConflict,
    "illegal-action": IllegalAction,
    "not-your-turn": NotYourTurn,
    "game-over": GameOver,
}
BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    414: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    429: RateLimited,
    431: InvalidRequest,
    503: Unavailable,
}


def retry_after(response: requests.Response) -> float | None:
    """``Retry-After`` in seconds (its delay-seconds form, the one Kifu sends), else None."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        return max(float(value), 0.0) if value else None
    except ValueError:
        return None


def problem_of(response: requests.Response) -> Problem:
    """The answer's problem document; an answer that has none is described as one (``about:blank``)."""
    try:
        body: Any = response.json()
    except ValueError:  # requests' JSONDecodeError is one
        body = None
    if isinstance(body, dict) and isinstance(body.get("type"), str) and isinstance(body.get("status"), int):
        body.setdefault("title", "")
        body.setdefault("detail", "")
        return cast(Problem, body)
    text = response.text.strip()[:200]
    return {"type": "about:blank", "title": response.reason or "", "status": response.status_code, "detail": text}


def error_for(response: requests.Response) -> ApiError:
    """The exception an error answer stands for."""
    problem = problem_of(response)
    kind = problem["type"].removeprefix(PROBLEMS)
    cls = BY_KIND.get(kind) or BY_STATUS.get(response.status_code, ApiError)
    return cls(problem, retry_after(response))
