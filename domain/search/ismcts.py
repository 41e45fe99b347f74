"""Information-set Monte-Carlo tree search: one tree over what the searching seat knows.

The algorithm is SO-ISMCTS (single-observer ISMCTS; Cowling, Powley and Whitehouse, "Information
Set Monte Carlo Tree Search", IEEE TCIAIG 2012), with decoupled selection at simultaneous steps:

* every iteration starts from a new **determinization**: a full state drawn by the game's
  ``Knowledge.determinize`` from the searching seat's information set only (its own cards, what
  is public, the choices revealed so far; never the seed or another seat's hidden cards);
* the tree's nodes are sequences of (joint) actions, shared by all determinizations; each node
  keeps, per seat to act, each action's visits, total reward and **availability** (how often the
  action was legal when the node was reached), and selects by UCB1 with the availability in place
  of the parent's visits, so an action legal in few determinizations is not starved;
* at a simultaneous step (sealed choices), every seat selects from its own statistics at the same
  node without seeing the others' choice (decoupled UCT), so no seat's choice is judged as if it
  could react to the others' in the same step; the joint action leads to the child;
* a node's children are per joint action **and observation** (``Knowledge.observe``: what the step
  showed everybody beyond the actions, such as the card a San Ban placement turned up), so a later
  choice in the tree may depend on what its seat will have seen then;
* the other seats' untried arms: by default one at random; with ``Budget.opponents="policy"`` the
  play-out policy's action instead, for as long as the node has untried arms for that seat. Where
  the others' hands are hidden each determinization offers them different actions, so few of their
  arms are tried twice and "an untried one at random" has them play at random; the policy plays
  them as a reasonable player would (measured on Nin Nal against ``greedy``: 56.5% -> 68.1% with
  two players, 1.56x -> 2.28x the fair share with four; 200 games before, 1,000 after);
* with ``Budget.opponents="bots"`` a seat that the game's record declares a bot of one of the game's
  own levels (``greedy``: public, in ``game_created``) plays in the tree as that bot plays: its own
  rule applied to the determinization (its hand there drawn from the searching seat's view, never
  the real one) with the search's stream, every time the seat acts, so the tree meets the other
  seat's actual algorithm rather than a guess at it; the other seats (a person, a search bot)
  as with ``"untried"``. ``search`` is given these models (``models``), never the seats' streams;
* one node is expanded per iteration, then the game is played out by the game's rollout policy
  (to the end, or cut at ``Budget.rollout_depth`` and scored by the game's ``evaluate``);
* the reward of a seat is its finishing place mapped to [0, 1] (first 1, last 0, a shared place
  the mean of the places it spans: a two-player draw is 0.5), back-propagated along the path.

The decision is the searching seat's root action with the most visits. The search is a pure
function of (the information set, ``rnd``, the budget): the budget is a number of iterations, not
a time, so a recorded decision can be re-run and compared (``domain.bots``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from domain.contract import Bot, Game, Pending
from domain.events import Event

Action = dict[str, Any]
Joint = tuple[tuple[tuple[int, str], ...], str]  # ((seat, action key) per seat to act), observation


class Knowledge(Protocol):
    """What the search needs of one game beyond its rules (``domain.search.<game>``)."""

    def determinize(self, state: Any, seat: int, rnd: random.Random) -> Any:
        """A full state that ``seat`` cannot tell from ``state``: every part ``seat`` cannot see
        drawn anew (with ``rnd``) from what its view allows, every part it sees unchanged. It must
        read ``state``'s hidden parts only as the view determines them (a multiset of unseen cards
        and the sizes of the places they lie in, never their order or owner)."""
        ...

    def candidates(self, state: Any, seat: int, rnd: random.Random) -> list[Action]:
        """The actions of ``seat`` the tree considers in (determinized) ``state``: all legal ones, or a
        game's chosen few where they are too many (never empty while ``seat`` is to act)."""
        ...

    def rollout(self, state: Any, seat: int, rnd: random.Random) -> Action:
        """The action of ``seat`` in a play-out (fast: a random or lightly guided legal action)."""
        ...

    def evaluate(self, state: Any) -> list[float]:
        """Each seat's estimated reward in [0, 1] for a play-out cut before the end."""
        ...

    def observe(self, before: Any, after: Any) -> str:
        """What every seat learns from a step beyond the actions taken (a hidden card turned up on
        the table), as a key; "" where the actions say it all. The tree's child is per joint action
        and observation, so a later choice in the tree may depend on what was seen."""
        ...


@dataclass(frozen=True)
class Budget:
    """How hard a level searches: iterations per decision (the only measure of effort, so that a
    decision is reproducible), UCB1's exploration constant and the play-outs' cut."""

    iterations: int
    exploration: float = 0.7
    rollout_depth: int = 200
    opponents: str = "untried"  # the other seats' arms: "untried", "policy" or "bots" (module docstring)

    def describe(self) -> dict[str, Any]:
        return {
            "iterations": self.iterations,
            "exploration": self.exploration,
            "rollout_depth": self.rollout_depth,
            "opponents": self.opponents,
        }


@dataclass
class Arm:
    """One action of one seat at one node."""

    action: Action
    visits: int = 0
    reward: float = 0.0
    available: int = 0

    @property
    def value(self) -> float:
        return self.reward / self.visits if self.visits else 0.0


@dataclass
class Node:
    arms: dict[int, dict[str, Arm]] = field(default_factory=dict)  # seat -> action key -> arm
    children: dict[Joint, Node] = field(default_factory=dict)


@dataclass(frozen=True)
class Estimate:
    """The root's statistics for the searching seat: each searched action's visits and mean reward."""

    best: Action
    arms: tuple[Arm, ...]  # most visited first

    def value_of(self, action: Mapping[str, Any]) -> Arm | None:
        wanted = key(action)
        return next((a for a in self.arms if key(a.action) == wanted), None)


def key(action: Mapping[str, Any]) -> str:
    """An action's identity in the tree: its canonical JSON.

    Memoised for the usual action, a flat mapping of strings, integers and lists of them (a search
    asks the key of the same few actions hundreds of thousands of times); any other value (a
    boolean, which equals 1 as a memo key, a float, a nested mapping) is encoded each time.
    """
    items: list[tuple[str, Any]] = []
    for name, value in sorted(action.items()):
        kind = type(value)
        if kind is list:
            if not all(type(v) is str or type(v) is int for v in value):
                return _json(action)
            items.append((name, tuple(value)))  # a tuple and a list have the same JSON
        elif kind is str or kind is int:
            items.append((name, value))
        else:
            return _json(action)
    memo = tuple(items)
    found = _KEYS.get(memo)
    if found is None:
        if len(_KEYS) >= _KEYS_MAX:
            _KEYS.clear()
        found = _KEYS[memo] = _json(action)
    return found


_KEYS: dict[tuple[tuple[str, Any], ...], str] = {}
_KEYS_MAX = 1 << 16


def _json(action: Mapping[str, Any]) -> str:
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def rewards(result: Mapping[str, Any], n_seats: int) -> list[float]:
    """Each seat's reward for ``result``: its place mapped to [0, 1], shared places averaged."""
    ranks = result["ranks"]
    if n_seats < 2:
        return [1.0] * n_seats
    out = []
    for rank in ranks:
        tied = ranks.count(rank)
        places = range(rank, rank + tied)  # the places the tied seats span, 1 = first
        out.append(sum((n_seats - p) / (n_seats - 1) for p in places) / tied)
    return out


class Simulator:
    """The game's own rules applied to its state alone, as ``domain.engine`` applies them, with no
    table, commitment or salt: a sequential action's events, or a simultaneous step's parts
    revealed and resolved in turn, then every step nobody decides (``advance``)."""

    def __init__(self, game: Game, n_seats: int) -> None:
        self.game = game
        self.n_seats = n_seats

    def fold(self, state: Any, events: Sequence[Event]) -> Any:
        game = self.game
        for event in events:
            state = game.evolve(state, event)
        while game.outcome(state) is None and (more := game.advance(state)):
            for event in more:
                state = game.evolve(state, event)
        return state

    def after(self, state: Any, pending: Pending, joint: Mapping[int, Mapping[str, Any]]) -> Any:
        game = self.game
        if not pending.simultaneous:
            ((seat, action),) = joint.items()
            return self.fold(state, game.decide(state, seat, action))
        parts = {seat: game.validate_choice(state, seat, action) for seat, action in sorted(joint.items())}
        for part in range(max(len(p) for p in parts.values())):
            chosen = {seat: p[part] for seat, p in parts.items() if part < len(p)}
            state = self.fold(state, game.resolve(state, part, chosen))
            if game.outcome(state) is not None:
                break
        return state

    def result(self, state: Any) -> list[float] | None:
        outcome = self.game.outcome(state)
        return None if outcome is None else rewards(outcome, self.n_seats)


def search(
    game: Game,
    knowledge: Knowledge,
    state: Any,
    seat: int,
    n_seats: int,
    rnd: random.Random,
    budget: Budget,
    must_include: Mapping[str, Any] | None = None,
    models: Mapping[int, Bot] | None = None,
) -> Estimate:
    """Search ``budget.iterations`` determinizations of ``seat``'s information set in ``state``.

    ``must_include`` (the analysis: the action a player took) is searched at the root even when the
    game's ``candidates`` would not list it. ``models``: the other seats played in the tree by a
    bot's rule (``"opponents": "bots"``; read only under that budget, never for ``seat``).
    """
    sim = Simulator(game, n_seats)
    if must_include is None:  # a forced move (one action whatever the hidden cards) is not searched
        first = knowledge.candidates(knowledge.determinize(state, seat, rnd), seat, rnd)
        if len({key(a) for a in first}) == 1:
            return Estimate(dict(first[0]), (Arm(dict(first[0])),))
    root = Node()
    modelled = {s: m for s, m in (models or {}).items() if s != seat} if budget.opponents == "bots" else {}
    for _ in range(budget.iterations):
        world = knowledge.determinize(state, seat, rnd)
        _iterate(sim, knowledge, root, world, rnd, budget, seat, must_include, modelled)
    arms = sorted(root.arms.get(seat, {}).values(), key=lambda a: (-a.visits, -a.value))
    if not arms:
        raise ValueError(f"seat {seat} has no action to search")
    return Estimate(dict(arms[0].action), tuple(arms))


def _iterate(
    sim: Simulator,
    knowledge: Knowledge,
    root: Node,
    world: Any,
    rnd: random.Random,
    budget: Budget,
    searcher: int,
    must_include: Mapping[str, Any] | None,
    models: Mapping[int, Bot] | None = None,
) -> None:
    node, path, expanded = root, [], False
    models = models or {}
    payoff = sim.result(world)
    while payoff is None and not expanded:
        pending = sim.game.pending(world)
        joint: dict[int, Mapping[str, Any]] = {}
        keys: list[tuple[int, str]] = []
        for s in pending.seats:
            extra = must_include if node is root and s == searcher else None
            k, arm, fresh = _arm(knowledge, node, world, s, rnd, budget, s != searcher, extra, models.get(s))
            expanded = expanded or fresh
            joint[s] = arm.action
            keys.append((s, k))
        path.append((node, keys))
        before, world = world, sim.after(world, pending, joint)
        node, expanded = _child(node, keys, knowledge.observe(before, world), pending.simultaneous, searcher, expanded)
        payoff = sim.result(world)
    if payoff is None:
        payoff = _playout(sim, knowledge, world, rnd, budget.rollout_depth)
    for visited, keys in path:
        for s, k in keys:
            arm = visited.arms[s][k]
            arm.visits += 1
            arm.reward += payoff[s]


def _arm(
    knowledge: Knowledge,
    node: Node,
    world: Any,
    seat: int,
    rnd: random.Random,
    budget: Budget,
    other: bool,
    must_include: Mapping[str, Any] | None,
    model: Bot | None = None,
) -> tuple[str, Arm, bool]:
    """``seat``'s arm at ``node`` in this iteration, and whether it is new (the iteration then stops
    growing the tree): a modelled seat's, its bot's action in ``world``; else ``_select``'s among the
    game's candidates, an ``other`` seat guided by the play-out policy under ``"opponents": "policy"``."""
    if model is not None:
        action = model(world, seat, rnd)
        k = key(action)
        arms = node.arms.setdefault(seat, {})
        arm = arms.get(k)
        if arm is None:
            arm = arms[k] = Arm(dict(action))
        arm.available += 1
        return k, arm, arm.visits == 0
    options = knowledge.candidates(world, seat, rnd)
    if must_include is not None:
        options = [*options, dict(must_include)]
    guide = knowledge.rollout(world, seat, rnd) if other and budget.opponents == "policy" else None
    return _select(node, seat, options, rnd, budget.exploration, guide)


def _child(
    node: Node, keys: Sequence[tuple[int, str]], observation: str, simultaneous: bool, searcher: int, fresh: bool
) -> tuple[Node, bool]:
    """The node a step leads to (one per joint action and observation) and whether the iteration has
    grown the tree (``fresh``: some seat tried an arm for the first time). One place, so that a bench
    (``bench.ladder_variants``' ``open-loop``) can key the children otherwise."""
    return node.children.setdefault((tuple(keys), observation), Node()), fresh


def _select(
    node: Node,
    seat: int,
    options: Sequence[Mapping[str, Any]],
    rnd: random.Random,
    exploration: float,
    guide: Mapping[str, Any] | None = None,
) -> tuple[str, Arm, bool]:
    """``seat``'s arm (and its key) at ``node`` among ``options`` (those legal in this
    determinization): while some are untried, an untried one at random (and True: the node grows)
    or, given a ``guide`` (the play-out policy's action for another seat), the guide's arm; once all
    are tried, the best by UCB1 over availability.

    The guide models the other seats as the play-out policy plays until the tree knows better:
    with many hidden hands each determinization offers the others different actions, few of their
    arms are ever tried twice, and a uniformly random untried one would have them play at random.
    """
    arms = node.arms.setdefault(seat, {})
    available: list[tuple[str, Arm]] = []
    untried: list[tuple[str, Arm]] = []
    seen: set[str] = set()
    for action in options:
        k = key(action)
        if k in seen:
            continue
        seen.add(k)
        arm = arms.get(k)
        if arm is None:
            arm = arms[k] = Arm(dict(action))
        arm.available += 1
        available.append((k, arm))
        if arm.visits == 0:
            untried.append((k, arm))
    if untried:
        if guide is not None:
            k = key(guide)
            arm = arms.get(k) or arms.setdefault(k, Arm(dict(guide), available=1))
            return k, arm, arm.visits == 0
        k, arm = rnd.choice(untried)
        return k, arm, True
    k, arm = max(available, key=_ucb(exploration))
    return k, arm, False


def _ucb(exploration: float) -> Callable[[tuple[str, Arm]], float]:
    def score(keyed: tuple[str, Arm]) -> float:
        arm = keyed[1]
        return arm.value + exploration * math.sqrt(math.log(arm.available) / arm.visits)

    return score


def _playout(sim: Simulator, knowledge: Knowledge, world: Any, rnd: random.Random, depth: int) -> list[float]:
    for _ in range(depth):
        payoff = sim.result(world)
        if payoff is not None:
            return payoff
        pending = sim.game.pending(world)
        joint = {s: knowledge.rollout(world, s, rnd) for s in pending.seats}
        world = sim.after(world, pending, joint)
    return sim.result(world) or knowledge.evaluate(world)
