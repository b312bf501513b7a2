"""`protolab run` ends cleanly however it is stopped: no process of its local Ray outlives it (a
killed driver, a killed gcs_server, Ctrl-C pressed twice, SIGTERM), and `--address` with nothing
answering gives up within its limit. Real processes, a real local Ray on 127.0.0.1; no mocks.

A session's processes are found two ways, independently of the code under test: every descendant
of the driver seen before the stop (pid and start time), and every process that has a file under
the session's private Ray folder open (read from /proc)."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim
from analysis.runs import runfolder
from protolab.cli import main
from protolab.experiment.run.plan import SHARD_CAP, SHARD_CAP_NO_EVENTS, make_plan, shard_size
from protolab.experiment.run.runner import RunOptions, new_manifest, prepare
from protolab.experiment.spec import load_spec

SIM_ROOT = Path(sim.__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
# far more games than a test waits for: the run is always stopped mid-way
SPEC = 'name = "life"\nseed = 5\ngames = 2000000\nshard_games = 400\nevents = false\n'
GONE_WITHIN = 30.0  # seconds for every process of the session to be gone


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of a live process, None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])


def tree(pid: int) -> dict[int, tuple[int, str]]:
    """Descendants of `pid`: pid -> (start time, command line)."""
    parent: dict[int, int] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
                parent[int(p.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
            except (OSError, ValueError):
                continue
    out: dict[int, tuple[int, str]] = {}
    frontier = [pid]
    while frontier:
        cur = frontier.pop()
        for child, par in parent.items():
            st = proc_stat(child)
            if par == cur and child not in out and st is not None:
                try:
                    cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                out[child] = (st[1], cmd)
                frontier.append(child)
    return out


def ray_root(procs: dict[int, tuple[int, str]]) -> Path:
    """The session's private Ray folder, from the gcs_server's --log_dir (ROOT/session_.../logs)."""
    for _, cmd in procs.values():
        for arg in cmd.split():
            if arg.startswith("--log_dir=") and "/session_" in arg:
                return Path(arg.removeprefix("--log_dir=").split("/session_")[0])
    raise AssertionError(f"no gcs_server among {[c[:60] for _, c in procs.values()]}")


def holding(root: Path) -> list[int]:
    """Live processes with a file under `root` open or on their command line."""
    prefix = str(root) + "/"
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            hit = prefix.encode() in (p / "cmdline").read_bytes() or any(
                os.readlink(fd).startswith(prefix) for fd in (p / "fd").iterdir()
            )
        except OSError:
            continue
        st = proc_stat(int(p.name))
        if hit and st is not None and st[0] not in "ZX":
            out.append(int(p.name))
    return out


def survivors(procs: dict[int, tuple[int, str]], root: Path) -> list[str]:
    alive = [
        f"{pid} {cmd[:50]}"
        for pid, (start, cmd) in procs.items()
        if (st := proc_stat(pid)) is not None and st[1] == start and st[0] not in "ZX"
    ]
    return alive + [f"{pid} holds {root}" for pid in holding(root)]


def assert_all_gone(procs: dict[int, tuple[int, str]], root: Path) -> None:
    t0 = time.monotonic()
    while (left := survivors(procs, root)) and time.monotonic() - t0 < GONE_WITHIN:
        time.sleep(0.2)
    assert not left, f"outlived the run: {left}"
    while root.exists() and time.monotonic() - t0 < GONE_WITHIN:
        time.sleep(0.2)
    assert not root.exists(), f"{root} was left behind"


@pytest.fixture
def spec(tmp_path) -> Path:
    p = tmp_path / "life.toml"
    p.write_text(SPEC)
    return p


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_driver_left():
    """A failed test must not leave its driver running (its reaper then ends its Ray)."""
    yield
    while STARTED:
        p = STARTED.pop()
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


def start(spec: Path, out: Path, *extra) -> subprocess.Popen:
    """`protolab run` in its own process group (as a shell runs a command)."""
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "protolab",
            "run",
            str(spec),
            "--workers",
            "1",
            "--out",
            str(out),
            "--no-progress",
            *map(str, extra),
        ],
        env=ENV,
        cwd=spec.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    STARTED.append(p)
    return p


def playing(p: subprocess.Popen, out: Path, timeout: float = 120) -> dict[int, tuple[int, str]]:
    """Wait for the first finished shard; the driver's process tree at that moment."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        assert p.poll() is None, p.communicate()
        runs = [d for d in out.iterdir() if d.is_dir()] if out.exists() else []
        try:
            if runs and runfolder.read_manifest(runs[0]).shards:
                procs = tree(p.pid)
                if any("ray::" in cmd for _, cmd in procs.values()):
                    return procs
        except (runfolder.RunDirError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError("no shard finished")


def test_sigkill_of_the_driver_takes_its_ray_along(spec, tmp_path):
    p = start(spec, tmp_path / "out")
    procs = playing(p, tmp_path / "out")
    root = ray_root(procs)
    assert any("ray::" in cmd and "Agent" in cmd for _, cmd in procs.values())  # the ones that used to stay
    os.kill(p.pid, signal.SIGKILL)
    p.communicate(timeout=30)
    assert_all_gone(procs, root)


@pytest.mark.slow
def test_killed_gcs_server_ends_the_run(spec, tmp_path):
    p = start(spec, tmp_path / "out")
    procs = playing(p, tmp_path / "out")
    root = ray_root(procs)
    (gcs,) = [pid for pid, (_, cmd) in procs.items() if "gcs_server" in cmd.split()[0]]
    os.kill(gcs, signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert "the local Ray stopped (gcs_server exited)" in err and "--resume" in err
    assert_all_gone(procs, root)


@pytest.mark.slow
@pytest.mark.parametrize("signals, status", [((signal.SIGINT, signal.SIGINT), 130), ((signal.SIGTERM,), 143)])
def test_ctrl_c_twice_or_sigterm_stops_cleanly(spec, tmp_path, signals, status):
    p = start(spec, tmp_path / "out")
    procs = playing(p, tmp_path / "out")
    root = ray_root(procs)
    for sig in signals:  # to the whole process group, as a terminal's Ctrl-C does
        os.killpg(p.pid, sig)
        time.sleep(0.3)  # the second lands while the first is being cleaned up
    out, err = p.communicate(timeout=60)
    assert p.returncode == status, err
    assert "Stopped." in out and "--resume" in out, out
    (run_dir,) = (tmp_path / "out").iterdir()
    m = runfolder.read_manifest(run_dir)
    session = m.sessions[-1]
    assert session["outcome"] == "interrupted" and m.shards
    # the whole process tree's memory: driver, the worker that played, Ray's own processes
    assert session["worker_processes"] == 1 and 100 < session["worker_peak_rss_mb"] < 500
    assert session["worker_peak_rss_mb"] >= max((s.worker or {})["peak_rss_mb"] for s in m.shards)
    assert session["ray_total_peak_rss_mb"] > 100 and session["driver_peak_rss_mb"] > 50
    assert session["total_peak_rss_mb"] == pytest.approx(
        session["driver_peak_rss_mb"] + session["workers_total_peak_rss_mb"] + session["ray_total_peak_rss_mb"], abs=0.2
    )
    assert_all_gone(procs, root)


def no_run_folder(out: Path) -> bool:
    """Nothing written: `--out` may have been created (checked writable), but holds no run folder."""
    return not out.exists() or not any(out.iterdir())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_address_with_nothing_listening_gives_up_in_time(spec, tmp_path):
    port = free_port()
    t0 = time.monotonic()
    p = start(spec, tmp_path / "out", "--address", f"127.0.0.1:{port}", "--connect-timeout", 3)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 2, err
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith(f"protolab: error: cannot reach a Ray cluster at 127.0.0.1:{port} within 3 s"), err
    assert 3 <= took < 20, took  # imports included
    assert no_run_folder(tmp_path / "out")


def test_address_that_accepts_but_never_answers_gives_up_in_time(spec, tmp_path):
    """Something listens (the kernel completes the handshake) but it is not Ray: Ray itself would
    retry for minutes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        t0 = time.monotonic()
        p = start(spec, tmp_path / "out", "--address", address, "--connect-timeout", 4)
        _, err = p.communicate(timeout=90)
        took = time.monotonic() - t0
    assert p.returncode == 2, err
    assert f"protolab: error: cannot reach a Ray cluster at {address} within 4 s" in err, err
    assert took < 30, took
    assert no_run_folder(tmp_path / "out")


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_connect_timeout_must_be_positive(spec, tmp_path, capsys, value):
    assert (
        main(
            ["run", str(spec), "--address", "127.0.0.1:1", f"--connect-timeout={value}", "--out", str(tmp_path / "out")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("protolab: error: --connect-timeout: expected a number of seconds above 0, got"), err
    assert no_run_folder(tmp_path / "out")


# -- shard size ------------------------------------------------------------------------------------


@pytest.mark.parametrize("events, cap", [(True, SHARD_CAP), (False, SHARD_CAP_NO_EVENTS)])
def test_a_huge_run_never_makes_shards_above_the_cap(tmp_path, events, cap):
    p = tmp_path / "huge.toml"
    p.write_text(f'name = "huge"\nseed = 1\ngames = 20000000\nshard_games = 50000\nevents = {str(events).lower()}\n')
    plan = make_plan(load_spec(str(p)))
    assert shard_size(plan.spec) == cap == plan.shard_games
    assert max(s.games for s in plan.shards) == cap
    assert sum(s.games for s in plan.shards) == plan.total_games == 20_000_000


def test_a_resumed_run_keeps_the_layout_it_was_started_with(tmp_path):
    """A run started before the cap (run.json without `shard_games`) resumes in its own 50,000-game
    shards: cutting it anew would pair recorded shard numbers with other games."""
    p = tmp_path / "old.toml"
    p.write_text('name = "old"\nseed = 1\ngames = 100000\nshard_games = 50000\n')
    spec = load_spec(str(p))
    assert [s.games for s in make_plan(spec).shards] == [SHARD_CAP] * (100_000 // SHARD_CAP)
    run_dir = tmp_path / "old-run"
    run_dir.mkdir()
    manifest = new_manifest(make_plan(spec, shard_games=50_000), "old-run")
    manifest.shard_games = None  # as runs made before the cap: no key
    runfolder.save_inputs(run_dir, {})
    runfolder.write_manifest(run_dir, manifest)
    plan, _, _ = prepare(None, RunOptions(resume=str(run_dir)))
    assert [s.games for s in plan.shards] == [50_000, 50_000] and plan.shard_games == 50_000
    manifest.shard_count = 7  # an edited manifest is refused
    runfolder.write_manifest(run_dir, manifest)
    with pytest.raises(runfolder.RunDirError, match="key 'shard_count': expected 2 shards of 50,000 games"):
        prepare(None, RunOptions(resume=str(run_dir)))
