"""Measured strength of a tier study (`[strength]`, protolab/experiment/spec/strength.py and
analysis/studies/tiers/strength.py): the key is parsed strictly and stored so that it reads back exactly; a real
run plays each pair of adjacent tiers head to head in its own arm, seeded, laid out, verified and
replayable like the tiers and never pooled into their findings; the tier report's table, labels and
order warning agree with counts taken from the Parquet files directly."""

import io
import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from analysis.runs import runfolder
from analysis.runs.verify import shard_problem
from analysis.studies.tiers.duels import duel_name
from analysis.studies.tiers.report import tier_study
from analysis.studies.tiers.strength import labels, order_warning
from protolab.cli import main
from protolab.experiment.run.plan import make_plan
from protolab.experiment.run.runner import RunOptions, prepare, run
from protolab.experiment.run.shardloop import dictionaries, make_task
from protolab.experiment.run.shards import play_shard_columns
from protolab.experiment.seeds import game_seeds
from protolab.experiment.spec import SpecError, Strength, load_spec, parse_spec

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

BASE = {"name": "t", "seed": 1, "games": 4, "seats": {"swap": True}, "tiers": ["random", "greedy", "search"]}


def spec(**extra):
    return parse_spec({**BASE, **extra}, "study.toml", Path("."))


def resume(stored):
    return parse_spec(stored, "runs/x/run.json", Path("."), card_texts={}, within="spec")


# -- the key -----------------------------------------------------------------------------------------


def test_each_pair_of_adjacent_tiers_is_one_more_arm():
    s = spec(strength={"games": 6})
    assert [(a.name, a.strategies, a.tier, a.duel, s.arm_games(a)) for a in s.arms] == [
        ("random", ("random", "random"), True, False, 4),
        ("greedy", ("greedy", "greedy"), True, False, 4),
        ("search", ("search", "search"), True, False, 4),
        ("duel:greedy-random", ("greedy", "random"), False, True, 6),
        ("duel:search-greedy", ("search", "greedy"), False, True, 6),
    ]
    assert s.strength == Strength(games=6)
    plan = make_plan(s)
    assert plan.arm_first == (0, 4, 8, 12, 18) and plan.total_games == 24
    assert [(p.arm, p.first_game, p.games) for p in plan.shards] == [
        (0, 0, 4),
        (1, 4, 4),
        (2, 8, 4),
        (3, 12, 6),
        (4, 18, 6),
    ]
    assert plan.arm_of(12) == (3, 0) and plan.arm_of(23) == (4, 5) and plan.arm_of(11) == (2, 3)


def test_the_stored_form_reads_back_exactly():
    s = spec(strength={"games": 6})
    stored = json.loads(json.dumps(s.to_dict()))
    assert stored["strength"] == {"games": 6} and stored["tiers"] == ["random", "greedy", "search"]
    assert [a["name"] for a in stored["arms"]][3:] == ["duel:greedy-random", "duel:search-greedy"]
    again = resume(stored)
    assert again == s and again.hash == s.hash and again.to_dict() == stored
    assert s.hash != spec().hash and s.hash != spec(strength={"games": 8}).hash


@pytest.mark.parametrize(
    "path, value, key",
    [
        (("arms", 4, "strategies"), ["greedy", "search"], "spec.arms[4].strategies[0]"),
        (("arms", 3, "name"), "duel:x", "spec.arms[3].name"),
        (("strength",), {"games": 6, "more": 1}, "spec.strength.more"),
    ],
)
def test_an_edited_stored_strength_is_refused_naming_the_key(path, value, key):
    stored = json.loads(json.dumps(spec(strength={"games": 6}).to_dict()))
    node = stored
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(SpecError) as e:
        resume(stored)
    assert str(e.value).startswith(f"runs/x/run.json: key '{key}':") and "\n" not in str(e.value)


def test_the_hash_of_a_spec_without_strength_is_unchanged():
    # recorded before [strength] existed: a run started then resumes with the same spec_hash
    assert spec(tiers=["random", "greedy"], games=2).hash == "eb9ac795b83affff"
    # the shipped examples' hashes since their judge became learned (issue 35; greedy before: 3a507748811b1674,
    # 40e8c48172b7c5d3)
    assert load_spec("demo").hash == "c53954c575f1027d" and load_spec("fire1_ab").hash == "cb8915b949b71acd"
    assert "strength" not in spec().to_dict()


@pytest.mark.parametrize(
    "extra, key, words",
    [
        ({"strength": {"games": 6, "gmaes": 2}}, "strength.gmaes", "unknown key; expected one of: games"),
        ({"strength": {}}, "strength.games", "missing"),
        ({"strength": {"games": 7}}, "strength.games", "even number"),
        ({"strength": {"games": 0}}, "strength.games", "at least 2"),
        ({"strength": {"games": 10**10}}, "strength.games", "at most 1,000,000,000"),
        ({"strength": {"games": "400"}}, "strength.games", "whole number"),
        ({"strength": {"games": True}}, "strength.games", "whole number"),
        ({"strength": 400}, "strength", "expected a table"),
        ({"tiers": None, "strength": {"games": 6}}, "strength", "expected a tier study"),
        ({"seats": {"swap": False}, "strength": {"games": 6}}, "seats.swap", "expected true with [strength]"),
        ({"draft": {"mode": "round_robin"}, "strength": {"games": 6}}, "draft.mode", 'expected "random"'),
        (
            {"tiers": ["greedy", {"name": "mixed", "strategies": ["greedy", "search"]}], "strength": {"games": 6}},
            "tiers[1]",
            "one strategy on both seats",
        ),
    ],
)
def test_bad_strength_is_a_one_line_error_naming_file_and_key(extra, key, words):
    raw = {**BASE, **extra}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(SpecError) as e:
        parse_spec(raw, "study.toml", Path("."))
    msg = str(e.value)
    assert msg.startswith(f"study.toml: key '{key}':") and words in msg and "\n" not in msg, msg


# -- the labels and the warning, by hand ---------------------------------------------------------------


def _table(rows):
    return pd.DataFrame(
        [
            {"upper": u, "lower": lo, "games": n, "win_rate": r, "win_rate_low": a, "win_rate_high": b}
            for u, lo, n, r, a, b in rows
        ]
    )


def test_labels_carry_each_tiers_measured_strength():
    t = _table([("learned", "greedy", 1000, 0.75, 0.72, 0.78), ("search", "learned", 1000, 0.61, 0.58, 0.64)])
    assert labels(["greedy", "learned", "search"], t) == {
        "greedy": "greedy (25% vs learned)",
        "learned": "learned (75% vs greedy)",
        "search": "search (61% vs learned)",
    }
    assert order_warning(t) is None
    # below 50% but the interval reaches 50%: not a contradiction
    assert order_warning(_table([("a", "b", 100, 0.45, 0.35, 0.55)])) is None
    said = order_warning(_table([("learned", "search", 1000, 0.39, 0.36, 0.42), ("x", "y", 10, 0.1, 0.0, 0.4)]))
    assert (
        said.startswith(
            "the listed order is not the measured one: learned wins 39.0% (36.0%-42.0%) of 1,000 "
            "games against search, listed below it; x wins"
        )
        and "\n" not in said
    )


# -- a real run --------------------------------------------------------------------------------------

SPEC = """
name = "strength"
seed = 5
games = 10
shard_games = 10
turn_cap = 60
tiers = ["random", "greedy", { name = "random-again", strategy = "random" }]
[strength]
games = 20
[pool]
sets = ["Main 1", "Aux 1"]
[seats]
swap = true
"""
TIERS = ["random", "greedy", "random-again"]


@pytest.fixture(scope="module")
def strength_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("strength")
    (d / "s.toml").write_text(SPEC)
    res = run(str(d / "s.toml"), RunOptions(workers=1, out=str(d / "runs"), show_progress=False))
    assert res.status == "complete" and res.games == 3 * 10 + 2 * 20
    return res.run_dir


def _sql(run_dir: Path, query: str) -> pd.DataFrame:
    return duckdb.sql(query.replace("GAMES", f"read_parquet('{run_dir}/games/*.parquet')")).df()


def _upper_wins(run_dir: Path) -> dict[str, tuple[int, int, int]]:
    """Per duel arm (games, upper wins, draws), from the strategy columns: the upper tier's strategy
    is the arm's seat-0 strategy in every even game."""
    d = _sql(
        run_dir,
        """select arm::varchar as arm, count(*) as n,
                 count(*) filter (where winner >= 0 and (winner = 0) = (game_in_matchup % 2 = 0)) as up,
                 count(*) filter (where winner < 0) as draws from GAMES where arm::varchar like 'duel:%' group by 1""",
    )
    return {r.arm: (int(r.n), int(r.up), int(r.draws)) for r in d.itertuples()}


def test_the_pairs_play_head_to_head_on_the_tiers_seeds(strength_run):
    g = _sql(
        strength_run,
        "select arm::varchar as arm, game_in_matchup, seed, strategy_0::varchar as s0, "
        "strategy_1::varchar as s1 from GAMES",
    )
    duel = g[g["arm"] == "duel:greedy-random"].sort_values("game_in_matchup")
    assert len(duel) == 20 and list(duel["game_in_matchup"]) == list(range(20))
    assert set(zip(duel["s0"], duel["s1"], strict=True)) == {("greedy", "random"), ("random", "greedy")}
    assert (duel[duel["game_in_matchup"] % 2 == 0]["s0"] == "greedy").all()
    # seeded like every other game: (master seed, matchup 0, game) with seats swapped on pairs
    assert list(duel["seed"]) == [int(x) for x in game_seeds(5, np.zeros(20), np.arange(20), True)]
    tier = g[g["arm"] == "greedy"].sort_values("game_in_matchup")
    assert list(tier["seed"]) == list(duel["seed"])[:10]


def test_a_duel_shard_replays_to_its_stored_rows_and_resumes(strength_run):
    plan, run_dir, manifest = prepare(None, RunOptions(resume=str(strength_run)))
    assert manifest.complete and [a.name for a in plan.spec.arms][3:] == [
        "duel:greedy-random",
        "duel:random-again-greedy",
    ]
    entry = next(e for e in manifest.shards if e.arm == "duel:random-again-greedy")
    shard = next(s for s in plan.shards if s.index == entry.index)
    cols, _, facts = play_shard_columns(make_task(plan, shard, manifest.run_id, run_dir, "", dictionaries(plan)))
    stored = pq.read_table(runfolder.shard_paths(strength_run, shard.name)["games"]).to_pandas()
    assert list(stored["winner"]) == [int(w) if w in (0, 1) else -1 for w in cols["winner"]]
    assert list(stored["game_in_matchup"]) == list(facts["game"])
    assert shard_problem(strength_run, entry) is None
    assert main(["replay", f"{strength_run}#duel:random-again-greedy", "--game", "13"]) == 0


def test_the_report_measures_the_order_apart_from_the_findings(strength_run, capsys):
    counts = _upper_wins(strength_run)
    study = tier_study(strength_run, resamples=50)
    s = study.tables["strength"].set_index("arm")
    assert list(s.index) == [duel_name("greedy", "random"), duel_name("random-again", "greedy")]
    for arm, (n, up, draws) in counts.items():
        assert (s.loc[arm, "games"], s.loc[arm, "upper_wins"], s.loc[arm, "draws"]) == (n, up, draws)
        assert s.loc[arm, "win_rate"] == pytest.approx((up + draws / 2) / n)
        assert s.loc[arm, "win_rate_low"] <= s.loc[arm, "win_rate"] <= s.loc[arm, "win_rate_high"]
    # the tiers' findings hold only the tiers' own games (6 protocol seats per decided game)
    decided = _sql(
        strength_run, "select arm::varchar as arm, count(*) filter (where winner >= 0) as d from GAMES group by 1"
    ).set_index("arm")["d"]
    p = study.tables["protocols"]
    assert study.tiers == TIERS and set(p["tier"]) == set(TIERS)
    for t in TIERS:
        assert p[p["tier"] == t]["games"].sum() == 6 * decided[t]
    up = s.loc["duel:greedy-random"]
    assert study.meta["strength"]["labels"]["greedy"] == f"greedy ({up['win_rate']:.0%} vs random)"
    assert study.meta["strength"]["labels"]["random"] == f"random ({1 - up['win_rate']:.0%} vs greedy)"
    wrong = s.loc["duel:random-again-greedy"]
    assert wrong["win_rate_high"] < 0.5  # random listed above greedy: the order is contradicted
    warning = study.meta["strength"]["order_warning"]
    assert (
        warning.startswith("the listed order is not the measured one: random-again wins")
        and "greedy (" not in warning
        and warning in study.meta["warnings"]
    )

    assert main(["report", str(strength_run)]) == 0
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if "the listed order is not the measured one" in x]
    assert len(lines) == 1 and lines[0].startswith("warning:")
    flat = " ".join(out.split())
    assert "Measured strength: adjacent tiers head to head" in flat and "greedy vs random" in flat
    assert f"{study.meta['strength']['labels']['greedy']}" in flat

    assert main(["report", str(strength_run), "--format", "csv", "--table", "strength"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    assert list(csv["pair"]) == ["greedy vs random", "random-again vs greedy"]
    assert list(csv["upper_wins"]) == [counts[a][1] for a in s.index]
    assert main(["report", str(strength_run), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["strength"]["games"] == 20 and len(data["tables"]["strength"]) == 2
    page = strength_run / "t.html"
    assert main(["dashboard", str(strength_run), "--out", str(page)]) == 0
    html = page.read_text()
    assert "Measured strength" in html and "the listed order is not the measured one" in html
    assert study.meta["strength"]["labels"]["greedy"] in html
