"""The mutation run of ``bench/forgeries.py`` on a sample: every single change to a record of each of
the five games is refused (an honest truncation is only ``in_progress``), and names the first bad event.

The classes: data and type of each event (with and without the chain recomputed), events dropped,
inserted and swapped (ditto), integers turned into floats and booleans, private parts and salts
(also recommitted), records cut at each position (honest, withheld, still claiming the seed or the
seal), and every header field. ``python -m bench.forgeries`` runs every position of several games
and prints the counts.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bench.forgeries import FAILED, GAMES, Forgery, counter_salts, forgeries, judge, play, sealed
from domain.audit import IN_PROGRESS, verify_record


@pytest.mark.slow
@pytest.mark.parametrize("game_id", GAMES)
def test_every_forgery_of_a_sampled_record_is_refused_and_named(game_id: str) -> None:
    events, seed = play(game_id, 11, counter_salts(game_id))
    genuine = sealed(events, seed, counter_salts("seal"))
    assert verify_record(genuine)["verified"]
    n = len(genuine["events"])
    positions = sorted({1, 2, 3, n - 2, n - 1, n, *random.Random(game_id).sample(range(1, n + 1), 5)})
    judged: Counter[tuple[str, str]] = Counter()
    wrong: list[tuple[str, str, str]] = []
    for forgery in forgeries(genuine, positions):
        verdict, judgement = judge(forgery)
        judged[(forgery.kind, verdict)] += 1
        if judgement != "right":
            wrong.append((forgery.kind, verdict, judgement))
    assert wrong == []
    assert not any(verdict == "verified" for _kind, verdict in judged)
    kinds = {kind for kind, _verdict in judged}
    assert {"truncate", "truncate+seed", "insert+rechain", "type-confusion", "header"} <= kinds
    assert all(verdict == IN_PROGRESS for kind, verdict in judged if kind in ("truncate", "truncate+withheld"))


def test_the_harness_itself_tells_a_misnamed_event_from_a_right_one() -> None:
    """A positive control: the judge calls a forgery named at another event wrong."""
    events, seed = play("san-ban", 3, counter_salts("control"))
    genuine = sealed(events, seed, counter_salts("seal"))
    forged = next(f for f in forgeries(genuine, [5]) if f.kind == "data+rechain")
    assert judge(forged) == (FAILED, "right")
    assert judge(Forgery(forged.kind, forged.record, FAILED, 4)) == (FAILED, "wrong name")
    assert judge(Forgery(forged.kind, genuine, FAILED, 5)) == ("verified", "wrong verdict")
