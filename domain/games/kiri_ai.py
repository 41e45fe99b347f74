"""Kiri-ai: The Duel: rules as in docs/rules/kiri-ai.md.

Two samurai program two cards each per round in secret; the first actions are
revealed and resolved (movement, then attacks), then the second ones. Two hits
defeat a samurai.

Decisions where the rules are silent:

* Samurai never pass each other, so blue (seat 1) always stands on a space
  lower than or equal to red's (seat 0): "towards the opponent" is always down
  for red and up for blue, and a retreat from a shared space goes back towards
  one's own side (red up, blue down).
* Approach or charge from the opponent's space does not move; a retreat at the
  edge of the battlefield does not move (edges clamp each samurai on its own;
  the "same distance" rule is only for moves that would cross).
* Two moves with the same order key both move ``k`` spaces (capped by each
  card's own distance), ``k`` the largest that does not make them cross: two
  approaches one apart both stay, two charges three apart both move one, two
  charges two apart meet on the middle space.
* The order key uses each mover's stance at the start of the step, which is its
  stance "at that moment" (a samurai makes one action per step).
* Attacks are checked with the stances after movement. Kesa and Zan-Tetsu
  switch stance after all attacks of the step are settled; no event when the
  attacker already stands in the new stance (a feint). A counterattack is
  never itself cancelled; it hits whenever the opponent's attack lands.
* A defeat ends the game at once: the second step is not resolved and no
  ``round_ended`` event follows.
* After round ``max_rounds`` ends without a defeat the game is a draw. Result
  scores: winner 1, loser 0; a draw 0, 0; extras ``reason`` (``defeat`` or
  ``max_rounds``) and ``rounds``.
* Card ids: ``approach-retreat``, ``charge-change-stance``, ``high-strike``,
  ``low-strike``, ``balanced-strike`` and the specials ``kesa``, ``zan-tetsu``,
  ``counterattack``. A set-aside card was revealed when played, so it is public;
  so are hand sizes.
* A program is committed in two parts, ``{"type": "program", "step": 1,
  "card": first}`` and ``{..., "step": 2, "card": second}`` (``card`` holds the
  face named in the action, ``special`` included); the special's name is made
  public by the ``step_started`` event of the step it is played in.
* In ``advanced`` mode the setup choices are one secret part each, revealed
  together by a ``samurai_placed`` event; round 1 starts after it.
* View extras: ``hand_sizes``, ``specials_used``, ``distance``, ``spaces``,
  ``max_rounds`` and ``last_round`` (the resolved steps of the current or last
  round); ``step`` counts the steps resolved in the current round. Once over:
  ``hands``, ``specials`` and ``set_aside_special``.

Events: ``specials_dealt``, ``samurai_placed``, then per step ``step_started``
(faces and cards played), ``moved`` / ``stance_changed`` in resolution order,
``attacked`` (result ``hit``, ``miss``, ``cancelled`` or ``countered``),
``stance_changed`` (Kesa, Zan-Tetsu), ``injured`` or ``defeated``; and
``round_ended`` (cards returned, set aside, removed).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, changed, evolver, require_fields, result_from_scores
from domain.errors import IllegalAction, InvalidOptions
from domain.events import HIDDEN, Event
from domain.rng import SeededRandom

RED, BLUE = 0, 1
HEAVEN, EARTH = "heaven", "earth"
STANCES = (HEAVEN, EARTH)
SPACES = {"standard": 6, "advanced": 8}
START = {"standard": ((5, HEAVEN), (0, HEAVEN))}
SETUP_SPACES = {RED: (4, 5, 6), BLUE: (1, 2, 3)}
DEFAULT_MAX_ROUNDS = 50

SPECIALS = ("kesa", "zan-tetsu", "counterattack")
CARD_FACES = {
    "approach-retreat": ("approach", "retreat"),
    "charge-change-stance": ("charge", "change-stance"),
    "high-strike": ("high-strike",),
    "low-strike": ("low-strike",),
    "balanced-strike": ("balanced-strike",),
}
REGULAR_CARDS = tuple(CARD_FACES)
FACE_CARD = {face: card for card, faces in CARD_FACES.items() for face in faces}
SPECIAL = "special"
FACES = (*FACE_CARD, SPECIAL)
MOVE_DISTANCE = {"charge": 2, "approach": 1, "retreat": 1}
MOVE_ORDER = {"charge": 0, "approach": 1, "retreat": 1, "change-stance": 2}
ATTACKS = ("high-strike", "low-strike", "balanced-strike", *SPECIALS)
STANCE_AFTER = {"kesa": EARTH, "zan-tetsu": HEAVEN}

DEAL, SETUP, PROGRAM, OVER = "deal", "setup", "program", "over"
BOTH_CHOOSE = Pending((RED, BLUE), simultaneous=True)
NOBODY = Pending(())

SPECIALS_DEALT = "specials_dealt"
SAMURAI_PLACED = "samurai_placed"
STEP_STARTED = "step_started"
MOVED = "moved"
STANCE_CHANGED = "stance_changed"
ATTACKED = "attacked"
INJURED = "injured"
DEFEATED = "defeated"
ROUND_ENDED = "round_ended"


def other(seat: int) -> int:
    """The opponent's seat."""
    return 1 - seat


# ---------------------------------------------------------------- one step, pure

Pair = tuple[int, int]
Movement = list[tuple[int, str, int, int, str]]  # seat, face, from, to, stance after, in order


@dataclass(frozen=True)
class StepOutcome:
    """What one step does to the two samurai (before damage is applied)."""

    spaces: tuple[int, int]
    stances: tuple[str, str]
    movement: tuple[tuple[int, str, int, int, str], ...]  # seat, face, from, to, stance after
    switches: tuple[tuple[int, str, str], ...]  # seat, new stance, by (kesa, zan-tetsu)
    attacks: tuple[tuple[int, str, str, int, str], ...]  # seat, attack, stance, distance, result
    hit: int | None  # the seat whose attack deals damage


def _target(n_spaces: int, spaces: Sequence[int], seat: int, face: str, distance: int) -> int:
    towards = -1 if seat == RED else 1
    direction = -towards if face == "retreat" else towards
    return max(0, min(n_spaces - 1, spaces[seat] + direction * distance))


def _move_together(n_spaces: int, spaces: Pair, group: Mapping[int, str]) -> Pair:
    """Everyone in ``group`` moves at once, the same distance ``k`` as far as possible."""
    for k in range(max(MOVE_DISTANCE[f] for f in group.values()), -1, -1):
        new = list(spaces)
        for seat, face in group.items():
            new[seat] = _target(n_spaces, spaces, seat, face, min(k, MOVE_DISTANCE[face]))
        if new[BLUE] <= new[RED]:
            return new[0], new[1]
    return spaces


def _movement(
    n_spaces: int, spaces: Pair, stances: tuple[str, str], faces: Sequence[str]
) -> tuple[Pair, tuple[str, str], Movement]:
    """Movement cards in order: Heaven before Earth, then charge, approach/retreat, stance."""
    keys = {s: (STANCES.index(stances[s]), MOVE_ORDER[faces[s]]) for s in (RED, BLUE) if faces[s] in MOVE_ORDER}
    movement: Movement = []
    new_stances = list(stances)
    for key in sorted(set(keys.values())):
        group = {s: faces[s] for s, k in keys.items() if k == key}
        after = spaces
        if key[1] == MOVE_ORDER["change-stance"]:
            for s in group:
                new_stances[s] = EARTH if new_stances[s] == HEAVEN else HEAVEN
        else:
            after = _move_together(n_spaces, spaces, group)
        movement += [(s, group[s], spaces[s], after[s], new_stances[s]) for s in group]
        spaces = after
    return spaces, (new_stances[0], new_stances[1]), movement


def lands(attack: str, stance: str, distance: int) -> bool:
    """Whether ``attack`` from ``stance`` reaches an opponent ``distance`` spaces away."""
    if attack == "high-strike":
        return stance == HEAVEN and distance == 2
    if attack == "low-strike":
        return stance == EARTH and distance == 1
    if attack == "balanced-strike":
        return distance == 0
    if attack == "kesa":
        return stance == HEAVEN and distance <= 1
    if attack == "zan-tetsu":
        return stance == EARTH and distance in (2, 3)
    return False  # counterattack: only ever answers the opponent's attack


def _attack_results(faces: Sequence[str], stances: Sequence[str], distance: int) -> tuple[dict[int, str], int | None]:
    """Each attacker's result (hit, miss, cancelled, countered) and the seat dealing damage."""
    attackers = [s for s in (RED, BLUE) if faces[s] in ATTACKS]
    landed = {s: lands(faces[s], stances[s], distance) for s in attackers}
    results = {s: "hit" if landed[s] else "miss" for s in attackers}
    counter = next((s for s in attackers if faces[s] == "counterattack"), None)
    if counter is not None and landed.get(other(counter)):
        results.update({counter: "hit", other(counter): "countered"})
        return results, counter
    hitters = [s for s in attackers if landed[s]]
    if len(hitters) == 2:
        return {s: "cancelled" for s in attackers}, None
    return results, hitters[0] if hitters else None


@lru_cache(maxsize=65536)
def resolve_step(
    n_spaces: int, spaces: tuple[int, int], stances: tuple[str, str], faces: tuple[str, str]
) -> StepOutcome:
    """One step for both samurai; ``faces`` name specials by their card (``kesa``...)."""
    spaces, stances, movement = _movement(n_spaces, spaces, stances, faces)
    distance = spaces[RED] - spaces[BLUE]
    results, hit = _attack_results(faces, stances, distance)
    attacks = tuple((s, faces[s], stances[s], distance, results[s]) for s in sorted(results))
    final = list(stances)
    switches = []
    for s in sorted(results):
        after = STANCE_AFTER.get(faces[s])
        if after is not None and final[s] != after:
            final[s] = after
            switches.append((s, after, faces[s]))
    return StepOutcome(spaces, (final[0], final[1]), tuple(movement), tuple(switches), attacks, hit)


# ---------------------------------------------------------------- state


@cache  # (special or None) x (set-aside card or None): a few dozen hands
def hand_of(held_special: str | None, set_aside: str | None) -> tuple[str, ...]:
    """The cards a seat may program: the five regular ones and its unplayed special, minus the set-aside card."""
    cards = (*REGULAR_CARDS, held_special) if held_special else REGULAR_CARDS
    return tuple(c for c in cards if c != set_aside)


@dataclass(frozen=True)
class Samurai:
    """One samurai on the battlefield (space and stance None until an advanced setup)."""

    space: int | None = None
    stance: str | None = None
    injured: bool = False
    defeated: bool = False

    def to_view(self) -> dict[str, Any]:
        return {"space": self.space, "stance": self.stance, "injured": self.injured, "defeated": self.defeated}


@dataclass(frozen=True)
class StepLog:
    """A resolved step, for the view: faces played, moves and attacks."""

    step: int
    faces: tuple[str, str]
    moves: tuple[tuple[int, str, int, int], ...] = ()
    attacks: tuple[tuple[int, str, str], ...] = ()  # seat, attack, result
    damage: tuple[tuple[int, str], ...] = ()  # seat, injured|defeated

    def to_view(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "actions": list(self.faces),
            "moves": [{"seat": s, "action": f, "from": a, "to": b} for s, f, a, b in self.moves],
            "attacks": [{"seat": s, "attack": a, "result": r} for s, a, r in self.attacks],
            "damage": [{"seat": s, "result": r} for s, r in self.damage],
        }


@dataclass(frozen=True)
class State:
    """Everything the rules know (the server's view: both specials and the third included)."""

    battlefield: str
    n_spaces: int
    max_rounds: int
    phase: str = DEAL
    round: int = 0
    step: int = 0  # steps resolved in the current round
    samurai: tuple[Samurai, Samurai] = (Samurai(), Samurai())
    specials: tuple[str | None, str | None] = (None, None)  # dealt
    specials_used: tuple[str | None, str | None] = (None, None)
    set_aside: tuple[str | None, str | None] = (None, None)
    third_special: str | None = None
    first_cards: tuple[str | None, str | None] = (None, None)
    steps: tuple[StepLog, ...] = ()  # this (or the last) round's resolved steps
    winner: int | None = None

    def held_special(self, seat: int) -> str | None:
        """The seat's special if not yet played."""
        return self.specials[seat] if self.specials_used[seat] is None else None

    def hand(self, seat: int) -> tuple[str, ...]:
        """The cards the seat may program this round."""
        return hand_of(self.held_special(seat), self.set_aside[seat])

    def holding(self, seat: int) -> tuple[str, ...]:
        """The cards in the seat's hand now: without the cards of the steps resolved this round.

        (A round that ends normally takes both back at once; one that ends in a
        defeat at its second step leaves both played, and the hand shows it.)
        """
        played = {self.card_of(seat, log.faces[seat]) for log in self.steps[: self.step]}
        return tuple(c for c in self.hand(seat) if c not in played)

    def card_of(self, seat: int, face: str) -> str:
        """The card a face is printed on (``special``: the seat's own special)."""
        if face == SPECIAL:
            return self.specials[seat] or ""
        return FACE_CARD[face]

    def distance(self) -> int | None:
        red, blue = self.samurai[RED].space, self.samurai[BLUE].space
        return None if red is None or blue is None else red - blue


def _set(pair: tuple[Any, Any], seat: int, value: Any) -> tuple[Any, Any]:
    return (value, pair[1]) if seat == RED else (pair[0], value)


def _pair(items: Any) -> tuple[Any, Any]:
    red, blue = items
    return red, blue


# ---------------------------------------------------------------- evolve


def _dealt(state: State, ev: Event) -> State:
    specials = (ev.private_for(RED).get("special"), ev.private_for(BLUE).get("special"))
    start = ev.data.get("samurai")
    samurai = (Samurai(), Samurai()) if start is None else _placed_samurai(start)
    return changed(
        state,
        specials=specials,
        third_special=ev.hidden.get("set_aside"),
        samurai=samurai,
        phase=PROGRAM if start is not None else SETUP,
        round=1,
    )


def _placed_samurai(placed: Sequence[Mapping[str, Any]]) -> tuple[Samurai, Samurai]:
    red, blue = (Samurai(p["space"], p["stance"]) for p in placed)
    return red, blue


def _placed(state: State, ev: Event) -> State:
    return changed(state, samurai=_placed_samurai(ev.data["samurai"]), phase=PROGRAM)


def _step_started(state: State, ev: Event) -> State:
    step, faces, cards = ev.data["step"], ev.data["actions"], ev.data["cards"]
    used = _pair(c if c in SPECIALS else state.specials_used[s] for s, c in enumerate(cards))
    log = StepLog(step, _pair(faces))
    return changed(
        state,
        step=step,
        specials_used=used,
        first_cards=_pair(cards) if step == 1 else state.first_cards,
        steps=(log,) if step == 1 else (*state.steps, log),
    )


def _samurai_with(state: State, seat: int, **changes: Any) -> tuple[Samurai, Samurai]:
    """Both samurai, ``seat``'s one changed."""
    return _set(state.samurai, seat, changed(state.samurai[seat], **changes))


def _steps_with(state: State, field: str, entry: tuple[Any, ...]) -> tuple[StepLog, ...]:
    """The round's steps, ``entry`` added to the ``moves``, ``attacks`` or ``damage`` of the last one."""
    last = state.steps[-1]
    return (*state.steps[:-1], changed(last, **{field: (*getattr(last, field), entry)}))


def _moved(state: State, ev: Event) -> State:
    seat, face, start, to = ev.data["seat"], ev.data["action"], ev.data["from"], ev.data["to"]
    return changed(
        state, samurai=_samurai_with(state, seat, space=to), steps=_steps_with(state, "moves", (seat, face, start, to))
    )


def _stance(state: State, ev: Event) -> State:
    return changed(state, samurai=_samurai_with(state, ev.data["seat"], stance=ev.data["stance"]))


def _attacked(state: State, ev: Event) -> State:
    return changed(state, steps=_steps_with(state, "attacks", (ev.data["seat"], ev.data["attack"], ev.data["result"])))


def _damaged(state: State, ev: Event) -> State:
    seat = ev.data["seat"]
    defeated = ev.type == DEFEATED
    return changed(
        state,
        samurai=_samurai_with(state, seat, injured=True, defeated=defeated),
        steps=_steps_with(state, "damage", (seat, ev.type)),
        phase=OVER if defeated else state.phase,
        winner=other(seat) if defeated else state.winner,
    )


def _round_ended(state: State, ev: Event) -> State:
    over = state.round >= state.max_rounds
    return changed(
        state,
        set_aside=_pair(ev.data["set_aside"]),
        first_cards=(None, None),
        step=0,
        phase=OVER if over else PROGRAM,
        round=state.round if over else state.round + 1,
    )


_EVOLVERS = {
    SPECIALS_DEALT: _dealt,
    SAMURAI_PLACED: _placed,
    STEP_STARTED: _step_started,
    MOVED: _moved,
    STANCE_CHANGED: _stance,
    ATTACKED: _attacked,
    INJURED: _damaged,
    DEFEATED: _damaged,
    ROUND_ENDED: _round_ended,
}


# ---------------------------------------------------------------- checks and events


def _validate_deal(deal: Mapping[str, Any]) -> tuple[str, str]:
    """The fixed deal's specials (red's, blue's), or ``InvalidOptions`` naming the problem."""
    unknown = sorted(set(deal) - {"specials"})
    if unknown:
        raise InvalidOptions(f"a Kiri-ai deal has only 'specials'; unknown: {', '.join(unknown)}")
    specials = deal.get("specials")
    if not isinstance(specials, list) or len(specials) != 2:
        raise InvalidOptions("deal 'specials' must be a list of two special cards: red's, then blue's")
    bad = [s for s in specials if s not in SPECIALS]
    if bad:
        raise InvalidOptions(f"unknown special(s) {', '.join(map(repr, bad))}; the specials are {', '.join(SPECIALS)}")
    if specials[0] == specials[1]:
        raise InvalidOptions("the two players get different special cards")
    return specials[0], specials[1]


def _check_setup(state: State, seat: int, action: Mapping[str, Any]) -> None:
    require_fields(action, ["space", "stance"])
    allowed = SETUP_SPACES[seat]
    space = action["space"]
    if not isinstance(space, int) or isinstance(space, bool) or space not in allowed:
        colour = "red" if seat == RED else "blue"
        raise IllegalAction(
            f"the {colour} samurai starts on space {allowed[0]}, {allowed[1]} or {allowed[2]}, not {space!r}"
        )
    if action["stance"] not in STANCES:
        raise IllegalAction(f"stance must be 'heaven' or 'earth', not {action['stance']!r}")


def _check_face(state: State, seat: int, which: str, face: Any) -> str:
    """The card behind ``face`` if the seat may program it, else ``IllegalAction``."""
    if face not in FACES:
        raise IllegalAction(f"{which} action {face!r} is unknown; the actions are {', '.join(FACES)}")
    if face == SPECIAL and state.held_special(seat) is None:
        raise IllegalAction(f"your special card ({state.specials[seat]}) has been played and is out of the game")
    card = state.card_of(seat, face)
    if card == state.set_aside[seat]:
        named = face if card == face else f"{face} (the {card} card)"
        raise IllegalAction(f"{named} is set aside this round")
    return card


def _check_program(state: State, seat: int, action: Mapping[str, Any]) -> None:
    require_fields(action, ["first", "second"])
    first, second = action["first"], action["second"]
    if _check_face(state, seat, "first", first) == _check_face(state, seat, "second", second):
        why = f"the same card twice ({first})" if first == second else f"{first} and {second} are two faces of one card"
        raise IllegalAction(f"first and second must be different cards: {why}")


@cache  # a few dozen hands: which card is set aside, which special is held
def programs_of(hand: tuple[str, ...]) -> tuple[Mapping[str, str], ...]:
    """Every program of ``hand``: a first and a second face on two different cards, in listing order.

    Shared and cached: callers copy an action before handing it out.
    """
    faces = [(face, card) for card in hand for face in CARD_FACES.get(card, (SPECIAL,))]
    return tuple(
        {"type": "program", "first": first, "second": second}
        for first, first_card in faces
        for second, second_card in faces
        if first_card != second_card
    )


@cache
def setups_of(seat: int) -> tuple[Mapping[str, Any], ...]:
    """Every advanced start of ``seat``: its three start spaces, each in both stances (shared, cached)."""
    return tuple(
        {"type": "setup", "space": space, "stance": stance} for space in SETUP_SPACES[seat] for stance in STANCES
    )


def _listed_actions(state: State, seat: int) -> tuple[Mapping[str, Any], ...]:
    """The seat's legal actions in listing order, shared (see ``programs_of``)."""
    return setups_of(seat) if state.phase == SETUP else programs_of(state.hand(seat))


def _step_events(state: State, step: int, faces: tuple[str, str]) -> list[Event]:
    """The events of one step: what was played, movement, attacks, damage."""
    cards = tuple(state.card_of(s, f) for s, f in enumerate(faces))
    named = tuple(c if c in SPECIALS else f for f, c in zip(faces, cards))
    spaces = (state.samurai[RED].space, state.samurai[BLUE].space)
    stances = (state.samurai[RED].stance, state.samurai[BLUE].stance)
    out = resolve_step(state.n_spaces, spaces, stances, named)
    events = [Event(STEP_STARTED, {"round": state.round, "step": step, "actions": list(faces), "cards": list(cards)})]
    events += [
        Event(MOVED, {"seat": s, "action": f, "from": a, "to": b})
        if f in MOVE_DISTANCE
        else Event(STANCE_CHANGED, {"seat": s, "stance": st, "by": f})
        for s, f, a, b, st in out.movement
    ]
    events += [
        Event(ATTACKED, {"seat": s, "attack": a, "stance": st, "distance": d, "result": r, "target": other(s)})
        for s, a, st, d, r in out.attacks
    ]
    events += [Event(STANCE_CHANGED, {"seat": s, "stance": st, "by": by}) for s, st, by in out.switches]
    if out.hit is not None:
        target = other(out.hit)
        kind = DEFEATED if state.samurai[target].injured else INJURED
        events.append(Event(kind, {"seat": target, "by": out.hit}))
    return events


def _round_end_event(state: State, seconds: Sequence[str]) -> Event:
    """First cards back to hand, second cards set aside, played specials out of the game."""
    returned = [[c for c in (state.first_cards[s], state.set_aside[s]) if c and c not in SPECIALS] for s in (RED, BLUE)]
    set_aside = [None if c in SPECIALS else c for c in seconds]
    removed = [[c for c in (state.first_cards[s], seconds[s]) if c in SPECIALS] for s in (RED, BLUE)]
    return Event(ROUND_ENDED, {"round": state.round, "returned": returned, "set_aside": set_aside, "removed": removed})


# ---------------------------------------------------------------- the game


class KiriAi(Rules):
    """The Kiri-ai rules (see the module docstring)."""

    id = "kiri-ai"
    name = "Kiri-ai: The Duel"
    rules_version = "1"
    min_players = 2
    max_players = 2
    options: ClassVar[Mapping[str, Option]] = {
        "battlefield": Option(
            "standard",
            "standard: 6 spaces, fixed start; advanced: 8 spaces, "
            "each player secretly chooses a starting space and stance",
            choices=tuple(SPACES),
        ),
        "max_rounds": Option.whole_number(
            DEFAULT_MAX_ROUNDS, "Rounds played before an undecided duel is a draw (1-1000).", 1, 1000
        ),
    }

    def __init__(self) -> None:
        self.bots: Mapping[str, Bot] = {"greedy": greedy_bot}

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = "1") -> State:
        """The state before the specials are dealt."""
        battlefield = options.get("battlefield", "standard")
        return State(
            battlefield=battlefield,
            n_spaces=SPACES[battlefield],
            max_rounds=options.get("max_rounds", DEFAULT_MAX_ROUNDS),
        )

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        """Deal the specials (red, blue, the third set aside face down); place the samurai."""
        if deal is not None:
            red, blue = _validate_deal(deal)
            third = next(s for s in SPECIALS if s not in (red, blue))
        else:
            red, blue, third = rng.shuffled(list(SPECIALS))
        battlefield = options.get("battlefield", "standard")
        start = START.get(battlefield)
        samurai = None if start is None else [{"space": sp, "stance": st} for sp, st in start]
        return [
            Event(
                SPECIALS_DEALT,
                {"battlefield": battlefield, "spaces": SPACES[battlefield], "samurai": samurai},
                private={"0": {"special": red}, "1": {"special": blue}, HIDDEN: {"set_aside": third}},
            )
        ]

    evolve = staticmethod(evolver(_EVOLVERS))

    def pending(self, state: State) -> Pending:
        """Both players choose at once (setup or program); nobody once over."""
        return BOTH_CHOOSE if state.phase in (SETUP, PROGRAM) else NOBODY

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        """Every setup or program ``seat`` may choose now, exactly as accepted."""
        return [dict(action) for action in _listed_actions(state, seat)]

    def sample_action(self, state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
        """A uniformly random legal action: the very draw ``rnd.choice(legal_actions)`` makes, minus the copies."""
        return dict(rnd.choice(_listed_actions(state, seat)))

    def decide(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Kiri-ai has no turn actions: every choice is secret."""
        raise IllegalAction("in Kiri-ai every choice is made secretly (setup or program), never as a turn")

    def validate_choice(self, state: State, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Check a setup (one part) or a program (two parts: first step, second step)."""
        kind = action.get("type")
        if state.phase == SETUP:
            if kind != "setup":
                raise IllegalAction(
                    f"before the first round each samurai is placed: the action is 'setup', not {kind!r}"
                )
            _check_setup(state, seat, action)
            return [{"type": "setup", "space": action["space"], "stance": action["stance"]}]
        if state.phase != PROGRAM:
            raise IllegalAction(f"nothing is chosen in the {state.phase} phase")
        if kind != "program":
            raise IllegalAction(f"each round both players program two cards: the action is 'program', not {kind!r}")
        _check_program(state, seat, action)
        return [
            {"type": "program", "step": 1, "card": action["first"]},
            {"type": "program", "step": 2, "card": action["second"]},
        ]

    def resolve(self, state: State, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        """The placement (setup), or one program step; the second step also ends the round."""
        if state.phase == SETUP:
            placed = [{"space": choices[s]["space"], "stance": choices[s]["stance"]} for s in (RED, BLUE)]
            return [Event(SAMURAI_PLACED, {"samurai": placed})]
        faces = (choices[RED]["card"], choices[BLUE]["card"])
        events = _step_events(state, part + 1, faces)
        if part == 1 and not any(e.type == DEFEATED for e in events):
            seconds = [state.card_of(s, f) for s, f in enumerate(faces)]
            events.append(_round_end_event(state, seconds))
        return events

    def view(self, state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        """What ``viewer`` may see: never the opponent's unplayed special nor the third special."""
        hand = None if viewer is None or state.phase == DEAL else list(state.holding(viewer))
        out: dict[str, Any] = {
            "samurai": [s.to_view() for s in state.samurai],
            "hand": hand,
            "hand_sizes": [len(state.holding(s)) for s in (RED, BLUE)],
            "set_aside": list(state.set_aside),
            "specials_used": list(state.specials_used),
            "round": state.round,
            "max_rounds": state.max_rounds,
            "step": state.step,
            "battlefield": state.battlefield,
            "spaces": state.n_spaces,
            "distance": state.distance(),
            "last_round": [log.to_view() for log in state.steps],
        }
        if reveal_all:
            out["hands"] = [list(state.holding(s)) for s in (RED, BLUE)]
            out["specials"] = list(state.specials)
            out["set_aside_special"] = state.third_special
        return out

    def phase(self, state: State) -> str:
        """``setup`` (advanced), ``program`` or ``over`` (``deal`` before setup)."""
        return state.phase

    def outcome(self, state: State) -> dict[str, Any] | None:
        """Winner 1, loser 0; a draw after ``max_rounds`` 0, 0. None until over."""
        if state.phase != OVER:
            return None
        if state.winner is None:
            return result_from_scores([0, 0], reason="max_rounds", rounds=state.round)
        scores = [1 if s == state.winner else 0 for s in (RED, BLUE)]
        return result_from_scores(scores, reason="defeat", rounds=state.round)


# ---------------------------------------------------------------- greedy bot

WIN_BONUS = 1.0


def _program_faces(hand: Sequence[str], specials: Sequence[str]) -> list[tuple[tuple[str, str], float]]:
    """Weighted (first, second) programs from ``hand``: the unknown special splits its weight."""
    faces = [(f, card) for card in hand for f in CARD_FACES.get(card, (SPECIAL,))]
    out: list[tuple[tuple[str, str], float]] = []
    for a, ca in faces:
        for b, cb in faces:
            if ca == cb:
                continue
            firsts = specials if a == SPECIAL else (a,)
            options = [(x, y) for x in firsts for y in (specials if b == SPECIAL else (b,))]
            out += [(pair, 1 / len(options)) for pair in options]
    return out


def _value(damage_dealt: int, damage_taken: int, won: bool, lost: bool) -> float:
    return damage_dealt - damage_taken + WIN_BONUS * (won - lost)


def _round_value(state: State, seat: int, mine: tuple[str, str], theirs: tuple[str, str]) -> float:
    """My damage dealt minus taken over one round, both programs known."""
    spaces = (state.samurai[RED].space, state.samurai[BLUE].space)
    stances = (state.samurai[RED].stance, state.samurai[BLUE].stance)
    injured = [state.samurai[RED].injured, state.samurai[BLUE].injured]
    dealt = taken = 0
    for step in (0, 1):
        faces = (mine[step], theirs[step]) if seat == RED else (theirs[step], mine[step])
        out = resolve_step(state.n_spaces, spaces, stances, faces)
        spaces, stances = out.spaces, out.stances
        if out.hit is None:
            continue
        target = other(out.hit)
        if out.hit == seat:
            dealt += 1
        else:
            taken += 1
        if injured[target]:
            return _value(dealt, taken, out.hit == seat, out.hit != seat)
        injured[target] = True
    return _value(dealt, taken, False, False)


def greedy_bot(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """One round ahead: the program with the best mean (damage dealt - taken, + a win bonus).

    The opponent's program is taken uniformly from the programs its visible hand
    allows; its unplayed special is, uniformly, one of the two specials that are
    not the bot's own. It reads only what its seat may see (own special, public
    set-aside cards and played specials). Ties are broken at random. Setup: a random
    legal choice.
    """
    actions = RULES.legal_actions(state, seat)
    if state.phase == SETUP:
        return rnd.choice(actions)
    opp = other(seat)
    unknown = [s for s in SPECIALS if s != state.specials[seat]] if state.specials_used[opp] is None else []
    opp_hand = [c for c in (*REGULAR_CARDS, SPECIAL) if c != state.set_aside[opp] and (c != SPECIAL or unknown)]
    theirs = _program_faces(opp_hand, unknown)
    own_special = state.held_special(seat)
    scored: list[tuple[float, int]] = []
    for i, action in enumerate(actions):
        faces = (action["first"], action["second"])
        mine = _pair(own_special if f == SPECIAL else f for f in faces)
        total = sum(w * _round_value(state, seat, mine, t) for t, w in theirs)
        scored.append((total, i))
    best = max(v for v, _ in scored)
    return actions[rnd.choice([i for v, i in scored if v >= best - 1e-9])]


RULES = KiriAi()
