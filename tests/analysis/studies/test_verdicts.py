"""Verdicts rank by evidence: a card seen face-up in one game does not lead the card table."""

from types import SimpleNamespace

import pandas as pd
from fixtures_analysis.matchups import synthetic_matchups

from analysis.studies.balance import meta as M
from analysis.studies.tiers.report import wide_cards


def cards_table() -> pd.DataFrame:
    rows = [  # tier, card, face-up games, difference and its 95% interval, flagged
        ("greedy", "Death 1", 1, -0.577, -0.95, 0.30, False),
        ("greedy", "Psychic 1", 1, 0.527, -0.40, 0.90, False),
        ("greedy", "Fire 1", 4000, 0.061, 0.031, 0.091, False),
        ("greedy", "Water 2", 3500, -0.048, -0.080, -0.016, False),
        ("greedy", "Hate 0", 2000, 0.010, -0.020, 0.040, False),
    ]
    return pd.DataFrame(
        rows, columns=["tier", "card", "face_up_games", "difference", "difference_low", "difference_high", "flagged"]
    )


def test_cards_seen_once_sink_below_supported_ones():
    study = SimpleNamespace(tables={"cards": cards_table()}, tiers=["greedy"])
    order = list(wide_cards(study).index)
    assert order[:2] == ["Fire 1", "Water 2"]
    assert set(order[-2:]) == {"Death 1", "Psychic 1"}
    assert wide_cards(study).loc["Psychic 1", "greedy_face_up_games"] == 1


def test_meta_warns_when_its_model_rests_on_few_played_pairs():
    df, u, _ = synthetic_matchups(games=40)
    few = M.meta_analysis(df.sample(n=10, random_state=3), bootstrap=0, protocols=u.protocols, pair_l2=10.0)
    assert few.meta["warnings"] and "10 played of 280" in few.meta["warnings"][0]
    assert M.meta_analysis(df, bootstrap=0, pair_l2=10.0).meta["warnings"] == []


def test_meta_intervals_carry_the_unplayed_pairs_uncertainty():
    df, u, _ = synthetic_matchups(games=40)
    res = M.meta_analysis(df.sample(n=20, random_state=3), bootstrap=20, seed=5, protocols=u.protocols, pair_l2=10.0)
    top = res.trios.iloc[0]
    # resampling only the 20 played pairs of 280 kept this trio near certain (71-100%), though
    # 260 pairs were never played: their own uncertainty must show
    assert top["nash_probability_low"] < 0.5
