"""One shard, played in this process (no Ray): rows independent of the shard layout, seat
swapping on paired seeds, and columns that agree with the engine's own batch records."""

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from protolab.experiment.run import shards
from protolab.experiment.run.plan import make_plan
from protolab.experiment.run.runner import dictionaries, make_task
from protolab.experiment.run.shards import execute
from protolab.experiment.spec import load_spec
from sim.batch import records
from strategies.seats import play_games

ROOT = Path(__file__).resolve().parents[4]


def play_inline(spec_path, games=None, fresh_seats=False):
    """Every shard of the spec through the task body, no Ray: (games, events) tables in order;
    `fresh_seats`: each shard with seats built for it (as a new worker process would)."""
    plan = make_plan(load_spec(spec_path, games=games))
    d = dictionaries(plan)
    g, e = [], []
    for s in plan.shards:
        if fresh_seats:
            shards._SEATS.clear()
        res = execute(make_task(plan, s, "inline", Path("/nonexistent-run-dir"), "t", d))
        assert res["data"] is not None  # the task could not see the folder: bytes come back
        g.append(pq.read_table(io.BytesIO(res["data"]["games"])))
        if "events" in res["data"]:
            e.append(pq.read_table(io.BytesIO(res["data"]["events"])))
        assert res["entry"].games_rows == s.games
    return plan, pa.concat_tables(g), (pa.concat_tables(e) if e else None)


def spec_file(tmp_path, body, name="s.toml"):
    p = tmp_path / name
    p.write_text(body)
    return p


def test_rows_do_not_depend_on_shard_size(tmp_path):
    body = 'name = "x"\nseed = 9\ngames = 12\n[seats]\nswap = true\n[draft]\nmode = "sampled"\nsamples = 5\n'
    _, g1, e1 = play_inline(spec_file(tmp_path, body, "a.toml"))
    _, g2, e2 = play_inline(spec_file(tmp_path, body.replace("games = 12", "games = 12\nshard_games = 4"), "b.toml"))
    _, g3, e3 = play_inline(spec_file(tmp_path, body.replace("games = 12", "games = 12\nshard_games = 22"), "c.toml"))
    drop = ["spec_hash"]  # shard_games is part of the spec, not of a game
    assert g1.drop_columns(drop).equals(g2.drop_columns(drop)) and g1.drop_columns(drop).equals(g3.drop_columns(drop))
    assert e1.equals(e2) and e1.equals(e3)
    assert g1["game_index"].to_pylist() == list(range(60))


def test_seats_built_once_per_worker_play_as_seats_built_per_shard(tmp_path):
    body = (
        'name = "x"\nseed = 5\ngames = 8\nshard_games = 4\n[seats]\nswap = true\n'
        'strategies = ["search:sims=8,depth=1", "greedy"]\n[draft]\nmode = "sampled"\nsamples = 3\n'
    )
    shards._SEATS.clear()
    plan, g1, e1 = play_inline(spec_file(tmp_path, body))
    assert len(plan.shards) == 6 and len(shards._SEATS) == 2  # one pair per seat order, for six shards
    _, g2, e2 = play_inline(spec_file(tmp_path, body), fresh_seats=True)
    assert g1.equals(g2) and e1.equals(e2)


def test_seat_swapping_on_paired_seeds(tmp_path):
    _, g, _ = play_inline(
        spec_file(tmp_path, 'name = "x"\nseed = 3\ngames = 40\nevents = false\n[seats]\nswap = true\n')
    )
    rows = g.to_pylist()
    sides = ["left", "middle", "right"]
    for a, b in zip(rows[::2], rows[1::2], strict=True):
        assert a["seed"] == b["seed"] and a["game_in_matchup"] + 1 == b["game_in_matchup"]
        assert [a[f"seat0_protocol_{s}"] for s in sides] == [b[f"seat1_protocol_{s}"] for s in sides]
        assert [a[f"seat1_protocol_{s}"] for s in sides] == [b[f"seat0_protocol_{s}"] for s in sides]
        assert a["first_player"] == b["first_player"]  # same seat starts: the other side goes first
        assert (a["strategy_0"], a["strategy_1"]) == (b["strategy_1"], b["strategy_0"])
    assert len({r["seed"] for r in rows}) == 20


def test_columns_agree_with_the_engine_records(tmp_path, pool):
    _, g, e = play_inline(spec_file(tmp_path, 'name = "x"\nseed = 11\ngames = 300\nshard_games = 128\n'))
    seeds = np.array(g["seed"].to_pylist(), dtype=np.uint64)
    cols = play_games(pool, seeds, events=True)
    recs = records(pool, cols)
    rows = g.to_pylist()
    for r, rec in zip(rows, recs, strict=True):
        assert r["winner"] == rec["winner"] and r["turns"] == rec["turns"] and r["end_reason"] == rec["end_reason"]
        assert r["first_player"] == rec["first_player"]
        assert [r[f"seat0_protocol_{s}"] for s in ("left", "middle", "right")] == rec["protocols_0"]
        for seat in (0, 1):
            firsts = [c["turn"] for c in rec["compiles"] if c["player"] == seat and not c["recompile"]][:3]
            assert [r[f"seat{seat}_compile{k}_turn"] for k in (1, 2, 3)] == firsts + [None] * (3 - len(firsts))
            assert r[f"seat{seat}_recompiles"] == sum(c["player"] == seat and c["recompile"] for c in rec["compiles"])
            assert r[f"seat{seat}_plays_face_up"] == rec["plays_face_up"][seat]
            assert r[f"seat{seat}_control_gains"] == rec["control_gains"][seat]
    ev = cols["events"]
    assert e.num_rows == len(ev["game"])
    assert e["game_index"].to_numpy().tolist() == ev["game"].tolist()
    names = [pool.cards[c].name if c >= 0 else None for c in ev["card"]]
    kinds = e["kind"].to_pylist()
    assert [
        n if k in ("draw", "play_face_up", "play_face_down", "delete") else None
        for n, k in zip(names, kinds, strict=True)
    ] == e["card"].to_pylist()
    # seq numbers each game's events 0..k-1 in order
    gi = e["game_index"].to_numpy()
    seq = e["seq"].to_numpy()
    starts = np.r_[True, gi[1:] != gi[:-1]]
    assert (seq[starts] == 0).all() and (np.diff(seq)[~starts[1:]] == 1).all()
    compiles = [(r["game_index"], r["seat"]) for r in e.filter(pa.compute.equal(e["kind"], "compile")).to_pylist()]
    for r in rows[:50]:
        for seat in (0, 1):
            n_first = sum(r[f"seat{seat}_compile{k}_turn"] is not None for k in (1, 2, 3))
            assert min(3, compiles.count((r["game_index"], seat))) == n_first


def test_arms_share_seeds_and_differ_only_by_the_variant():
    plan, g, e = play_inline(ROOT / "datasets/experiments/fire1_ab.toml", games=200)
    assert e is not None and plan.total_games == 400
    a = g.filter(pa.compute.equal(g["arm"], "official")).to_pylist()
    b = g.filter(pa.compute.equal(g["arm"], "fire1-worth-3")).to_pylist()
    assert [r["seed"] for r in a] == [r["seed"] for r in b]
    assert [r["game_in_matchup"] for r in a] == [r["game_in_matchup"] for r in b]
    assert a[0]["pool_hash"] != b[0]["pool_hash"]
    assert [r["seat0_protocol_left"] for r in a] == [r["seat0_protocol_left"] for r in b]  # same drafts
    assert any(x["turns"] != y["turns"] for x, y in zip(a, b, strict=True))  # the variant matters


@pytest.mark.parametrize("mode", ["fixed", "round_robin"])
def test_fixed_trios_are_played_as_given(tmp_path, mode):
    draft = (
        (
            '[draft]\nmode = "fixed"\nmatchups = [[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]], '
            '["Love, Speed, Metal", "Plague, Spirit, Gravity"]]\n'
        )
        if mode == "fixed"
        else '[draft]\nmode = "round_robin"\nprotocols = ["Fire", "Water", "Death", "Hate", "Light", "Life"]\n'
    )
    plan, g, _ = play_inline(spec_file(tmp_path, f'name = "x"\nseed = 1\ngames = 6\nshard_games = 4\n{draft}'))
    for r in g.to_pylist():
        a, b = plan.matchups[r["matchup"]]
        assert (r["seat0_protocol_left"], r["seat0_protocol_middle"], r["seat0_protocol_right"]) == a
        assert (r["seat1_protocol_left"], r["seat1_protocol_middle"], r["seat1_protocol_right"]) == b
    assert g.num_rows == 6 * plan.n_matchups
