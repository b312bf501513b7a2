"""`protolab replay RUN --game N`: any game of a run replays exactly (checked against its stored row),
whatever its seats, swap, strategies, card files and draft; `--states` shows exact positions."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from protolab.cli import main
from protolab.experiment.run import replay
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


def columns(run_dir: Path) -> int:
    """How many columns a replay checks: every stored games column but run_id."""
    return len(pq.read_schema(next((run_dir / "games").glob("*.parquet"))).names) - 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory, ab_run) -> dict[str, Path]:
    """A shipped example, small (fire1_ab: random drafts, a variant-file arm, seats swapped), and the
    shared A/B run of conftest (sampled trios, greedy against random: a swap exchanges strategies)."""
    res = run(
        "fire1_ab", RunOptions(workers=2, out=str(tmp_path_factory.mktemp("runs")), games=40, show_progress=False)
    )
    assert res.status == "complete"
    return {"fire1_ab": res.run_dir, "ab": ab_run}


@pytest.mark.slow
def test_100_random_rows_replay_exactly(runs):
    rng = random.Random(12)
    seen = {"swapped": 0, "drafted": 0, "listed": 0, "arms": set(), "strategies": set()}
    for name, k in (("fire1_ab", 50), ("ab", 50)):
        opened = replay.open_run(runs[name])
        for n in rng.sample(range(opened.plan.total_games), k):
            g = replay.locate(str(runs[name]), n, opened)
            assert replay.check(g, replay.play(g)) == columns(runs[name])  # every column but run_id
            seen["swapped"] += g.swapped
            seen["drafted"] += g.protocols is None
            seen["listed"] += not g.swapped and g.protocols is not None
            seen["arms"].add(g.arm)
            seen["strategies"].add(g.strategies)
    assert seen["swapped"] > 20 and seen["drafted"] > 10 and seen["listed"] > 10
    assert seen["arms"] == {"official", "fire1-worth-3"}  # the variant-file arm included
    assert {("greedy", "random"), ("random", "greedy")} <= seen["strategies"]


def test_a_row_differing_from_its_replay_is_an_error(runs, tmp_path, capsys):
    """Flip one stored winner: the replay must refuse it (exit 1), naming the column."""
    run_dir = tmp_path / "copy"
    shutil.copytree(runs["fire1_ab"], run_dir)
    f = run_dir / "games" / "shard-00000.parquet"
    t = pq.read_table(f)
    winners = t.column("winner").to_pylist()
    n = next(i for i, w in enumerate(winners) if w in (0, 1))
    winners[n] = 1 - winners[n]
    t = t.set_column(t.schema.get_field_index("winner"), "winner", __import__("pyarrow").array(winners, "int8"))
    pq.write_table(t, f)
    assert main(["replay", str(run_dir), "--game", str(n)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("protolab: error:") and "winner: replayed" in err[0]
    assert main(["replay", str(run_dir), "--game", str(n + 2)]) == 0  # the other rows still check


def test_arm_row_by_index_within_the_arm(runs, capsys):
    run_dir = runs["fire1_ab"]
    assert main(["replay", f"{run_dir}#fire1-worth-3", "--game", "7"]) == 0
    by_arm = capsys.readouterr().out
    assert "game 47 (arm 'fire1-worth-3' game 7:" in by_arm  # 40 games per arm
    assert f"Checked: the replay matches the stored row ({columns(run_dir)} columns" in by_arm
    assert by_arm.splitlines()[2].startswith("Turn 1: ")  # a swapped game is dealt before its log starts
    assert main(["replay", str(run_dir), "--game", "47"]) == 0
    assert capsys.readouterr().out == by_arm
    assert main(["replay", f"{run_dir}#fire1-worth-3", "--game", "40"]) == 2
    assert "arm 'fire1-worth-3' has games 0..39" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["/no/such/run", "--game", "1"], "/no/such/run: no such run folder"),
        (["{run}", "--game", "80"], "--game 80 is out of range; the run has games 0..79"),
        (["{run}", "--game", "-1"], "--game -1 is out of range"),
        (["{run}#nope", "--game", "1"], "no arm 'nope' in this run; its arms: official, fire1-worth-3"),
        (["{run}"], "a run folder and --game go together"),
        (["--game", "3"], "a run folder and --game go together"),
        (["{run}", "--game", "3", "--seed", "4"], "--seed cannot be given"),
        (["{run}", "--game", "3", "--strategies", "greedy", "greedy"], "--strategies cannot be given"),
        ([], "give --seed S, or a run folder"),
    ],
)
def test_bad_run_or_game_is_one_line_exit_2(runs, capsys, argv, expected):
    argv = [a.replace("{run}", str(runs["fire1_ab"])) for a in argv]
    assert main(["replay", *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("protolab: error:") and expected in lines[0], lines
    assert captured.out == ""


def test_a_game_in_an_unplayed_shard_is_named(runs, tmp_path, capsys):
    import json

    run_dir = tmp_path / "partial"
    shutil.copytree(runs["fire1_ab"], run_dir)
    m = json.loads((run_dir / "run.json").read_text())
    m["shards"] = [e for e in m["shards"] if e["arm"] == "official"]
    m["complete"] = False
    (run_dir / "run.json").write_text(json.dumps(m))
    assert main(["replay", f"{run_dir}#official", "--game", "3"]) == 0
    capsys.readouterr()
    assert main(["replay", f"{run_dir}#fire1-worth-3", "--game", "3"]) == 2
    assert "is in a shard that has not been played yet" in capsys.readouterr().err


def test_states_are_the_exact_positions_at_each_turn_end(runs):
    """Each --states position equals the end of the same game stopped by a turn cap at that turn
    (another way of ending it there; the strategies here, greedy and random, do not look at the cap: the
    learned player that fire1_ab plays since issue 35 does, its lookahead ends in a draw at the cap)."""
    g = replay.locate(str(runs["ab"]), 11)
    game = replay.play(g)
    states = replay.turn_states(game)
    turns = game.record()["turns"]
    assert sorted(states) == [replay.FINAL_TURN, *range(1, turns)]
    for t in (1, 2, turns // 2, turns - 1):
        capped = replay.new_game(g.pool, g.seed, g.strategies, g.protocols, g.first_player, turn_cap=t)
        want = capped.state()
        got = states[t]
        for seat in ("A", "B"):
            for key in ("stacks", "values", "hand", "deck", "trash", "compiled", "protocols"):
                assert got[seat][key] == want[seat][key], (t, seat, key)
        assert got["control"] == want["control"]
    assert states[replay.FINAL_TURN] == game.state()
    lines = replay.log_lines(game, states=True)
    blocks = [i for i, x in enumerate(lines) if x.startswith("  == after turn")]
    assert len(blocks) == turns - 1
    assert lines[blocks[0] + 1].startswith("     A  hand ") and "(face-down)" in "\n".join(lines)


def test_replay_seed_still_works_and_prints_the_same_log(pool, capsys):
    """Without --strategies it plays simulate's default players, and says so."""
    assert main(["replay", "--seed", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    game = replay.new_game(pool, 5, ("learned", "learned"))
    assert "A = learned, B = learned (the default players, as simulate's" in out[0]
    assert out[1:-1] == game.log()
    assert out[-1].startswith("Result: ")
    assert main(["replay", "--seed", "5", "--states"]) == 0
    assert "  == after turn 1, bottom to top: control" in capsys.readouterr().out


def test_rows_of_a_fitted_draft_run_replay_exactly(draft_run):
    """The shipped fitted-draft example: each seat drafts by its table (its copy in the run's
    inputs), so a replay must install the same draft strategies to play the same game."""
    opened = replay.open_run(draft_run)
    picks = pq.read_table(draft_run / "games", columns=["game_index", "picks"]).to_pylist()
    assert all(r["picks"] for r in picks)  # every game drafted
    for n in range(0, opened.plan.total_games, 3):
        g = replay.locate(str(draft_run), n, opened)
        assert g.draft[0].startswith("fitted:") and g.protocols is None
        assert replay.check(g, replay.play(g)) == columns(draft_run)
