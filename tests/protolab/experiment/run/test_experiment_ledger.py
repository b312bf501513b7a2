"""The run's ledger: run.json's keys and types checked once (a bad one is one line naming the file and
the key), and a journal written in batches that survives a driver killed in the middle of one:
the resumed run's rows are the rows of a run never stopped. Real Ray (local), real Parquet."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sim
from analysis.runs import runfolder
from analysis.runs.manifest import Manifest, ManifestError
from protolab.cli import main
from protolab.experiment.run.ledger import new_manifest
from protolab.experiment.run.plan import make_plan
from protolab.experiment.run.runner import RunOptions, prepare, run
from protolab.experiment.spec import load_spec

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

SIM_ROOT = Path(sim.__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
SPEC = 'name = "led"\nseed = 11\ngames = 40\nshard_games = 4\n[draft]\nmode = "sampled"\nsamples = 3\n'
SHARDS = 30

# A driver whose second journal write is cut in the middle of a line, then killed (SIGKILL) at once.
KILLED_MID_BATCH = """
import json, os, signal, sys
from analysis.runs import runfolder
from protolab.experiment.run.runner import RunOptions, run

real, writes = runfolder.append_journal, []

def append_then_die(run_dir, entries):
    writes.append(len(entries))
    assert entries
    if len(writes) < 2:
        return real(run_dir, entries)
    lines = [json.dumps(e.to_json(), sort_keys=True) + "\\n" for e in entries]
    whole = len(lines) // 2
    with open(os.path.join(str(run_dir), runfolder.JOURNAL), "a") as f:
        f.write("".join(lines[:whole]) + lines[whole][: len(lines[whole]) // 2])
    os.kill(os.getpid(), signal.SIGKILL)

runfolder.append_journal = append_then_die
run(sys.argv[1], RunOptions(workers=2, out=sys.argv[2], show_progress=False))
"""


def rows(run_dir: Path):
    g = pq.read_table(run_dir / "games").sort_by("game_index").drop_columns(["run_id"])
    e = pq.read_table(run_dir / "events").sort_by([("game_index", "ascending"), ("seq", "ascending")])
    return g, e.drop_columns(["run_id"])


@pytest.fixture
def spec_path(tmp_path) -> Path:
    p = tmp_path / "led.toml"
    p.write_text(SPEC)
    return p


@pytest.fixture
def run_dir(tmp_path, spec_path) -> Path:
    """A run folder as `protolab run` starts it: inputs and run.json, no shard yet."""
    d = tmp_path / "led-run"
    d.mkdir()
    runfolder.save_inputs(d, {})
    runfolder.write_manifest(d, new_manifest(make_plan(load_spec(str(spec_path))), "led-run"))
    return d


def edit(run_dir: Path, change) -> None:
    m = json.loads((run_dir / "run.json").read_text())
    change(m)
    (run_dir / "run.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(shard_cuont=3), "key 'shard_cuont': not a run.json key"),
        (lambda m: m.update(games="120"), "key 'games': expected a whole number, got '120'"),
        (lambda m: m.update(complete=1), "key 'complete': expected true or false, got 1"),
        (lambda m: m.update(shard_count=True), "key 'shard_count': expected a whole number, got True"),
        (lambda m: m.update(sessions={}), "key 'sessions': expected a list"),
        (lambda m: m.pop("spec_hash"), "key 'spec_hash': missing"),
    ],
)
def test_a_bad_key_in_run_json_is_one_line_naming_file_and_key(run_dir, capsys, change, message):
    edit(run_dir, change)
    with pytest.raises(runfolder.RunDirError, match=f"^{run_dir / 'run.json'}: {message}"):
        prepare(None, RunOptions(resume=str(run_dir)))
    assert main(["run", "--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(run_dir / "run.json") in err and err.count("\n") == 1


def test_what_is_written_is_checked_too(run_dir):
    m = runfolder.read_manifest(run_dir)
    assert Manifest.of(m.to_json(), "run.json") == m  # read, written: the same keys
    with pytest.raises(ManifestError, match="key 'games': expected a whole number"):
        runfolder.write_manifest(run_dir, dataclasses.replace(m, games=1.5))
    assert runfolder.read_manifest(run_dir) == m  # nothing was written


def test_a_stopped_session_leaves_a_shard_being_written_to_its_worker(run_dir, spec_path):
    """A stop closes the session while workers may still be writing their shard files: removing
    their temporary files then made a worker's rename fail and Ray print its traceback under the
    stop's line (the SIGINT sweep saw it). The runner removes them once the session's Ray has ended;
    a completed session, with nothing in flight, removes them itself."""
    from protolab.experiment.run.ledger import Ledger

    plan = make_plan(load_spec(str(spec_path)))
    writing = run_dir / "games" / ".shard-00001.parquet.0123456789ab.tmp"
    writing.parent.mkdir(exist_ok=True)
    for status, kept in (("interrupted", True), ("failed", True), ("complete", False)):
        writing.write_bytes(b"a worker's shard, half written")
        ledger = Ledger(runfolder.open_location(run_dir), runfolder.read_manifest(run_dir), plan, {"where": "test"})
        ledger.close(status)
        assert writing.exists() == kept, status
        assert runfolder.read_manifest(run_dir).sessions[-1]["outcome"] == status


@pytest.mark.slow
def test_journal_batch_cut_by_a_kill_resumes_to_identical_rows(spec_path, tmp_path):
    ref = run(str(spec_path), RunOptions(workers=2, out=str(tmp_path / "ref"), show_progress=False))
    assert ref.status == "complete" and ref.computed_shards == SHARDS
    out = tmp_path / "killed"
    out.mkdir()
    child = subprocess.run(
        [sys.executable, "-c", KILLED_MID_BATCH, str(spec_path), str(out)], env=ENV, cwd=tmp_path, timeout=300
    )
    assert child.returncode == -9
    (run_dir,) = list(out.iterdir())
    text = (run_dir / runfolder.JOURNAL).read_text()
    assert not text.endswith("\n")  # the last line was cut
    recorded = runfolder.read_manifest(run_dir).shards
    assert 0 < len(recorded) < SHARDS
    assert len(recorded) == text.count("\n")  # every whole line, no cut one
    res = run(None, RunOptions(resume=str(run_dir), workers=2, show_progress=False))
    assert res.status == "complete" and res.kept_shards == len(recorded)
    assert res.computed_shards == SHARDS - len(recorded)
    for a, b in zip(rows(run_dir), rows(ref.run_dir), strict=True):
        assert a.equals(b)
    assert not (run_dir / runfolder.JOURNAL).exists()
