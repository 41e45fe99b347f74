"""docs/fairness.md's test vectors, recomputed with the service's code.

Every value is read out of the document itself and compared with what
``engine.create`` (and so each game's ``setup``) produces with the documented
seed, so the page cannot drift from the code. A parser that finds nothing fails
the test rather than skipping it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import domain.games  # noqa: F401  (registers all five games)
from domain import engine
from domain.engine import Seat
from domain.rng import SeededRandom, seed_hash

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"
DOC = DOC_PATH.read_text(encoding="utf-8")
S1 = bytes.fromhex("00" * 31 + "01")
NUMBER_WORDS = {"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


# ---------------------------------------------------------------- running a setup


@dataclass
class Shuffle:
    """One ``shuffled`` call (also those made by ``sample``): its input, output and the draws it took."""

    items: list[Any]
    out: list[Any] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)
    n_bytes: int = 0
    reads: int = 0

    @property
    def stats(self) -> tuple[int, int, int]:
        """(calls to ``below``, bytes read, rejected reads): each read is one attempt of a ``below``."""
        return len(self.draws), self.n_bytes, self.reads - len(self.draws)


class TracingRandom(SeededRandom):
    """The service's generator, unchanged, that also records every shuffle it makes."""

    def __init__(self, seed: bytes) -> None:
        super().__init__(seed)
        self.shuffles: list[Shuffle] = []
        self._current: Shuffle | None = None

    def next_bytes(self, count: int) -> bytes:
        if self._current is not None:
            self._current.n_bytes += count
            self._current.reads += 1
        return super().next_bytes(count)

    def below(self, n: int) -> int:
        j = super().below(n)
        if self._current is not None:
            self._current.draws.append(j)
        return j

    def shuffled(self, items: Any) -> list[Any]:
        current = self._current = Shuffle(list(items))
        current.out = super().shuffled(items)  # its below() calls land in ``current``
        self._current = None
        self.shuffles.append(current)
        return current.out


@dataclass
class Setup:
    events: dict[str, dict[str, Any]]  # event type -> Event.to_dict()
    shuffles: list[Shuffle]


def run_setup(game: str, n: int, options: dict[str, Any], seed: bytes = S1) -> Setup:
    """``engine.create`` exactly as docs/fairness.md's snippet calls it, with the generator traced."""
    made: list[TracingRandom] = []

    def make(key: bytes) -> TracingRandom:
        made.append(TracingRandom(key))
        return made[-1]

    with mock.patch.object(engine, "SeededRandom", make):
        events = engine.create(game, "g1", [Seat(i, f"p{i}") for i in range(n)], seed, options)
    (rng,) = made
    return Setup({ev.type: ev.to_dict() for ev in events}, rng.shuffles)


# ---------------------------------------------------------------- reading the document


def section(title: str) -> str:
    """The text under ``### title``, up to the next heading."""
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#)", DOC, re.M | re.S)
    assert match, f"docs/fairness.md has no section '### {title}'"
    return match[1]


def search(pattern: str, text: str) -> re.Match[str]:
    match = re.search(pattern, text, re.S)
    assert match, f"docs/fairness.md no longer matches {pattern!r}"
    return match


def find(pattern: str, text: str) -> re.Match[str]:
    """``pattern`` in ``text`` read as prose: line breaks and runs of spaces count as one space."""
    return search(pattern, " ".join(text.split()))


def ids(text: str) -> list[str]:
    """The ids or numbers in ``text``: JSON lists, comma or space separated lists alike."""
    return re.findall(r"[^\s,\[\]\"`]+", text)


def listed(value: str) -> list[str]:
    """The ids in the backtick spans of a bullet's value; ``none`` is an empty list."""
    if value.strip().startswith("none"):
        return []
    spans = re.findall(r"`([^`]*)`", value)
    assert spans, f"no value in backticks: {value!r}"
    return [i for span in spans for i in ids(span)]


def bullets(text: str) -> dict[str, str]:
    """``- key (a note): value`` lines, continuation lines joined, as {key: value}."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith("- "):
            items.append(line)
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
        else:
            items.append("")  # ends the bullet
    out = {}
    for item in filter(None, items):
        match = search(r"^- (.+?)(?: \([^()]*\))?: (.*)$", item)
        out[match[1]] = match[2]
    return out


def code_after(label: str, text: str) -> list[str]:
    """The ids of the code block that follows ``label`` (a regular expression)."""
    return ids(search(label + r"\n\n```\n(.*?)```", text)[1])


def j_values(text: str) -> tuple[int, list[int]]:
    """The first "The `j` values for `i` = M down to 1" code block: M and the values."""
    match = search(r"The `j` values for\s+`i` = (\d+)\s+down to 1(?: are)?:\n\n```\n(.*?)```", text)
    return int(match[1]), [int(j) for j in ids(match[2])]


def draw_stats(text: str) -> list[tuple[int, int, int]]:
    """Each "N calls to `below`, B bytes, R rejected" in ``text``, in order."""
    found = re.findall(r"(\d+) calls to `below`, (\d+) bytes, (\d+) rejected", " ".join(text.split()))
    return [(int(c), int(b), int(r)) for c, b, r in found]


@dataclass
class Case:
    """A "With N players and options `{...}`" paragraph and what follows it."""

    n: int
    options: list[dict[str, Any]]
    text: str

    def __str__(self) -> str:
        return f"{self.n}p-" + "-or-".join(json.dumps(o, separators=(",", ":")) for o in self.options)


def cases(title: str) -> list[Case]:
    text = section(title)
    heads = list(re.finditer(r"^With (\d) players and options ((?:`\{[^`]*\}`(?: or )?)+)", text, re.M))
    assert heads, f"no 'With N players and options' case under '### {title}'"
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return [
        Case(int(h[1]), [json.loads(o) for o in re.findall(r"`(\{[^`]*\})`", h[2])], text[h.start() : end])
        for h, end in zip(heads, ends)
    ]


# ---------------------------------------------------------------- the generator


def belows(seed: bytes, ns: list[int]) -> list[int]:
    rng = SeededRandom(seed)
    return [rng.below(n) for n in ns]


# the input column of the "### Generator" table -> the output computed by domain/rng.py
GENERATOR: dict[str, Callable[[], list[Any]]] = {
    "`sha256(S1)`": lambda: [seed_hash(S1)],
    "first 8 bytes of the stream of `S1`": lambda: [SeededRandom(S1).next_bytes(8).hex()],
    "block 0 of `S1`": lambda: [SeededRandom(S1).next_bytes(32).hex()],
    "block 1 of `S1`": lambda: [SeededRandom(S1).next_bytes(64)[32:].hex()],
    "`S1`: `below(2), below(6), below(52), below(1000), below(300)` in sequence": lambda: belows(
        S1, [2, 6, 52, 1000, 300]
    ),
    "`S1`: twelve `below(200)` in sequence": lambda: belows(S1, [200] * 12),
    "seed = ASCII `kifu` (4 bytes `6b696675`): `sha256`": lambda: [seed_hash(b"kifu")],
    "seed = ASCII `kifu`: `shuffled([0, 1, ..., 9])`": lambda: SeededRandom(b"kifu").shuffled(list(range(10))),
}


def test_generator() -> None:
    text = section("Generator")
    rows = dict(re.findall(r"^\| (.+?) \| `([^`]*)` \|$", text, re.M))
    assert rows.keys() == GENERATOR.keys()
    for row, compute in GENERATOR.items():
        assert ids(rows[row]) == [str(v) for v in compute()], row
    kifu = TracingRandom(b"kifu")
    kifu.shuffled(list(range(10)))
    documented = find(r"The `kifu` shuffle draws `j` = ([\d, ]+) for `i` = 9 down to 1", text)
    assert kifu.shuffles[0].draws == [int(j) for j in ids(documented[1])]


# ---------------------------------------------------------------- San Ban


def test_san_ban() -> None:
    text = section("San Ban, seed `S1`")
    plain = run_setup("san-ban", 2, {})
    decks = plain.events["decks_dealt"]
    shuffle = find(r"`shuffled\(tier 2 ids\)` \(j = ([\d, ]+)\): `([^`]+)`", text)
    assert plain.shuffles[0].draws == [int(j) for j in ids(shuffle[1])]
    assert plain.shuffles[0].out == ids(shuffle[2])
    facts = bullets(text)
    for seat in (0, 1):
        assert decks["private"][str(seat)]["deck"] == listed(facts[f"seat {seat}'s deck"])
    assert plain.events["coin_flipped"]["data"]["winner"] == int(*listed(facts["coin winner"]))

    advanced = find(
        r"with `(\{[^`]*\})`: coin winner (\d), then the\s+permutations `(\[[^`]*\])` \(seat 0\) and "
        r"`(\[[^`]*\])` \(seat 1\), so the\s+play orders are `([^`]+)` and\s+`([^`]+)`",
        text,
    )
    game = run_setup("san-ban", 2, json.loads(advanced[1]))
    hidden = game.events["decks_dealt"]["private"]["hidden"]
    assert game.events["decks_dealt"]["private"]["0"]["deck"] == decks["private"]["0"]["deck"]  # "same decks"
    assert hidden["coin_winner"] == int(advanced[2])
    assert hidden["shuffles"] == [json.loads(advanced[3]), json.loads(advanced[4])]
    assert game.events["hands_chosen"]["private"]["hidden"]["orders"] == [ids(advanced[5]), ids(advanced[6])]

    no_coin = find(
        r"With `(\{[^`]*\})` there is no coin, so the permutations\s+come straight after the decks: "
        r"`(\[[^`]*\])` and `(\[[^`]*\])`",
        text,
    )
    game = run_setup("san-ban", 2, json.loads(no_coin[1]))
    hidden = game.events["decks_dealt"]["private"]["hidden"]
    assert "coin_winner" not in hidden
    assert hidden["shuffles"] == [json.loads(no_coin[2]), json.loads(no_coin[3])]


# ---------------------------------------------------------------- Nin Nal


def test_nin_nal() -> None:
    text = section("Nin Nal, seed `S1`")
    two = run_setup("nin-nal", 2, {})
    (shuffle,) = two.shuffles
    stats = find(r"uses (\d+) calls to `below` and (\d+) bytes \((\w+) rejections?", text)
    assert shuffle.stats == (int(stats[1]), int(stats[2]), NUMBER_WORDS[stats[3]])
    assert j_values(text) == (len(shuffle.items) - 1, shuffle.draws)
    deck = code_after("The shuffled deck:", text)
    assert shuffle.out == deck

    dealt = two.events["cards_dealt"]
    facts = bullets(text)
    assert dealt["data"]["piles"] == listed(facts["piles"])
    for seat in (0, 1):
        assert dealt["private"][str(seat)]["hand"] == listed(facts[f"seat {seat}"])
    rest = deck[3 + 2 * 9 :]  # "the remaining cards ..., in the order above"
    assert dealt["private"]["hidden"]["unused"] == rest
    unused = find(r"unused \((\d+)\): the remaining cards from `([^`]+)` to `([^`]+)`, in the order above", text)
    assert (len(rest), rest[0], rest[-1]) == (int(unused[1]), unused[2], unused[3])

    three = run_setup("nin-nal", 3, {}).events["cards_dealt"]
    assert three["data"]["piles"] == dealt["data"]["piles"]
    assert [three["private"][s]["hand"] for s in "01"] == [dealt["private"][s]["hand"] for s in "01"]
    seat_2 = find(r"seat 2 gets\s+`([^`]+)`\s+and the unused (\d+) cards start at `([^`]+)`", text)
    assert three["private"]["2"]["hand"] == ids(seat_2[1])
    unused_3 = three["private"]["hidden"]["unused"]
    assert (len(unused_3), unused_3[0]) == (int(seat_2[2]), seat_2[3])


# ---------------------------------------------------------------- Kiri-ai

KIRI_AI_SEEDS = {"`S1`": S1, "ASCII `kifu`": b"kifu", "32 zero bytes": bytes(32)}
KIRI_AI_ROWS = re.findall(r"^\| (.+?) \| `(\[[^`]*\])`(?: \(j = ([\d, ]+)\))? \|$", section("Kiri-ai"), re.M)


@pytest.mark.parametrize(("seed", "specials", "draws"), KIRI_AI_ROWS, ids=[row[0] for row in KIRI_AI_ROWS])
def test_kiri_ai(seed: str, specials: str, draws: str) -> None:
    game = run_setup("kiri-ai", 2, {}, KIRI_AI_SEEDS[seed])
    dealt = game.events["specials_dealt"]["private"]
    red, blue, aside = json.loads(specials)
    assert (dealt["0"]["special"], dealt["1"]["special"], dealt["hidden"]["set_aside"]) == (red, blue, aside)
    if draws:
        assert game.shuffles[0].draws == [int(j) for j in ids(draws)]


def test_kiri_ai_table_is_read() -> None:
    assert sorted(row[0] for row in KIRI_AI_ROWS) == sorted(KIRI_AI_SEEDS)


# ---------------------------------------------------------------- San, Ni, Ichi!


SAN_NI_ICHI_DRAWS = {
    "weapon draws",
    "shuffled weapons",
    "weapons in play",
    "deck before its shuffle",
    "deck draws",
    "shuffled deck",
}


@pytest.mark.parametrize("case", cases("San, Ni, Ichi!, seed `S1`"), ids=str)
def test_san_ni_ichi(case: Case) -> None:
    documented = {key: listed(value) for key, value in bullets(case.text).items()}
    seats = {f"seat {s}" for s in range(case.n)}
    assert seats <= documented.keys() <= seats | SAN_NI_ICHI_DRAWS, "every hand, and no bullet the test does not know"
    for options in case.options:
        game = run_setup("san-ni-ichi", case.n, options)
        weapons, deck = game.shuffles
        dealt = game.events["cards_dealt"]
        actual = {
            "weapon draws": [str(j) for j in weapons.draws],
            "shuffled weapons": weapons.out,
            "weapons in play": dealt["data"]["weapons_in_play"],
            "deck before its shuffle": deck.items,
            "deck draws": [str(j) for j in deck.draws],
            "shuffled deck": deck.out,
            **{f"seat {s}": dealt["private"][str(s)]["hand"] for s in range(case.n)},
        }
        assert {key: actual[key] for key in documented} == documented, options
        if stats := draw_stats(case.text):
            assert [s.stats for s in game.shuffles] == stats


# ---------------------------------------------------------------- Front Line

FRONT_LINE_ROW = r"^\| (\d) \| `([^`]*)` \| `([^`]*)` \| (\d+) cards: `([^`]*)` \.\.\. `([^`]*)` \|$"


@pytest.mark.parametrize("case", cases("Front Line, seed `S1`"), ids=str)
def test_front_line(case: Case) -> None:
    rows = re.findall(FRONT_LINE_ROW, case.text, re.M)
    assert [int(row[0]) for row in rows] == list(range(case.n)), "one table row per seat"
    for options in case.options:
        game = run_setup("front-line", case.n, options)
        dealt = game.events["cards_dealt"]
        hidden = dealt["private"]["hidden"]
        for seat, front, reinforcements, size, top, bottom in rows:
            s = int(seat)
            assert dealt["data"]["front"][s] == ids(front)
            assert dealt["data"]["reinforcements"][s] == ids(reinforcements)
            draw = hidden["draw"][s]
            assert len(draw) == int(size)
            assert draw[: len(ids(top))] == ids(top)
            assert draw[-1] == bottom
        assert hidden["set_aside"] == listed(bullets(case.text)["set aside"])
        if stats := draw_stats(case.text):
            assert [s.stats for s in game.shuffles] == stats
        if "The `j` values" in case.text:  # given for the first (here the only) shuffle
            first = game.shuffles[0]
            assert j_values(case.text) == (len(first.items) - 1, first.draws)
            assert first.out == code_after("The shuffled deck:", case.text)
