"""The per-game contract every game module implements, and its small helpers.

A game is an object (the module's single ``RULES`` instance, listed in ``domain.games.GAMES``) of a class
derived from ``Rules``, which gives every method marked optional below its meaning when the game has none;
it has:

* ``id``, ``name``, ``rules_version``, ``min_players``, ``max_players``;
  ``rules_version`` is the version new games are created under (``game_created``
  records it);
* ``rules_versions`` (optional): every rules version the game still plays, oldest
  first, ``rules_version`` last. A game whose rules changed keeps its old versions
  here, so that a game created under one goes on under it and its record re-runs
  under it forever (``domain.audit``); without it, a game plays ``rules_version``
  only (``engine.rules_versions``);
* ``options``: ``{name: Option}``, the catalogue's allowed values and defaults;
* ``initial_state(options, n_seats)``: the state before any game event; a game
  that declares ``rules_versions`` is called ``initial_state(options, n_seats,
  rules_version=...)`` with the version its ``game_created`` names (one of them),
  and keeps it in its state for the rules that differ between versions;
* ``setup(options, n_seats, rng, deal) -> list[Event]``: the opening events.
  All randomness of a game is drawn here from ``rng`` (a ``SeededRandom``), so
  the auditor re-derives it from the seed; a ``deal`` replaces the shuffle;
* ``evolve(state, event) -> state``: pure and total, no validation; it always
  receives whole events, private parts included (only the server and the
  auditor of a finished game replay state; redacted events are for display);
* ``pending(state) -> Pending``: who must act, simultaneously or not;
* ``legal_actions(state, seat) -> list[dict]``: every legal action, exactly as
  the API accepts it (the engine asks only for a seat that is to act, and
  refuses actions of other seats before ``decide``: games do not check turns).
  A game whose actions are too many to list (Front Line declares any number of
  attacks at once) gives a short list of legal actions here and also provides:
* ``action_space(state, seat) -> dict`` (optional): ``{"actions": [...]}`` plus
  a compact, exact description of every legal action (``GET /actions``);
* ``sample_action(state, seat, random.Random) -> dict`` (optional): a random
  legal action in which every legal action has a chance (bots, move timeouts,
  the random playthrough test), without listing them all;
* ``decide(state, seat, action) -> list[Event]``: a sequential action's events,
  or ``IllegalAction`` naming the rule;
* ``validate_choice(state, seat, action) -> list[dict]``: for a simultaneous
  phase, check a secret choice and split it into the parts revealed one by one
  (most games: ``[action]``; a Kiri-ai program: its two steps);
* ``resolve(state, part, choices) -> list[Event]``: once every choice is in,
  the events of revealed part ``part`` (``choices`` maps seat -> that part);
* ``advance(state) -> list[Event]`` (optional): the events of a step nobody
  decides (an automatic discard, a damage phase, the next round), or ``[]``
  when a seat must act; the engine runs it after every ``decide`` and
  ``resolve`` until someone must act or the game is over;
* ``teams(state) -> list[list[int]] | None`` (optional): the teams of a game
  played in teams (a resignation then loses for the resigner's whole team);
* ``view(state, viewer, reveal_all) -> dict``: the game-specific ``state`` of the
  API view for a seat (or ``None``, a spectator); ``reveal_all`` once the game
  is over (everything is public then);
* ``phase(state) -> str``; ``outcome(state) -> dict | None``: the result;
* ``bots``: ``{level: callable(state, seat, random.Random) -> action}``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from domain.errors import IllegalAction, InvalidOptions
from domain.events import Event
from domain.rng import SeededRandom


@dataclass(frozen=True)
class Pending:
    """Who must act now.

    ``simultaneous`` choices are committed secretly, then revealed together.
    ``public_reveal=False`` keeps a revealed choice private to its seat (a San Ban
    gamer-mode order is chosen at the same time as the opponent's but stays
    secret): the reveal still binds the seat to its commitment, and the auditor
    checks it once the game is over and everything is public.
    """

    seats: tuple[int, ...]
    simultaneous: bool = False
    public_reveal: bool = True


JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def as_json(value: Any) -> str:
    """``value`` as a client wrote it (``true``, ``"gamer"``), for messages."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class Option:
    """One game option: its default, and either allowed ``choices`` or a ``schema`` and a ``check``.

    The catalogue shows each option as a JSON Schema fragment (``describe``):
    the ``schema`` given, or, for ``choices``, an ``enum`` of them with their
    JSON types, plus ``default`` and ``description``. ``check`` judges what a
    schema cannot say (a card id that exists) and words the refusal.
    """

    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    schema: Mapping[str, Any] | None = None
    check: Callable[[Any], str | None] | None = field(default=None, compare=False)
    players: Mapping[Any, tuple[int, ...]] | None = None  # values allowed only with these player counts

    @classmethod
    def whole_number(
        cls, default: int | None, description: str, minimum: int, maximum: int, nullable: bool = False
    ) -> Option:
        """An integer option within ``minimum``-``maximum`` (or null, when ``nullable``)."""

        def check(value: Any) -> str | None:
            if value is None and nullable:
                return None
            if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
                return f"must be a whole number from {minimum} to {maximum}" + (", or null" if nullable else "")
            return None

        kind: Any = ["integer", "null"] if nullable else "integer"
        return cls(default, description, schema={"type": kind, "minimum": minimum, "maximum": maximum}, check=check)

    def validate(self, name: str, value: Any, n_seats: int | None = None) -> Any:
        """Return ``value`` if acceptable (for ``n_seats`` players, when given), else raise ``InvalidOptions``."""
        if self.choices is not None and not _one_of(value, self.choices):
            allowed = ", ".join(map(as_json, self.choices))
            raise InvalidOptions(f"option {name!r} must be one of {allowed}; got {as_json(value)}", ("options", name))
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise InvalidOptions(f"option {name!r}: {problem}", ("options", name))
        if not self.players or n_seats is None:
            return value
        counts = next((c for v, c in self.players.items() if v == value and type(v) is type(value)), None)
        if counts is not None and n_seats not in counts:
            *most, last = map(str, counts)
            allowed = f"{', '.join(most)} or {last}" if most else last
            raise InvalidOptions(
                f"option {name!r} = {as_json(value)} needs {allowed} players, not {n_seats}", ("options", name)
            )
        return value

    def json_schema(self) -> dict[str, Any]:
        """The values this option takes, as a JSON Schema fragment."""
        if self.schema is not None:
            return dict(self.schema)
        choices = self.choices or ()
        types = sorted({JSON_TYPES[type(c)] for c in choices})
        return {"type": types[0] if len(types) == 1 else types, "enum": list(choices)}

    def describe(self) -> dict[str, Any]:
        """Catalogue form: a JSON Schema fragment with ``default`` and ``description`` (and ``allowed``)."""
        out = {**self.json_schema(), "default": self.default, "description": self.description}
        if self.choices is not None:
            out["allowed"] = list(self.choices)
        if self.players:
            out["players"] = [{"value": v, "players": list(c)} for v, c in self.players.items()]
        return out


def _one_of(value: Any, choices: Sequence[Any]) -> bool:
    """``value`` is one of ``choices``, with its type too (``true`` is not ``1``, nor ``1.0``)."""
    for choice in choices:  # noqa: SIM110 (a plain loop: several times faster than any() over a generator)
        if value == choice and type(value) is type(choice):
            return True
    return False


Bot = Callable[[Any, int, Any], Mapping[str, Any]]


class Rules:
    """The optional part of the contract, with what a game without it means: every game's rules class
    derives from it and overrides what it has (Front Line its action space and ``advance``, San, Ni, Ichi!
    its teams, ...). The engine calls these directly; the required part is the ``Game`` protocol below."""

    rules_version: str
    rules_versions: tuple[str, ...] = ()  # every version still played, oldest first; () = rules_version only

    def legal_actions(self, state: Any, seat: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    def action_space(self, state: Any, seat: int) -> dict[str, Any]:
        """Every legal action, listed (a game with too many to list describes them compactly)."""
        return {"actions": self.legal_actions(state, seat)}

    def admits(self, described: Mapping[str, Any], action: Any) -> bool:
        """Whether ``action`` is one the compact part of an ``action_space`` admits (none here)."""
        return False

    def expand(self, described: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
        """Every action an ``action_space`` admits: here, its list."""
        return (dict(a) for a in described["actions"])

    def sample_action(self, state: Any, seat: int, rnd: random.Random) -> dict[str, Any]:
        """A random legal action: a uniform choice among the listed ones."""
        return dict(rnd.choice(self.legal_actions(state, seat)))

    def advance(self, state: Any) -> list[Event]:
        """The events of a step nobody decides; none here (someone always acts)."""
        return []

    def teams(self, state: Any) -> list[list[int]] | None:
        """The teams of a game played in teams; None here (every seat for itself)."""
        return None


class Game(Protocol):
    """What ``domain.engine`` needs of a game module (its rules class derives from ``Rules``, which gives the
    optional part)."""

    # Read-only (properties), so that a game may declare them as plain class attributes.
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def rules_version(self) -> str: ...
    @property
    def min_players(self) -> int: ...
    @property
    def max_players(self) -> int: ...
    @property
    def options(self) -> Mapping[str, Option]: ...
    @property
    def bots(self) -> Mapping[str, Bot]: ...

    @property
    def rules_versions(self) -> tuple[str, ...]: ...

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str) -> Any: ...
    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]: ...
    def evolve(self, state: Any, event: Event) -> Any: ...
    def pending(self, state: Any) -> Pending: ...
    def legal_actions(self, state: Any, seat: int) -> list[dict[str, Any]]: ...
    def decide(self, state: Any, seat: int, action: Mapping[str, Any]) -> list[Event]: ...
    def validate_choice(self, state: Any, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]: ...
    def resolve(self, state: Any, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]: ...
    def view(self, state: Any, viewer: int | None, reveal_all: bool) -> dict[str, Any]: ...
    def phase(self, state: Any) -> str: ...
    def outcome(self, state: Any) -> dict[str, Any] | None: ...
    def action_space(self, state: Any, seat: int) -> dict[str, Any]: ...
    def admits(self, described: Mapping[str, Any], action: Any) -> bool: ...
    def expand(self, described: Mapping[str, Any]) -> Iterable[dict[str, Any]]: ...
    def sample_action(self, state: Any, seat: int, rnd: random.Random) -> dict[str, Any]: ...
    def advance(self, state: Any) -> list[Event]: ...
    def teams(self, state: Any) -> list[list[int]] | None: ...


T = TypeVar("T")
S = TypeVar("S")


def evolver(handlers: Mapping[str, Callable[[S, Event], S]]) -> Callable[[S, Event], S]:
    """A game's ``evolve`` from one handler per event type: pure, total, other types change nothing."""

    def evolve(state: S, event: Event) -> S:
        handler = handlers.get(event.type)
        return state if handler is None else handler(state, event)

    return evolve


def changed(obj: T, **changes: Any) -> T:
    """``dataclasses.replace`` for frozen dataclasses without re-running ``__init__``.

    About ten times faster; used on the hot path of ``evolve``. Fields that
    ``__post_init__`` would derive must be passed in ``changes`` by the caller.
    """
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def require_fields(action: Mapping[str, Any], required: Sequence[str], optional: Sequence[str] = ()) -> None:
    """Refuse an action with missing or unknown fields, naming them."""
    if action.keys() == {"type", *required}:
        return  # the usual case, exactly the type and the required fields: nothing missing, nothing extra
    missing = [f for f in required if f not in action]
    if missing:
        raise IllegalAction(f"action {action.get('type')!r} needs field(s): {', '.join(missing)}")
    extra = [f for f in action if f != "type" and f not in required and f not in optional]  # no sets: runs per action
    if extra:
        raise IllegalAction(f"action {action.get('type')!r} does not take field(s): {', '.join(sorted(extra))}")


def ranks_from_scores(scores: Sequence[float], higher_is_better: bool = True) -> list[int]:
    """Competition ranks (1 = first, equal scores share a rank: 1, 1, 3)."""
    best_first = sorted(scores, reverse=higher_is_better)  # a score's first place here counts the better ones
    return [1 + best_first.index(mine) for mine in scores]


def result_from_scores(scores: Sequence[float], higher_is_better: bool = True, **extra: Any) -> dict[str, Any]:
    """The API's result shape: scores, ranks and winners (+ game extras)."""
    ranks = ranks_from_scores(scores, higher_is_better)
    return {"scores": list(scores), "ranks": ranks, "winners": [s for s, r in enumerate(ranks) if r == 1], **extra}
