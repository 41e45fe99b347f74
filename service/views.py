"""What a table looks like to a viewer: pure functions of the table (and of when its turn began)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from domain import engine
from domain.engine import Table
from domain.record import rfc3339

TurnStart = Callable[[], str]  # the time (RFC 3339) of the event that began the table's turn, asked when needed


def game_view(table: Table, viewer: int | None) -> dict[str, Any]:
    """The game as ``viewer`` (None: a spectator) sees it; everything once it is sealed."""
    generic = engine.view(table, viewer, reveal=table.sealed)
    return {
        "id": table.game_id,
        "game": table.kind,
        "options": dict(table.options),
        "version": table.version,
        "seats": [s.to_dict() for s in table.seats],
        "you": viewer,
        **generic,
    }


def deadlines(table: Table, turn_start: TurnStart) -> list[str | None]:
    """Per seat: when its move timeout plays for it (a human seat to act in a timed game), else None."""
    timeout = table.options.get("move_timeout_s")
    timed = [s for s in table.to_act if not table.seats[s].bot] if timeout and not table.finished else []
    if not timed or timeout is None:
        return [None] * len(table.seats)
    due = rfc3339(datetime.fromisoformat(turn_start()) + timedelta(seconds=timeout))
    return [due if s in timed else None for s in range(len(table.seats))]


def full_view(table: Table, viewer: int | None, turn_start: TurnStart) -> dict[str, Any]:
    """``game_view`` with each seat's deadline (the one fact of a view that the log's times decide)."""
    return {**game_view(table, viewer), "deadlines": deadlines(table, turn_start)}


def turn_start_in(log: Sequence[Mapping[str, Any]], table: Table) -> TurnStart | None:
    """When ``log`` (envelopes from the first) holds the event that began ``table``'s turn: its time."""
    if len(log) < table.turn_version:
        return None
    return lambda: str(log[table.turn_version - 1]["at"])
