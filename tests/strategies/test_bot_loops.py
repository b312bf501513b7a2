"""Bots notice when play goes round in circles (strategies/_bots.pyx, loop avoidance): games that
stalled until the turn cap before it now end by compiling."""

import numpy as np
import pytest
from sim.engine._core import constants

from strategies.seats import play_games

REASON = {name: code for code, name in constants()["end_reason"].items()}

# Seeds whose greedy-vs-greedy game ran to the turn cap before the bots avoided loops:
# 2941: A plays Water 3 face-up (it returns Psychic 4), B answers Psychic 4 (it returns Water 3
# and flips itself), every turn the same position; 3043: Mirror 1 copies Peace 1 at every end of
# turn, both hands are discarded and the field never changes.
CYCLED = {2941: "Water against Psychic", 3043: "Mirror copying Peace"}


@pytest.mark.parametrize("seed", sorted(CYCLED))
def test_greedy_breaks_the_cycle(pool, seed):
    cols = play_games(pool, [seed], strategies=("greedy", "greedy"))
    assert cols["end_reason"][0] == REASON["compiled"], CYCLED[seed]
    assert cols["turns"][0] < 200


def test_greedy_rarely_reaches_the_turn_cap(pool):
    # 16 of these 10,000 games ended at the turn cap before the loop avoidance; none does now.
    cols = play_games(pool, np.arange(1, 10001), strategies=("greedy", "greedy"))
    assert int((cols["end_reason"] == REASON["turn_cap"]).sum()) == 0


def test_search_breaks_the_cycle(pool):
    # Both games ran to the turn cap (Water 3 against Psychic 4) before the loop avoidance.
    trios = [["Water", "Spirit", "Love"], ["Psychic", "Hate", "Death"]]
    cols = play_games(pool, [225, 447], strategies=("search:sims=8,depth=1",) * 2, protocols=[trios])
    assert list(cols["end_reason"]) == [REASON["compiled"]] * 2
