"""What the search knows of Kiri-ai: The Duel: the two unseen specials, and which programs are worth a look.

**What a seat sees.** Both samurai (space, stance, injury), its own hand and special, every set-aside
card, the specials played so far (``specials_used``) and the last round's resolved steps. It does
not see the opponent's special until it is played, nor the third special set aside face down. In
the advanced setup the opponent's start is secret too, but it lives in the engine's commitments, not
in the state the search reads, so there is nothing of it to draw. A decision is always taken before
the round's first step (both programs are chosen at once and revealed step by step by the engine).

**Determinization.** The hidden part is which of the two specials other than the seat's own the
opponent holds and which is set aside. While the opponent's special is unplayed, a determinization
deals those two (the seat's view determines them as a set) at random with ``rnd``; once it is played
(``specials_used``) the opponent's special is that card and the third is the one left. The state is
otherwise unchanged, so the seat's view is identical.

**Candidates.** A program is two faces on two different cards: up to 52 per seat, so a joint step
has up to 2,704 children. The tree searches, for each seat, the ``TOP_PROGRAMS`` programs that the
greedy bot's evaluation ranks best (ties in listing order): one round ahead, each program's mean of
damage dealt - taken (+1 for a win, -1 for a loss) against every program the opponent's visible hand
allows, its unknown special split evenly between the two it may be. That evaluation reads only what
the seat deciding in that world sees. It keeps the joint branching at 25 and spends the iterations on
programs that do not walk into an obvious strike. The setup (advanced) lists all 6 choices.

**Rollouts.** Each seat plays the greedy bot's choice (a best-ranked program, ties at random), a
uniformly random legal action with probability ``RANDOM_ROLLOUT`` (and in the setup). Greedy is
fast here because its scores depend only on the positions, stances, injuries, the seat's hand and the
opponent's visible hand: they are computed step by step (first step, then the second from each
first-step outcome) from the rules' own ``resolve_step`` and cached (the same numbers as
``greedy_bot``; the simulation itself always runs through the rules). Play-outs are cut after
``rollout_depth`` rounds (greedy against greedy often circles until ``max_rounds``).

**Approximations, plainly.** The tree never considers programs outside each seat's top
``TOP_PROGRAMS`` by greedy's one-round estimate (so a deep trap whose first round looks bad to greedy
is never searched), and the play-outs assume both seats play like greedy. A cut play-out is scored
by injuries only: 0.5 each when both or neither is injured, else 0.75 for the uninjured seat.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, cast

from domain.contract import changed
from domain.games.kiri_ai import (
    CARD_FACES,
    PROGRAM,
    REGULAR_CARDS,
    RULES,
    SPECIAL,
    SPECIALS,
    State,
    other,
    programs_of,
    resolve_step,
)

TOP_PROGRAMS = 5  # programs per seat searched in the tree
RANDOM_ROLLOUT = 0.1  # share of play-out choices made at random instead of greedily
ALL_FACES = (*(face for faces in CARD_FACES.values() for face in faces), *SPECIALS)

# (spaces, seat, red and blue spaces, stances, injuries, own hand, own unplayed special, the opponent's
# set-aside card, the specials the opponent's may be): all that greedy's scores depend on.
Key = tuple[
    int,
    int,
    tuple[int, int],
    tuple[str, str],
    tuple[bool, bool],
    tuple[str, ...],
    str | None,
    str | None,
    tuple[str, ...],
]
Face = tuple[str, str, float]  # a face as played (a special by its name), its card, its weight


class KiriAiKnowledge:
    """The ``Knowledge`` of Kiri-ai (see the module docstring)."""

    def determinize(self, state: State, seat: int, rnd: random.Random) -> State:
        own = state.specials[seat]
        if own is None:
            return state  # nothing dealt yet
        played = state.specials_used[other(seat)]
        if played is not None:
            third = next(s for s in SPECIALS if s not in (own, played))
            return changed(state, specials=_pair(seat, own, played), third_special=third)
        pool = [s for s in SPECIALS if s != own]
        rnd.shuffle(pool)
        return changed(state, specials=_pair(seat, own, pool[0]), third_special=pool[1])

    def candidates(self, state: State, seat: int, rnd: random.Random) -> list[dict[str, Any]]:
        if state.phase != PROGRAM:
            return RULES.legal_actions(state, seat)
        programs = programs_of(state.hand(seat))
        return [dict(programs[i]) for i in _ranked(_key(state, seat))[:TOP_PROGRAMS]]

    def rollout(self, state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
        if state.phase != PROGRAM or rnd.random() < RANDOM_ROLLOUT:
            return RULES.sample_action(state, seat, rnd)
        programs = programs_of(state.hand(seat))
        return dict(programs[rnd.choice(_best(_key(state, seat)))])

    def evaluate(self, state: State) -> list[float]:
        red, blue = (s.injured for s in state.samurai)
        if red == blue:
            return [0.5, 0.5]
        return [0.25, 0.75] if red else [0.75, 0.25]

    def observe(self, before: Any, after: Any) -> str:
        # Approximation: a program names its special card only as "special", so which one the
        # other seat played is not keyed (it turns up once a game at most).
        return ""


def _pair(seat: int, own: str, theirs: str) -> tuple[str | None, str | None]:
    return (own, theirs) if seat == 0 else (theirs, own)


def _key(state: State, seat: int) -> Key:
    """What greedy's scores for ``seat`` depend on; all of it visible to ``seat`` (a program phase's state)."""
    opp = other(seat)
    red, blue = state.samurai
    unknown = tuple(s for s in SPECIALS if s != state.specials[seat]) if state.specials_used[opp] is None else ()
    return (
        state.n_spaces,
        seat,
        cast(tuple[int, int], (red.space, blue.space)),
        cast(tuple[str, str], (red.stance, blue.stance)),
        (red.injured, blue.injured),
        state.hand(seat),
        state.held_special(seat),
        state.set_aside[opp],
        unknown,
    )


@lru_cache(maxsize=1 << 16)
def _ranked(key: Key) -> tuple[int, ...]:
    """The programs' indices (``programs_of`` order), best greedy score first, ties in listing order."""
    scores = _scores(key)
    return tuple(sorted(range(len(scores)), key=lambda i: (-scores[i], i)))


@lru_cache(maxsize=1 << 16)
def _best(key: Key) -> tuple[int, ...]:
    """The indices of the programs greedy may choose (its best score)."""
    scores = _scores(key)
    top = max(scores)
    return tuple(i for i, v in enumerate(scores) if v >= top - 1e-9)


@lru_cache(maxsize=1 << 16)
def _scores(key: Key) -> tuple[float, ...]:
    """``greedy_bot``'s score of each program of the hand (``programs_of`` order), computed step by step:
    for my first face m1 and the opponent's t1 (weight w1), the first step's value times the weight of
    the opponent's second faces (those on another card than t1's), plus, if nobody fell, the weighted
    value of each of my second faces against those."""
    n_spaces, seat, spaces, stances, injured, hand, held, opp_aside, unknown = key
    mine = [(cast(str, held) if f == SPECIAL else f, card) for card in hand for f in CARD_FACES.get(card, (SPECIAL,))]
    theirs = _opp_faces(opp_aside, unknown)
    total_weight = sum(w for _, _, w in theirs)
    card_weight: dict[str, float] = {}
    for _, card, w in theirs:
        card_weight[card] = card_weight.get(card, 0.0) + w
    out: list[float] = []
    for m1, c1 in mine:
        row = [0.0] * len(mine)
        for t1, tc1, w1 in theirs:
            faces = (m1, t1) if seat == 0 else (t1, m1)
            step = resolve_step(n_spaces, spaces, stances, faces)
            v1, after, over = _damage(seat, step.hit, injured)
            base = w1 * v1 * (total_weight - card_weight[tc1])
            if over:
                row = [r + base for r in row]
                continue
            won, lost = _second(n_spaces, seat, step.spaces, step.stances, tc1, opp_aside, unknown)
            gain = w1 * (2.0 if after[other(seat)] else 1.0)
            loss = w1 * (2.0 if after[seat] else 1.0)
            row = [r + base + gain * won[m2] - loss * lost[m2] for r, (m2, _) in zip(row, mine)]
        out += [v for v, (_, c2) in zip(row, mine) if c2 != c1]
    return tuple(out)


def _damage(seat: int, hit: int | None, injured: tuple[bool, bool]) -> tuple[float, tuple[bool, bool], bool]:
    """One step's value for ``seat`` (damage dealt - taken, +1 for a win, -1 for a loss), injuries after, over."""
    if hit is None:
        return 0.0, injured, False
    target = other(hit)
    sign = 1.0 if hit == seat else -1.0
    if injured[target]:
        return 2.0 * sign, injured, True
    return sign, ((True, injured[1]) if target == 0 else (injured[0], True)), False


@lru_cache(maxsize=1 << 16)
def _second(
    n_spaces: int,
    seat: int,
    spaces: tuple[int, int],
    stances: tuple[str, str],
    excluded: str,
    opp_aside: str | None,
    unknown: tuple[str, ...],
) -> tuple[dict[str, float], dict[str, float]]:
    """For each face as the second step: the weight of the opponent's second faces (those on card
    ``excluded`` left out) it hits, and the weight of those that hit it."""
    theirs = [(t2, w2) for t2, tc2, w2 in _opp_faces(opp_aside, unknown) if tc2 != excluded]
    won: dict[str, float] = {}
    lost: dict[str, float] = {}
    for m2 in ALL_FACES:
        hits = taken = 0.0
        for t2, w2 in theirs:
            faces = (m2, t2) if seat == 0 else (t2, m2)
            hit = resolve_step(n_spaces, spaces, stances, faces).hit
            if hit == seat:
                hits += w2
            elif hit is not None:
                taken += w2
        won[m2], lost[m2] = hits, taken
    return won, lost


@lru_cache(maxsize=64)
def _opp_faces(opp_aside: str | None, unknown: tuple[str, ...]) -> tuple[Face, ...]:
    """The opponent's faces as greedy weighs them: its unknown special split evenly between the two."""
    out: list[Face] = []
    for card in (*REGULAR_CARDS, SPECIAL):
        if card == opp_aside:
            continue
        if card == SPECIAL:
            out += [(s, SPECIAL, 1 / len(unknown)) for s in unknown]
        else:
            out += [(f, card, 1.0) for f in CARD_FACES[card]]
    return tuple(out)


KNOWLEDGE = KiriAiKnowledge()
ITERATIONS = 200
SETTINGS: dict[str, object] = {"rollout_depth": 6}
