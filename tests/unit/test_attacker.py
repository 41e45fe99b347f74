"""The hidden-information attacker's shortcut (``tests.support.attacker.salted``) hashes exactly the
bytes the server's commitments hash, for any part and any salt: otherwise the attacker would look for
hashes nobody makes, and the hidden-information suite would pass blind."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.engine import commitment
from domain.record import part_commitment
from tests.support.attacker import salted

SCALARS = st.one_of(st.text(), st.integers(), st.booleans(), st.none())
PARTS = st.dictionaries(
    st.text(), st.recursive(SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner))
)
SALTS = st.lists(st.text() | st.from_regex(r"\A[0-9a-f]{32}\Z"), max_size=4)


@given(st.text(), PARTS, SALTS)
def test_part_commitments_are_the_servers(audience: str, part: dict[str, Any], salts: list[str]) -> None:
    expected = [part_commitment(audience, part, s) for s in salts]
    assert salted({"audience": audience, "part": part}, salts, lambda s: part_commitment(audience, part, s)) == expected


@given(st.text(), st.integers(0, 9), st.integers(0, 999), st.integers(0, 3), PARTS, SALTS)
def test_choice_commitments_are_the_servers(
    game: str, seat: int, step: int, part: int, action: dict[str, Any], salts: list[str]
) -> None:
    expected = [commitment(game, seat, step, part, action, s) for s in salts]
    payload = {"game": game, "seat": seat, "step": step, "part": part, "action": action}
    assert salted(payload, salts, lambda s: commitment(game, seat, step, part, action, s)) == expected


def test_a_shortcut_that_hashed_other_bytes_would_be_caught() -> None:
    """The first salt's hash is checked against the reference: a payload that is not the server's fails."""
    with pytest.raises(AssertionError, match="what the server hashes"):
        salted({"audience": "seat:0", "part": {"card": "x"}}, ["00" * 16], lambda s: part_commitment("seat:1", {}, s))
