"""The `compiles` table the runner writes beside every shard's games and events (docs/data.md), on
a real local Ray with real Parquet: the compile counts from the compiles tables equal those from
the events exactly, each shard's file equals an independent DuckDB aggregation of its events,
resume replays a shard whose compiles file is gone, and the analysis falls back to events when a
shard has none."""

import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures_analysis.runcopies import copy_without_table, manifest
from fixtures_analysis.synth import compiles_of_shard

from analysis.runs import runfolder
from analysis.runs.open import open_runs
from analysis.runs.schema import COMPILES_SCHEMA
from analysis.studies.balance import queries as Q
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[4]

# The run: two arms (one with Fire 1 worth 3), greedy vs random, seats swapped, draws included.
SHARDS, GAMES = 6, 6000  # the shared ab_run fixture (tests/conftest.py)


@pytest.fixture(scope="module")
def compiles_run(ab_run) -> Path:
    return ab_run


def test_every_shard_records_its_compiles_file(compiles_run):
    m = manifest(compiles_run)
    assert m["complete"] and len(m["shards"]) == SHARDS
    for s in m["shards"]:
        assert s["compiles_file"] == "compiles/" + Path(s["games_file"]).name
        p = compiles_run / s["compiles_file"]
        assert s["compiles_bytes"] == p.stat().st_size and s["compiles_sha256"] == runfolder.file_sha256(p)
        assert runfolder.verify_shard(compiles_run, s) is None
        t = pq.read_table(p)
        assert t.num_rows == s["compiles_rows"] > 0 and t.schema.names == COMPILES_SCHEMA.names
        for f in COMPILES_SCHEMA:
            assert pa.types.is_dictionary(t.schema.field(f.name).type) == pa.types.is_dictionary(f.type)
        assert t.schema.field("n").type == pa.int64()
        rows = t.to_pylist()
        assert {r["arm"] for r in rows} == {s["arm"]} and {r["run_id"] for r in rows} == {m["run_id"]}
        assert {r["kind"] for r in rows} == {"compile", "recompile"}
        for r in rows:
            assert (r["ordinal"] is None) == (r["kind"] == "recompile") and r["n"] > 0
            assert r["ordinal"] in (None, 1, 2, 3) and r["line"] in (0, 1, 2)
        keys = [(r["kind"], r["protocol"], r["line"], r["ordinal"], r["turn"]) for r in rows]
        assert len(set(keys)) == len(keys)  # one row per key


def _frame(t: pa.Table) -> pd.DataFrame:
    df = t.to_pandas().astype({c: str for c in ("run_id", "arm", "kind", "protocol")})
    return df.sort_values(["kind", "protocol", "line", "ordinal", "turn"]).reset_index(drop=True)


def test_each_shard_equals_a_duckdb_aggregation_of_its_events(compiles_run):
    con = duckdb.connect()
    for s in manifest(compiles_run)["shards"]:
        want = compiles_of_shard(con, compiles_run / s["games_file"], compiles_run / s["events_file"])
        got = pq.read_table(compiles_run / s["compiles_file"])
        pd.testing.assert_frame_equal(_frame(got), _frame(want), check_exact=True)
    con.close()


def test_compile_tables_from_compiles_equal_events_exactly(compiles_run):
    runs = open_runs(compiles_run)
    try:
        assert runs.has_compiles and runs.has_events and not runs.warnings
        fast = Q._compile_events(runs)  # the compiles tables
        slow = Q._compile_events(runs, source="events")  # the fallback
        assert runs.memo("compile_events_compiles", lambda: None) is fast
        assert set(fast["kind"]) == {"compile", "recompile"} and fast["n"].sum() > GAMES
        assert fast["ordinal"].isna().sum() > 0 and set(fast["ordinal"].dropna()) == {1, 2, 3}
        pd.testing.assert_frame_equal(fast, slow, check_exact=True)
        for by in ("protocol", "line"):
            with_events = open_runs(compiles_run)
            with_events.compiles_files = []  # force the events path
            pd.testing.assert_frame_equal(Q.compiles_by(runs, by), Q.compiles_by(with_events, by), check_exact=True)
            with_events.close()
    finally:
        runs.close()


def test_resume_replays_a_shard_whose_compiles_file_was_deleted(compiles_run, tmp_path):
    run_dir = tmp_path / "copy"
    shutil.copytree(compiles_run, run_dir)
    before = {s["index"]: s for s in manifest(run_dir)["shards"]}
    (run_dir / "compiles/shard-00002.parquet").unlink()
    keep = {p: p.stat().st_mtime_ns for p in run_dir.glob("*/shard-*.parquet") if p.name != "shard-00002.parquet"}
    res = run(None, RunOptions(resume=str(run_dir), show_progress=False))
    assert res.status == "complete" and res.computed_shards == 1
    assert res.recomputed == ["shard 2: compiles/shard-00002.parquet is missing"]
    assert {p: p.stat().st_mtime_ns for p in keep} == keep  # nothing else rewritten
    m = manifest(run_dir)
    assert m["complete"] and len(m["shards"]) == SHARDS
    for s in m["shards"]:
        assert runfolder.verify_shard(run_dir, s) is None
        for kind in runfolder.TABLES:  # the replayed shard is the same bytes again
            assert s[f"{kind}_sha256"] == before[s["index"]][f"{kind}_sha256"]


def test_analysis_falls_back_to_events_without_every_compiles_file(compiles_run, tmp_path):
    ref = open_runs(compiles_run)
    want = Q._compile_events(ref)
    ref.close()
    one = tmp_path / "one"
    shutil.copytree(compiles_run, one)
    (one / "compiles/shard-00001.parquet").unlink()
    runs = open_runs(one)
    assert not runs.has_compiles and runs.has_cards and runs.has_events
    assert any("compiles/shard-00001.parquet" in w and "from events" in w for w in runs.warnings)
    pd.testing.assert_frame_equal(Q._compile_events(runs), want, check_exact=True)
    with pytest.raises(ValueError):
        Q._compile_events(runs, source="compiles")
    runs.close()
    # a run from before the compiles table (no compiles/, nothing in run.json): silently from events
    old = copy_without_table(compiles_run, tmp_path / "old", "compiles")
    runs = open_runs(old)
    assert not runs.has_compiles and not runs.warnings
    pd.testing.assert_frame_equal(Q._compile_events(runs), want, check_exact=True)
    runs.close()
