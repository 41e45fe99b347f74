"""Tournaments: an event-sourced log of their own, around ordinary games.

``model`` (state, events, ``evolve``), ``pairing`` (round-robin, swiss,
duplicate), ``standings`` (points from game results), ``commands`` (what the
organiser and the running tournament may do, and what comes next) and
``archive`` (the offline verifier of a whole event). Pure, like the game rules:
the service layer (``service.tournaments``) supplies ids, seeds and salts and
creates the games.
"""
