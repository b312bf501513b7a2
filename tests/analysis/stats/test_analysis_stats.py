"""Statistics helpers: Wilson, tests against a band, Holm / Benjamini-Hochberg, Newcombe, flags."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats import proportions as stats
from analysis.studies.balance.flags import flag_table
from sim.stats import wilson


def test_wilson_vectorised_matches_sim_stats():
    wins = np.array([0, 1, 5, 50, 99, 100, 0])
    n = np.array([10, 10, 10, 100, 100, 100, 0])
    lo, hi = stats.wilson_interval(wins, n)
    for w, k, a, b in zip(wins, n, lo, hi, strict=True):
        assert (a, b) == pytest.approx(wilson(w, k))


def test_holm_and_benjamini_hochberg_known_values():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert stats.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert stats.adjust(np.array([0.5]), "holm") == pytest.approx([0.5])
    with pytest.raises(ValueError, match="unknown correction"):
        stats.adjust(p, "bonferroni")


def test_band_pvalue_inverts_the_wilson_interval():
    rng = np.random.default_rng(1)
    n = rng.integers(20, 3000, 4000)
    wins = rng.binomial(n, rng.uniform(0.3, 0.7, len(n)))
    band = 0.05
    p = stats.band_pvalue(wins, n, band)
    lo, hi = stats.wilson_interval(wins, n)
    outside = (lo > 0.5 + band) | (hi < 0.5 - band)
    clear = np.abs(p - 0.05) > 1e-9
    assert np.array_equal((p < 0.05)[clear], outside[clear])
    assert stats.band_pvalue(np.array([50]), np.array([100]), band)[0] == 1.0


def test_newcombe_difference_published_example():
    # Newcombe (1998), example (a): 56/70 vs 48/80, method 10: 0.0524 to 0.3339.
    d, lo, hi = stats.newcombe_diff(np.array([48]), np.array([80]), np.array([56]), np.array([70]))
    assert d[0] == pytest.approx(0.2) and lo[0] == pytest.approx(0.0524, abs=1e-4)
    assert hi[0] == pytest.approx(0.3339, abs=1e-4)


def test_two_proportion_p():
    assert stats.two_proportion_p([50], [100], [50], [100])[0] == pytest.approx(1.0)
    assert stats.two_proportion_p([500], [1000], [600], [1000])[0] < 1e-5
    assert stats.two_proportion_p([5], [0], [5], [10])[0] == 1.0


def items(rows):
    return pd.DataFrame(
        [{"kind": "protocol", "name": n, "metric": "win rate", "games": g, "wins": w} for n, g, w in rows]
    )


def test_flags_need_the_interval_outside_the_band_after_correction():
    # 584/1000: its 95% interval (55.3%-61.4%) clears the 45-55% band, p about 0.03 on its own ...
    alone = flag_table(items([("X", 1000, 584)]))
    assert bool(alone.iloc[0]["flagged"]) and alone.iloc[0]["direction"] == "above"
    # ... but not once ten things are tested together (Holm or BH multiply it by about ten).
    many = [("X", 1000, 584)] + [(f"P{i}", 1000, 500) for i in range(9)]
    for method in ("holm", "bh"):
        f = flag_table(items(many), method=method)
        assert not f["flagged"].any()
        assert f.attrs["tests"] == 10 and ("Holm" if method == "holm" else "Benjamini") in f.attrs["statement"]
    # A large imbalance survives the correction, in both directions; 52% never flags.
    f = flag_table(items([("Hi", 2000, 1400), ("Lo", 2000, 600), ("Mid", 100000, 52000)]))
    got = {r["name"]: (bool(r["flagged"]), r["direction"]) for _, r in f.iterrows()}
    assert got == {"Hi": (True, "above"), "Lo": (True, "below"), "Mid": (False, "inside")}
    # A wider band flags less.
    assert not flag_table(items([("Hi", 2000, 1400)]), band=0.25)["flagged"].any()


def test_bradley_terry_three_players_recovers_planted_ratings():
    true = {"a": 0.0, "b": 0.5, "c": 1.0}
    rows = []
    for s0 in true:
        for s1 in true:
            if s0 == s1:
                continue
            for fp in (0, 1):
                p = 1 / (1 + np.exp(-(true[s0] - true[s1] + (0.2 if fp == 0 else -0.2))))
                rows.append(
                    {
                        "strategy_0": s0,
                        "strategy_1": s1,
                        "first_player": fp,
                        "games": 100000,
                        "wins0": round(p * 100000),
                    }
                )
    r, extra = stats.bradley_terry(pd.DataFrame(rows))
    got = dict(zip(r["strategy"], r["rating"], strict=True))
    scale = 400 / np.log(10)
    assert got["c"] - got["a"] == pytest.approx(scale * 1.0, abs=1.0)
    assert got["b"] - got["a"] == pytest.approx(scale * 0.5, abs=1.0)
    assert extra["first_player_elo"] == pytest.approx(scale * 0.2, abs=1.0)
    assert list(r["strategy"]) == ["c", "b", "a"]
