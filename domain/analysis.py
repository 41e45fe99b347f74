"""The analysis of a finished game: each decision judged by the search, from what its seat knew.

For every decision of a sealed record (a seat's turn, ``action_taken``, or its secret choice,
``choice_committed``; a timeout's move and a resignation are not the seat's decisions and are left
out), the search of ``domain.search`` runs from the position before it, as the acting seat saw it:
the same information set a bot of that seat would have had (never the seed, never another seat's
cards), the action taken searched beside the engine's own candidates. In a simultaneous step the
other seats' choices are re-chosen by the search's own estimate of their strategy, never read from
the record, so a choice is judged against what its seat could expect, not against what the others
happened to reveal; where the record declares another seat a bot of the game's own level and the
game's search models it (``"opponents": "bots"``: San, Ni, Ichi!, Front Line), that estimate is the
bot's rule on each drawn position.

Each decision: ``step`` (the record's event that holds the decision, as the replay counts steps),
``seat``, ``action`` (taken), ``best`` (the engine's), ``value`` and ``best_value`` (expected score
of each: 1 a first place, 0 the last, a shared place the mean of the places it spans; in a
two-player game the chance of winning, a draw counting half), ``loss`` (``best_value - value``,
never below 0) and ``label``: ``best`` (the engine's own choice, or no worse), ``good`` (loss under
``GOOD``), ``inaccuracy`` (under ``INACCURACY``), ``mistake`` (under ``MISTAKE``), else ``blunder``.
A forced decision (one legal action) is ``best`` with no search (``forced: true``).

The values are Monte-Carlo estimates: with the default budget an action's value is typically within
about 0.03 of what a longer search gives, which is why the thresholds start at 0.05 (in San Ban's
advanced mode the expectimax's values are exact over the chance of the cards, up to its cut a few
placements ahead: ``domain.search.san_ban_expectimax``). The analysis is
a pure function of the record and the budget (its random stream is seeded by the game id and the
decision's step), so analysing a game again gives the same answer.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from domain import engine, search
from domain.canonical import same
from domain.decisions import Decision, decisions

GOOD, INACCURACY, MISTAKE = 0.05, 0.10, 0.20
LABELS = ("best", "good", "inaccuracy", "mistake", "blunder")
DEFAULT_LEVEL = "search"
Progress = Callable[[int, int], None]


def label(loss: float) -> str:
    """The label of a decision that lost ``loss`` of an expected score against the engine's best."""
    if loss <= 0:
        return "best"
    if loss < GOOD:
        return "good"
    if loss < INACCURACY:
        return "inaccuracy"
    if loss < MISTAKE:
        return "mistake"
    return "blunder"


def judge(decision: Decision, game_id: str, level: str = DEFAULT_LEVEL) -> dict[str, Any]:
    """One decision's verdict (the module docstring's fields)."""
    table, seat = decision.table, decision.seat
    taken = dict(decision.action)
    common = {"step": decision.step, "seat": seat, "action": taken}
    space = engine.action_space(table, seat)
    if set(space) == {"actions"} and len(space["actions"]) == 1:
        unsearched = {"best": taken, "value": None, "best_value": None, "loss": 0.0, "label": "best", "forced": True}
        return {**common, **unsearched}
    rnd = random.Random(f"analysis:{game_id}:{decision.step}")
    bots = {s.seat: s.bot for s in table.seats}
    estimate = search.estimate(table.game, table.state, seat, len(table.seats), level, rnd, taken, bots=bots)
    mine = estimate.value_of(taken)
    best = estimate.arms[0]
    value = mine.value if mine is not None else 0.0
    if mine is not None and same(best.action, taken):
        best = mine
    value, best_value = round(value, 4), round(best.value, 4)
    loss = round(max(0.0, best_value - value), 4)
    return {
        **common,
        "best": dict(best.action),
        "value": value,
        "best_value": best_value,
        "loss": loss,
        "label": "best" if same(best.action, taken) else label(loss),
        "forced": False,
    }


def analyse(
    record: Mapping[str, Any], level: str = DEFAULT_LEVEL, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Every decision of a sealed, verified ``record`` judged (``progress(done, total)`` after each)."""
    found = list(decisions(record))
    game_id = record["game_id"]
    out = []
    for done, decision in enumerate(found, start=1):
        out.append(judge(decision, game_id, level))
        if progress is not None:
            progress(done, len(found))
    return out
