"""Paired protocol gaps against the top tier (analysis/studies/tiers/gaps.py): the paired cluster bootstrap
against the delta-method variances of analysis/stats/proportions.py and against the same data with its pairing
broken, gaps made by construction, the summary's yes and no at the tolerance and the interval target,
and the table in the terminal, JSON, CSV and page of a tier study, synthetic and played."""

import io
import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from fixtures_analysis.known import T1
from fixtures_analysis.tiers import tier_run

from analysis.runs.schema import PROTOCOL_COLUMNS
from analysis.stats.proportions import Z95, paired_rate_diff_clusters
from analysis.studies.tiers.gaps import INTERVAL, TITLE, TOLERANCE, gap_table, summary
from analysis.studies.tiers.report import tier_study
from protolab.cli import main
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ITEMS = ["P", "Q", "R", "S", "T"]


def correlated(clusters: int, seed: int) -> tuple[dict, dict]:
    """Seat-swapped pairs (two games a cluster) whose every protocol has a matchup probability of 15%
    or 85% that both tiers share, each tier's results drawn apart from it: the two tiers' results
    correlate (rho = 0.35^2 / 0.25 = 0.49), as on shared seeds and drafts."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random((clusters, len(ITEMS))) < 0.5, 0.15, 0.85)
    n = np.full((clusters, len(ITEMS)), 2.0)
    w = {t: rng.binomial(2, p).astype(float) for t in ("cheap", "top")}
    return {"cheap": n, "top": n.copy()}, w


def test_the_paired_interval_is_the_paired_variance_and_narrower_than_unpaired():
    n, w = correlated(400, seed=1)
    paired = gap_table(ITEMS, n, w, ["cheap", "top"], resamples=1000, seed=3).set_index("protocol")
    # the same counts with the top tier's clusters shuffled: every rate as before, the pairing broken
    perm = np.random.default_rng(2).permutation(400)
    broken = gap_table(
        ITEMS, n, {"cheap": w["cheap"], "top": w["top"][perm]}, ["cheap", "top"], resamples=1000, seed=3
    ).set_index("protocol")
    assert np.allclose(paired["difference"], broken["difference"])
    assert (paired["half_width"] < 0.85 * broken["half_width"]).all()
    for j, item in enumerate(ITEMS):
        ref = paired_rate_diff_clusters(n["top"][:, j], w["top"][:, j], n["cheap"][:, j], w["cheap"][:, j])
        r = paired.loc[item]
        assert r["difference"] == pytest.approx(ref["change"], abs=1e-12)
        assert r["win_rate"] == pytest.approx(w["cheap"][:, j].sum() / 800) and r["games"] == 800
        assert r["half_width"] == pytest.approx(Z95 * ref["se"], rel=0.15)
        assert broken.loc[item, "half_width"] == pytest.approx(Z95 * ref["se_unpaired"], rel=0.15)
        assert r["difference_low"] < r["difference"] < r["difference_high"]


def test_the_bootstrap_is_seeded():
    n, w = correlated(60, seed=4)
    one = gap_table(ITEMS, n, w, ["cheap", "top"], resamples=200, seed=7)
    pd.testing.assert_frame_equal(one, gap_table(ITEMS, n, w, ["cheap", "top"], resamples=200, seed=7))
    other = gap_table(ITEMS, n, w, ["cheap", "top"], resamples=200, seed=8)
    assert list(one["difference"]) == list(other["difference"])
    assert list(one["difference_low"]) != list(other["difference_low"])


def identical_but(items: list[str], extra: dict[str, int], clusters: int = 100, seed: int = 0):
    """Two tiers with the same results in every cluster, except that the cheap tier wins extra[item]
    more of the item's games (clusters the top tier lost): one game a cluster."""
    rng = np.random.default_rng(seed)
    n = np.ones((clusters, len(items)))
    top = (rng.random((clusters, len(items))) < 0.5).astype(float)
    cheap = top.copy()
    for item, k in extra.items():
        j = items.index(item)
        cheap[np.flatnonzero(top[:, j] == 0)[:k], j] = 1
    return {"cheap": n, "top": n.copy()}, {"cheap": cheap, "top": top}


def test_a_protocol_moved_by_construction_is_reported_with_its_gap():
    n, w = identical_but(ITEMS, {"R": 7})
    g = gap_table(ITEMS, n, w, ["cheap", "top"], resamples=300).set_index("protocol")
    assert list(g.index)[0] == "R"  # the largest gap first
    assert g.loc["R", "difference"] == pytest.approx(0.07)
    assert g.loc["R", "difference_low"] >= 0  # no cluster lost by the cheap tier only
    assert g.loc["R", "half_width"] > 0
    same = g.drop(index="R")
    assert (same["difference"] == 0).all() and (same["half_width"] == 0).all()
    (s,) = summary(g.reset_index())
    assert s["largest_gap_protocol"] == "R" and s["largest_gap"] == pytest.approx(0.07)
    assert s["line"].startswith("cheap vs top: largest gap 7.0 points (R), widest interval ±")
    assert "within 3 points everywhere: no" in s["line"]


def test_the_summary_flips_at_the_tolerance_and_the_interval():
    n, w = identical_but(ITEMS, {"Q": 3})  # 3 points exactly, 100 games a protocol
    g = gap_table(ITEMS, n, w, ["cheap", "top"], resamples=300)
    (at,) = summary(g)
    assert (at["tolerance"], at["interval"]) == (TOLERANCE, INTERVAL) == (0.03, 0.02)
    assert at["within_tolerance"] and at["largest_gap"] == pytest.approx(0.03)
    assert "largest gap 3.0 points (Q)" in at["line"] and "within 3 points everywhere: yes" in at["line"]
    (under,) = summary(g, tolerance=0.029)
    assert not under["within_tolerance"] and "within 2.9 points everywhere: no" in under["line"]
    widest = at["widest_half_width"]
    assert widest == pytest.approx(g["half_width"].max()) and at["widest_protocol"] == "Q"
    (wide,) = summary(g, interval=widest)
    assert wide["intervals_within"] and wide["meets_target"]
    (narrow,) = summary(g, interval=widest - 0.001)
    assert not narrow["intervals_within"] and not narrow["meets_target"] and narrow["within_tolerance"]
    assert f"widest interval ±{widest * 100:.1f} points (Q)" in narrow["line"]
    # a protocol the cheap tier never played cannot be said to agree
    n["cheap"][:, ITEMS.index("T")] = 0
    w["cheap"][:, ITEMS.index("T")] = 0
    (missing,) = summary(gap_table(ITEMS, n, w, ["cheap", "top"], resamples=100))
    assert not missing["within_tolerance"] and missing["protocols"] == 4
    assert missing["line"].endswith("; 1 protocol without games under both tiers")


# -- a tier study: synthetic, then played ---------------------------------------------------------------


def test_each_tier_against_the_last_in_every_output(tmp_path, capsys):
    # greedy's T1 wins 120 of the 200 shared seeds, search's 100, ismcts's (the top tier) 110
    run = tier_run(tmp_path / "tiers-gaps", {"greedy": 120, "search": 100, "ismcts": 110})
    study = tier_study(run)  # the report's own 1,000 resamples: its lines are the CLI's
    g = study.tables["gaps"]
    assert list(dict.fromkeys(g["tier"])) == ["greedy", "search"] and set(g["reference"]) == {"ismcts"}
    p = study.tables["protocols"].set_index(["tier", "protocol"])
    for r in g.itertuples():
        assert r.win_rate == pytest.approx(p.loc[(r.tier, r.protocol), "win_rate"])
        assert r.reference_win_rate == pytest.approx(p.loc[("ismcts", r.protocol), "win_rate"])
        assert r.games == r.reference_games == 200
        sign = 1 if r.protocol in T1 else -1
        assert r.difference == pytest.approx(sign * (0.05 if r.tier == "greedy" else -0.05))
        # greedy wins every seed ismcts wins, and 10 more: no paired resample shows it behind
        assert (sign * r.difference_low >= 0) if r.tier == "greedy" else (sign * r.difference_high <= 0)
    lines = [s["line"] for s in study.meta["gaps"]["summary"]]
    assert [x.split(":")[0] for x in lines] == ["greedy vs ismcts", "search vs ismcts"]
    assert all("largest gap 5.0 points" in x and "within 3 points everywhere: no" in x for x in lines)

    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert TITLE in out and all(x in out.splitlines() for x in lines)
    assert main(["report", str(run), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["gaps"]["reference"] == "ismcts" and len(data["tables"]["gaps"]) == 12
    assert [s["line"] for s in data["meta"]["gaps"]["summary"]] == lines
    assert main(["report", str(run), "--format", "csv", "--table", "gaps"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    assert list(csv.columns)[:6] == ["tier", "reference", "protocol", "win_rate", "reference_win_rate", "difference"]
    assert sorted(csv["difference"].round(6).abs().unique()) == [0.05]
    assert main(["report", str(run), "--format", "csv", "--out", str(tmp_path / "csv")]) == 0
    assert (tmp_path / "csv" / "gaps.csv").is_file()
    page = tmp_path / "t.html"
    assert main(["dashboard", str(run), "--out", str(page)]) == 0
    html = page.read_text()
    assert TITLE in html and "greedy vs ismcts: largest gap 5.0 points" in html


SPEC = """
name = "gaps"
seed = 9
games = 40
shard_games = 40
turn_cap = 60
tiers = ["random", "greedy"]
[pool]
sets = ["Main 1", "Aux 1"]
[seats]
swap = true
"""


def test_a_played_tier_study_matches_its_parquet_files(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SPEC)
    res = run(str(tmp_path / "s.toml"), RunOptions(workers=1, out=str(tmp_path / "runs"), show_progress=False))
    assert res.status == "complete"
    counts = (
        duckdb.sql(f"""
        select arm::varchar as tier, protocol::varchar as protocol, count(*) filter (where winner >= 0) as n,
               count(*) filter (where winner = seat) as w
        from (select arm, winner, unnest([{", ".join(PROTOCOL_COLUMNS)}]) as protocol,
                     unnest([0, 0, 0, 1, 1, 1]) as seat from read_parquet('{res.run_dir}/games/*.parquet'))
        group by all""")
        .df()
        .set_index(["tier", "protocol"])
    )
    study = tier_study(res.run_dir, resamples=200)
    g = study.tables["gaps"].set_index("protocol")
    assert set(g.index) == set(counts.loc["greedy"].index) and set(g["tier"]) == {"random"}
    for protocol, r in g.iterrows():
        mine, top = counts.loc[("random", protocol)], counts.loc[("greedy", protocol)]
        assert (r["games"], r["reference_games"]) == (mine["n"], top["n"])
        assert r["difference"] == pytest.approx(mine["w"] / mine["n"] - top["w"] / top["n"])
        assert r["difference_low"] <= r["difference_high"]
    (s,) = study.meta["gaps"]["summary"]
    assert s["largest_gap"] == pytest.approx(g["difference"].abs().max())
    assert s["line"].startswith(f"random vs greedy: largest gap {s['largest_gap'] * 100:.1f} points")
