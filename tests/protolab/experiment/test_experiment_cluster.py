"""A two-node Ray cluster on this machine: a head and a worker node, each in a network namespace
the test creates (a veth pair, two addresses of its own, nothing else), both running the installed
wheel as cluster nodes do (tests/fixtures_wheel), as does the driver. `protolab run --address`
against the head must run shards on both nodes and give the same rows as a single-node run, and a
node killed mid-run must be named in one line and in run.json, with rows still equal. One cluster
serves the file's tests (each with its own output folder); the test that kills a node runs last.

The worker node also gets an empty tmpfs over the output folder, so it does not see the run
folder at all, like a cluster without a shared disk: its shards come back to the driver as bytes.
An S3 server (moto) in the head's namespace, on the head's address, is the object store both nodes
reach and nothing outside does: a run with `--out s3://...` is killed after some shards, resumed
from the bucket, reported straight from it, and gives a local run's rows; the driver receives
receipts only.
"""

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fixtures_cluster import namespace_pair, namespaces_unavailable, ray_start, sh
from fixtures_store import CREDS, make_bucket, wait_listening

from analysis.runs import runfolder
from protolab.experiment.run.runner import RunOptions, run
from protolab.experiment.session import keep_local_ray

ROOT = Path(__file__).resolve().parents[3]
SPEC = """
name = "cluster"
seed = 5
games = 100
shard_games = 1000
[seats]
swap = true
[draft]
mode = "sampled"
samples = 40
[[arms]]
name = "official"
[[arms]]
name = "fire1-worth-3"
cards = ["fire1_worth_3.toml"]
"""


def in_head(n: dict, *argv) -> list[str]:
    """`python ARGV` as the head node's namespace runs it, on the wheel's interpreter."""
    return ["ip", "netns", "exec", n["head_ns"], str(n["python"]), *map(str, argv)]


def on_head(n: dict, *argv) -> list[str]:
    """`protolab ARGV` in the head node's namespace, joined to the namespace cluster."""
    return in_head(n, "-m", "protolab", *argv, "--address", f"{n['head_ip']}:6379")


def driver_on_head(n: dict, *argv, cwd: Path) -> subprocess.Popen:
    """`protolab ARGV` on the head (on_head) as a process of its own, its output captured."""
    return subprocess.Popen(
        on_head(n, *argv), env=n["env"], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def rows(run_dir: Path):
    g = pq.read_table(run_dir / "games").sort_by("game_index").drop_columns(["run_id"])
    e = pq.read_table(run_dir / "events").sort_by([("game_index", "ascending"), ("seq", "ascending")])
    return g, e.drop_columns(["run_id"])


def run_here(spec: Path, out: Path):
    """The spec played on one machine, in this process (the editable checkout); the file's local runs
    share one local Ray (a Ray start saved per run)."""
    with keep_local_ray(2, end=False):
        res = run(str(spec), RunOptions(workers=2, out=str(out), show_progress=False))
    assert res.status == "complete"
    return res.run_dir


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory, wheel):
    """The cluster, started once for the file's tests (two `ray start`, seconds of every core), with
    the S3 server in the head's namespace: the test that kills its worker node comes last."""
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(reason)
    temp = Path(tempfile.mkdtemp(prefix="plr", dir="/tmp"))  # short: Ray's socket paths must fit
    out = tmp_path_factory.mktemp("out")
    ray = wheel.bin / "ray"
    try:
        with namespace_pair("pl", 213) as n:
            endpoint = f"http://{n.head_ip}:9000"
            # the nodes' workers write to the bucket with these (they inherit the raylet's environment)
            env = wheel.env(
                RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32), AWS_ENDPOINT_URL=endpoint, **CREDS
            )
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)  # "0" (tests/conftest.py) forbids joining a head
            moto = [str(Path(sys.executable).parent / "moto_server"), "-H", n.head_ip, "-p", "9000"]
            subprocess.Popen(
                ["ip", "netns", "exec", n.head_ns, *moto], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            sh(
                "ip",
                "netns",
                "exec",
                n.head_ns,
                *ray_start(n, ray, temp, head=True),
                env=env,
                timeout=120,
            )
            sh(
                "ip",
                "netns",
                "exec",
                n.work_ns,
                "sh",
                "-c",
                f"mount -t tmpfs tmpfs '{out}' && exec {shlex.join(ray_start(n, ray, temp, head=False))}",
                env=env,
                timeout=120,
            )
            wait_listening(n.head_ip, 9000, n.work_ns)  # the worker's node reaches the store
            make_bucket(endpoint, "lab", n.head_ns, env)
            yield {
                "head_ns": n.head_ns,
                "head_ip": n.head_ip,
                "work_ip": n.work_ip,
                "env": env,
                "out": out,
                "python": wheel.python,
                "work_temp": temp / "w",
            }
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The cluster spec's rows played on one machine, in this process (the editable checkout)."""
    d = tmp_path_factory.mktemp("local")
    (d / "cluster.toml").write_text(SPEC)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", d / "fire1_worth_3.toml")
    return rows(run_here(d / "cluster.toml", d / "runs"))


@pytest.mark.slow
def test_two_node_cluster_matches_single_node(two_nodes, local_rows, tmp_path):
    spec = tmp_path / "cluster.toml"
    spec.write_text(SPEC)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", tmp_path / "fire1_worth_3.toml")
    n = two_nodes
    out = n["out"] / "matches"  # each test its own folder: one cluster serves the file
    r = sh(
        *on_head(n, "run", spec, "--out", out, "--no-progress"), env=n["env"], cwd=tmp_path, check=False, timeout=600
    )
    assert r.returncode == 0, r.stderr
    assert "Ray cluster at" in r.stdout and "(2 CPUs)" in r.stdout
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    m = json.loads((run_dir / "run.json").read_text())
    assert m["complete"] and len(m["shards"]) == 8 and m["games"] == 8000
    nodes = {s["worker"]["node"] for s in m["shards"]}
    assert nodes == {n["head_ip"], n["work_ip"]}, nodes  # shards ran on both nodes
    by = {s["worker"]["node"]: s["written_by"] for s in m["shards"]}
    assert by == {n["head_ip"]: "worker", n["work_ip"]: "driver"}  # no shared disk: bytes came back
    ids = {s["worker"]["node"]: s["worker"]["node_id"] for s in m["shards"]}
    assert len(set(ids.values())) == 2 and all(len(i) == 56 for i in ids.values())  # Ray's node ids
    assert "nodes_lost" not in m["sessions"][-1]
    g, e = rows(run_dir)
    g0, e0 = local_rows
    assert g.equals(g0) and e.equals(e0)


TUNE = """
name = "tune-cluster"
seed = 4
games = 300
[pool]
sets = ["Main 1", "Aux 1"]
cards = ["fire1_worth_3.toml"]
[draft]
mode = "random"
[tune]
protocol = "Fire"
cards = ["Fire 2", "Fire 3"]
kinds = ["value"]
trials = 3
generation = 3
batch = 100
games = 200
verify = 1
"""


@pytest.mark.slow
def test_a_balance_search_on_the_cluster_matches_one_in_this_process(two_nodes, tmp_path):
    """`protolab tune --address`: jobs carry their card files as text, so the worker node (no shared
    disk) plays the same games; trials and verified numbers equal a search played in this process."""
    from protolab.experiment.jobs import Local
    from protolab.experiment.spec import load_spec
    from protolab.experiment.tune.tune import main_tune
    from protolab.experiment.tune.tuneplay import player

    spec = tmp_path / "tune.toml"
    spec.write_text(TUNE)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", tmp_path / "fire1_worth_3.toml")
    n = two_nodes
    argv = on_head(n, "tune", spec, "--out", n["out"] / "search", "--format", "json")
    r = sh(*argv, env=n["env"], cwd=tmp_path, check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    there = json.loads(r.stdout)
    here = main_tune(load_spec(spec), tmp_path / "here", player(Local()), lambda *_: None)
    assert there["baseline"] == here["baseline"]
    assert [c["protocols"] for c in there["candidates"]] == [c["protocols"] for c in here["candidates"]]


# -- the run in a bucket ----------------------------------------------------------------------------

BUCKET = """
name = "bucket"
seed = 11
games = 50
shard_games = 500
events = 0.5
[seats]
swap = true
[draft]
mode = "sampled"
samples = 80
"""

# Runs in the head's namespace: waits for the first journal object of the run, then kills the driver.
KILL_AFTER_FIRST_SHARD = """
import os, signal, sys, time
import pyarrow.fs as f
fs, root = f.FileSystem.from_uri(sys.argv[1])
pid, deadline = int(sys.argv[2]), time.time() + 120
while time.time() < deadline:
    found = [i.path for i in fs.get_file_info(f.FileSelector(root, recursive=True, allow_not_found=True))
             if "/journal/shard-" in i.path]
    if found:
        os.kill(pid, signal.SIGKILL)
        print(found[0].split("/")[-3])
        sys.exit(0)
    time.sleep(0.1)
sys.exit("no shard was recorded")
"""

COPY_DOWN = """
import sys
import pyarrow.fs as f
fs, path = f.FileSystem.from_uri(sys.argv[1])
f.copy_files(path, sys.argv[2], source_filesystem=fs, destination_filesystem=f.LocalFileSystem())
"""

# Flips one bit in the middle of a shard object the report reads.
TAMPER = """
import sys, pyarrow.fs as f
fs, p = f.FileSystem.from_uri(sys.argv[1] + '/tallies/shard-00003.parquet')
d = bytearray(fs.open_input_file(p).read()); d[len(d) // 2] ^= 1
with fs.open_output_stream(p) as o: o.write(bytes(d))
"""


def table_rows(run_dir: Path, kind: str, keys: list[str]):
    t = pq.read_table(run_dir / kind, partitioning=None)
    return t.sort_by([(k, "ascending") for k in keys]).drop_columns(["run_id"])


@pytest.mark.slow
def test_bucket_run_on_two_nodes_resumes_and_reports(two_nodes, tmp_path):
    n = two_nodes
    spec = tmp_path / "bucket.toml"
    spec.write_text(BUCKET)
    out = "s3://lab/runs"
    driver = driver_on_head(n, "run", spec, "--out", out, "--no-progress", cwd=tmp_path)
    killer = sh(*in_head(n, "-c", KILL_AFTER_FIRST_SHARD, out, driver.pid), env=n["env"], timeout=180)
    driver.communicate(timeout=60)
    assert driver.returncode == -signal.SIGKILL
    run_uri = f"{out}/{killer.stdout.strip()}"

    resume = on_head(n, "run", "--resume", run_uri, "--no-progress")
    r = sh(*resume, env=n["env"], cwd=tmp_path, check=False, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "fallback" not in r.stdout  # every worker wrote to the bucket itself

    report = in_head(n, "-m", "protolab", "report", run_uri)
    r = sh(*report, env=n["env"], cwd=tmp_path, check=False, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Recorded: events of a seeded 50% sample" in r.stdout and "4,000 games" in r.stdout

    local_copy = tmp_path / "copied"
    sh(*in_head(n, "-c", COPY_DOWN, run_uri, local_copy), env=n["env"], timeout=120)
    m = json.loads((local_copy / "run.json").read_text())
    resumed = m["sessions"][-1]  # the killed driver's session was never written: only its shards
    assert m["complete"] and len(m["shards"]) == 8
    assert resumed["resumed"] and 0 < resumed["shards_computed"] < 8
    assert {s["worker"]["node"] for s in m["shards"]} == {n["head_ip"], n["work_ip"]}
    assert {s["written_by"] for s in m["shards"]} == {"worker"}
    assert resumed["shards_via_driver"] == 0
    per_shard = resumed["driver_received_bytes"] / resumed["shards_computed"]
    shard_bytes = min(sum(s[f"{k}_bytes"] for k in runfolder.TABLES) for s in m["shards"])
    assert per_shard < 2048 < shard_bytes, (per_shard, shard_bytes)  # receipts, not files

    # the same rows as a run on one machine with local files (per-shard summaries: shard by shard)
    local = run_here(spec, tmp_path / "local")
    assert table_rows(local_copy, "games", ["game_index"]).equals(table_rows(local, "games", ["game_index"]))
    assert table_rows(local_copy, "events", ["game_index", "seq"]).equals(
        table_rows(local, "events", ["game_index", "seq"])
    )
    for kind in ("cards", "compiles", "tallies"):
        names = sorted(p.name for p in (local_copy / kind).iterdir())
        assert names == sorted(p.name for p in (local / kind).iterdir()) and len(names) == 8
        for name in names:
            a, b = (pq.read_table(d / kind / name).drop_columns(["run_id"]) for d in (local_copy, local))
            assert a.equals(b), (kind, name)
    games = pq.read_table(local_copy / "games")
    sampled = set(pq.read_table(local_copy / "events", columns=["game_index"]).column(0).to_pylist())
    assert 0.4 < len(sampled) / games.num_rows < 0.6  # about half the games kept their events

    # a shard object the report reads (its tallies) changed in the bucket after the run: the report
    # refuses it, naming the object
    sh(*in_head(n, "-c", TAMPER, run_uri), env=n["env"])
    r = sh(*report, env=n["env"], cwd=tmp_path, check=False, timeout=300)
    assert r.returncode == 2 and "tallies/shard-00003.parquet: does not match its SHA-256" in r.stderr, r.stderr


def _children(parent: int) -> dict[int, bytes]:
    """The processes `parent` (a raylet) started, with their command lines."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent:
            found[int(d.name)] = cmd
    return found


# Shards of a few seconds (search seats), so that the worker node is killed in the middle of one.
SLOW = (
    SPEC.replace("games = 100\nshard_games = 1000", "games = 24\nshard_games = 192")
    .replace("samples = 40", "samples = 16")
    .replace("swap = true", 'swap = true\nstrategies = ["search", "search"]')
)


# Run in the head's namespace on the wheel's interpreter: joins the cluster, says "watching", then
# "marked" once a shard task has written its start mark (protolab/experiment/run/nodes.py) from the
# worker node at ADDRESS, so that the node is killed past the mark however slow the machine is. Marks
# already in the store are not this run's: a driver killed earlier on the cluster (the bucket test's)
# never removed its session's marks.
MARK_WATCH = """
import sys, time
import ray
from ray.experimental import internal_kv
from protolab.experiment.run.nodes import NAMESPACE
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
ids = {n["NodeID"] for n in ray.nodes() if n["NodeManagerAddress"] == sys.argv[2]}
before = set(internal_kv._internal_kv_list(b"", namespace=NAMESPACE) or [])
print("watching", flush=True)
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    keys = set(internal_kv._internal_kv_list(b"", namespace=NAMESPACE) or []) - before
    if any(k.decode().rsplit("/", 1)[-1] in ids for k in keys):
        print("marked", flush=True)
        break
    time.sleep(0.05)
"""


@pytest.mark.slow
def test_a_node_lost_mid_run_is_named_and_its_shards_played_again(two_nodes, tmp_path):
    """kill -9 of the worker node (its raylet and every process it started, as when a machine
    goes) while it plays a shard, once the shard's start mark is written: the run completes on the head,
    says in one line which node left and which shards were running there, records both in
    run.json, shows no Ray state dump, and its rows equal those of a run that lost nothing."""
    assert SLOW != SPEC and "search" in SLOW
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", tmp_path / "fire1_worth_3.toml")
    n = two_nodes
    runs = n["out"] / "lost"
    (raylet,) = [int(p) for p in sh("pgrep", "-f", f"raylet.*{n['work_temp']}").stdout.split()]
    watch = subprocess.Popen(
        in_head(n, "-c", MARK_WATCH, f"{n['head_ip']}:6379", n["work_ip"]),
        env=n["env"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stdout.readline().strip() == "watching", watch.communicate(timeout=60)
    driver = driver_on_head(n, "run", spec, "--out", runs, "--no-progress", cwd=tmp_path)
    try:
        marked = watch.stdout.readline().strip()  # a shard of the worker node has started, past its mark
        if marked != "marked":
            raise AssertionError(f"the worker node never marked a shard: {watch.communicate(timeout=60)}")
        assert any(b"play_shard" in cmd for cmd in _children(raylet).values())  # and plays it (about 2 s)
        for pid in [raylet, *_children(raylet)]:
            os.kill(pid, signal.SIGKILL)
        out, err = driver.communicate(timeout=600)
    finally:
        driver.kill()
        watch.kill()
        watch.communicate()
    assert driver.returncode == 0, err
    lines = [line for line in out.splitlines() if "left the cluster" in line]
    assert len(lines) == 1, out
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    m = json.loads((run_dir / "run.json").read_text())
    assert m["complete"] and len(m["shards"]) == 4
    (lost,) = m["sessions"][-1]["nodes_lost"]
    assert lost["ip"] == n["work_ip"] and lost["shards"], lost
    assert lost["node_id"][:12] in lines[0] and n["work_ip"] in lines[0]
    shards = ", ".join(map(str, lost["shards"]))
    named = f"shard {shards} was" if len(lost["shards"]) == 1 else f"shards {shards} were"
    assert f"{named} running there" in lines[0]
    by_index = {s["index"]: s["worker"] for s in m["shards"]}
    assert all(by_index[i]["node_id"] != lost["node_id"] for i in lost["shards"])  # played again elsewhere
    assert "raylet" not in err.lower() and len(err.splitlines()) <= 2, err  # no Ray state dump

    spec_one = tmp_path / "one"
    spec_one.mkdir()
    (spec_one / "slow.toml").write_text(SLOW)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", spec_one / "fire1_worth_3.toml")
    g, e = rows(run_dir)
    g0, e0 = rows(run_here(spec_one / "slow.toml", tmp_path / "local"))
    assert g.equals(g0) and e.equals(e0)
