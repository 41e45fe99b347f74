"""Errors raised by the rules layer, each named for what went wrong."""

from __future__ import annotations


class KifuError(Exception):
    """Base class: the message is meant for a person to read and act on.

    ``field`` optionally names the request field at fault as a path, e.g.
    ``("options", "mode")`` or ``("players", 2, "bot")``; the API reports it
    under ``errors`` as ``options.mode`` or ``players[2].bot``.
    """

    def __init__(self, message: str, field: tuple[str | int, ...] | None = None) -> None:
        super().__init__(message)
        self.field = field


class IllegalAction(KifuError):
    """The action breaks a rule; the message names the rule."""


class NotYourTurn(KifuError):
    """The seat may not act now (another seat's turn, or its choice is already in)."""


class GameOver(KifuError):
    """The game has ended; no more actions are accepted."""


class InvalidOptions(KifuError):
    """Game options, seats or a fixed deal are not acceptable."""


class UnknownGame(KifuError):
    """No game is registered under that id."""


class NoSuchSeat(KifuError):
    """The seat named is not one of the game's."""


class SeatTaken(KifuError):
    """The seat cannot be joined: it is not open (it has a player or a bot already)."""
