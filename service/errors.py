"""Service-layer errors, each one kind of problem (``kind``: the slug of ``/problems/<slug>``)."""

from __future__ import annotations

from collections.abc import Sequence


class ServiceError(Exception):
    """Base: ``kind`` names the problem (and so its HTTP status); the message is its detail."""

    kind = "invalid-request"

    def __init__(self, message: str = "", field: Sequence[str | int] | None = None) -> None:
        super().__init__(message)
        self.field = field  # the request field at fault, reported under ``errors`` as a path


class GameNotFound(ServiceError):
    kind = "game-not-found"


class Unauthorized(ServiceError):
    kind = "unauthorized"


class Forbidden(ServiceError):
    kind = "forbidden"


class Conflict(ServiceError):
    """The expected version is stale; ``current`` is the game's version now."""

    kind = "version-conflict"

    def __init__(self, current: int) -> None:
        super().__init__(f"the game is at version {current}; reload and try again")
        self.current = current


class IdempotencyKeyReused(ServiceError):
    kind = "idempotency-key-reused"

    def __init__(self) -> None:
        super().__init__("this Idempotency-Key was already used for a different request")


class InvalidRequest(ServiceError):
    """A request parameter the schema cannot judge alone (a replay step beyond the log, a seat that is not there)."""

    kind = "invalid-request"


class GameNotFinished(ServiceError):
    """An analysis asked of a game that is not over (and sealed) yet."""

    kind = "game-not-finished"


class NotAnalysed(ServiceError):
    """No analysis of this game was asked for (``POST /v1/games/{id}/analysis`` asks)."""

    kind = "not-analysed"
