"""Tier studies (analysis/studies/tiers/report.py): rank agreement with known answers, the seeded cluster bootstrap,
flag verdicts per tier on synthetic tier runs, the card-vs-siblings flag, and the `tiers` spec key."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures_analysis.known import T1, T2
from fixtures_analysis.tiers import tier_run

from analysis.studies.balance.flags import card_items, flag_table
from analysis.studies.tiers.report import (
    average_ranks,
    bootstrap_agreement,
    cells,
    is_tier_run,
    kendall_tau,
    spearman_rho,
    tier_study,
    verdict,
)
from protolab.cli import main
from protolab.experiment.spec import SpecError, parse_spec

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

# -- rank agreement, by hand -------------------------------------------------------------------------

# x = 1..5, y = (3, 1, 2, 5, 4). Of the 10 pairs, the discordant ones are (1,2), (1,3), (4,5): tau = (7-3)/10.
# Ranks are the values themselves: sum d^2 = 4+1+1+1+1 = 8, rho = 1 - 6*8 / (5*24) = 0.6.
X, Y = [1, 2, 3, 4, 5], [3, 1, 2, 5, 4]

# With ties: x = (1, 2, 2, 3), y = (1, 3, 2, 2). Pairs: (12) +1, (13) +1, (14) +1, (23) 0 (x tied),
# (24) x 2<3, y 3>2: -1; (34) y tied: 0. S = 2; n0 = 6, ties in x 1, in y 1: tau-b = 2 / sqrt(5*5) = 0.4.
# Average ranks x (1, 2.5, 2.5, 4), y (1, 4, 2.5, 2.5): centred (-1.5, 0, 0, 1.5) and (-1.5, 1.5, 0, 0);
# sum of products 2.25, sums of squares 4.5 and 4.5: rho = 0.5.
XT, YT = [1, 2, 2, 3], [1, 3, 2, 2]


def test_kendall_and_spearman_known_answers():
    assert kendall_tau(X, Y) == pytest.approx(0.4)
    assert spearman_rho(X, Y) == pytest.approx(0.6)
    assert kendall_tau(XT, YT) == pytest.approx(0.4)
    assert spearman_rho(XT, YT) == pytest.approx(0.5)
    assert list(average_ranks([10, 20, 20, 5])) == [2, 3.5, 3.5, 1]
    assert kendall_tau(X, X[::-1]) == -1 and spearman_rho(X, X[::-1]) == pytest.approx(-1)
    assert math.isnan(kendall_tau([1], [2])) and math.isnan(spearman_rho([1, 1], [1, 2]))


def test_kendall_and_spearman_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, y = rng.integers(0, 6, 12).astype(float), rng.integers(0, 6, 12).astype(float)
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def _rates(n: np.ndarray, w: np.ndarray):
    def f(weights):
        return (weights @ w) / (weights @ n)

    return f


def test_bootstrap_of_a_certain_order_is_that_order():
    # Three clusters, two items: item 0 wins everything in tier a and loses everything in tier b, item 1
    # the opposite. Every resample keeps the orders: tau and rho are -1 in every one of them.
    n = np.ones((3, 2))
    a, b = np.array([[1, 0]] * 3, float), np.array([[0, 1]] * 3, float)
    got = bootstrap_agreement(_rates(n, a), _rates(n, b), 3, resamples=200, seed=1)
    assert (got["tau_low"], got["tau_high"], got["rho_low"], got["rho_high"]) == (-1, -1, -1, -1)
    same = bootstrap_agreement(_rates(n, a), _rates(n, a), 3, resamples=200, seed=1)
    assert (same["tau_low"], same["tau_high"]) == (1, 1)


def test_bootstrap_is_seeded_and_resamples_clusters():
    rng = np.random.default_rng(0)
    n = np.ones((40, 6))
    wa = (rng.random((40, 6)) < np.linspace(0.3, 0.7, 6)).astype(float)
    wb = (rng.random((40, 6)) < np.linspace(0.3, 0.7, 6)).astype(float)
    one = bootstrap_agreement(_rates(n, wa), _rates(n, wb), 40, resamples=300, seed=7)
    assert one == bootstrap_agreement(_rates(n, wa), _rates(n, wb), 40, resamples=300, seed=7)
    assert one != bootstrap_agreement(_rates(n, wa), _rates(n, wb), 40, resamples=300, seed=8)
    assert -1 <= one["tau_low"] < one["tau_high"] <= 1 and -1 <= one["rho_low"] < one["rho_high"] <= 1


# -- verdicts on synthetic tier runs -----------------------------------------------------------------


def test_verdict_words():
    assert verdict({"greedy": "above", "search": "above"}) == "holds under every tier"
    assert verdict({"greedy": "above", "search": None}) == "only under greedy"
    assert verdict({"a": "above", "b": None, "c": "below"}) == "only under a (above), c (below)"
    assert verdict({"a": "above", "b": "below"}).startswith("flagged under every tier, in different directions")


def test_a_flag_held_by_one_tier_only_is_marked_so(tmp_path):
    run = tier_run(tmp_path / "tiers-a", {"greedy": 170, "search": 170, "ismcts": 100})
    assert is_tier_run(run) and not is_tier_run(f"{run}#greedy")
    study = tier_study(run, resamples=100)
    f = study.tables["flags"].set_index("name")
    assert set(f.index) == set(T1) | set(T2)  # 85% and 15%: outside the band
    assert set(f["verdict"]) == {"only under greedy, search"}
    assert list(f.loc["Fire", ["greedy_flag", "search_flag", "ismcts_flag"]]) == ["above", "above", ""]
    assert not f["holds_under_every_tier"].any()
    held = tier_study(tier_run(tmp_path / "tiers-b", {"greedy": 170, "search": 165}), resamples=100)
    assert set(held.tables["flags"]["verdict"]) == {"holds under every tier"}
    # the protocols side by side, and their agreement: T1's three protocols tie, so do T2's
    p = study.tables["protocols"]
    assert p[(p["tier"] == "ismcts") & (p["protocol"] == "Fire")]["win_rate"].item() == pytest.approx(0.5)
    a = study.tables["agreement"]
    assert list(zip(a["tier_a"], a["tier_b"], strict=True)) == [
        ("greedy", "search"),
        ("greedy", "ismcts"),
        ("search", "ismcts"),
    ]
    assert a.iloc[0]["kendall_tau"] == pytest.approx(1.0) and a.iloc[0]["items"] == 6
    assert [b["arm"] for b in study.meta["provenance"]] == ["greedy", "search", "ismcts"]


def test_tier_report_and_dashboard_commands(tmp_path, capsys):
    run = tier_run(tmp_path / "tiers-c", {"greedy": 170, "search": 100})
    assert main(["report", str(run)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Rank agreement between tiers" in out and "only under greedy" in out
    assert "Produced by tiers-c#greedy: tier greedy, strategies: greedy on both seats" in out
    assert main(["report", str(run), "--format", "csv", "--table", "flags"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Produced by tiers-c#greedy")
    flags = pd.read_csv(__import__("io").StringIO(text), comment="#")
    assert set(flags["verdict"]) == {"only under greedy"}
    assert main(["report", str(run), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["tiers"] == ["greedy", "search"] and data["meta"]["bootstrap"]["resamples"] == 1000
    assert main(["report", str(run), "--table", "nope"]) == 2
    assert "agreement" in capsys.readouterr().err
    page = tmp_path / "t.html"
    assert main(["dashboard", str(run), "--out", str(page)]) == 0
    html = page.read_text()
    assert "tier study" in html and "only under greedy" in html and "strategies: search on both seats" in html


# -- the card flag: a card against its own protocol's other cards ------------------------------------


def cards(rows):
    return pd.DataFrame([{"card": c, "protocol": c.split()[0], "up": n, "up_wins": w} for c, n, w in rows])


def test_a_protocol_whose_cards_are_all_strong_flags_no_card():
    strong = cards([(f"Fire {v}", 1000, 700) for v in range(6)])
    f = flag_table(card_items(strong))
    assert not f["flagged"].any() and (f["difference"] == 0).all()
    # a band test would have flagged all six (70%, n = 1000): that is the protocol, not the card
    as_band = flag_table(
        strong.rename(columns={"card": "name", "up": "games", "up_wins": "wins"}).assign(kind="card", metric="x")
    )
    assert as_band["flagged"].all()


def test_one_outlier_card_is_the_one_flagged():
    rows = [(f"Fire {v}", 1000, 600) for v in range(5)] + [("Fire 5", 1000, 750)]
    rows += [(f"Water {v}", 1000, 480) for v in range(6)]
    f = flag_table(card_items(cards(rows))).set_index("name")
    assert list(f.index[f["flagged"]]) == ["Fire 5"]
    r = f.loc["Fire 5"]
    assert r["direction"] == "above" and r["baseline_rate"] == pytest.approx(0.6)
    assert r["difference"] == pytest.approx(0.15) and r["difference_low"] > 0
    assert r["versus"] == "other cards of Fire" and "other cards of their protocol" in f.attrs["statement"]


# -- the spec key ------------------------------------------------------------------------------------

BASE = {"name": "t", "seed": 1, "games": 2, "seats": {"swap": True}}


def spec(**extra):
    return parse_spec({**BASE, **extra}, "study.toml", Path("."))


def test_tiers_are_arms_marked_as_tiers_and_survive_a_resume():
    s = spec(tiers=["greedy", "ismcts:iters=300", {"name": "mixed", "strategies": ["greedy", "search"]}])
    assert [(a.name, a.strategies, a.tier) for a in s.arms] == [
        ("greedy", ("greedy", "greedy"), True),
        ("ismcts-iters-300", ("ismcts:iters=300",) * 2, True),
        ("mixed", ("greedy", "search"), True),
    ]
    d = s.to_dict()
    assert d["tiers"] == ["greedy", "ismcts-iters-300", "mixed"]
    assert parse_spec(d, "run.json", Path("."), card_texts={}, within="spec").hash == s.hash
    assert "tiers" not in spec(arms=[{"name": "a"}, {"name": "b"}]).to_dict()


@pytest.mark.parametrize(
    "extra, key, words",
    [
        ({"tiers": ["greedy"]}, "tiers", "2 to 32 tiers"),
        ({"tiers": "greedy"}, "tiers", "2 to 32 tiers"),
        ({"tiers": ["greedy", "greedy"]}, "tiers[1]", "not used by another tier"),
        ({"tiers": ["greedy", "nosuchbot"]}, "tiers[1]", "nosuchbot"),
        ({"tiers": ["greedy", {"name": "x"}]}, "tiers[1]", "exactly one of strategy"),
        ({"tiers": ["greedy", {"strategy": "search", "typo": 1}]}, "tiers[1].typo", "unknown key"),
        ({"tiers": ["greedy", {"name": "a b", "strategy": "search"}]}, "tiers[1].name", "letters, digits"),
        ({"tiers": ["greedy", "search"], "arms": [{"name": "a"}]}, "tiers", "not both"),
        (
            {"tiers": ["greedy", "search"], "seats": {"swap": True, "strategies": ["greedy", "greedy"]}},
            "seats.strategies",
            "each tier names its strategies",
        ),
    ],
)
def test_bad_tiers_are_one_line_errors(extra, key, words):
    with pytest.raises(SpecError) as e:
        spec(**extra)
    assert str(e.value).startswith(f"study.toml: key '{key}':") and words in str(e.value)


def test_cluster_numbering_does_not_follow_row_order():
    # DuckDB's threads return a query's rows in any order: the clusters the bootstrap draws by number
    # must be numbered the same whatever order the per-cluster rows arrive in.
    rng = np.random.default_rng(5)
    rows = [
        {"matchup": m, "seed": s, "item": it, "n": int(rng.integers(1, 5)), "w": 0}
        for m in ("x", "y")
        for s in range(30)
        for it in ("P", "Q")
    ]
    frame = pd.DataFrame(rows)
    frame["w"] = [int(rng.integers(0, n + 1)) for n in frame["n"]]
    ordered = cells({"t1": frame, "t2": frame})
    shuffled = frame.sample(frac=1, random_state=3).reset_index(drop=True)
    again = cells({"t1": shuffled, "t2": shuffled.sample(frac=1, random_state=4)})
    assert ordered.clusters == again.clusters == 60
    for tier in ("t1", "t2"):
        assert np.array_equal(ordered.n[tier], again.n[tier]) and np.array_equal(ordered.w[tier], again.w[tier])
