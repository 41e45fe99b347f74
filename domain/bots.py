"""Bots choose an action for a seat from the same ``legal_actions`` players see.

``random`` is generic; stronger levels are provided per game (``Game.bots``), and the search levels
(``search``, ``search-strong``: ``domain.search``) for every game. A bot gets its own
``random.Random`` from the caller; it never touches the game's fairness generator.

Where a bot's randomness comes from (``bot_stream``): the search levels draw it from the game's seed,
through HMAC-SHA256 keyed by the seed with the seat and the turn's version as the message. The
record commits to the seed from its first event (``seed_hash``) and reveals it in ``game_sealed``,
so a finished game's auditor derives the same stream and re-runs every search decision
(``rerun``); while the game runs nobody but the server can predict the bot, which matters where a
bot mixes its choices (a simultaneous step). The stream is a pseudorandom function of the seed and
says nothing about the deal; the bot's *information* is its seat's view alone (``domain.search``).
The older levels (``random``, ``greedy``) keep the stream they have always had, seeded from the
game id, the seat and the turn's version (public, so also re-runnable).
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Mapping
from typing import Any

from domain import search
from domain.canonical import same
from domain.decisions import decisions
from domain.engine import Table, sample_action
from domain.errors import NotYourTurn

BOT_STREAM_LABEL = b"kifu-bot-stream/1"


def random_action(table: Table, seat: int, rnd: random.Random) -> dict[str, Any]:
    """A random legal action (uniform among the legal actions, or the game's own sampler)."""
    return sample_action(table, seat, rnd)


def choose_action(table: Table, seat: int, level: str, rnd: random.Random) -> dict[str, Any]:
    """The action the bot of ``level`` takes for ``seat``."""
    if level in search.LEVELS and table.game.id in search.KNOWLEDGE:
        if seat not in table.to_act:
            raise NotYourTurn(f"seat {seat} is not to act now")
        recorded = table.seats[seat].settings  # the budget the game committed to, else the level's
        bots = {s.seat: s.bot for s in table.seats}  # public: the other seats' levels, modelled where asked
        n = len(table.seats)
        return search.estimate(table.game, table.state, seat, n, level, rnd, recorded=recorded, bots=bots).best
    if level == "random" or level not in table.game.bots:
        return random_action(table, seat, rnd)
    if seat not in table.to_act:
        raise NotYourTurn(f"seat {seat} is not to act now")
    return dict(table.game.bots[level](table.state, seat, rnd))


def searches(level: str | None) -> bool:
    """Whether ``level`` is a search level (its stream comes from the seed: ``bot_stream``)."""
    return level in search.LEVELS


def bot_stream(seed: bytes, seat: int, turn_version: int) -> random.Random:
    """The search bot's random stream for ``seat``'s turn that began at ``turn_version``:
    HMAC-SHA256(key = the game's seed, message = label | seat | version) seeds a ``random.Random``."""
    message = BOT_STREAM_LABEL + b"|%d|%d" % (seat, turn_version)
    return random.Random(int.from_bytes(hmac.new(seed, message, hashlib.sha256).digest(), "big"))


def turn_stream(level: str | None, seed: bytes, game_id: str, seat: int, turn_version: int) -> random.Random:
    """The stream a bot of ``level`` plays ``seat``'s turn with (``bot_stream`` for a search level, else
    ``public_stream``): what the service's workers use, and what ``rerun`` derives again."""
    if searches(level):
        return bot_stream(seed, seat, turn_version)
    return public_stream("bot", game_id, seat, turn_version)


def public_stream(why: str, game_id: str, seat: int, turn_version: int) -> random.Random:
    """The stream of the older levels and of a timeout's random action (public: ``why`` is ``bot`` or
    ``timeout``)."""
    return random.Random(f"{why}:{game_id}:{seat}:{turn_version}")


def rerun(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every decision of a bot seat in a sealed ``record`` (verified first: ``domain.audit``), re-run.

    Each entry: ``seq`` (the event that recorded the decision: an ``action_taken``, or the
    ``choice_committed`` of a secret choice, whose action the sealed record reveals), ``seat``,
    ``level``, ``action`` (recorded), ``rerun`` (what the bot chooses now from the same position and
    stream) and ``same``. A timeout's action (``by``) is not the bot's and is left out
    (``domain.decisions.decisions``). A search seat re-runs with the settings its record committed to
    (``game_created``'s ``bot_settings``), so the same rules give ``same`` everywhere, whatever a
    level's budget is today; any other answer means the move was not the bot's.
    """
    seed = bytes.fromhex(record["seed"])
    out: list[dict[str, Any]] = []
    for decision in decisions(record):
        table, seat = decision.table, decision.seat
        level = table.seats[seat].bot
        if level is None:
            continue
        again = choose_action(table, seat, level, turn_stream(level, seed, table.game_id, seat, table.turn_version))
        out.append(
            {
                "seq": decision.step,
                "seat": seat,
                "level": level,
                "action": dict(decision.action),
                "rerun": again,
                "same": same(decision.action, again),
            }
        )
    return out
