"""Bots choose an action for a seat from the same ``legal_actions`` players see.

``random`` is generic; stronger levels are provided per game (``Game.bots``).
A bot gets its own ``random.Random`` (seeded by the caller, e.g. from the game
id and version) so that a bot job is repeatable; it never touches the game's
fairness generator.
"""

from __future__ import annotations

import random
from typing import Any

from domain.engine import Table, sample_action
from domain.errors import NotYourTurn


def random_action(table: Table, seat: int, rnd: random.Random) -> dict[str, Any]:
    """A random legal action (uniform among the legal actions, or the game's own sampler)."""
    return sample_action(table, seat, rnd)


def choose_action(table: Table, seat: int, level: str, rnd: random.Random) -> dict[str, Any]:
    """The action the bot of ``level`` takes for ``seat``."""
    if level == "random" or level not in table.game.bots:
        return random_action(table, seat, rnd)
    if seat not in table.to_act:
        raise NotYourTurn(f"seat {seat} is not to act now")
    return dict(table.game.bots[level](table.state, seat, rnd))
