"""Ladder rows with the search changed, to measure an idea before it is built in: ``python -m bench.ladder_variants``.

    python -m bench.ladder_variants --game san-ni-ichi --players 3 --games 1000 --jobs 2 --variant win
    python -m bench.ladder_variants --game san-ban --players 2 --options '{"mode": "advanced"}' --variant depth=4
    python -m bench.ladder_variants --game san-ban --players 2 --options '{"mode": "advanced"}' --variant tree
    python -m bench.ladder_variants --game san-ni-ichi --players 3 --variant learned --variant iterations=400
    python -m bench.ladder_variants --game san-ni-ichi --players 3 --a oracle --variant opponents=untried
    python -m bench.ladder_variants --game front-line --players 3 --a foresight --variant refills-only

A row is ``bench.ladder``'s (``search`` at one seat against a field of ``greedy``, the same seeded
games in every run, so two runs of one row differ only by the change; ``--a oracle``: the bench's
oracle at that seat, which sees every hidden card; ``--a foresight``: ``bench.ladder``'s foresight).
Each ``--variant`` changes the search in the processes of this run only, never the code a service's
bot plays:

* ``iterations=N``, ``exploration=X``, ``rollout-depth=N``: the game's budget;
* ``win``: a finished play-out rewards a win (1, a first place shared by k seats 1/k, else 0) instead
  of the place; ``mixed``: half of each;
* ``policy``: the other seats' untried arms follow the play-out policy (``"opponents": "policy"``);
* ``open-loop``: at a simultaneous step the child is keyed by the searching seat's own choice only
  (the others' choices are not told apart below it);
* ``opponents=untried|policy|bots``: how the tree plays the other seats (``Budget.opponents``;
  ``bots``: a seat of the field, ``greedy``, as that bot's own rule plays in each determinization);
  ``model-samples=N`` (San, Ni, Ichi!): the guesses of that model's select (``MODEL_SAMPLES``);
  ``model-playouts``: with ``bots``, the play-outs too play a modelled seat by its bot's rule (the
  tree alone does otherwise);
* ``low-select`` (San, Ni, Ichi!): play-outs select the lowest card instead of a random one;
* ``learned`` (San, Ni, Ichi!): play-outs stop at the end of the round and are scored by a learned
  evaluation (``LEARNED``), with the ``win`` reward;
* ``first-chance``, ``best-other`` (Front Line): a cut play-out is scored as each seat's chance to be
  first (the product of its pairwise logistics), or by the logistic against the best other seat;
* ``paired``: no tree; every root candidate is played out from the same determinizations with the
  same random stream (common random numbers, ``iterations`` play-outs in all; the modelled seats by
  their bot's rule until the searching seat acts again), the best mean is chosen;
* ``planner`` (Front Line): ``bench.ladder``'s ``foresight`` made fair: each candidate played to the
  end from the same determinizations by ``greedy``'s rule for every seat (``iterations`` play-outs in
  all: ``--variant iterations=40``), the best mean of the win and ``LEAD`` per card of lead;
* ``refills-only``, ``attacks-only`` (Front Line): the seat's level (``--a``: ``search``, the oracle, or
  ``foresight``, which plays each candidate out with the true future) decides only the refills, or
  only the attack turns; ``greedy``'s rule, with the seat's own stream, decides the others;
* ``tree`` (San Ban's advanced mode): the tree search plays it, as before the expectimax
  (``domain.search.san_ban_expectimax``), so ``iterations=N``, ``exploration=X`` and the others apply
  there; ``depth=N``, ``exact=N``: the expectimax's look-ahead (``search``'s plan); ``softmin=T``: the
  expectimax's other seat picks its cells with odds ``exp(-value / T)`` (a player who does not always
  play its best) instead of the lowest value.

README, "What else was measured", was made with these. ``--fit N`` fits ``learned``'s weights again
from N ``greedy`` games instead (a conditional logit over each seat's features at every round's
selection, fitted by gradient ascent) and prints them.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from bench import ladder
from bench.ladder import FORESIGHT, HEADER, ORACLE, markdown, row
from domain import search
from domain.bots import choose_action, turn_stream
from domain.engine import Seat, start, step
from domain.games.front_line.bots import greedy as front_line_greedy
from domain.games.front_line.state import REFILL
from domain.games.front_line.state import phase as front_line_phase
from domain.games.san_ni_ichi.bots import STRENGTH, projected
from domain.games.san_ni_ichi.cards import BLOCK, TORINOKO
from domain.games.san_ni_ichi.state import SELECT
from domain.search import front_line, ismcts, san_ban_expectimax, san_ni_ichi
from domain.search.ismcts import Knowledge, Node, Simulator

# What the variants replace, as this module found it (a forked process applies the variants again)
ORIGINAL: dict[str, Any] = {
    "iterations": search.ITERATIONS,
    "settings": search._SETTINGS,
    "expectimax": search.EXPECTIMAX,
    "expectimax_options": search.EXPECTIMAX_OPTIONS,
    "theirs": san_ban_expectimax._theirs,
    "model_samples": san_ni_ichi.MODEL_SAMPLES,
}

# ``learned``'s weights per feature (``features``), fitted with ``--fit 1200`` (three players, standard deck)
LEARNED = (-0.2229, 0.0933, -0.1067, 1.0169, 0.1485, 0.1003)


def win_rewards(result: Mapping[str, Any], n_seats: int) -> list[float]:
    firsts = [s for s, rank in enumerate(result["ranks"]) if rank == 1]
    return [1.0 / len(firsts) if s in firsts else 0.0 for s in range(n_seats)]


def mixed_rewards(result: Mapping[str, Any], n_seats: int) -> list[float]:
    place, win = SWAPPED[(ismcts, "rewards")](result, n_seats), win_rewards(result, n_seats)
    return [(p + w) / 2 for p, w in zip(place, win, strict=True)]


def features(state: Any, seat: int) -> list[float]:
    """A San, Ni, Ichi! seat's features: projected damage, its hand's attack strength, attack cards,
    smoke bombs, other weapons and strongest attack card."""
    hand = state.hands[seat]
    attacks = [STRENGTH[c] for c in hand if san_ni_ichi.KIND[c] == "attack"]
    bombs = sum(1 for c in hand if san_ni_ichi.KIND[c] == TORINOKO)
    return [
        projected(state)[seat],
        float(sum(attacks)),
        float(len(attacks)),
        float(bombs),
        float(len(hand) - len(attacks) - bombs),
        float(max(attacks, default=0)),
    ]


def learned_chances(state: Any, weights: Sequence[float] = LEARNED) -> list[float]:
    scores = [sum(w * x for w, x in zip(weights, features(state, s), strict=True)) for s in range(state.n)]
    top = max(scores)
    odds = [math.exp(x - top) for x in scores]
    return [o / sum(odds) for o in odds]


def _low_select(self: Any, state: Any, seat: int, rnd: random.Random) -> dict[str, Any]:
    if state.phase != SELECT:
        return dict(SWAPPED[(san_ni_ichi.SanNiIchiKnowledge, "rollout")](self, state, seat, rnd))
    cards = [c for c in state.hands[seat] if san_ni_ichi.KIND[c] != TORINOKO]
    low = min(STRENGTH[c] for c in cards)
    card = rnd.choice([c for c in cards if STRENGTH[c] == low])
    if state.teams and san_ni_ichi.KIND[card] == BLOCK:
        return {"type": "select", "card": card, "protect": rnd.choice(state.team(seat))}
    return {"type": "select", "card": card}


def _round_playout(sim: Simulator, knowledge: Knowledge, world: Any, rnd: random.Random, depth: int) -> list[float]:
    began = world.round
    for _ in range(depth):
        payoff = sim.result(world)
        if payoff is not None:
            return payoff
        if world.phase == SELECT and world.round != began:
            return learned_chances(world)
        pending = sim.game.pending(world)
        world = sim.after(world, pending, {s: knowledge.rollout(world, s, rnd) for s in pending.seats})
    return sim.result(world) or learned_chances(world)


def _fl_worth(state: Any) -> list[float]:
    return [
        len(state.captured[s])
        + (
            0.0
            if s in state.out
            else front_line.MATERIAL * (len(state.front[s]) + len(state.reserve[s]) + len(state.draw[s]))
        )
        for s in range(state.n_seats)
    ]


class _ModelledPlayouts:
    """A game's ``Knowledge`` whose play-outs play the modelled seats by their bot's rule too
    (``model-playouts``); the searching seat and the others by the game's play-out policy."""

    def __init__(self, inner: Knowledge, models: Mapping[int, Any]) -> None:
        self.inner, self.models = inner, models
        self.determinize, self.candidates = inner.determinize, inner.candidates
        self.evaluate, self.observe = inner.evaluate, inner.observe

    def rollout(self, state: Any, seat: int, rnd: random.Random) -> dict[str, Any]:
        model = self.models.get(seat)
        return dict(model(state, seat, rnd)) if model is not None else self.inner.rollout(state, seat, rnd)


def _search_modelling_playouts(
    game: Any,
    knowledge: Knowledge,
    state: Any,
    seat: int,
    n_seats: int,
    rnd: random.Random,
    budget: ismcts.Budget,
    must_include: Mapping[str, Any] | None = None,
    models: Mapping[int, Any] | None = None,
) -> ismcts.Estimate:
    modelled = {s: m for s, m in (models or {}).items() if s != seat} if budget.opponents == "bots" else {}
    inner = SWAPPED[(search, "search")]
    return inner(game, _ModelledPlayouts(knowledge, modelled), state, seat, n_seats, rnd, budget, must_include, models)  # type: ignore[no-any-return]


Worth = Callable[[Simulator, Any, random.Random], float]  # a play-out's worth to the searching seat


def _common_draws(
    worth_of: Callable[[Knowledge, int, ismcts.Budget, Mapping[int, Any]], Worth],
) -> Callable[..., ismcts.Estimate]:
    """A search with no tree (``paired``, ``planner``): every distinct root candidate (Front Line's are
    read from the table, the same in every draw) is played from the same determinizations with the
    same random stream (common random numbers, about ``budget.iterations`` play-outs in all), so the
    luck of the draw is the same for each; ``worth_of(knowledge, seat, budget, modelled)`` says what
    a play-out (the position after the candidate, the stream) is worth; the best mean is chosen."""

    def flat(*args: Any) -> ismcts.Estimate:  # called as ``ismcts.search`` is: positionally, the last two optional
        game, knowledge, state, seat, n_seats, rnd, budget, must_include, models = (*args, None, None)[:9]
        modelled = {s: m for s, m in (models or {}).items() if s != seat} if budget.opponents == "bots" else {}
        worth, sim = worth_of(knowledge, seat, budget, modelled), Simulator(game, n_seats)
        found: dict[str, dict[str, Any]] = {}
        for action in knowledge.candidates(knowledge.determinize(state, seat, rnd), seat, rnd):
            found.setdefault(ismcts.key(action), dict(action))
        if must_include is not None:
            found.setdefault(ismcts.key(must_include), dict(must_include))
        arms = [ismcts.Arm(a) for a in found.values()]
        if len(arms) == 1 and must_include is None:
            return ismcts.Estimate(dict(arms[0].action), (arms[0],))
        for _ in range(max(1, budget.iterations // len(arms))):
            world = knowledge.determinize(state, seat, rnd)
            stream = rnd.getrandbits(64)
            pending = sim.game.pending(world)
            for arm in arms:
                value = worth(sim, sim.after(world, pending, {seat: arm.action}), random.Random(stream))
                arm.visits, arm.available, arm.reward = arm.visits + 1, arm.available + 1, arm.reward + value
        ranked = sorted(arms, key=lambda a: -a.value)
        return ismcts.Estimate(dict(ranked[0].action), tuple(ranked))

    return flat


def _paired_worth(knowledge: Knowledge, seat: int, budget: ismcts.Budget, modelled: Mapping[int, Any]) -> Worth:
    """``paired``'s play-out: the modelled seats by their bot's rule until ``seat`` acts again, then every
    seat by the play-out policy, cut as the budget says."""

    def worth(sim: Simulator, world: Any, stream: random.Random) -> float:
        modelling = True
        for _ in range(budget.rollout_depth):
            payoff = sim.result(world)
            if payoff is not None:
                return payoff[seat]
            pending = sim.game.pending(world)
            modelling = modelling and seat not in pending.seats
            joint = {}
            for s in pending.seats:
                model = modelled.get(s) if modelling else None
                joint[s] = dict(model(world, s, stream)) if model is not None else knowledge.rollout(world, s, stream)
            world = sim.after(world, pending, joint)
        return (sim.result(world) or knowledge.evaluate(world))[seat]

    return worth


LEAD = 0.02  # ``planner``: a card of lead over the best other seat, in wins


def _planner_worth(knowledge: Knowledge, seat: int, budget: ismcts.Budget, modelled: Mapping[int, Any]) -> Worth:
    """``planner``'s play-out (Front Line; ``foresight`` made fair, ``bench.ladder``'s ``foresight`` is the
    same with the true future): to the end with every seat by ``greedy``'s rule, worth the share of the
    win plus ``LEAD`` per card of lead (captured cards) over the best other seat."""

    def worth(sim: Simulator, world: Any, stream: random.Random) -> float:
        while sim.game.outcome(world) is None:
            pending = sim.game.pending(world)
            world = sim.after(world, pending, {s: front_line_greedy(world, s, stream) for s in pending.seats})
        caps = [len(c) for c in world.captured]
        winners = [s for s, c in enumerate(caps) if c == max(caps)]
        lead = caps[seat] - max(c for s, c in enumerate(caps) if s != seat)
        return (1 / len(winners) if seat in winners else 0.0) + LEAD * lead

    return worth


_paired = _common_draws(_paired_worth)
_planner = _common_draws(_planner_worth)


def _first_chance(self: Any, state: Any) -> list[float]:
    worth, n = _fl_worth(state), state.n_seats
    return [math.prod(front_line._logistic(worth[s] - worth[o]) for o in range(n) if o != s) for s in range(n)]


def _best_other(self: Any, state: Any) -> list[float]:
    worth, n = _fl_worth(state), state.n_seats
    return [front_line._logistic(worth[s] - max(worth[o] for o in range(n) if o != s)) for s in range(n)]


def _open_loop(
    node: Node, keys: Sequence[tuple[int, str]], observation: str, simultaneous: bool, searcher: int, fresh: bool
) -> tuple[Node, bool]:
    """``ismcts._child`` with a simultaneous step's child keyed by the searcher's own choice only (the
    others' choices are not told apart below it): the tree grows where that child is new."""
    if not simultaneous:
        return SWAPPED[(ismcts, "_child")](node, keys, observation, simultaneous, searcher, fresh)  # type: ignore[no-any-return]
    own: ismcts.Joint = (tuple((s, k) for s, k in keys if s == searcher), "")
    grown = own not in node.children
    return node.children.setdefault(own, Node()), grown


def _one_phase(refills: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``refills-only`` / ``attacks-only``: ``bench.ladder``'s ``decide`` and ``foresee`` that let the
    seat's level (``search``, the oracle, foresight) decide only Front Line's refills, or only its
    attack turns, and play the other decisions by ``greedy``'s rule with the seat's own stream."""
    decide, foresee = ladder.decide, ladder.foresee

    def own(table: Any) -> bool:
        return (front_line_phase(table.state) == REFILL) == refills

    def decide_one(table: Any, seat: int, level: str, rnd: random.Random) -> dict[str, Any]:
        if level in ("search", ORACLE) and not own(table):
            return choose_action(table, seat, "greedy", rnd)
        return decide(table, seat, level, rnd)

    def foresee_one(table: Any, seat: int, levels: Sequence[str], secret: bytes) -> dict[str, Any]:
        if not own(table):
            rnd = turn_stream("search", secret, table.game_id, seat, table.turn_version)
            return choose_action(table, seat, "greedy", rnd)
        return foresee(table, seat, levels, secret)

    return decide_one, foresee_one


def _softmin(temperature: float) -> Callable[[list[float]], float]:
    """``softmin=T``: the mean of the values with weights ``exp(-(value - lowest) / T)``."""

    def theirs(values: list[float]) -> float:
        low = min(values)
        weights = [math.exp(-(v - low) / temperature) for v in values]
        return sum(w * v for w, v in zip(weights, values, strict=True)) / sum(weights)

    return theirs


# The variants that swap a function of the search for this module's (target, attribute, replacement).
SWAPS: Mapping[str, tuple[tuple[Any, str, Any], ...]] = MappingProxyType(
    {
        "win": ((ismcts, "rewards", win_rewards),),
        "mixed": ((ismcts, "rewards", mixed_rewards),),
        "open-loop": ((ismcts, "_child", _open_loop),),
        "low-select": ((san_ni_ichi.SanNiIchiKnowledge, "rollout", _low_select),),
        "learned": ((ismcts, "_playout", _round_playout), (ismcts, "rewards", win_rewards)),
        "first-chance": ((front_line.FrontLineKnowledge, "evaluate", _first_chance),),
        "best-other": ((front_line.FrontLineKnowledge, "evaluate", _best_other),),
        "model-playouts": ((search, "search", _search_modelling_playouts),),
        "paired": ((search, "search", _paired),),
        "planner": ((search, "search", _planner),),
        "refills-only": tuple(zip((ladder, ladder), ("decide", "foresee"), _one_phase(True), strict=True)),
        "attacks-only": tuple(zip((ladder, ladder), ("decide", "foresee"), _one_phase(False), strict=True)),
    }
)


ONE_PHASE = ("refills-only", "attacks-only")  # Front Line's variants that split the seat's decisions by phase
# What each swap replaces, as this module found it.
SWAPPED: Mapping[tuple[Any, str], Any] = MappingProxyType(
    {(target, attribute): getattr(target, attribute) for swaps in SWAPS.values() for target, attribute, _ in swaps}
)
# The variants that set one of the game's search settings (``bot_settings``): name -> (setting, parse).
SETTING_VARIANTS: Mapping[str, tuple[str, Callable[[str], Any]]] = MappingProxyType(
    {"exploration": ("exploration", float), "rollout-depth": ("rollout_depth", int), "opponents": ("opponents", str)}
)


def apply(game: str, variants: Sequence[str]) -> None:
    """Change the search of this process as ``variants`` say (``SWAPPED`` and ``ORIGINAL`` first: applying
    twice is once)."""
    for (target, attribute), original in SWAPPED.items():
        setattr(target, attribute, original)
    san_ban_expectimax._theirs = ORIGINAL["theirs"]
    san_ni_ichi.MODEL_SAMPLES = ORIGINAL["model_samples"]
    iterations, settings = dict(ORIGINAL["iterations"]), dict(ORIGINAL["settings"][game])
    plan, expectimax_options = ORIGINAL["expectimax"]["search"], ORIGINAL["expectimax_options"]
    for variant in variants:
        name, _, value = variant.partition("=")
        if name == "iterations":
            iterations[game] = int(value)
        elif name in SETTING_VARIANTS:
            setting, parse = SETTING_VARIANTS[name]
            settings[setting] = parse(value)
        elif name == "policy":
            settings["opponents"] = "policy"
        elif name == "model-samples":
            san_ni_ichi.MODEL_SAMPLES = int(value)
        elif name == "tree":
            expectimax_options = MappingProxyType({})
        elif name in ("depth", "exact"):
            plan = dataclasses.replace(plan, **{name: int(value)})
        elif name == "softmin":
            san_ban_expectimax._theirs = _softmin(float(value))  # type: ignore[assignment]
        elif name in SWAPS:
            for target, attribute, replacement in SWAPS[name]:
                setattr(target, attribute, replacement)
        else:
            raise SystemExit(f"unknown variant {variant!r}")
    search.ITERATIONS = MappingProxyType(iterations)
    search._SETTINGS = MappingProxyType({**ORIGINAL["settings"], game: settings})
    search.EXPECTIMAX = MappingProxyType({**ORIGINAL["expectimax"], "search": plan})
    search.EXPECTIMAX_OPTIONS = expectimax_options


def fit(games: int, players: int = 3, rounds: int = 300, rate: float = 0.5) -> list[float]:
    """``learned``'s weights fitted on ``games`` games of ``greedy`` bots: every round's selection is a
    position, each seat's ``features`` a row, its share of the win the target (a conditional logit)."""
    positions: list[tuple[list[list[float]], list[float]]] = []
    for g in range(games):
        secret = (11_000_000 + g).to_bytes(8, "big")
        seats = [Seat(i, f"bot{i}", "greedy") for i in range(players)]
        _events, table = start("san-ni-ichi", f"fit-{g}", seats, seed=secret)
        seen: list[list[list[float]]] = []
        last = None
        while not table.finished:
            state = table.state
            if state.phase == SELECT and state.round != last:
                last = state.round
                seen.append([features(state, s) for s in range(players)])
            seat = table.to_act[0]
            rnd = turn_stream("greedy", secret, table.game_id, seat, table.turn_version)
            _events, table = step(table, seat, choose_action(table, seat, "greedy", rnd), salts=("00", "00"))
        assert table.result is not None
        winners = table.result["winners"]
        shares = [1 / len(winners) if s in winners else 0.0 for s in range(players)]
        positions += [(rows, shares) for rows in seen]
    width = len(positions[0][0][0])
    flat = [f for rows, _ in positions for f in rows]
    mean = [sum(f[k] for f in flat) / len(flat) for k in range(width)]
    spread = [max(1e-9, math.sqrt(sum((f[k] - mean[k]) ** 2 for f in flat) / len(flat))) for k in range(width)]
    scaled = [([[(f[k] - mean[k]) / spread[k] for k in range(width)] for f in rows], y) for rows, y in positions]
    weights = [0.0] * width
    for _ in range(rounds):
        gradient = [0.0] * width
        for rows, shares in scaled:
            scores = [sum(w * x for w, x in zip(weights, f, strict=True)) for f in rows]
            top = max(scores)
            odds = [math.exp(x - top) for x in scores]
            for f, share, odd in zip(rows, shares, odds, strict=True):
                for k in range(width):
                    gradient[k] += (share - odd / sum(odds)) * f[k]
        weights = [w + rate * d / len(scaled) for w, d in zip(weights, gradient, strict=True)]
    return [w / spread[k] for k, w in enumerate(weights)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="san-ni-ichi")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--options", type=json.loads, default=None, help="the game's options, as JSON")
    parser.add_argument("--variant", action="append", default=[], help="a change (repeat to combine)")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--a", default="search", choices=("search", ORACLE, FORESIGHT), help="the seat's level")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--fit", type=int, default=0, help="fit learned's weights on this many greedy games")
    args = parser.parse_args(argv)
    if args.fit:
        print(json.dumps([round(w, 4) for w in fit(args.fit, args.players)]))
        return
    if args.game != "front-line" and set(args.variant) & set(ONE_PHASE):
        raise SystemExit(f"{', '.join(ONE_PHASE)}: Front Line only")
    apply(args.game, args.variant)
    r = row(
        args.game,
        args.players,
        args.a,
        "greedy",
        args.games,
        args.options,
        args.jobs,
        apply,
        (args.game, args.variant),
    )
    print(HEADER)
    print(markdown(r), f"<!-- {', '.join(args.variant) or 'no change'}; {r['seconds']:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
