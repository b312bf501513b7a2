"""Reports verify what they read (docs/analysis.md, "What opening a run verifies"): every case that
used to print wrong figures with exit 0 now fails with one line naming the file (exit 2), or with
--trust prints the problem as a warning beside the figures; `--resume` refuses files run.json does
not list. Real runs are copies of the shared two-arm `ab_run` (tests/conftest.py: 6 shards, 6000
games, cards and compiles files); synthetic ones are the tiny known run (2 shards, 8 games)."""

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import AB_GAMES, AB_SHARDS
from fixtures_analysis.known import known_run
from fixtures_analysis.runcopies import manifest

from analysis.runs import runfolder
from analysis.runs.manifest import ShardEntry
from analysis.runs.open import RunError, open_runs
from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ARMS = ("official", "fire1-worth-3")


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(capsys, *argv) -> str:
    """Exit 2 and exactly one line on stderr: `protolab: error: ...`."""
    code, _, err = cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("protolab: error: "), (code, err)
    return lines[0]


def games_in(*paths, **kw) -> int:
    runs = open_runs(list(paths), **kw)
    try:
        return int(runs.sql("select count(*) as n from games")["n"][0])
    finally:
        runs.close()


def json_report(capsys, *argv) -> tuple[dict, str]:
    code, out, err = cli(capsys, "report", *argv, "--format", "json", "--table", "protocols")
    assert code == 0, err
    return json.loads(out), err


def appearances(report: dict) -> int:
    return sum(r["games"] for r in report["tables"]["protocols"])


def write_manifest(run_dir: Path, m: dict) -> None:
    (run_dir / "run.json").write_text(json.dumps(m))


@pytest.fixture
def ab_copy(ab_run, tmp_path) -> Path:
    return Path(shutil.copytree(ab_run, tmp_path / "ab-copy"))


@pytest.fixture
def known(tmp_path) -> Path:
    return known_run(tmp_path / "known")


# -- a run opened twice ---------------------------------------------------------------------------


def test_a_run_given_twice_or_with_its_copy_is_an_error(capsys, known, ab_run, ab_copy):
    copy = Path(shutil.copytree(known, known.parent / "known-copy"))
    official = f"{ab_run}#official"
    for first, second in ((known, known), (known, copy), (official, official), (official, f"{ab_copy}#official")):
        msg = one_error(capsys, "report", first, second)
        assert str(second) in msg and "the same run as" in msg and "counted twice" in msg
        with pytest.raises(RunError, match="the same run as"):
            open_runs([first, second])
    assert "the same run as" in one_error(capsys, "dashboard", copy, known)
    for whole_and_arm in ([ab_run, official], [official, ab_copy], [ab_run, ab_copy]):
        with pytest.raises(RunError, match="the same run as"):
            open_runs(whole_and_arm)


def test_trust_opens_a_duplicated_run_once_with_a_note(capsys, known, ab_run, ab_copy):
    copy = Path(shutil.copytree(known, known.parent / "known-copy"))
    single, _ = json_report(capsys, known)
    twice, err = json_report(capsys, known, copy, "--trust")
    assert appearances(twice) == appearances(single) == 6 * 7  # 7 decided games, 6 protocols each
    assert twice["tables"]["protocols"] == single["tables"]["protocols"]  # same counts, same intervals
    assert "protolab: warning:" in err and str(copy) in err and "opened once" in err
    code, out, err = cli(capsys, "report", f"{ab_run}#official", f"{ab_copy}#official", "--trust")
    assert code == 0 and "opened once" in out, err
    # the whole run after one of its arms replaces the arm; a second whole run is dropped
    runs = open_runs([f"{ab_run}#official", ab_copy, ab_run], trust=True)
    assert runs.paths == [ab_copy] and len([w for w in runs.warnings if "opened once" in w]) == 2
    assert int(runs.sql("select count(*) as n from games")["n"][0]) == AB_GAMES
    runs.close()


def test_two_arms_of_one_run_are_two_datasets(capsys, ab_run):
    a, b = (f"{ab_run}#{arm}" for arm in ARMS)
    assert games_in(a) == games_in(b) == AB_GAMES // 2 and games_in(a, b) == AB_GAMES
    code, out, err = cli(capsys, "compare", a, b, "--format", "json")
    assert code == 0 and not err, err
    assert json.loads(out)["meta"]["tests"] > 0


# -- files that are not what the run wrote --------------------------------------------------------


def swap_winners(f: Path) -> None:
    """Rewrite a games file as valid Parquet with every decided game's winner swapped."""
    t = pq.read_table(f)
    w = t.column("winner")
    swapped = pc.if_else(pc.equal(w, 0), 1, pc.if_else(pc.equal(w, 1), 0, w)).cast(w.type)
    pq.write_table(t.set_column(t.schema.get_field_index("winner"), "winner", swapped), f)


def test_a_shard_rewritten_with_swapped_winners_is_an_error(capsys, known):
    before, _ = json_report(capsys, known)
    shard = known / "games/shard-00000.parquet"
    swap_winners(shard)
    msg = one_error(capsys, "report", known)
    assert str(shard) in msg and "SHA-256" in msg
    with pytest.raises(RunError, match="does not match its SHA-256"):
        open_runs(known)
    # --trust: the figures of the files as they are, and the problem beside them
    after, err = json_report(capsys, known, "--trust")
    assert after["tables"]["protocols"] != before["tables"]["protocols"]
    assert str(shard) in err and "SHA-256" in err and "--trust" in err
    runs = open_runs(known, trust=True)
    assert any(str(shard) in w and "SHA-256" in w for w in runs.warnings)
    runs.close()


def test_size_and_row_count_are_checked_against_run_json(capsys, ab_copy):
    shard = ab_copy / "games/shard-00002.parquet"
    t = pq.read_table(shard)
    pq.write_table(t.slice(0, t.num_rows - 1), shard)  # one game fewer, still valid Parquet
    msg = one_error(capsys, "report", ab_copy)
    assert str(shard) in msg and "bytes, but run.json records" in msg
    m = manifest(ab_copy)
    for s in m["shards"]:
        s.pop("games_bytes")
    write_manifest(ab_copy, m)
    assert f"{t.num_rows - 1} rows, but run.json records {t.num_rows}" in one_error(capsys, "report", ab_copy)


def damage_in_place(f: Path) -> None:
    """Flip one byte in the middle of the file: same size, footer and row count intact."""
    blob = bytearray(f.read_bytes())
    blob[len(blob) // 3] ^= 0xFF
    f.write_bytes(bytes(blob))


def test_events_are_checksummed_when_read_or_with_verify_full(capsys, ab_copy, tmp_path):
    ev = ab_copy / "events/shard-00001.parquet"
    damage_in_place(ev)
    # cards and compiles files answer every table: fast does not read (nor hash) the events
    runs = open_runs(ab_copy)
    assert runs.has_cards and runs.has_compiles and not runs.warnings
    runs.close()
    code, _, err = cli(capsys, "report", ab_copy, "--table", "protocols", "--format", "csv")
    assert code == 0, err
    msg = one_error(capsys, "report", ab_copy, "--verify", "full")
    assert str(ev) in msg and "SHA-256" in msg
    with pytest.raises(RunError, match="SHA-256"):
        open_runs(ab_copy, verify="full")
    # without a compiles file the compile tables come from events, so fast checksums them too
    (ab_copy / "compiles/shard-00001.parquet").unlink()
    assert str(ev) in one_error(capsys, "report", ab_copy)
    with pytest.raises(RunError, match="verify 'sometimes'"):
        open_runs(ab_copy, verify="sometimes")


# -- run.json that does not cover the run ---------------------------------------------------------


def test_a_complete_run_missing_a_shard_entry_is_an_error(capsys, ab_copy):
    m = manifest(ab_copy)
    gone = m["shards"].pop(3)
    write_manifest(ab_copy, m)
    msg = one_error(capsys, "report", ab_copy)
    assert str(ab_copy / "run.json") in msg and f"lists {AB_SHARDS - 1} of its {AB_SHARDS} shards" in msg
    assert "no entry for shard 3" in msg and "--resume" in msg
    with pytest.raises(RunError, match="no entry for shard 3"):
        open_runs(ab_copy)
    # --trust: the 5 listed shards, the problem and the shard's now unlisted files as warnings
    runs = open_runs(ab_copy, trust=True)
    assert int(runs.sql("select count(*) as n from games")["n"][0]) == AB_GAMES - gone["games"]
    assert any("no entry for shard 3" in w for w in runs.warnings)
    assert any(gone["games_file"] in w and "not listed" in w for w in runs.warnings)
    runs.close()
    code, out, err = cli(capsys, "report", ab_copy, "--trust")
    assert code == 0 and "no entry for shard 3" in out


def test_an_unfinished_run_keeps_its_warning(capsys, ab_copy):
    m = manifest(ab_copy)
    m["complete"] = False
    gone = m["shards"].pop()  # its files: a shard played but not recorded (driver killed)
    write_manifest(ab_copy, m)
    runs = open_runs(ab_copy)
    assert int(runs.sql("select count(*) as n from games")["n"][0]) == AB_GAMES - gone["games"]
    assert [w for w in runs.warnings if "not complete" in w] == runs.warnings != []
    runs.close()
    # the shards recorded since run.json was written (shards.jsonl) are listed too
    (ab_copy / runfolder.JOURNAL).write_text(json.dumps(gone) + "\n")
    assert games_in(ab_copy) == AB_GAMES


def test_a_synthetic_complete_run_must_hold_its_games(capsys, known):
    m = manifest(known)
    m["shards"].pop()
    write_manifest(known, m)
    msg = one_error(capsys, "report", known)
    assert "complete with 8 games but its shards hold 5" in msg


def test_overlapping_or_repeated_shards_are_duplicate_games(capsys, known):
    m = manifest(known)
    m["shards"][1]["first_game"] = 3  # shard 1 claims games 3..5 as well
    write_manifest(known, m)
    msg = one_error(capsys, "report", known)
    assert "shards 0 and 1 both hold game_index 3..4" in msg
    m["shards"][1]["first_game"] = 5
    m["shards"].append(dict(m["shards"][0]))  # shard 0 listed twice
    m["games"] = 13
    write_manifest(known, m)
    assert "shard 0 is listed twice" in one_error(capsys, "report", known)
    with pytest.raises(RunError, match="listed twice"):
        open_runs(known)


# -- files run.json does not list ----------------------------------------------------------------


def test_a_stray_shard_file_is_an_error_and_resume_refuses_it(capsys, ab_copy):
    stray = ab_copy / "games/shard-00040.parquet"
    shutil.copy(ab_copy / "games/shard-00000.parquet", stray)
    # what the documented glob would read: duplicate game_index values
    t = pq.read_table(ab_copy / "games", columns=["game_index"])
    assert len(pc.unique(t.column("game_index"))) < t.num_rows
    msg = one_error(capsys, "report", ab_copy)
    assert str(stray) in msg and "not listed in" in msg and "games/*.parquet" in msg
    with pytest.raises(RunError, match="shard-00040.parquet: not listed"):
        open_runs(ab_copy)
    code, _, err = cli(capsys, "report", ab_copy, "--trust", "--format", "csv")
    assert code == 0 and "shard-00040.parquet" in err
    # --resume refuses, naming the file, and leaves the folder as it was
    before = {p: p.read_bytes() for p in ab_copy.rglob("*") if p.is_file() and p.name != runfolder.LOCK}
    msg = one_error(capsys, "run", "--resume", ab_copy)
    assert str(stray) in msg and "not a file of this run" in msg and "move it out" in msg
    assert {p: p.read_bytes() for p in ab_copy.rglob("*") if p.is_file() and p.name != runfolder.LOCK} == before
    # moved aside, the run is whole again
    stray.rename(ab_copy.parent / stray.name)
    assert games_in(ab_copy) == AB_GAMES


def test_any_unlisted_parquet_file_counts_but_temporary_files_do_not(capsys, known):
    (known / "events/.shard-00000.parquet.0123456789ab.tmp").write_bytes(b"half a file")
    assert games_in(known) == 8
    nested = known / "cards/old/extra.parquet"
    nested.parent.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), nested)
    assert str(nested) in one_error(capsys, "dashboard", known, "--out", known / "d.html")


def test_files_of_unrecorded_planned_shards_are_pending_not_stray(ab_copy):
    """After a driver is killed, a shard's files may exist unrecorded: resume overwrites them."""
    m = manifest(ab_copy)
    gone = m["shards"].pop()
    pending = runfolder.pending_files(ab_copy, AB_SHARDS, {s["index"] for s in m["shards"]}, events=True)
    assert {ab_copy / gone[f"{k}_file"] for k in runfolder.TABLES} == pending
    entries = [ShardEntry.of(s, "run.json") for s in m["shards"]]
    assert runfolder.unlisted_files(ab_copy, entries, pending) == []
    unlisted = runfolder.unlisted_files(ab_copy, entries)
    assert sorted(unlisted) == sorted(pending)
    # a games-only run would not write events: an events file there is a stray
    assert not any(p.parent.name == "events" for p in runfolder.pending_files(ab_copy, 6, set(), events=False))
