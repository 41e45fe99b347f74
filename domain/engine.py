"""The generic table: creation, the commit/reveal mechanism, turn order, results.

Every game runs inside a ``Table``. The table handles what is the same for all
five games, so no game writes it again:

* ``game_created`` opens the log with options, seats, the seed's hash and the
  rules version (the game's newest when created; the game then runs under the
  version it names, replayed or audited, as long as the game still plays it:
  ``rules_versions``); a fixed deal is kept in its hidden part until the end;
* a sequential action is recorded as ``action_taken`` and followed by the
  game's own events;
* a simultaneous choice is recorded as ``choice_committed``: one SHA-256
  commitment per part (see ``commitment``), the action and salts private to the
  seat. When every pending seat has chosen, each part is published in turn by a
  ``choices_revealed`` event and resolved by the game (a Kiri-ai program has two
  parts, revealed and resolved one after the other; a second part is never
  revealed while the first resolves; if the first ends the game the second is
  never revealed as such, though like every private part it is public once
  the game is over, so an auditor can check it);
* ``game_ended`` carries the result as soon as the game's ``outcome`` is known;
* ``game_sealed`` (appended by the service with the ending) publishes the seed
  and the head hash of the log before it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from domain import search
from domain.canonical import canonical_json, same, sha256_hex
from domain.contract import Game, Option, Pending, as_json, changed, result_from_scores
from domain.errors import GameOver, IllegalAction, InvalidOptions, NoSuchSeat, NotYourTurn, SeatTaken
from domain.events import HIDDEN, Event
from domain.registry import get_game
from domain.rng import SeededRandom, seed_hash

ENGINE_VERSION = "1"

GAME_CREATED = "game_created"
ACTION_TAKEN = "action_taken"
CHOICE_COMMITTED = "choice_committed"
CHOICES_REVEALED = "choices_revealed"
GAME_ENDED = "game_ended"
GAME_SEALED = "game_sealed"
SEAT_JOINED = "seat_joined"
RESIGN = "resign"
MAX_MOVE_TIMEOUT_S = 7 * 24 * 3600
MAX_NAME = 64
COMMON_OPTIONS: Mapping[str, Option] = {
    "move_timeout_s": Option.whole_number(
        None,
        "seconds a human seat may take before a random legal action is played for it, "
        f"1-{MAX_MOVE_TIMEOUT_S} (a week); null: no limit",
        1,
        MAX_MOVE_TIMEOUT_S,
        nullable=True,
    )
}


@dataclass(frozen=True)
class Seat:
    """A seat at the table: its number, the player's name and bot level (or None).

    An ``open`` seat has no player yet (its name is None) until someone joins it.
    """

    seat: int
    name: str | None
    bot: str | None = None
    open: bool = False
    settings: Mapping[str, Any] | None = None  # a search level's budget, committed at creation (``bot_settings``)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "name": self.name, "bot": self.bot}
        if self.open:
            out["open"] = True  # only then: records from before open seats keep their exact shape
        if self.settings is not None:
            out["bot_settings"] = dict(self.settings)  # likewise: records from before search bots keep theirs
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Seat:
        """The seat as ``game_created`` records it (``to_dict``)."""
        return cls(d["seat"], d["name"], d.get("bot"), d.get("open", False), d.get("bot_settings"))


@dataclass(frozen=True)
class Choice:
    """A committed secret choice, known to the server only (from the private part)."""

    action: Mapping[str, Any]
    parts: tuple[Mapping[str, Any], ...]
    salts: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """The whole state of one game: generic bookkeeping around the game's own state."""

    game_id: str
    kind: str
    options: Mapping[str, Any]
    seats: tuple[Seat, ...]
    seed_hash: str
    rules_version: str
    state: Any
    version: int = 1
    turn_version: int = 1  # the last event that was not a secret commitment: when the seats to act began
    step: int = 0
    commitments: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    choices: Mapping[int, Choice] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None
    seed: str | None = None

    @cached_property  # looked up ~8 times per action; ``changed`` copies it along with the fields
    def game(self) -> Game:
        return get_game(self.kind)

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def sealed(self) -> bool:
        return self.seed is not None

    @property
    def pending(self) -> Pending:
        """Who must act in the game's ``state``, finished or not (the game's ``pending``).

        Asked of the game once per state (``to_act`` and the turn check ask it several
        times per action): the answer is kept with the state it belongs to, so a copy
        of the table with another state asks again.
        """
        known: tuple[Any, Pending] | None = self.__dict__.get("_pending")
        if known is None or known[0] is not self.state:
            known = (self.state, self.game.pending(self.state))
            self.__dict__["_pending"] = known  # a cache, not a field: outside ==, repr and snapshots
        return known[1]

    @property
    def to_act(self) -> list[int]:
        """Seats that must act now (a seat whose secret choice is in is not listed)."""
        if self.finished:
            return []
        return [s for s in self.pending.seats if s not in self.commitments]


def commitment(game_id: str, seat: int, step: int, part: int, action: Mapping[str, Any], salt: str) -> str:
    """SHA-256 over the canonical JSON of game id, seat, step, part, action and salt."""
    payload = {"game": game_id, "seat": seat, "step": step, "part": part, "action": action, "salt": salt}
    return sha256_hex(canonical_json(payload))


def player_counts(game: Game) -> str:
    """``exactly 2 players`` or ``3 to 6 players``."""
    if game.min_players == game.max_players:
        return f"exactly {game.min_players} players"
    return f"{game.min_players} to {game.max_players} players"


def new_seat(
    kind: str,
    seat: int,
    name: str | None,
    bot: str | None,
    open_seat: bool = False,
    options: Mapping[str, Any] | None = None,
) -> Seat:
    """A seat of a new game of ``kind`` with ``options``: a search level's seat commits to the level's
    settings of today for such a game (``search.settings``), which its bot then plays with for the
    whole game, and which the record shows (``bot_info.settings``) and a re-run uses, whatever later
    versions of the level do."""
    settings = None
    if bot is not None and bot in search.LEVELS and kind in search.KNOWLEDGE:
        settings = search.settings(get_game(kind), bot, options)
    return Seat(seat, name, bot, open_seat, settings)


def bot_levels(game: Game) -> list[str]:
    """Bot levels a seat of ``game`` may use: ``random`` always, then the game's own, then the search
    levels (``domain.search``)."""
    return ["random", *[level for level in game.bots if level != "random"], *search.levels_for(game)]


def _check_settings(game: Game, options: Mapping[str, Any], seat: Seat) -> None:
    """A seat's committed settings: only a search level's, and a budget ``search.budget_of`` reads that
    fits the game (``search.check_settings``)."""
    if seat.settings is None:
        return
    where = ("players", seat.seat, "bot_settings")
    if seat.bot not in search.LEVELS:
        raise InvalidOptions(f"only a search level has bot settings, not {seat.bot!r}", where)
    try:
        search.check_settings(game, options, seat.settings)
    except ValueError as exc:
        raise InvalidOptions(f"bad bot settings: {exc}", where) from None


def rules_versions(game: Game) -> tuple[str, ...]:
    """The rules versions ``game`` still plays, oldest first, the one new games get last (the game's
    optional ``rules_versions``; else its ``rules_version`` only)."""
    return tuple(game.rules_versions) or (game.rules_version,)


def check_rules_version(game: Game, version: Any) -> str:
    """``version`` if ``game`` still plays it, else ``InvalidOptions`` naming it and the versions played."""
    known = rules_versions(game)
    if not isinstance(version, str) or version not in known:
        played = ", ".join(map(as_json, known))
        raise InvalidOptions(
            f"{game.name} has no rules version {as_json(version)}: this server plays {played}", ("rules_version",)
        )
    return version


def initial_state(game: Game, options: Mapping[str, Any], n_seats: int, rules_version: str) -> Any:
    """The game's state before any game event, under ``rules_version`` (passed only to a game that
    declares ``rules_versions``: the others play one version)."""
    return game.initial_state(options, n_seats, rules_version=check_rules_version(game, rules_version))


def normalize_options(game: Game, options: Mapping[str, Any] | None, n_seats: int | None = None) -> dict[str, Any]:
    """Fill defaults and refuse unknown or invalid options (also for ``n_seats`` players), naming them."""
    options = dict(options or {})
    specs = {**game.options, **COMMON_OPTIONS}
    unknown = sorted(set(options) - set(specs))
    if unknown:
        raise InvalidOptions(f"unknown option(s) for {game.id}: {', '.join(unknown)}", ("options", unknown[0]))
    return {name: spec.validate(name, options.get(name, spec.default), n_seats) for name, spec in specs.items()}


def create(
    kind: str,
    game_id: str,
    seats: Sequence[Seat],
    seed: bytes,
    options: Mapping[str, Any] | None = None,
    deal: Mapping[str, Any] | None = None,
    tournament: Mapping[str, Any] | None = None,
    rules_version: str | None = None,
) -> list[Event]:
    """The opening events of a new game (``game_created`` then the game's setup); ``tournament``
    (``{"id", "round", "table"}``) links a tournament's game to the pairing that made it; see ``start``
    for ``rules_version``."""
    return start(kind, game_id, seats, seed, options, deal, tournament, rules_version)[0]


def start(
    kind: str,
    game_id: str,
    seats: Sequence[Seat],
    seed: bytes,
    options: Mapping[str, Any] | None = None,
    deal: Mapping[str, Any] | None = None,
    tournament: Mapping[str, Any] | None = None,
    rules_version: str | None = None,
) -> tuple[list[Event], Table]:
    """``create`` plus the table after its events (saves replaying them), as ``step`` is to ``decide``.

    A new game is created under the game's ``rules_version``, the newest; ``rules_version`` names
    another that the game still plays, for the auditor, which starts a recorded game again exactly
    as its ``game_created`` says (``domain.audit``), and for tests of an older version's games.
    """
    game = get_game(kind)
    version = game.rules_version if rules_version is None else check_rules_version(game, rules_version)
    if not game.min_players <= len(seats) <= game.max_players:
        raise InvalidOptions(f"{game.name} needs {player_counts(game)}, got {len(seats)}", ("players",))
    known_bots = bot_levels(game)
    if [s.seat for s in seats] != list(range(len(seats))):
        raise InvalidOptions("seats are numbered 0, 1, ... in order", ("players",))
    if tournament is not None and not _is_link(tournament):
        raise InvalidOptions('a tournament link is {"id": "t...", "round": n >= 1, "table": n >= 0}', ("tournament",))
    for seat in seats:
        if seat.open and seat.name is not None:
            raise InvalidOptions("an open seat has no name until someone joins it", ("players", seat.seat, "name"))
        if not seat.open:
            check_name(seat.name, ("players", seat.seat, "name"))
        if seat.bot is not None and seat.bot not in known_bots:
            raise InvalidOptions(
                f"unknown bot {seat.bot!r} for {game.id}; known: {', '.join(known_bots)}", ("players", seat.seat, "bot")
            )
    opts = normalize_options(game, options, len(seats))
    for seat in seats:
        _check_settings(game, opts, seat)
    if deal is not None and not isinstance(deal, Mapping):
        raise InvalidOptions("a fixed deal must be a JSON object", ("deal",))
    created = Event(
        GAME_CREATED,
        {
            "game_id": game_id,
            "game": game.id,
            "options": opts,
            "seats": [s.to_dict() for s in seats],
            "seed_hash": seed_hash(seed),
            "rules_version": version,
            "engine_version": ENGINE_VERSION,
            "fixed_deal": deal is not None,
            **({"tournament": dict(tournament)} if tournament is not None else {}),
        },
        private={HIDDEN: {"deal": dict(deal)}} if deal is not None else {},
    )
    try:
        return _apply([created, *game.setup(opts, len(seats), SeededRandom(seed), deal)], None)
    except InvalidOptions as exc:  # the setup judges the deal, or the options when there is none
        exc.field = exc.field or (("deal",) if deal is not None else ("options",))
        raise


# The events ``evolve`` handles itself; every other event is the game's (``action_taken`` only counts).
TABLE_EVENTS = frozenset({GAME_CREATED, CHOICE_COMMITTED, CHOICES_REVEALED, GAME_ENDED, GAME_SEALED, SEAT_JOINED})


def replay(events: Sequence[Event], table: Table | None = None) -> Table:
    """Fold ``events`` into a table (from scratch when ``table`` is None): ``evolve`` event by event.

    A run of ``action_taken`` and game events only counts versions and moves the game's
    state, so the run is folded into the game's state and the table copied once for the
    whole run (an action's events: one copy instead of one per event). The table is the
    same as ``evolve`` makes event by event.
    """
    state: Any = None  # the game's state after the run so far
    run = 0  # events of the current run, not yet in ``table``
    for ev in events:
        if table is None or ev.type in TABLE_EVENTS:
            if table is not None and run:
                table, run = _after_run(table, state, run), 0
            table = evolve(table, ev)
            continue
        if not run:
            state = table.state
        if ev.type != ACTION_TAKEN:
            state = table.game.evolve(state, ev)
        run += 1
    if table is None:
        raise ValueError("no events to replay")
    return _after_run(table, state, run) if run else table


def _after_run(table: Table, state: Any, run: int) -> Table:
    """``table`` after ``run`` events that each counted a version and brought it to ``state``."""
    version = table.version + run
    return changed(table, version=version, turn_version=version, state=state)


def evolve(table: Table | None, ev: Event) -> Table:
    """Apply one event. Pure and total: validation happened in ``decide``."""
    if table is None:
        if ev.type != GAME_CREATED:
            raise ValueError(f"a log starts with {GAME_CREATED}, not {ev.type}")
        d = ev.data
        game = get_game(d["game"])
        seats = tuple(Seat.from_dict(s) for s in d["seats"])
        return Table(
            game_id=d["game_id"],
            kind=d["game"],
            options=d["options"],
            seats=seats,
            seed_hash=d["seed_hash"],
            rules_version=d["rules_version"],
            state=initial_state(game, d["options"], len(seats), d["rules_version"]),
        )
    version = table.version + 1  # every event counts; each branch makes one copy
    if ev.type == ACTION_TAKEN:
        return changed(table, version=version, turn_version=version)
    if ev.type == CHOICE_COMMITTED:
        seat = ev.data["seat"]
        secret = ev.private_for(seat)
        choice = Choice(secret.get("action", {}), tuple(secret.get("parts", ())), tuple(secret.get("salts", ())))
        commitments = {**table.commitments, seat: tuple(ev.data["commitments"])}
        return changed(table, version=version, commitments=commitments, choices={**table.choices, seat: choice})
    if ev.type == CHOICES_REVEALED:
        parts = max((len(c) for c in table.commitments.values()), default=1)
        if ev.data["part"] >= parts - 1:
            return changed(
                table, version=version, turn_version=version, step=table.step + 1, commitments={}, choices={}
            )
        return changed(table, version=version, turn_version=version)
    if ev.type == GAME_ENDED:
        return changed(
            table, version=version, turn_version=version, result=ev.data["result"], commitments={}, choices={}
        )
    if ev.type == GAME_SEALED:
        return changed(table, version=version, turn_version=version, seed=ev.data["seed"])
    if ev.type == SEAT_JOINED:
        seat = ev.data["seat"]
        seats = tuple(Seat(seat, ev.data["name"]) if s.seat == seat else s for s in table.seats)
        return changed(table, version=version, turn_version=version, seats=seats)
    return changed(table, version=version, turn_version=version, state=table.game.evolve(table.state, ev))


def legal_actions(table: Table, seat: int) -> list[dict[str, Any]]:
    """The legal actions of ``seat`` now (empty when it is not to act): all of them, except in a game
    whose actions are too many to list, which gives a short list and an ``action_space``."""
    if seat not in table.to_act:
        return []
    return table.game.legal_actions(table.state, seat)


def action_space(table: Table, seat: int) -> dict[str, Any]:
    """Every legal action of ``seat``, as ``GET /actions`` answers them: ``{"actions": [...]}``, plus, in
    a game with the optional ``action_space``, its compact description of all the others.

    Never more than 256 KB as JSON in any position (``tests/unit/test_action_spaces.py``): a game
    whose actions can be more (Front Line's declarations, San Ban's pick of five) lists a ready-made
    few and describes the rest, exactly; ``admits`` and ``expand`` read such a description back.
    """
    if seat not in table.to_act:
        return {"actions": []}
    return dict(table.game.action_space(table.state, seat))


def admits(kind: str, space: Mapping[str, Any], action: Any) -> bool:
    """Whether ``action`` is legal by ``space``, an ``action_space`` of game ``kind`` (or a ``GET /actions``
    answer), read as a client would, with no state: one of its ``actions`` (as JSON, so ``true`` is not
    ``1``), or one that the game's compact description admits (the game's optional ``admits``)."""
    if get_game(kind).admits(space, action):
        return True
    return any(same(action, listed) for listed in space["actions"])


def expand(kind: str, space: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every action ``space`` (as in ``admits``) admits, lazily (there can be millions), each once up to
    the orders its description says do not matter: the game's optional ``expand``, else its ``actions``."""
    return iter(get_game(kind).expand(space))


def sample_action(table: Table, seat: int, rnd: random.Random) -> dict[str, Any]:
    """A random legal action of ``seat`` (every legal action has a chance): the game's optional
    ``sample_action``, else a uniform choice among its legal actions."""
    if seat not in table.to_act:
        raise NotYourTurn(f"seat {seat} has no legal action now")
    return dict(table.game.sample_action(table.state, seat, rnd))


Salts = Sequence[str] | Callable[[], str]


def decide(table: Table, seat: int, action: Mapping[str, Any], salts: Salts = (), by: str | None = None) -> list[Event]:
    """The events of ``seat`` taking ``action``, or an error naming the refused rule.

    ``salts`` are the random salts of a secret choice, one per part: a function
    drawing a fresh one per call (the service), or a list (the auditor passes
    the recorded ones). ``by`` marks an action not taken by the player themself
    (``"timeout"``).
    """
    return step(table, seat, action, salts, by)[0]


def _salts_for(salts: Salts, n_parts: int) -> tuple[str, ...]:
    """``n_parts`` salts from a salt function or a list (a list must hold enough)."""
    if callable(salts):
        return tuple(salts() for _ in range(n_parts))
    if len(salts) < n_parts:
        raise ValueError(f"a secret choice in {n_parts} part(s) needs as many salts")
    return tuple(salts[:n_parts])


def step(
    table: Table, seat: int, action: Mapping[str, Any], salts: Salts = (), by: str | None = None
) -> tuple[list[Event], Table]:
    """``decide`` plus the table after its events (saves replaying them)."""
    if isinstance(action, Mapping) and action.get("type") == RESIGN:
        resigned = _resign(table, seat, action, by)
        return resigned, replay(resigned, table)
    pending = _check_turn(table, seat, action)
    extra = {"by": by} if by else {}
    game = table.game
    if not pending.simultaneous:
        taken = Event(ACTION_TAKEN, {"seat": seat, "action": dict(action), **extra})
        events, after = _apply([taken, *game.decide(table.state, seat, action)], table)
        return _ending(events, after)
    if seat in table.commitments:
        raise NotYourTurn(f"seat {seat} has already made its secret choice for this step")
    parts = game.validate_choice(table.state, seat, action)
    part_salts = _salts_for(salts, len(parts))
    hashes = [commitment(table.game_id, seat, table.step, i, p, s) for i, (p, s) in enumerate(zip(parts, part_salts))]
    committed = Event(
        CHOICE_COMMITTED,
        {"seat": seat, "step": table.step, "commitments": hashes, **extra},
        private={str(seat): {"action": dict(action), "parts": list(parts), "salts": list(part_salts)}},
    )
    after = evolve(table, committed)
    if any(s not in after.commitments for s in pending.seats):
        return [committed], after
    revealed, after = _reveal_and_resolve(after, pending.public_reveal)
    return _ending([committed, *revealed], after)


def _resign(table: Table, seat: int, action: Mapping[str, Any], by: str | None = None) -> list[Event]:
    """``{"type": "resign"}``: allowed to any seated player at any time while the game runs.

    The game ends at once: the resigning seat (with its team, in a game played in
    teams: the game's optional ``teams(state)``) is ranked last, every other seat
    shares first place (the game is not played out). A resignation's ``scores``
    are 1 for a winner and 0 for a loser, whatever the game's own scoring; the
    result says ``reason: resignation`` and who ``resigned``.
    """
    if table.finished:
        raise GameOver("the game is over; no more actions are accepted")
    if not 0 <= seat < len(table.seats):
        raise NotYourTurn(f"there is no seat {seat}")
    if set(action) != {"type"}:
        raise IllegalAction('a resignation is exactly {"type": "resign"}')
    teams = table.game.teams(table.state)
    losers = next((set(t) for t in teams or () if seat in t), {seat})
    scores = [0 if s.seat in losers else 1 for s in table.seats]
    extra: dict[str, Any] = {"teams": teams} if teams else {}
    result = result_from_scores(scores, reason="resignation", resigned=seat, **extra)
    taken = {"seat": seat, "action": {"type": RESIGN}, **({"by": by} if by else {})}
    return [Event(ACTION_TAKEN, taken), Event(GAME_ENDED, {"result": result})]


def join(table: Table, seat: int, name: str) -> list[Event]:
    """The events of a player taking open seat ``seat`` under ``name``."""
    if table.finished:
        raise GameOver("the game is over; its seats cannot be joined")
    if not 0 <= seat < len(table.seats):
        raise NoSuchSeat(f"there is no seat {seat} (the game has seats 0-{len(table.seats) - 1})")
    if not table.seats[seat].open:
        raise SeatTaken(f"seat {seat} is not open: it has a player already")
    check_name(name, ("name",))
    return [Event(SEAT_JOINED, {"seat": seat, "name": name})]


def _is_link(link: Mapping[str, Any]) -> bool:
    """A tournament's game's link to its pairing: exactly an id and a round and table number."""
    if not isinstance(link, Mapping) or set(link) != {"id", "round", "table"} or not isinstance(link["id"], str):
        return False
    numbers = (link["round"], link["table"])
    return all(type(n) is int for n in numbers) and link["round"] >= 1 and link["table"] >= 0


def check_name(name: Any, field: tuple[str | int, ...]) -> None:
    """A player's name: a string of 1 to ``MAX_NAME`` characters (the API's own limit, so that a record
    can hold no name the service would not take)."""
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        raise InvalidOptions(f"a player's name is 1-{MAX_NAME} characters", field)


def _check_turn(table: Table, seat: int, action: Mapping[str, Any]) -> Pending:
    """Refuse actions on a finished game, malformed actions and seats not to act."""
    if table.finished:
        raise GameOver("the game is over; no more actions are accepted")
    if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
        raise IllegalAction("an action is a JSON object with a string field 'type'")
    if not 0 <= seat < len(table.seats):
        raise NotYourTurn(f"there is no seat {seat}")
    pending = table.pending
    if seat not in pending.seats:
        waiting = ", ".join(map(str, table.to_act)) or "nobody"
        raise NotYourTurn(f"seat {seat} is not to act now (waiting for seat(s) {waiting})")
    return pending


def _reveal_and_resolve(table: Table, public: bool) -> tuple[list[Event], Table]:
    """Publish each part of every committed choice in turn and let the game resolve it.

    A private reveal addresses each seat's part to that seat only.
    """
    events: list[Event] = []
    n_parts = max(len(c.parts) for c in table.choices.values())
    choices = dict(table.choices)
    step_no = table.step
    for part in range(n_parts):
        shown: dict[str, dict[str, Any]] = {
            str(s): {"action": c.parts[part], "salt": c.salts[part]}
            for s, c in sorted(choices.items())
            if part < len(c.parts)
        }
        if public:
            reveal = Event(CHOICES_REVEALED, {"step": step_no, "part": part, "choices": shown})
        else:
            reveal = Event(
                CHOICES_REVEALED,
                {"step": step_no, "part": part, "seats": [int(s) for s in shown]},
                private={s: v for s, v in shown.items()},
            )
        table = evolve(table, reveal)
        events.append(reveal)
        resolved, table = _apply(
            table.game.resolve(table.state, part, {int(s): v["action"] for s, v in shown.items()}), table
        )
        events += resolved
        if table.game.outcome(table.state) is not None:
            break
    return events, table


def _apply(events: list[Event], table: Table | None) -> tuple[list[Event], Table]:
    """Apply a game's ``events``, then every step nobody decides (the game's optional ``advance``).

    ``advance(state) -> list[Event]`` gives the events of a step that needs no
    decision (an automatic discard, a damage phase, the next round), or ``[]``
    when a seat must act; the engine runs it until then, or until the game is over.
    """
    table = replay(events, table)
    advance = table.game.advance
    out = list(events)
    while table.game.outcome(table.state) is None and (more := advance(table.state)):
        table = replay(more, table)
        out += more
    return out, table


def _ending(events: list[Event], table: Table) -> tuple[list[Event], Table]:
    """Append ``game_ended`` when these events finish the game."""
    result = table.game.outcome(table.state)
    if result is not None:
        ended = Event(GAME_ENDED, {"result": result})
        events.append(ended)
        table = evolve(table, ended)
    return events, table


def seal(seed: bytes, head: str) -> Event:
    """The last event of a finished game: the seed revealed and the head hash before it."""
    return Event(GAME_SEALED, {"seed": seed.hex(), "head": head})


def view(table: Table, viewer: int | None, reveal: bool | None = None) -> dict[str, Any]:
    """The generic part of a view around the game's own ``state``; everything shows when ``reveal``
    (by default once the game is over; the service reveals a game once it is sealed)."""
    reveal = table.finished if reveal is None else reveal
    return {
        "status": "finished" if table.finished else "active",
        "phase": "over" if table.finished else table.game.phase(table.state),
        "to_act": table.to_act,
        "committed": sorted(table.commitments),
        "my_choice": dict(table.choices[viewer].action) if viewer is not None and viewer in table.choices else None,
        "state": table.game.view(table.state, viewer, reveal),
        "result": dict(table.result) if table.result is not None else None,
    }
