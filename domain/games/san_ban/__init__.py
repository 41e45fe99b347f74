"""San Ban: rules as in docs/rules/san-ban.md (Triple-Triad-like).

Modules: ``cards`` (catalogue, deck checks), ``board`` (capture, elemental, add),
``state`` (immutable state, ``evolve``), ``rules`` (the ``Game``), ``bots`` (greedy).

Decisions where the rules are silent:

* Catalogue: 60 cards ``sb-001``..``sb-060``, 12 per tier; tier ``t`` holds ids
  ``sb-{12t-11}``..``sb-{12t}``; 20 have an element. Generated once, kept as
  Python data in ``catalogue.py``.
* Decks hold 5-12 cards (the cap keeps ``legal_actions`` enumerable: gamer
  mode lists every ordered 5 of the deck, 95,040 for 12 cards; ``GET /actions``
  describes the pick instead, ``space.py``). A deck may not
  hold one id twice; both decks may hold the same card; an id means one
  definition per game (an inline card with a catalogue id must equal it).
  Inline ids are 1-40 characters. ``element`` may be absent or null.
* Generator draws, in this order: the random decks
  (``rng.sample(tier ids in catalogue order, 10)``: first 5 seat 0, next 5
  seat 1), then the coin (``rng.below(2)``) when ``first`` is coin, then in
  advanced mode ``rng.shuffled(range(5))`` for seat 0 then seat 1. The
  advanced order of seat ``s`` is ``[hand[i] for i in shuffle_s]`` where
  ``hand`` is the chosen five in deck order. A fixed deal draws no shuffle
  (the five keep deck order); options ``deck``/``decks`` are not a fixed deal.
* Option ``deck`` (the name of the service's rulings): one deck that each seat gets, or a list
  of two decks, one per seat. Option ``decks`` (two decks, the fixed deal's
  shape) is kept as well; giving both is refused.
* A fixed deal is ``{"decks": [...], "first"?: 0|1|"coin"}``; ``decks`` is
  required, its ``first`` overrides the option.
* The rulings list ``choose_hand`` for standard and hardcore only, yet advanced
  also chooses five secretly: advanced uses ``choose_hand`` too (the order is
  the generator's, so ``set_order`` would mean nothing there).
* ``choose_hand`` accepts the five in any order (``legal_actions`` lists each
  set once, in deck order); ``set_order`` is the five in play order.
* The hands are revealed together when every choosing seat is in, also the
  hand of a seat with a deck of exactly 5 (nobody sees the other's five
  before choosing). When nobody chooses, setup reveals them at once. The coin
  is shown (``coin_flipped``) right after the hands.
* Events: ``decks_dealt`` (decks private per seat with their definitions;
  coin and shuffles hidden), ``hands_chosen`` (public hands in standard and
  hardcore; the order private per seat in gamer; in advanced the set private
  per seat and the order hidden), ``coin_flipped``, ``first_chosen``,
  ``card_placed`` (with ``card_def``), ``cards_flipped`` (one event per rule
  that flipped something, in the order capture, elemental, add; a cell is
  listed once, under the first rule that flips it), ``card_claimed``.
* Flip rules all look at the board before the placement. Add counts own
  neighbours toward a repeated sum but flips only opponent cards.
* Hardcore: the claim is the winner's decision in phase ``claim``; with a tie
  there is no claim. The rulebook says the winner "may" take a card, so
  ``{"type": "claim", "card": null}`` takes none
  (event ``claim_declined``). Result extra ``claimed``: ``{"seat", "card",
  "from"}``, or ``null`` when declined.
* View extras: ``chosen`` (each seat's five where visible, own advanced five
  sorted), ``deck`` (own), ``decks`` (all, once over), ``deck_sizes``,
  ``first``, ``coin_winner`` (once flipped), ``next_player``, ``scores``
  (public: colours on the board + cards in hand), ``claimed`` (``{"seat", "card"}``). Own hand in
  advanced is sorted by id; in gamer it is in play order.
"""

from domain.games.san_ban.rules import RULES, SanBan

__all__ = ["RULES", "SanBan"]
