"""A balance search's paired changes (analysis/stats/balance.py): each figure lies inside the interval
it is given with, whichever interval it is: the fixed-size one of the fresh seeds and the anytime
one of the search, even when the running intersection of the latter has left the plain mean."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats.balance import effect, paired_change
from analysis.stats.sequential import confidence_sequence


def early_run(games: int = 2200, early: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Protocol 0 loses its first `early` games to the baseline and plays the rest as it does;
    protocol 1 never plays."""
    base, cand = np.zeros((games, 2)), np.zeros((games, 2))
    base[:early, 0] = 1
    base[:, 1] = cand[:, 1] = np.nan
    return cand, base


def test_the_anytime_interval_can_leave_the_plain_mean_and_its_own_estimate_stays_inside():
    cand, base = early_run()
    d = cand[:, 0] - base[:, 0]
    seq = confidence_sequence(d, 0.05)
    assert not seq.low[-1] <= d.mean() <= seq.high[-1]  # the case a table showed: mean outside its interval
    centre, low, high, games = effect(cand, base, 0, 0.05)
    assert low <= centre <= high and games == len(d)


def test_a_change_read_once_is_the_mean_with_its_own_centred_interval():
    cand, base = early_run()
    c = paired_change(cand, base, 0, 0.05)
    d = cand[:, 0] - base[:, 0]
    assert c.change == d.mean() and c.low < c.change < c.high and c.games == len(d)
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(len(d))
    assert c.high - c.change == pytest.approx(half) and c.change - c.low == pytest.approx(half)
    assert c.low < 0 > c.high  # significant by the interval shown: it leaves 0
    none = paired_change(cand, base, 1, 0.05)
    assert (none.change, none.low, none.high, none.games) == (0.0, -1.0, 1.0, 0)
