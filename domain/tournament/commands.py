"""Tournament commands: each checks the state and returns the events to record, or raises.

Pure like the game rules: ids, salts and seeds come in as arguments. The
service runs ``next_step`` after every change to learn what the tournament
needs next (pair a round, start a table's game, close a round, finish).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain import engine
from domain.canonical import canonical_json, sha256_hex
from domain.errors import InvalidOptions, KifuError
from domain.events import HIDDEN, Event
from domain.registry import get_game
from domain.tournament import pairing
from domain.tournament.model import (
    CREATED,
    ENTRANT_WITHDRAWN,
    FORMATS,
    GAME_FINISHED,
    GAME_FORFEITED,
    GAME_STARTED,
    PAUSED,
    ROUND_CLOSED,
    ROUND_PAIRED,
    RUNNING,
    TOURNAMENT_CREATED,
    TOURNAMENT_FINISHED,
    TOURNAMENT_PAUSED,
    TOURNAMENT_RESUMED,
    TOURNAMENT_STARTED,
    Table,
    Tournament,
)
from domain.tournament.standings import Played, for_log, ranking, standings

MAX_ENTRANTS = 1024
MAX_ROUNDS = 200
MAX_POINTS = 1_000_000


class TournamentStateError(KifuError):
    """The tournament is not in a state that allows this command (e.g. starting it twice)."""


class NotInTournament(KifuError):
    """The entrant or game a command names is not one of the tournament's."""


class InvalidCommand(KifuError):
    """A command's argument that only the tournament's state can judge (a seat the game does not have)."""


# ---------------------------------------------------------------- creation


def create(
    tournament_id: str,
    game: str,
    options: Mapping[str, Any] | None,
    entrants: Sequence[Mapping[str, Any]],
    fmt: str,
    rounds: int | None = None,
    table_size: int | None = None,
    scoring: Sequence[int] | None = None,
    deals: Sequence[Mapping[str, Any]] | None = None,
) -> list[Event]:
    """``tournament_created``, after checking every setting (``InvalidOptions`` names the field)."""
    rules = get_game(game)
    size = table_size if table_size is not None else rules.min_players
    if not rules.min_players <= size <= rules.max_players:
        raise InvalidOptions(f"{rules.name} tables seat {engine.player_counts(rules)}, not {size}", ("table_size",))
    if fmt not in FORMATS:
        raise InvalidOptions(f"format must be one of {', '.join(FORMATS)}", ("format",))
    people = _entrants(rules, entrants, fmt, size)
    opts = engine.normalize_options(rules, options, size)
    rounds = _rounds(fmt, len(people), size, rounds)
    points = _scoring(scoring, size)
    fixed = _deals(game, opts, size, fmt, rounds, deals)
    data = {
        "tournament_id": tournament_id,
        "game": rules.id,
        "options": opts,
        "format": fmt,
        "rounds": rounds,
        "table_size": size,
        "scoring": points,
        "entrants": people,
        "fixed_deals": fixed is not None,
    }
    return [Event(TOURNAMENT_CREATED, data, private={HIDDEN: {"deals": fixed}} if fixed is not None else {})]


def _entrants(rules: Any, entrants: Sequence[Mapping[str, Any]], fmt: str, size: int) -> list[dict[str, Any]]:
    least = 2 * size if fmt == "duplicate" else size
    if not least <= len(entrants) <= MAX_ENTRANTS:
        reason = " (duplicate compares at least two tables)" if fmt == "duplicate" else ""
        raise InvalidOptions(f"needs {least} to {MAX_ENTRANTS} entrants{reason}, got {len(entrants)}", ("entrants",))
    levels = engine.bot_levels(rules)
    for i, e in enumerate(entrants):
        if e.get("bot") is not None and e["bot"] not in levels:
            raise InvalidOptions(f"unknown bot {e['bot']!r}; known: {', '.join(levels)}", ("entrants", i, "bot"))
    return [{"entrant": i, "name": e["name"], "bot": e.get("bot")} for i, e in enumerate(entrants)]


def _rounds(fmt: str, n: int, size: int, rounds: int | None) -> int:
    if fmt == "round-robin":
        tables = pairing.tables_to_play(n, size)
        if tables > pairing.MAX_SCHEDULE_TABLES:
            raise InvalidOptions(
                f"a round-robin of {n} entrants at tables of {size} plays {tables} tables, more than "
                f"{pairing.MAX_SCHEDULE_TABLES}: take fewer entrants, smaller tables, or a swiss",
                ("entrants",),
            )
        most = len(pairing.round_robin(tuple(range(n)), size))
        if most > MAX_ROUNDS and rounds is None:
            raise InvalidOptions(
                f"a round-robin of {n} entrants has {most} rounds; give rounds, 1-{MAX_ROUNDS}", ("rounds",)
            )
        if rounds is not None and not 1 <= rounds <= most:
            raise InvalidOptions(
                f"a round-robin of {n} entrants has {most} rounds; rounds must be 1-{most}", ("rounds",)
            )
        return rounds if rounds is not None else most
    default = max(1, math.ceil(math.log2(n)))
    if rounds is not None and not 1 <= rounds <= MAX_ROUNDS:
        raise InvalidOptions(f"rounds must be 1-{MAX_ROUNDS}", ("rounds",))
    return rounds if rounds is not None else default


def _scoring(scoring: Sequence[int] | None, size: int) -> list[int]:
    if scoring is None:
        return list(range(size - 1, -1, -1))
    if len(scoring) != size:
        raise InvalidOptions(f"scoring gives the points of each of the {size} places", ("scoring",))
    whole = all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= MAX_POINTS for p in scoring)
    if not whole or list(scoring) != sorted(scoring, reverse=True):
        raise InvalidOptions(
            f"scoring is whole numbers 0-{MAX_POINTS} that never rise from a place to the next", ("scoring",)
        )
    return list(scoring)


def _deals(
    game: str, options: Mapping[str, Any], size: int, fmt: str, rounds: int, deals: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]] | None:
    if deals is None:
        return None
    if fmt != "duplicate":
        raise InvalidOptions("fixed deals are for duplicate tournaments (one per round)", ("deals",))
    if len(deals) != rounds:
        raise InvalidOptions(f"give one deal per round: {rounds}", ("deals",))
    seats = [engine.Seat(i, f"seat {i}") for i in range(size)]
    for i, deal in enumerate(deals):
        try:
            dealt = [engine.create(game, "check", seats, seed, options, deal)[1:] for seed in DEAL_PROBES]
        except InvalidOptions as exc:
            raise InvalidOptions(f"deal of round {i + 1}: {exc}", ("deals", i)) from None
        if any(other != dealt[0] for other in dealt[1:]):  # each table has a seed of its own: the deal needs none
            raise InvalidOptions(
                f"deal of round {i + 1} leaves part of the opening to chance (a coin?): every table would "
                "play another one; fix it all (for example who starts)",
                ("deals", i),
            )
    return [dict(d) for d in deals]


# Seeds a duplicate's fixed deal is dealt from at creation: it must deal the same from each (a coin flip
# left to chance comes out the same from all 24 once in 2**23).
DEAL_PROBES = tuple(bytes([n]) * 32 for n in range(24))


# ---------------------------------------------------------------- organiser commands


def start(t: Tournament) -> list[Event]:
    _expect(t, (CREATED,), "start")
    return [Event(TOURNAMENT_STARTED, {})]


def pause(t: Tournament, reason: str | None) -> list[Event]:
    _expect(t, (RUNNING,), "pause")
    return [Event(TOURNAMENT_PAUSED, {"reason": reason})]


def resume(t: Tournament) -> list[Event]:
    _expect(t, (PAUSED,), "resume")
    return [Event(TOURNAMENT_RESUMED, {})]


def withdraw(t: Tournament, entrant: int, reason: str | None) -> list[Event]:
    _expect(t, (CREATED, RUNNING, PAUSED), "withdraw an entrant from")
    if not 0 <= entrant < len(t.settings.entrants):
        raise NotInTournament(f"there is no entrant {entrant} in this tournament")
    if entrant in t.withdrawn:
        raise TournamentStateError(f"entrant {entrant} has already withdrawn")
    return [Event(ENTRANT_WITHDRAWN, {"entrant": entrant, "reason": reason})]


def check_forfeit(t: Tournament, game_id: str, seat: int) -> Table:
    """The table of a game the organiser may forfeit now (a running game of this tournament), or raise."""
    _expect(t, (RUNNING, PAUSED), "forfeit a game of")
    table = t.table_of(game_id)
    if table is None:
        raise NotInTournament(f"game {game_id} is not a game of this tournament")
    if table.finished or table.forfeited:
        raise TournamentStateError(f"game {game_id} is already over")
    if not 0 <= seat < len(table.entrants):
        raise InvalidCommand(f"seat must be a seat of the game (0-{len(table.entrants) - 1})", ("seat",))
    return table


def forfeited(t: Tournament, game_id: str, seat: int, reason: str | None) -> list[Event]:
    """``game_forfeited``, recorded once the service has resigned ``seat`` in the game (``by: forfeit``),
    so the log never names a forfeit the game does not show."""
    table = t.table_of(game_id)
    if table is None or table.forfeited:
        return []
    data = {"round": table.round, "table": table.table, "game": game_id, "seat": seat, "reason": reason}
    return [Event(GAME_FORFEITED, data)]


def _expect(t: Tournament, statuses: Sequence[str], what: str) -> None:
    if t.status not in statuses:
        raise TournamentStateError(f"cannot {what} a tournament that is {t.status}")


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class Step:
    """What the tournament needs next: ``pair``, ``start_game`` (a table), ``close`` or ``finish``."""

    kind: str
    table: Table | None = None


def next_step(t: Tournament) -> Step | None:
    """The next thing to do, or None (waiting for games, not started, or over). A paused tournament
    starts nothing new (no game, no round) but still closes a round whose games are all over."""
    if t.status not in (RUNNING, PAUSED):
        return None
    tables = t.round_tables(t.round)
    if t.round > t.closed:
        waiting = next((tb for tb in tables if tb.game is None), None)
        if waiting is not None:
            return Step("start_game", waiting) if t.status == RUNNING else None
        return Step("close") if all(tb.finished for tb in tables) else None
    if t.status == PAUSED:
        return None
    if t.round >= t.settings.rounds or len(t.active) < t.settings.table_size:
        return Step("finish")
    return Step("pair")


def pairing_of(t: Tournament) -> tuple[list[tuple[int, ...]], list[int]]:
    """The tables (seat order) and byes of the next round, from the state alone (the auditor re-derives it)."""
    s = t.settings
    return pairing.pair_round(
        s.format,
        t.round + 1,
        t.active,
        s.table_size,
        lambda active: [e for e in ranking(current_standings(t)) if e in active],
        [tb.entrants for tb in t.tables if tb.finished],
        {e: sum(1 for b in t.byes.values() if e in b) for e in t.active},
        [e["entrant"] for e in s.entrants],
    )


def pair(t: Tournament, deal: Mapping[str, Any] | None = None) -> list[Event]:
    """``round_paired`` for the next round; ``deal`` is the duplicate round's commitment."""
    if next_step(t) != Step("pair"):
        raise TournamentStateError("the next round cannot be paired now")
    tables, byes = pairing_of(t)
    data = {
        "round": t.round + 1,
        "tables": [{"table": i, "entrants": list(tb)} for i, tb in enumerate(tables)],
        "byes": byes,
        "deal": dict(deal) if t.settings.format == "duplicate" and deal is not None else None,
    }
    return [Event(ROUND_PAIRED, data)]


def game_started(t: Tournament, table: Table, game_id: str) -> list[Event]:
    return [Event(GAME_STARTED, {"round": table.round, "table": table.table, "game": game_id})]


def game_finished(t: Tournament, game_id: str, result: Mapping[str, Any], head: str) -> list[Event]:
    table = t.table_of(game_id)
    if table is None or table.finished:
        return []
    data = {
        "round": table.round,
        "table": table.table,
        "game": game_id,
        "ranks": list(result["ranks"]),
        "scores": list(result["scores"]),
        "head": head,
    }
    return [Event(GAME_FINISHED, data)]


def close_round(t: Tournament, reveal: Mapping[str, Any] | None) -> list[Event]:
    if next_step(t) != Step("close"):
        raise TournamentStateError("the round is not over")
    return [Event(ROUND_CLOSED, {"round": t.round, "deal": dict(reveal) if reveal is not None else None})]


def finish(t: Tournament) -> list[Event]:
    if next_step(t) != Step("finish"):
        raise TournamentStateError("the tournament is not over")
    return [Event(TOURNAMENT_FINISHED, {"standings": [for_log(row) for row in current_standings(t)]})]


def current_standings(t: Tournament) -> list[dict[str, Any]]:
    """The standings from the finished games and byes so far (exact: see ``standings.for_log``/``for_view``)."""
    played = [Played(tb.round, tb.table, tb.entrants, tb.ranks) for tb in t.tables if tb.ranks is not None]
    s = t.settings
    return standings(s.format, s.entrants, played, t.byes, s.scoring, t.withdrawn)


def deal_commitment(deal: Mapping[str, Any], salt: str) -> str:
    """The published commitment to a fixed deal of a duplicate round."""
    return sha256_hex(canonical_json({"deal": deal, "salt": salt}))
