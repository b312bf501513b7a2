"""The balance queries against small runs whose answers are worked out by hand (fixtures_analysis/known.py)."""

import math
import shutil

import numpy as np
import pandas as pd
import pytest
from fixtures_analysis.known import known_run

from analysis.runs.open import open_runs
from analysis.studies.balance import queries as Q
from sim.stats import wilson


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    r = open_runs(known_run(tmp_path_factory.mktemp("known") / "run"))
    yield r
    r.close()


def row(df, **match):
    sel = np.ones(len(df), bool)
    for k, v in match.items():
        sel &= (df[k] == v).to_numpy()
    assert sel.sum() == 1, (match, df)
    return df[sel].iloc[0]


def check_rate(r, wins, games, prefix="win_rate"):
    assert r[prefix] == pytest.approx(wins / games)
    lo, hi = wilson(wins, games)
    assert (r[f"{prefix}_low"], r[f"{prefix}_high"]) == pytest.approx((lo, hi))


def test_overview_and_first_player(runs):
    o = Q.overview(runs).iloc[0]
    assert (o["games"], o["decided"], o["draws"], o["first_wins"], o["turn_cap"]) == (8, 7, 1, 6, 1)
    check_rate(o, 6, 7, "first_player_win_rate")
    fp = Q.first_player(runs)
    check_rate(row(fp, matchup="all"), 6, 7)
    m0, m1 = row(fp, matchup="0"), row(fp, matchup="1")
    check_rate(m0, 3, 4)
    check_rate(m1, 3, 3)
    assert m0["trios"] == "Death, Fire, Water vs Hate, Life, Light"
    assert m1["trios"] == "Hate, Life, Light vs Death, Fire, Water"


def test_protocol_win_rates_overall_seat_first_position(runs):
    p = Q.protocol_win_rates(runs)
    assert len(p) == 6 and set(p["protocol"][:3]) == {"Fire", "Water", "Death"}
    fire = row(p, protocol="Fire")
    assert (fire["games"], fire["wins"], fire["draws"]) == (7, 5, 1)
    check_rate(fire, 5, 7)
    check_rate(row(p, protocol="Hate"), 2, 7)
    s = Q.protocol_win_rates(runs, "seat")
    check_rate(row(s, protocol="Fire", seat=0), 3, 4)
    check_rate(row(s, protocol="Fire", seat=1), 2, 3)
    f = Q.protocol_win_rates(runs, "first")
    check_rate(row(f, protocol="Fire", first="first"), 4, 4)
    check_rate(row(f, protocol="Fire", first="second"), 1, 3)
    pos = Q.protocol_win_rates(runs, "position")
    assert row(pos, protocol="Water", position="middle")["games"] == 7
    assert set(pos[pos["protocol"] == "Water"]["position"]) == {"middle"}


def test_matchups(runs):
    m = Q.protocol_matchups(runs)
    check_rate(row(m, protocol="Fire", opponent="Hate"), 5, 7)
    check_rate(row(m, protocol="Hate", opponent="Fire"), 2, 7)
    assert len(m) == 18  # 3 x 3 pairs, both directions; Fire never meets Water
    mat = Q.matrix(m, "protocol", "opponent")
    assert math.isnan(mat.loc["Fire", "Fire"]) and mat.loc["Life", "Death"] == pytest.approx(2 / 7)
    t = Q.trio_matchups(runs)
    assert len(t) == 1
    r = t.iloc[0]
    assert (r["trio_a"], r["trio_b"], r["games"], r["wins"], r["first_wins"]) == (
        "Death, Fire, Water",
        "Hate, Life, Light",
        7,
        5,
        6,
    )
    check_rate(r, 5, 7)
    check_rate(r, 6, 7, "first_player_win_rate")
    tw = Q.trio_win_rates(runs)
    check_rate(row(tw, trio="Hate, Life, Light"), 2, 7)


def test_game_length_and_turns_to_win(runs):
    gl = Q.game_length(runs)
    assert gl["games"].sum() == 8
    assert row(gl, turns=200)["won_by"] == "draw" and row(gl, turns=200)["end_reason"] == "turn_cap"
    assert row(gl, turns=14)["won_by"] == "second"
    tw = Q.turns_to_win(runs)
    a = row(tw, won_by="all")
    assert a["games"] == 7 and a["mean"] == pytest.approx(95 / 7) and a["median"] == 13
    assert row(tw, won_by="second")["games"] == 1 and row(tw, won_by="second")["median"] == 14


def test_compile_timing_rates_and_curves(runs):
    ct = Q.compile_timing(runs)
    k1 = row(ct, player="all", compile=1)
    assert (k1["seat_games"], k1["reached"], k1["median"]) == (16, 3, 3)
    check_rate(k1, 3, 16, "rate")
    k2 = row(ct, player="all", compile=2)
    assert (k2["reached"], k2["median"], k2["mean"]) == (2, 5, 5.5)
    assert row(ct, player="all", compile=3)["p90"] == 12
    assert row(ct, player="first", compile=1)["reached"] == 2  # g0 and g1 seat 0 moved first
    assert row(ct, player="second", compile=1)["reached"] == 1  # g0 seat 1
    assert math.isnan(row(ct, player="second", compile=2)["median"])
    cr = Q.compile_rates(runs).iloc[0]
    assert cr["seat_games"] == 16 and cr["compiles_per_game"] == pytest.approx(7 / 16)
    assert cr["recompiles_per_game"] == pytest.approx(1 / 16) and cr["share_with_recompile"] == pytest.approx(1 / 16)
    cc = Q.compile_curves(runs)
    k1c = cc[cc["k"] == 1]
    assert list(k1c["turn"]) == [2, 3, 4] and list(k1c["share"]) == pytest.approx([1 / 16, 2 / 16, 3 / 16])


def test_compiles_by_protocol_and_line(runs):
    bp = Q.compiles_by(runs, "protocol")
    fire = row(bp, protocol="Fire")
    assert (fire["appearances"], fire["compiles"], fire["recompiles"]) == (8, 2, 1)
    check_rate(fire, 2, 8, "compile_rate")
    assert fire["share_as_1"] == 0.5 and fire["share_as_2"] == 0.5 and fire["share_as_3"] == 0
    assert fire["median_turn_as_1"] == 2 and fire["median_turn_as_2"] == 6
    assert fire["recompiles_per_appearance"] == pytest.approx(1 / 8)
    death = row(bp, protocol="Death")
    assert death["share_as_3"] == 1 and death["turn_p25"] == 10 and death["turn_p75"] == 12
    assert row(bp, protocol="Hate")["share_as_1"] == 1
    assert "Light" not in set(bp["protocol"])  # never compiled
    bl = Q.compiles_by(runs, "line")
    left = row(bl, line="left")
    assert (left["compiles"], left["recompiles"]) == (3, 1) and left["share"] == pytest.approx(3 / 7)
    assert row(bl, line="right")["compiles"] == 2


def test_card_impact(runs):
    assert runs.has_events and not runs.has_cards  # the fixture has no cards files: the events query
    c = Q.card_impact(runs)
    f = row(c, card="Fire 1")
    assert f["protocol"] == "Fire" and f["deck_games"] == 7
    assert (f["drawn"], f["drawn_wins"], f["up"], f["up_wins"], f["down"], f["down_wins"]) == (3, 2, 2, 1, 1, 0)
    assert (f["played"], f["played_wins"], f["never"], f["never_wins"]) == (3, 1, 4, 4)
    assert f["drawn_rate"] == pytest.approx(3 / 7) and f["up_rate"] == pytest.approx(2 / 7)
    check_rate(f, 2, 3, "gih_wr")
    check_rate(f, 1, 2, "up_wr")
    check_rate(f, 4, 4, "never_wr")
    assert f["iwd"] == pytest.approx(-0.5) and f["iwd_low"] < -0.5 < f["iwd_high"]
    w = row(c, card="Water 2")
    assert (w["drawn"], w["up"], w["down"], w["never"], w["never_wins"]) == (1, 1, 1, 6, 4)
    h = row(c, card="Hate 0")
    assert (h["deck_games"], h["drawn"], h["drawn_wins"], h["up"], h["never"], h["never_wins"]) == (7, 1, 0, 0, 7, 2)
    assert math.isnan(h["up_wr"]) and math.isnan(h["iwd"])
    assert list(c["card"])[-1] == "Hate 0"  # no face-up plays: sorts last


def test_card_impact_from_cards_files_equals_events(runs, tmp_path):
    with_cards = open_runs(known_run(tmp_path / "c", cards=True))
    assert with_cards.has_cards and not with_cards.warnings
    fast, slow = Q.card_impact(with_cards), Q.card_impact(with_cards, source="events")
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    pd.testing.assert_frame_equal(fast, Q.card_impact(runs), check_exact=True)
    both = open_runs(
        [known_run(tmp_path / "a", run_id="a", cards=True), known_run(tmp_path / "b", run_id="b", cards=True)]
    )
    assert both.has_cards
    f = row(Q.card_impact(both), card="Fire 1")
    assert (f["deck_games"], f["drawn"], f["up"], f["never"], f["never_wins"]) == (14, 6, 4, 8, 8)
    # one run without cards files: every run falls back to events
    mixed = open_runs([tmp_path / "a", known_run(tmp_path / "n", run_id="n")])
    assert not mixed.has_cards
    pd.testing.assert_frame_equal(Q.card_impact(mixed), Q.card_impact(both), check_exact=True)
    for r in (with_cards, both, mixed):
        r.close()


def test_strategy_ratings_only_with_several_strategies(runs, tmp_path):
    assert Q.strategy_ratings(runs)[0].empty
    from fixtures_analysis.synth import write_run

    rows = []
    for i in range(400):  # A beats B 3:1 in every (seat, first player) cell
        a_seat, first = i % 2, (i // 2) % 2
        a_wins = (i // 4) % 4 != 3
        rows.append(
            {
                "strategy_0": "A" if a_seat == 0 else "B",
                "strategy_1": "B" if a_seat == 0 else "A",
                "first_player": first,
                "winner": a_seat if a_wins else 1 - a_seat,
            }
        )
    r = open_runs(write_run(tmp_path / "s", rows))
    sr, extra = Q.strategy_ratings(r)
    a, b = row(sr, strategy="A"), row(sr, strategy="B")
    assert a["rating"] - b["rating"] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert a["rating"] + b["rating"] == pytest.approx(3000)
    assert a["rating_low"] < a["rating"] < a["rating_high"] and a["games"] == 400
    check_rate(a, 300, 400)
    assert abs(extra["first_player_elo"]) < 1e-6


def test_several_runs_pool_and_join_on_run_id(runs, tmp_path):
    a = known_run(tmp_path / "a", run_id="a")
    b = known_run(tmp_path / "b", run_id="b")
    both = open_runs([a, b])
    assert not both.single and both.run_ids == ["a", "b"]
    check_rate(row(Q.protocol_win_rates(both), protocol="Fire"), 10, 14)
    f = row(Q.card_impact(both), card="Fire 1")
    assert (f["deck_games"], f["drawn"], f["up"], f["never"], f["never_wins"]) == (14, 6, 4, 8, 8)
    assert row(Q.compiles_by(both), protocol="Fire")["compiles"] == 4
    shutil.rmtree(a)


def test_games_only_run_omits_event_tables(tmp_path):
    r = open_runs(known_run(tmp_path / "g", events=False))
    assert not r.has_events and any("no events" in w for w in r.warnings)
    assert Q.card_impact(r).empty and Q.compiles_by(r).empty
    check_rate(row(Q.protocol_win_rates(r), protocol="Fire"), 5, 7)
