"""Service-layer errors, each mapped to one HTTP status by the API."""

from __future__ import annotations


class ServiceError(Exception):
    """Base: ``status`` is the HTTP status, the message is the problem's detail."""

    status = 400
    title = "Bad request"

    def __init__(self, message: str = "", field: tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.field = field  # the request field at fault, reported under ``errors``


class GameNotFound(ServiceError):
    status = 404
    title = "Game not found"


class Unauthorized(ServiceError):
    status = 401
    title = "Unknown or missing seat token"


class Forbidden(ServiceError):
    status = 403
    title = "Not allowed"


class Conflict(ServiceError):
    """The expected version is stale; ``current`` is the game's version now."""

    status = 409
    title = "Version conflict"

    def __init__(self, current: int) -> None:
        super().__init__(f"the game is at version {current}; reload and try again")
        self.current = current


class Unprocessable(ServiceError):
    status = 422
    title = "Unprocessable request"
