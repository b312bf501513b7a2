"""The per-card `cards` table the runner writes beside every shard's games and events (docs/data.md),
on a real local Ray with real Parquet: card impact from the cards tables equals card impact from
the events exactly (every column, and the counts per arm), resume recomputes a shard whose cards
file is missing or damaged, and the analysis falls back to events when a shard has none."""

import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures_analysis.runcopies import copy_without_table, manifest

from analysis.runs import runfolder
from analysis.runs.open import open_runs
from analysis.runs.schema import CARD_COUNTS, CARDS_SCHEMA
from analysis.studies.balance import queries as Q
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[4]

# The run: two arms (one with Fire 1 worth 3), greedy vs random, seats swapped, draws included.
SHARDS, GAMES = 6, 6000  # the shared ab_run fixture (tests/conftest.py)

# card_impact's events query, per arm: what each arm's cards rows must sum to.
PER_ARM = """
with f as (
    select game_index, seat, card, protocol, bool_or(kind = 'draw') as drawn,
           bool_or(kind = 'play_face_up') as up, bool_or(kind = 'play_face_down') as down
    from events where kind in ('draw', 'play_face_up', 'play_face_down') and card is not null
    group by all),
j as (
    select g.arm, f.card, f.protocol, f.drawn, f.up, f.down, g.winner = f.seat as won
    from f join games g using (game_index)
    where g.winner >= 0 and ((f.seat = 0 and f.protocol in (g.seat0_protocol_left, g.seat0_protocol_middle,
                                                             g.seat0_protocol_right))
                             or (f.seat = 1 and f.protocol in (g.seat1_protocol_left, g.seat1_protocol_middle,
                                                               g.seat1_protocol_right))))
select arm::varchar as arm, card::varchar as card, min(protocol)::varchar as protocol,
       count(*) filter (where drawn) as drawn, count(*) filter (where drawn and won) as drawn_wins,
       count(*) filter (where up) as up, count(*) filter (where up and won) as up_wins,
       count(*) filter (where down) as down, count(*) filter (where down and won) as down_wins,
       count(*) filter (where up or down) as played, count(*) filter (where (up or down) and won) as played_wins
from j group by all order by arm, card"""


@pytest.fixture(scope="module")
def cards_run(ab_run) -> Path:
    return ab_run


def test_every_shard_records_its_cards_file(cards_run):
    m = manifest(cards_run)
    assert m["complete"] and len(m["shards"]) == SHARDS
    for s in m["shards"]:
        name = Path(s["games_file"]).name
        assert s["cards_file"] == f"cards/{name}"
        p = cards_run / s["cards_file"]
        assert s["cards_bytes"] == p.stat().st_size and s["cards_sha256"] == runfolder.file_sha256(p)
        assert runfolder.verify_shard(cards_run, s) is None
        t = pq.read_table(p)
        assert t.num_rows == s["cards_rows"] > 0
        assert t.schema.names == CARDS_SCHEMA.names
        for f in CARDS_SCHEMA:
            assert pa.types.is_dictionary(t.schema.field(f.name).type) == pa.types.is_dictionary(f.type)
            if f.name in CARD_COUNTS:
                assert t.schema.field(f.name).type == pa.int64()
        rows = t.to_pylist()
        assert {r["arm"] for r in rows} == {s["arm"]} and {r["run_id"] for r in rows} == {m["run_id"]}
        assert len({r["card"] for r in rows}) == len(rows)  # one row per (arm, card)
        for r in rows:
            assert r["card"].startswith(r["protocol"] + " ")
            assert r["drawn_wins"] <= r["drawn"] and r["up_wins"] <= r["up"] and r["down_wins"] <= r["down"]
            assert max(r["up"], r["down"]) <= r["played"] <= r["up"] + r["down"]
            assert r["drawn"] + r["played"] > 0
    assert sum(s["cards_rows"] for s in m["shards"]) == pq.read_table(cards_run / "cards").num_rows


def test_card_impact_from_cards_equals_events_exactly(cards_run):
    runs = open_runs(cards_run)
    try:
        assert runs.has_cards and runs.has_events and not runs.warnings
        # the run has what the filters are for: draws, and cards drawn or played from the other deck
        assert runs.sql("select count(*) as n from games where winner < 0")["n"][0] > 0
        other = runs.sql("""select count(*) as n from events e join games g using (game_index)
                            where e.kind in ('draw', 'play_face_up', 'play_face_down') and e.seat = 0
                              and e.protocol not in (g.seat0_protocol_left, g.seat0_protocol_middle,
                                                     g.seat0_protocol_right)""")
        assert other["n"][0] > 0
        fast = Q.card_impact(runs)  # the cards tables (every shard has one)
        slow = Q.card_impact(runs, source="events")  # the fallback
        assert len(fast) > 60 and fast["up"].sum() > 0
        pd.testing.assert_frame_equal(fast, slow, check_exact=True)
        per_arm = runs.sql(PER_ARM)
        sums = ", ".join(f"sum({c})::bigint as {c}" for c in CARD_COUNTS)
        from_cards = runs.sql(f"""select arm::varchar as arm, card::varchar as card, min(protocol)::varchar as protocol,
                                  {sums} from cards group by all order by arm, card""")
        assert set(per_arm["arm"]) == {"official", "fire1-worth-3"}
        pd.testing.assert_frame_equal(from_cards, per_arm, check_exact=True)
    finally:
        runs.close()


def test_cards_match_a_single_shard_aggregation(cards_run):
    """Each shard's file on its own equals the events query over that shard only."""
    con = duckdb.connect()
    for s in manifest(cards_run)["shards"]:
        con.execute(f"create or replace view events as select * from '{cards_run / s['events_file']}'")
        con.execute(f"create or replace view games as select * from '{cards_run / s['games_file']}'")
        want = con.execute(PER_ARM).df()
        got = pq.read_table(cards_run / s["cards_file"]).to_pandas()
        got = got.astype({"arm": str, "card": str, "protocol": str}).drop(columns="run_id")
        got = got.sort_values(["arm", "card"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    con.close()


def test_resume_recomputes_a_shard_whose_cards_file_is_missing_or_damaged(cards_run, tmp_path):
    run_dir = tmp_path / "copy"
    shutil.copytree(cards_run, run_dir)
    before = {s["index"]: s for s in manifest(run_dir)["shards"]}
    (run_dir / "cards/shard-00001.parquet").unlink()  # gone
    c3 = run_dir / "cards/shard-00003.parquet"
    blob = bytearray(c3.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # one flipped byte
    c3.write_bytes(bytes(blob))
    c4 = run_dir / "cards/shard-00004.parquet"
    c4.write_bytes(c4.read_bytes()[: c4.stat().st_size // 2])  # truncated
    damaged = ("shard-00001.parquet", "shard-00003.parquet", "shard-00004.parquet")
    keep = {p: p.stat().st_mtime_ns for p in run_dir.glob("*/shard-*.parquet") if p.name not in damaged}
    assert len(keep) == len(runfolder.TABLES) * (SHARDS - 3)
    res = run(None, RunOptions(resume=str(run_dir), show_progress=False))
    assert res.status == "complete" and res.computed_shards == 3
    assert sorted(r.split(":")[0] for r in res.recomputed) == ["shard 1", "shard 3", "shard 4"]
    assert "cards/shard-00001.parquet is missing" in " ".join(res.recomputed)
    assert {p: p.stat().st_mtime_ns for p in keep} == keep  # nothing else rewritten
    m = manifest(run_dir)
    assert m["complete"] and len(m["shards"]) == SHARDS and not (run_dir / runfolder.JOURNAL).exists()
    for s in m["shards"]:
        assert runfolder.verify_shard(run_dir, s) is None
        for kind in runfolder.TABLES:  # the recomputed shards are the same bytes again
            assert s[f"{kind}_sha256"] == before[s["index"]][f"{kind}_sha256"]
            assert s[f"{kind}_rows"] == before[s["index"]][f"{kind}_rows"]
    assert not list(run_dir.rglob(".*.tmp"))


def test_analysis_falls_back_to_events_without_every_cards_file(cards_run, tmp_path):
    ref = open_runs(cards_run)
    want = Q.card_impact(ref)
    ref.close()
    # a shard's cards file deleted: the events answer, with a warning
    one = tmp_path / "one"
    shutil.copytree(cards_run, one)
    (one / "cards/shard-00002.parquet").unlink()
    runs = open_runs(one)
    assert not runs.has_cards and runs.has_events
    assert any("cards/shard-00002.parquet" in w and "from events" in w for w in runs.warnings)
    pd.testing.assert_frame_equal(Q.card_impact(runs), want, check_exact=True)
    with pytest.raises(ValueError):
        Q.card_impact(runs, source="cards")
    runs.close()
    # a run from before the cards table (no cards/ and nothing in run.json): silently from events
    old = copy_without_table(cards_run, tmp_path / "old", "cards")
    runs = open_runs(old)
    assert not runs.has_cards and not runs.warnings
    pd.testing.assert_frame_equal(Q.card_impact(runs), want, check_exact=True)
    runs.close()
    # ... and resuming such a run keeps its shards (they are whole without a cards file)
    res = run(None, RunOptions(resume=str(old), show_progress=False))
    assert res.status == "complete" and res.computed_shards == 0 and res.recomputed == []


def test_one_arm_of_an_ab_run(cards_run):
    """`RUN#arm` opens one arm's shards only; the two arms add up to the whole run, and an unknown
    arm is a clear error naming the arms there are."""
    from analysis.runs.open import RunError

    def games(path) -> int:
        return open_runs([path]).sql("select count(*) as n from games")["n"][0]

    a, b = games(f"{cards_run}#official"), games(f"{cards_run}#fire1-worth-3")
    assert a == b == GAMES // 2 and a + b == games(cards_run)
    arms = open_runs([f"{cards_run}#official"]).sql("select distinct arm::varchar as arm from games")["arm"]
    assert list(arms) == ["official"]
    with pytest.raises(RunError, match="no arm 'nope'.*official, fire1-worth-3"):
        open_runs([f"{cards_run}#nope"])
