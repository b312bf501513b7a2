"""`protolab run` on a real local Ray (127.0.0.1 only) with real Parquet: determinism across worker
counts, the dataset in DuckDB/pandas/polars, and faults: a worker killed mid-shard, the driver
killed mid-run, Ctrl-C, and damaged shards found by --resume. No mocks."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sim
from analysis.runs import runfolder
from analysis.runs.manifest import ShardEntry
from analysis.runs.verify import shard_problem
from protolab.cli import main
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[4]
SIM_ROOT = Path(sim.__file__).resolve().parents[1]  # the checkout, or site-packages when installed
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}

# Two arms (official, a variant), 60 sampled matchups, seat-swapped pairs: 6,000 games in 12 shards
# (the number of shards, not of games, is what the worker counts and faults below need).
SPEC = """
name = "ref"
seed = 77
games = 50
shard_games = 500
[seats]
swap = true
[draft]
mode = "sampled"
samples = 60
[[arms]]
name = "official"
[[arms]]
name = "fire1-worth-3"
cards = ["fire1_worth_3.toml"]
"""
SHARDS, GAMES = 12, 6_000


def kept_files(run_dir: Path, entry) -> list[Path]:
    """The games, events and cards files a recorded shard lists."""
    return [run_dir / f.path for f in entry.files() if f.kind in ("games", "events", "cards")]


def rows(run_dir: Path, keep_run_id: bool = False):
    """Every row of a run, sorted (games by game_index, events by game_index and seq)."""
    g = pq.read_table(run_dir / "games").sort_by("game_index")
    e = pq.read_table(run_dir / "events").sort_by([("game_index", "ascending"), ("seq", "ascending")])
    if not keep_run_id:
        g, e = g.drop_columns(["run_id"]), e.drop_columns(["run_id"])
    return g, e


def the_run(out: Path) -> Path:
    (d,) = [p for p in out.iterdir() if p.is_dir()]
    return d


def check_complete(run_dir: Path) -> dict:
    m = json.loads((run_dir / "run.json").read_text())
    assert m["complete"] and m["games"] == GAMES and len(m["shards"]) == SHARDS
    assert sorted(s["index"] for s in m["shards"]) == list(range(SHARDS))
    assert sum(s["games_rows"] for s in m["shards"]) == GAMES
    for s in m["shards"]:
        assert shard_problem(run_dir, ShardEntry.of(s, "run.json")) is None
        assert s["worker"]["peak_rss_mb"] < 1024
    assert not list(run_dir.rglob(".*.tmp")) and not (run_dir / runfolder.JOURNAL).exists()
    gi = pq.read_table(run_dir / "games", columns=["game_index"])["game_index"].to_pylist()
    assert sorted(gi) == list(range(GAMES))  # none missing, none twice
    return m


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("spec")
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", d / "fire1_worth_3.toml")
    p = d / "ref.toml"
    p.write_text(SPEC)
    return p


@pytest.fixture(scope="module")
def ref(spec_path, tmp_path_factory):
    """The unfaulted reference run: 2 workers, in this process."""
    out = tmp_path_factory.mktemp("ref")
    res = run(str(spec_path), RunOptions(workers=2, out=str(out), show_progress=False))
    assert res.status == "complete"
    check_complete(res.run_dir)
    return res.run_dir, rows(res.run_dir)


def cli(*args, cwd: Path, **kw) -> subprocess.Popen:
    """`protolab run ...` as a process, from a neutral folder (like a user outside the checkout)."""
    return subprocess.Popen(
        [sys.executable, "-m", "protolab", "run", *map(str, args), "--no-progress"],
        env=ENV,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def descendants(pid: int) -> dict[int, str]:
    """Live descendants of `pid` with their command lines (from /proc)."""
    parent, cmd = {}, {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
            parent[int(p.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
            cmd[int(p.name)] = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
    out, frontier = {}, [pid]
    while frontier:
        cur = frontier.pop()
        for child, par in parent.items():
            if par == cur and child not in out:
                out[child] = cmd.get(child, "")
                frontier.append(child)
    return out


def wait_for_shards(run_dir_parent: Path, n: int, proc: subprocess.Popen, timeout: float = 300) -> Path:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        assert proc.poll() is None, proc.communicate()
        dirs = [p for p in run_dir_parent.iterdir() if p.is_dir()] if run_dir_parent.exists() else []
        if dirs and (dirs[0] / "run.json").exists():
            try:
                if len(runfolder.read_manifest(dirs[0]).shards) >= n:
                    return dirs[0]
            except (runfolder.RunDirError, json.JSONDecodeError):
                pass
        time.sleep(0.05)
    raise AssertionError(f"no {n} finished shards within {timeout} s")


def kill_tree(pids) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


# -- determinism ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 4])
def test_rows_identical_for_1_2_4_workers(ref, spec_path, tmp_path, workers):
    res = run(str(spec_path), RunOptions(workers=workers, out=str(tmp_path), show_progress=False))
    m = check_complete(res.run_dir)
    assert m["sessions"][0]["workers"] == workers
    g, e = rows(res.run_dir)
    assert g.equals(ref[1][0]) and e.equals(ref[1][1])
    cards = [pq.read_table(d / "cards").drop_columns(["run_id"]) for d in (res.run_dir, ref[0])]
    assert cards[0].num_rows > 0 and cards[0].equals(cards[1])  # the per-card summary too


def test_dataset_opens_in_duckdb_pandas_polars(ref):
    import duckdb
    import pandas as pd
    import polars as pl

    run_dir = ref[0]
    games, events = ref[1][0].num_rows, ref[1][1].num_rows
    con = duckdb.connect()
    assert con.execute(f"select count(*) from read_parquet('{run_dir}/games/*.parquet')").fetchone()[0] == games
    by_arm = dict(con.execute(f"select arm, count(*) from '{run_dir}/games/*.parquet' group by 1").fetchall())
    assert by_arm == {"official": GAMES // 2, "fire1-worth-3": GAMES // 2}
    joined = con.execute(f"""select count(*) from '{run_dir}/events/*.parquet' e
                         join '{run_dir}/games/*.parquet' g using (game_index) where e.kind = 'compile'""")
    assert joined.fetchone()[0] > 0
    df = pd.read_parquet(run_dir / "games")
    assert len(df) == games and df["winner"].isin([-1, 0, 1]).all()
    assert str(df["seat0_protocol_left"].dtype) == "category"
    assert len(pd.read_parquet(run_dir / "events", columns=["game_index", "kind"])) == events
    assert pl.read_parquet(f"{run_dir}/games/*.parquet").height == games
    assert pl.scan_parquet(f"{run_dir}/events/*.parquet").select(pl.len()).collect().item() == events
    m = json.loads((run_dir / "run.json").read_text())
    assert m["spec"]["name"] == "ref" and m["pool_hashes"]["fire1-worth-3"] != m["pool_hash"]
    assert set(m) >= {
        "run_id",
        "complete",
        "spec",
        "spec_hash",
        "pool_hash",
        "engine_version",
        "protolab_version",
        "games",
        "shards",
    }


# -- faults -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_worker_killed_mid_shard(ref, spec_path, tmp_path):
    p = cli(spec_path, "--workers", 2, "--out", tmp_path, cwd=spec_path.parent)
    killed = None
    t0 = time.monotonic()
    while killed is None and time.monotonic() - t0 < 300 and p.poll() is None:
        for pid, cmd in descendants(p.pid).items():
            if cmd.startswith("ray::play_shard"):
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.005)
    assert killed is not None, "no shard was seen running"
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    run_dir = the_run(tmp_path)
    m = check_complete(run_dir)
    assert killed not in {s["worker"]["pid"] for s in m["shards"]}  # its shard was played again
    g, e = rows(run_dir)
    assert g.equals(ref[1][0]) and e.equals(ref[1][1])


@pytest.mark.slow
def test_driver_killed_then_resume_recomputes_nothing_finished(ref, spec_path, tmp_path):
    p = cli(spec_path, "--workers", 1, "--out", tmp_path, cwd=spec_path.parent, start_new_session=True)
    run_dir = wait_for_shards(tmp_path, 2, p)
    tree = descendants(p.pid)
    os.killpg(p.pid, signal.SIGKILL)
    kill_tree(tree)
    p.communicate(timeout=60)
    finished = runfolder.read_manifest(run_dir).shards
    assert 2 <= len(finished) < SHARDS
    before = {s.index: [f.stat() for f in kept_files(run_dir, s)] for s in finished}
    r = cli("--resume", run_dir, cwd=spec_path.parent)
    out, err = r.communicate(timeout=300)
    assert r.returncode == 0, err
    assert f"({SHARDS - len(finished)} to play)" in out
    m = check_complete(run_dir)
    assert m["sessions"][-1]["resumed"] and m["sessions"][-1]["shards_computed"] == SHARDS - len(finished)
    for s in finished:
        after = [f.stat() for f in kept_files(run_dir, s)]
        assert [(a.st_ino, a.st_mtime_ns) for a in after] == [(b.st_ino, b.st_mtime_ns) for b in before[s.index]]
    g, e = rows(run_dir)
    assert g.equals(ref[1][0]) and e.equals(ref[1][1])


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resume_finishes(ref, spec_path, tmp_path):
    p = cli(spec_path, "--workers", 1, "--out", tmp_path, cwd=spec_path.parent)
    run_dir = wait_for_shards(tmp_path, 1, p)
    tree = descendants(p.pid)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Stopped." in out and "--resume" in out
    m = json.loads((run_dir / "run.json").read_text())
    assert not m["complete"] and 1 <= len(m["shards"]) < SHARDS and m["sessions"][0]["outcome"] == "interrupted"
    assert not list(run_dir.rglob(".*.tmp"))
    time.sleep(2)
    assert not [
        pid for pid in tree if Path(f"/proc/{pid}").exists() and "(Z)" not in Path(f"/proc/{pid}/stat").read_text()[:64]
    ], "Ray was left running"
    res = run(None, RunOptions(resume=str(run_dir), show_progress=False))
    assert res.status == "complete" and res.computed_shards == SHARDS - len(m["shards"])
    check_complete(run_dir)
    g, e = rows(run_dir)
    assert g.equals(ref[1][0]) and e.equals(ref[1][1])


def test_resume_detects_corrupt_truncated_and_missing_shards(ref, tmp_path):
    run_dir = tmp_path / "copy"
    shutil.copytree(ref[0], run_dir)
    g1 = run_dir / "games/shard-00001.parquet"
    g1.write_bytes(g1.read_bytes()[: g1.stat().st_size // 2])  # truncated
    e4 = run_dir / "events/shard-00004.parquet"
    blob = bytearray(e4.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # one flipped byte
    e4.write_bytes(bytes(blob))
    (run_dir / "games/shard-00007.parquet").unlink()  # gone
    damaged = ("shard-00001.parquet", "shard-00004.parquet", "shard-00007.parquet")  # one file per table each
    keep = {p: p.stat().st_mtime_ns for p in run_dir.glob("*/shard-*.parquet") if p.name not in damaged}
    assert len(keep) == len(runfolder.TABLES) * (SHARDS - 3)
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "ref"\nseed = 77\ngames = -200\n')
    snapshot = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()}
    assert main(["run", str(bad), "--resume", str(run_dir)]) == 2  # a bad spec touches nothing
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()} == snapshot
    res = run(None, RunOptions(resume=str(run_dir), show_progress=False))
    assert res.status == "complete" and res.computed_shards == 3
    assert sorted(r.split(":")[0] for r in res.recomputed) == ["shard 1", "shard 4", "shard 7"]
    assert {p: p.stat().st_mtime_ns for p in keep} == keep
    check_complete(run_dir)
    g, e = rows(run_dir, keep_run_id=True)
    g0, e0 = rows(ref[0], keep_run_id=True)
    assert g.equals(g0) and e.equals(e0)
    again = run(None, RunOptions(resume=str(run_dir), show_progress=False))  # whole: nothing to do
    assert again.computed_shards == 0 and again.recomputed == []
