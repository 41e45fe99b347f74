"""A tournament's state and events: immutable, rebuilt from its log by ``evolve``.

Events (``data`` public; a fixed-deal list stays in the hidden part of
``tournament_created`` until each round's deal is revealed):

* ``tournament_created``: game, options, format, rounds, table size, scoring, entrants;
* ``tournament_started``, ``tournament_paused``, ``tournament_resumed``;
* ``entrant_withdrawn``: entrant and reason (not paired again);
* ``round_paired``: round, tables (entrants in seat order), byes and, in
  ``duplicate``, the commitment to the round's deal;
* ``game_started``: round, table and the game's id;
* ``game_forfeited``: a stalled game ended by the organiser (the seat that
  forfeits, the reason); the game records its resignation;
* ``game_finished``: the game's ranks and scores and the hash of its ``game_ended`` event;
* ``round_closed``: round and, in ``duplicate``, the deal revealed;
* ``tournament_finished``: the final standings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from domain.events import Event

TOURNAMENT_CREATED = "tournament_created"
TOURNAMENT_STARTED = "tournament_started"
TOURNAMENT_PAUSED = "tournament_paused"
TOURNAMENT_RESUMED = "tournament_resumed"
ENTRANT_WITHDRAWN = "entrant_withdrawn"
ROUND_PAIRED = "round_paired"
GAME_STARTED = "game_started"
GAME_FORFEITED = "game_forfeited"
GAME_FINISHED = "game_finished"
ROUND_CLOSED = "round_closed"
TOURNAMENT_FINISHED = "tournament_finished"

FORMATS = ("round-robin", "swiss", "duplicate")
CREATED, RUNNING, PAUSED, FINISHED = "created", "running", "paused", "finished"


@dataclass(frozen=True)
class Settings:
    """What the organiser chose at creation."""

    game: str
    options: Mapping[str, Any]
    format: str
    rounds: int
    table_size: int
    scoring: tuple[int, ...]
    entrants: tuple[Mapping[str, Any], ...]  # {"entrant", "name", "bot"}
    fixed_deals: bool = False


@dataclass(frozen=True)
class Table:
    """One table of a round: its entrants in seat order, its game once started, its result once over."""

    round: int
    table: int
    entrants: tuple[int, ...]
    game: str | None = None
    ranks: tuple[int, ...] | None = None
    scores: tuple[Any, ...] | None = None
    head: str | None = None
    forfeit: str | None = None  # the forfeit's reason (null: none given, or recorded by the runner's repair)
    forfeit_seat: int | None = None  # the seat forfeited: whether the game was forfeited at all

    @property
    def finished(self) -> bool:
        return self.ranks is not None

    @property
    def forfeited(self) -> bool:
        return self.forfeit_seat is not None


@dataclass(frozen=True)
class Tournament:
    """The whole state of a tournament."""

    id: str
    settings: Settings
    status: str = CREATED
    round: int = 0  # the round being played (0 before the first)
    closed: int = 0  # the last round closed
    tables: tuple[Table, ...] = ()
    byes: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    withdrawn: tuple[int, ...] = ()
    deals: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # round -> published commitment
    revealed: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # round -> revealed deal
    standings: tuple[Mapping[str, Any], ...] | None = None
    version: int = 0

    @property
    def active(self) -> list[int]:
        """Entrants still in the event."""
        return [e["entrant"] for e in self.settings.entrants if e["entrant"] not in self.withdrawn]

    def round_tables(self, round_no: int) -> list[Table]:
        return [t for t in self.tables if t.round == round_no]

    def table_of(self, game_id: str) -> Table | None:
        return next((t for t in self.tables if t.game == game_id), None)


def evolve(state: Tournament | None, ev: Event) -> Tournament:
    """Apply one event (pure, total: the commands validated it)."""
    d = ev.data
    if state is None:
        if ev.type != TOURNAMENT_CREATED:
            raise ValueError(f"a tournament log starts with {TOURNAMENT_CREATED}, not {ev.type}")
        settings = Settings(
            game=d["game"],
            options=d["options"],
            format=d["format"],
            rounds=d["rounds"],
            table_size=d["table_size"],
            scoring=tuple(d["scoring"]),
            entrants=tuple(d["entrants"]),
            fixed_deals=d.get("fixed_deals", False),
        )
        return Tournament(id=d["tournament_id"], settings=settings, version=1)
    state = replace(state, version=state.version + 1)
    if ev.type in (TOURNAMENT_STARTED, TOURNAMENT_RESUMED):
        return replace(state, status=RUNNING)
    if ev.type == TOURNAMENT_PAUSED:
        return replace(state, status=PAUSED)
    if ev.type == ENTRANT_WITHDRAWN:
        return replace(state, withdrawn=(*state.withdrawn, d["entrant"]))
    if ev.type == ROUND_PAIRED:
        tables = tuple(Table(d["round"], t["table"], tuple(t["entrants"])) for t in d["tables"])
        deals = {**state.deals, d["round"]: d["deal"]} if d.get("deal") else state.deals
        byes = {**state.byes, d["round"]: tuple(d["byes"])}
        return replace(state, round=d["round"], tables=(*state.tables, *tables), byes=byes, deals=deals)
    if ev.type == GAME_STARTED:
        return _table(state, d["round"], d["table"], game=d["game"])
    if ev.type == GAME_FORFEITED:
        return _table(state, d["round"], d["table"], forfeit=d["reason"], forfeit_seat=d["seat"])
    if ev.type == GAME_FINISHED:
        return _table(state, d["round"], d["table"], ranks=tuple(d["ranks"]), scores=tuple(d["scores"]), head=d["head"])
    if ev.type == ROUND_CLOSED:
        revealed = {**state.revealed, d["round"]: d["deal"]} if d.get("deal") else state.revealed
        return replace(state, closed=d["round"], revealed=revealed)
    if ev.type == TOURNAMENT_FINISHED:
        return replace(state, status=FINISHED, standings=tuple(d["standings"]))
    raise ValueError(f"unknown tournament event {ev.type!r}")


def _table(state: Tournament, round_no: int, number: int, **changes: Any) -> Tournament:
    tables = tuple(replace(t, **changes) if (t.round, t.table) == (round_no, number) else t for t in state.tables)
    return replace(state, tables=tables)


def replay(events: list[Event], state: Tournament | None = None) -> Tournament:
    """Fold ``events`` into a tournament."""
    for ev in events:
        state = evolve(state, ev)
    if state is None:
        raise ValueError("no events to replay")
    return state
