"""The metagame (analysis/studies/balance/meta.py and solvers.py, protolab/experiment/meta/psro.py):
known answers for the solvers, the payoff model on data whose true effects are known, `protolab meta` on a synthetic
run, and the PSRO loop on a tiny spec (one small Ray run per iteration)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures_analysis.matchups import synthetic_matchups
from fixtures_analysis.round_robin import round_robin_rows
from fixtures_analysis.synth import write_run

from analysis.studies.balance import meta as M
from analysis.studies.balance import solvers as G
from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)


# -- solvers ------------------------------------------------------------------------------------------


def test_rock_paper_scissors_is_uniform_for_nash_and_alpha_rank():
    assert np.allclose(G.nash_equilibrium(RPS), 1 / 3)
    assert np.allclose(G.alpha_rank(RPS, alpha=5, population=20), 1 / 3)
    assert G.exploitability(RPS, np.full(3, 1 / 3)) == pytest.approx(0)
    assert G.exploitability(RPS, np.array([1.0, 0, 0])) == pytest.approx(1)


def test_biased_rps_has_its_computed_mixed_equilibrium():
    # rock beats scissors by 2: M x = 0 gives x = (1, 2, 1) / 4
    m = np.array([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], dtype=float)
    x = G.nash_equilibrium(m)
    assert np.allclose(x, [0.25, 0.5, 0.25], atol=1e-7)
    assert np.allclose(G.nash_ratings(m, x), 0, atol=1e-7)


def test_a_dominated_strategy_gets_no_weight_and_a_negative_rating():
    # RPS plus a fourth strategy that loses to everything
    m = np.zeros((4, 4))
    m[:3, :3] = RPS
    m[3, :3], m[:3, 3] = -0.5, 0.5
    x = G.maxent_equilibrium(m, G.nash_equilibrium(m))
    assert x[3] == pytest.approx(0, abs=1e-9)
    assert np.allclose(x[:3], 1 / 3, atol=1e-6)
    assert G.nash_ratings(m, x)[3] == pytest.approx(-0.5)
    assert G.alpha_rank(m)[3] < 1e-6


def test_maxent_picks_the_uniform_one_of_many_equilibria():
    m = np.zeros((3, 3))  # every mixture is an equilibrium
    x = G.nash_equilibrium(m)
    assert np.allclose(G.maxent_equilibrium(m, x), 1 / 3, atol=1e-4)


def test_double_oracle_solves_a_large_game(monkeypatch):
    rng = np.random.default_rng(4)
    s = rng.normal(size=60)
    m = G.antisymmetric(np.tanh(s[:, None] - s[None, :] + 0.8 * rng.normal(size=(60, 60))))
    full = G.nash_equilibrium(m)
    monkeypatch.setattr(G, "FULL_LP_LIMIT", 10)
    oracle = G.nash_equilibrium(m, start=[0, 1])
    assert G.exploitability(m, oracle) < 1e-7 and G.exploitability(m, full) < 1e-7


def test_alpha_rank_follows_a_transitive_order():
    s = np.array([0.3, 0.1, -0.2])
    pi = G.alpha_rank(G.antisymmetric(np.tanh(s[:, None] - s[None, :])), alpha=50)
    assert pi[0] > 0.99


def test_fixation_is_neutral_at_zero_and_stable_far_out():
    rho = G.fixation_probability(np.array([0.0, 1.0, -1.0]), alpha=1000, population=50)
    assert rho[0] == pytest.approx(1 / 50) and rho[1] == pytest.approx(1) and 0 <= rho[2] < 1e-300 + 1e-12


# -- the payoff model ----------------------------------------------------------------------------------


def test_the_model_recovers_known_effects_and_beats_protocol_effects_only():
    # protocol, synergy and counter effects are only identified together (a counter that favours one
    # protocol against all is a protocol effect), so the test compares what they predict: every logit
    df, u, truth = synthetic_matchups(games=300)
    model = M.fit_payoff_model(df, u, pair_l2=3.0)
    ia, ib = u.index(df["trio_a"]), u.index(df["trio_b"])
    error = np.abs(model.logits()[ia, ib] - truth["logit"])
    assert error.mean() < 0.1 and error.max() < 0.4
    main_only = M.fit_payoff_model(df, u, main_only=True)
    assert np.abs(main_only.logits()[ia, ib] - truth["logit"]).mean() > 2 * error.mean()
    i = {p: k for k, p in enumerate(u.protocols)}
    assert model.counter[i["Hate"], i["Life"]] > 0.4
    fit, chosen = M.cross_validate(df, u)
    ll = fit.set_index("model")["log_loss"]
    assert ll[f"full, pair L2 {chosen:g}"] < ll["protocol effects only"] < ll["coin flip (50%)"]


def test_the_model_fills_unplayed_pairs_close_to_the_truth():
    df, u, _ = synthetic_matchups(games=60)
    held = np.random.default_rng(9).random(len(df)) < 0.3
    model = M.fit_payoff_model(df[~held], u, pair_l2=3.0)
    out = df[held]
    pred = model.predict(u.index(out["trio_a"]), u.index(out["trio_b"]))
    truth_rate = out["wins"] / out["games"]
    assert np.corrcoef(pred, truth_rate)[0, 1] > 0.9
    p = M.win_matrix(model, df[~held], prior_games=10)
    assert np.allclose(p + p.T, 1) and np.allclose(np.diag(p), 0.5)


def test_meta_analysis_of_a_known_counter_cycle_is_mixed():
    # three protocol blocks in a rock-paper-scissors cycle: the equilibrium must mix them
    df, _, _ = synthetic_matchups(games=30)
    res = M.meta_analysis(df, bootstrap=3, seed=5)
    assert res.trios["nash_probability"].sum() == pytest.approx(1)
    assert res.protocols["nash_weight"].sum() == pytest.approx(3)
    assert res.health["support_size"] >= 1 and "never_used_protocols" in res.health
    assert {"nash_probability_low", "nash_probability_high", "in_support_share"} <= set(res.trios.columns)


def test_bad_inputs_are_refused():
    df, _, _ = synthetic_matchups(games=2)
    with pytest.raises(ValueError, match="bootstrap"):
        M.meta_analysis(df, bootstrap=-1)
    small = pd.DataFrame({"trio_a": ["A, B, C"], "trio_b": ["D, E, F"], "games": [0], "wins": [0], "draws": [0]})
    with pytest.raises(ValueError, match="no decided"):
        M.meta_analysis(small)
    few = pd.DataFrame({"trio_a": ["A, B, C"], "trio_b": ["C, D, E"], "games": [2], "wins": [1], "draws": [0]})
    with pytest.raises(ValueError, match="six protocols"):
        M.meta_analysis(few)


# -- protolab meta on a run ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rr_run(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("meta") / "run", round_robin_rows(), shard_games=200)


def test_protolab_meta_json(rr_run, capsys):
    assert main(["meta", str(rr_run), "--format", "json", "--bootstrap", "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    probs = [t["nash_probability"] for t in out["trios"]]
    assert sum(probs) == pytest.approx(1)
    assert all(t["nash_probability_low"] is not None for t in out["trios"])
    assert sum(t["alpharank"] for t in out["trios"]) == pytest.approx(1)
    assert {"support_size", "effective_protocols", "never_used_protocols"} <= set(out["health"])
    assert out["meta"]["bootstrap"] == 4 and out["fit"][0]["model"] == "coin flip (50%)"
    # the synthetic strengths grow with the protocol's index: the strongest three make the equilibrium
    assert out["trios"][0]["trio"] == "Hate, Life, Light"


def test_trio_scores_is_a_stable_public_table(rr_run):
    t = M.trio_scores(rr_run)
    assert list(t.columns[:4]) == ["trio", "games", "wins", "win_rate"]
    assert len(t) == 56 and t["uniform_win_rate"].is_monotonic_decreasing
    assert {"protocol", "nash_weight", "effect"} <= set(M.protocol_scores(rr_run).columns)


def test_protolab_meta_table_csv_and_compare(rr_run, capsys):
    assert main(["meta", str(rr_run), "--bootstrap", "0"]) == 0
    assert "Effective number of viable protocols" in capsys.readouterr().out
    assert main(["meta", str(rr_run), "--bootstrap", "0", "--format", "csv", "--table", "trios"]) == 0
    assert capsys.readouterr().out.startswith("trio,")
    assert main(["meta", str(rr_run), "--bootstrap", "0", "--compare", str(rr_run), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["compare"]["protocol_tv"] == pytest.approx(0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bootstrap", "-1"], "--bootstrap"),
        (["--table", "nope", "--format", "csv"], "--table"),
        (["--population", "1"], "--population"),
        (["--rank-alpha", "0"], "--rank-alpha"),
    ],
)
def test_protolab_meta_bad_options(rr_run, capsys, args, message):
    assert main(["meta", str(rr_run), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_protolab_meta_of_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["meta", str(tmp_path)]) == 2
    assert "protolab: error:" in capsys.readouterr().err


def test_the_dashboard_has_a_metagame_section(rr_run):
    from analysis.runs.open import open_runs
    from analysis.studies.balance.dashboard import metagame_html
    from analysis.studies.balance.report import build_report

    runs = open_runs(rr_run)
    html = metagame_html(build_report(runs, only=["trio_matchups"]))
    runs.close()
    assert "Metagame" in html and "Hate, Life, Light" in html


# -- the spec's [meta] table and the loop -------------------------------------------------------------


def _spec(
    tmp_path: Path,
    meta: str,
    draft: str = 'mode = "round_robin"\nprotocols = ["Darkness", "Death", "Fire", '
    '"Gravity", "Life", "Light", "Psychic", "Water"]',
) -> Path:
    p = tmp_path / "loop.toml"
    p.write_text(
        f'name = "loop"\nseed = 3\ngames = 2\nevents = false\n[pool]\nsets = ["Main 1"]\n'
        f'[seats]\nstrategies = ["greedy", "greedy"]\nswap = true\n[draft]\n{draft}\n[meta]\n{meta}\n'
    )
    return p


@pytest.mark.parametrize(
    "meta, draft, message",
    [
        ('mode = "nash"', None, "meta.mode"),
        ("iterations = 0", None, "meta.iterations"),
        ("epsilon = -1", None, "meta.epsilon"),
        ("bogus = 1", None, "meta.bogus"),
        ("iterations = 2", 'mode = "sampled"\nsamples = 5', "draft.mode"),
    ],
)
def test_meta_table_errors_name_the_key(tmp_path, meta, draft, message):
    from protolab.experiment.spec import SpecError, load_spec

    with pytest.raises(SpecError, match=message.replace(".", r"\.")):
        load_spec(_spec(tmp_path, meta, draft) if draft else _spec(tmp_path, meta))


def test_a_loop_spec_is_not_played_as_one_run(tmp_path):
    from protolab.experiment.run.runner import RunOptions, prepare
    from protolab.experiment.spec import SpecError

    with pytest.raises(SpecError, match="metagame loop"):
        prepare(str(_spec(tmp_path, "iterations = 2")), RunOptions())


def test_psro_loop_stops_by_itself_and_reports_its_iterations(tmp_path, capsys):
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    spec = _spec(tmp_path, "iterations = 3\nstart = 4\nresponses = 1")
    status = main(["run", str(spec), "--workers", "1", "--out", str(tmp_path / "out"), "--no-progress"])
    assert status == 0
    loops = list((tmp_path / "out").glob("loop-psro-*"))
    assert len(loops) == 1
    manifest = json.loads((loops[0] / "meta.json").read_text())
    its = manifest["iterations"]
    assert 1 <= len(its) <= 3 and manifest["stopped"]
    assert all({"support", "exploitability", "added", "games"} <= set(it) for it in its)
    assert its[-1]["added"] == [] and all(it["added"] for it in its[:-1])
    capsys.readouterr()
    assert main(["meta", str(loops[0]), "--format", "json", "--bootstrap", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["iterations"]) == len(its)
    assert sum(t["nash_probability"] for t in out["trios"]) == pytest.approx(1)
    # the loop folder is a study of its own (analysis/studies/metagame/study.py): `run` ended with its page,
    # and report and dashboard read it
    assert "<h1>protolab metagame loop: loop-psro-" in (loops[0] / "dashboard.html").read_text()
    assert main(["report", str(loops[0]), "--format", "csv", "--table", "iterations"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    assert list(table["iteration"]) == [it["iteration"] for it in its]
    assert main(["report", str(loops[0]), "--table", "agreement"]) == 2
    assert "unknown table 'agreement'; tables: protocols, trios, fit, iterations" in capsys.readouterr().err
    assert main(["dashboard", str(loops[0]), "--out", str(tmp_path / "loop.html")]) == 0
    assert "Loop iterations" in (tmp_path / "loop.html").read_text()


def test_protolab_meta_of_a_drafted_run_has_pick_metrics(draft_run, capsys):
    """A run that drafted (the fitted-draft example): `meta` adds the draft's pick metrics."""
    assert main(["meta", str(draft_run), "--format", "json", "--bootstrap", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    picks = {r["protocol"]: r for r in out["draft"]["picks"]}
    assert sum(r["picks"] for r in picks.values()) == 6 * 40  # six picks in each of the 40 games
    assert {r["picker"] for r in out["draft"]["first_pick"]} == {"first", "second"}
    assert main(["meta", str(draft_run), "--format", "csv", "--table", "picks", "--bootstrap", "0"]) == 0
    header = next(ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#"))
    assert "avg_position" in header.split(",") and "pick_rate" in header.split(",")
