"""San, Ni, Ichi!'s ``Game``: options, setup, who acts, legal actions, deciding, resolving."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, result_from_scores
from domain.errors import IllegalAction
from domain.events import Event
from domain.games.san_ni_ichi import flow, moves, secret
from domain.games.san_ni_ichi.bots import greedy
from domain.games.san_ni_ichi.cards import DECK_NAMES, DECKS, STANDARD
from domain.games.san_ni_ichi.state import (
    ATTACK_PHASE,
    CARDS_SCORING,
    OVER,
    RULES_VERSIONS,
    SELECT,
    SMOKE,
    STRENGTH,
    State,
    evolve,
)
from domain.games.san_ni_ichi.view import view
from domain.rng import SeededRandom

TEAM_SIZES = (4, 6)
NOBODY = Pending(())


class SanNiIchi(Rules):
    """The San, Ni, Ichi! rules (``RULES``); see the package docstring for the rulings."""

    id = "san-ni-ichi"
    name = "San, Ni, Ichi!"
    rules_versions = RULES_VERSIONS  # "1": every resolving card discardable by choice; "2": the ruling
    rules_version = RULES_VERSIONS[-1]
    min_players = 3
    max_players = 6
    options: ClassVar[Mapping[str, Option]] = {
        "deck": Option(
            STANDARD,
            "attack strengths and weapons by player count: standard, alt-1 or alt-2 (the alternate weapons "
            "decks, 3-5 players)",
            DECK_NAMES,
            players={name: tuple(DECKS[name]) for name in DECK_NAMES},
        ),
        "teams": Option(
            False,
            "team play (4 or 6 players): seats 0+2, 1+3 or 0+3, 1+4, 2+5; the team's total decides",
            (False, True),
            players={True: TEAM_SIZES},
        ),
        "scoring": Option(
            STRENGTH, "strength: total damage; cards: fewest cards in the damage pile", (STRENGTH, CARDS_SCORING)
        ),
    }
    bots: ClassVar[Mapping[str, Bot]] = {"greedy": greedy}

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = RULES_VERSIONS[-1]) -> State:
        """No cards yet: ``cards_dealt`` brings them. ``rules_version``: the one ``game_created`` names."""
        return State(
            n=n_seats,
            deck=options.get("deck", STANDARD),
            teams=bool(options.get("teams", False)),
            scoring=options.get("scoring", STRENGTH),
            rules_version=rules_version,
        )

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        """Weapons in play and the shuffle (or the fixed deal); 7 cards each; round 1."""
        top, weapons, hands = flow.deal(options, n_seats, rng, deal)
        teams = self.initial_state(options, n_seats).team_list()
        return flow.opening(options, n_seats, top, weapons, hands, teams)

    evolve = staticmethod(evolve)
    advance = staticmethod(flow.automatic)  # automatic discards, Blocks, damage, the next round

    def pending(self, state: State) -> Pending:
        """Selecting seats at once; the resolving card's owner; smoke bomb holders at once."""
        if state.phase == SELECT:
            return Pending(state.selecting, simultaneous=True)
        if state.phase == SMOKE:
            return Pending(state.smokers, simultaneous=True)
        current = state.current
        return Pending((current.seat,)) if current is not None else NOBODY

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        """Every action ``seat`` may take now, exactly as accepted."""
        if state.phase == SELECT:
            return secret.select_actions(state, seat)
        if state.phase == SMOKE:
            return secret.smoke_actions(state, seat)
        current = state.current
        return moves.attack_actions(state, current) if current is not None else []

    def decide(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """The resolving card's owner plays, counters, uses a weapon or discards."""
        current = state.current
        if state.phase != ATTACK_PHASE or current is None:
            raise IllegalAction(f"in the {state.phase} phase choices are made secretly, not as turns")
        return [moves.attack_event(state, current, action)]

    def validate_choice(self, state: State, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Check a secret select or smoke decision; it is revealed in one part."""
        if state.phase == SELECT:
            secret.check_select(state, seat, action)
        elif state.phase == SMOKE:
            secret.check_smoke(state, seat, action)
        else:
            raise IllegalAction(f"nothing is chosen secretly in the {state.phase} phase")
        return [dict(action)]

    def resolve(self, state: State, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        """The revealed selections (then the attack phase), or smoke decisions (then the damage)."""
        if state.phase == SELECT:
            return [flow.reveal_selections(state, choices)]
        return [flow.reveal_smoke(state, choices)]

    def view(self, state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        """See ``view.view``: the public table and the viewer's own hand."""
        return view(state, viewer, reveal_all)

    def phase(self, state: State) -> str:
        """``select``, ``attack``, ``smoke`` or ``over`` (``deal`` before setup)."""
        return state.phase

    def teams(self, state: State) -> list[list[int]] | None:
        """The teams in team play (a resignation loses for the whole team), else None."""
        return state.team_list()

    def outcome(self, state: State) -> dict[str, Any] | None:
        """Lowest score first (team totals in team play); None until over."""
        if state.phase != OVER:
            return None
        return result_from_scores(
            state.scores(),
            higher_is_better=False,
            totals=state.totals(),
            scoring=state.scoring,
            teams=state.team_list(),
        )


RULES = SanNiIchi()
