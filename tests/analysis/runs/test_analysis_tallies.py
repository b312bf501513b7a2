"""The `tallies` table every shard writes beside its games (analysis/runs/tallies.py, docs/data.md), on
real runs played on a local Ray with real Parquet and DuckDB: each shard's file is its tallies, the
report's tables from the tallies equal those from the rows of `games` exactly (a copy of the run
without tallies, as written before them), a run without every shard's tallies is read from its rows,
and with tallies the game rows are neither read nor hashed until a table needs them."""

import json
import shutil

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from fixtures_analysis.runcopies import copy_without_table, manifest

from analysis.runs import tallies
from analysis.runs.open import RunError, open_runs
from analysis.studies.balance import queries as Q
from analysis.studies.balance.report import FROM_ROWS, TABLE_NAMES, build_report


def _report(path) -> dict[str, pd.DataFrame]:
    runs = open_runs(path)
    try:
        return dict(build_report(runs).tables.items())
    finally:
        runs.close()


def test_every_shard_writes_its_tallies(ab_run):
    m = manifest(ab_run)
    con = duckdb.connect()
    for s in m["shards"]:
        assert s["tallies_file"] == "tallies/" + s["games_file"].split("/")[1]
        t = pq.read_table(ab_run / s["tallies_file"])
        assert t.schema.names == list(tallies.TALLIES_COLUMNS) and t.num_rows == s["tallies_rows"]
        got = t.to_pandas()
        assert set(got["tally"]) == {x.name for x in tallies.TALLIES} - {"drafted", "picks"}  # sampled trios
        assert set(got["arm"]) == {s["arm"]} and set(got["run_id"]) == {m["run_id"]}
        # each tally is its query over the shard's games as read back from Parquet
        con.execute(f"create or replace view games as select * from '{ab_run / s['games_file']}'")
        for x in tallies.TALLIES:
            want = con.sql(x.sql).df()
            mine = got.loc[got["tally"] == x.name, list(want.columns)].astype(want.dtypes)
            every = list(want.columns)  # a key may repeat (compile_turns: both seats)
            pd.testing.assert_frame_equal(
                mine.sort_values(every).reset_index(drop=True),
                want.sort_values(every).reset_index(drop=True),
                check_exact=True,
            )
        assert got.loc[got["tally"] == "length", "games"].sum() == s["games"]
    con.close()


@pytest.mark.parametrize("arm", [None, "official", "fire1-worth-3"])
def test_report_from_tallies_equals_report_from_rows(ab_run, tmp_path, arm):
    old = copy_without_table(ab_run, tmp_path / "old", "tallies")
    suffix = f"#{arm}" if arm else ""
    with_tallies, from_rows = open_runs(f"{ab_run}{suffix}"), open_runs(f"{old}{suffix}")
    try:
        assert with_tallies.has_tallies and not from_rows.has_tallies
        assert not with_tallies.warnings and not from_rows.warnings  # an old run reads silently
        fast, slow = build_report(with_tallies).tables, build_report(from_rows).tables
        assert list(fast) == list(slow) == list(TABLE_NAMES)
        for name in TABLE_NAMES:
            pd.testing.assert_frame_equal(fast[name], slow[name], check_exact=True, obj=name)
        fp = fast["first_player"]
        assert len(fp) == 31 and fp["trios"][1:].str.endswith("(seats swapped)").all()
        assert fast["overview"]["games"].iloc[0] == (6000 if arm is None else 3000)
        assert fast["overview"]["draws"].iloc[0] > 0 and len(fast["strategy_ratings"]) == 2
    finally:
        with_tallies.close()
        from_rows.close()


def test_draft_tables_from_tallies_equal_rows(draft_run, tmp_path):
    old = copy_without_table(draft_run, tmp_path / "old", "tallies")
    fast, slow = _report(draft_run), _report(old)
    assert not fast["draft_picks"].empty and fast["draft_picks"]["picks"].sum() == 6 * 40
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(fast[name], slow[name], check_exact=True, obj=name)


def test_a_shard_without_tallies_means_reading_rows(ab_run, tmp_path):
    one = tmp_path / "one"
    shutil.copytree(ab_run, one)
    (one / "tallies/shard-00003.parquet").unlink()
    runs = open_runs(one)
    try:
        assert not runs.has_tallies
        assert any("tallies/shard-00003.parquet" in w and "from every game" in w for w in runs.warnings)
        got = build_report(runs).tables
        want = _report(ab_run)
        for name in TABLE_NAMES:
            pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)
    finally:
        runs.close()


def test_game_rows_are_hashed_only_when_a_table_reads_them(ab_run, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(ab_run, bad)
    m = manifest(bad)
    m["shards"][2]["games_sha256"] = "0" * 64  # as if the file had been rewritten with other rows
    (bad / "run.json").write_text(json.dumps(m))
    runs = open_runs(bad)
    try:
        rep = build_report(runs)  # every table the terminal shows: no game rows
        assert "trio_matchups" in FROM_ROWS and "trio_matchups" not in rep.timings
        assert rep.tables["overview"]["games"].iloc[0] == 6000
        with pytest.raises(RunError, match="shard-00002.parquet: does not match its SHA-256"):
            rep.tables["trio_matchups"]
    finally:
        runs._before_close.clear()  # the deferred table cannot be computed
        runs.close()
    with pytest.raises(RunError, match="shard-00002.parquet: does not match its SHA-256"):
        open_runs(bad, verify="full")
    trusted = open_runs(bad, trust=True)
    try:
        assert not any("SHA-256" in w for w in trusted.warnings)
        assert not build_report(trusted).tables["trio_matchups"].empty
        assert any("shard-00002.parquet: does not match" in w for w in trusted.warnings)
    finally:
        trusted.close()


def test_deferred_tables_are_computed_before_the_runs_close(ab_run):
    runs = open_runs(ab_run)
    rep = build_report(runs)
    assert "trio_matchups" not in rep.timings
    runs.close()
    assert "trio_matchups" in rep.timings and not rep.tables["trio_matchups"].empty


def test_first_player_reads_rows_when_the_tallies_cannot_count_trio_pairs(ab_run):
    runs = open_runs(ab_run)
    try:
        want = Q._first_player_rows(runs)
        pd.testing.assert_frame_equal(Q.first_player(runs), want, check_exact=True)
        # a matchup whose trios vary, held by two shards: its distinct trio pairs are not in the tallies
        m = Q.tally(runs, "matchups").copy()
        first = m["matchup"].idxmin()
        m.loc[first, ["trio0_max", "lo_max"]] = "~other"
        m.loc[first, "parts"] = 2
        runs._memo["tally_matchups"] = m
        pd.testing.assert_frame_equal(Q.first_player(runs), want, check_exact=True)
        m.loc[first, "parts"] = 1  # one shard: its own count is exact
        assert Q.first_player(runs)["trios"].iloc[1] == f"drafted ({m.loc[first, 'pairs']} trio pairs)"
    finally:
        runs.close()
