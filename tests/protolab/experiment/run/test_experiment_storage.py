"""Runs that live in an object store (analysis/runs/storage.py): an S3-compatible server (moto's
standalone server) started by the tests on a private address, never on an outside one.

The cluster test puts two Ray nodes in network namespaces (as tests/protolab/experiment/test_experiment_cluster.py
does) and the S3 server in the head's namespace, bound to the head's address on the veth pair
the test creates: both nodes reach it, nothing outside does, and the host's own network is not
touched. A run with `--out s3://...` is killed after some shards, resumed from the bucket, reported
straight from the bucket, and gives the same rows as a local single-node run; the driver receives
receipts only (measured: the serialised results of the shard tasks)."""

import io
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from fixtures_cluster import namespace_pair, namespaces_unavailable, ray_start, sh

import sim
from analysis.runs import runfolder
from protolab.experiment.run.runner import RunOptions, run
from protolab.experiment.run.shards import sampled_games
from protolab.experiment.seeds import mix64
from protolab.experiment.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[4]
SIM_ROOT = Path(sim.__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CREDS = {
    "AWS_ACCESS_KEY_ID": "protolab-test",
    "AWS_SECRET_ACCESS_KEY": "protolab-test",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
SPEC = """
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


def wait_listening(host: str, port: int, ns: str | None = None, timeout: float = 30) -> None:
    code = (
        f"import socket,time\nt=time.time()+{timeout}\nwhile True:\n try:\n  socket.create_connection(('{host}',"
        f"{port}),1).close();break\n except OSError:\n  assert time.time()<t,'no answer'\n  time.sleep(0.2)"
    )
    sh(*(("ip", "netns", "exec", ns) if ns else ()), sys.executable, "-c", code, timeout=timeout + 10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_bucket(endpoint: str, bucket: str, ns: str | None = None, env=None) -> None:
    code = (
        "import pyarrow.fs as f,sys; f.S3FileSystem(endpoint_override=sys.argv[1], allow_bucket_creation=True)"
        ".create_dir(sys.argv[2])"
    )
    sh(*(("ip", "netns", "exec", ns) if ns else ()), sys.executable, "-c", code, endpoint, bucket, env=env)


# -- without Ray: the storage layer against a local S3 server on 127.0.0.1 ----------------------------------


@pytest.fixture
def s3(monkeypatch):
    port = free_port()
    proc = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening("127.0.0.1", port)
        endpoint = f"http://127.0.0.1:{port}"
        for k, v in {**CREDS, "AWS_ENDPOINT_URL": endpoint}.items():
            monkeypatch.setenv(k, v)
        make_bucket(endpoint, "unit")
        yield "s3://unit"
    finally:
        proc.terminate()
        proc.wait(10)


def test_object_store_files_journal_and_lock(s3):
    run_dir, run_id = runfolder.create_run_dir(f"{s3}/runs", "t", "20260101-000000")
    assert str(run_dir) == f"{s3}/runs/{run_id}" and not run_dir.is_local
    runfolder.write_atomic(run_dir / "games/shard-00000.parquet", b"x" * 10)
    assert [f.name for f in runfolder.table_files(run_dir)] == ["shard-00000.parquet"]
    assert runfolder.file_sha256(run_dir / "games/shard-00000.parquet") == runfolder.sha256(b"x" * 10)
    # the journal: one object per shard on a store that cannot append, read back like shards.jsonl
    for i in (0, 1):
        runfolder.append_journal(
            run_dir,
            {
                "index": i,
                "games": 5,
                "games_file": f"games/shard-{i:05d}.parquet",
                "games_bytes": 10,
                "games_sha256": "ab",
            },
        )
    assert [e["index"] for e in runfolder.read_journal(run_dir)] == [0, 1]
    runfolder.clear_journal(run_dir)
    assert runfolder.read_journal(run_dir) == []
    # the lock object: a live holder is refused, a dead one on this machine is taken over
    with runfolder.locked(run_dir), pytest.raises(runfolder.RunDirError, match="another protolab run"):
        with runfolder.locked(run_dir):
            pass
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (run_dir / runfolder.LOCK).write_atomic(
        json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout), "time": time.time()}).encode()
    )
    with runfolder.locked(run_dir):
        pass
    assert not (run_dir / runfolder.LOCK).exists()


TIER_SPEC = """
name = "tiers"
seed = 9
games = 20
shard_games = 20
tiers = ["greedy", "random"]
[pool]
sets = ["Main 1", "Aux 1"]
[seats]
swap = true
"""


@pytest.mark.slow
def test_tier_study_in_a_bucket_reports_and_renders(s3, tmp_path, capsys):
    """`protolab run` of a tier study with `--out s3://...` ends with the tier report and its page in
    the bucket (it once ended in "not a local path"); report and dashboard read it from there."""
    from rich.console import Console

    from protolab.cli import main
    from protolab.experiment.run.runner import analyse

    (tmp_path / "tiers.toml").write_text(TIER_SPEC)
    res = run(str(tmp_path / "tiers.toml"), RunOptions(workers=2, out=f"{s3}/runs", show_progress=False))
    assert res.status == "complete" and str(res.run_dir).startswith(f"{s3}/runs/tiers-")
    console = Console(record=True, width=200, file=io.StringIO())
    analyse(res, console)
    text = console.export_text()
    assert "Rank agreement between tiers" in text and f"Tier dashboard: {res.run_dir}/dashboard.html" in text
    page = (res.run_dir / "dashboard.html").read_bytes().decode()
    assert "<h1>protolab tier study: tiers-" in page and "Rank agreement between tiers" in page
    assert main(["report", str(res.run_dir), "--format", "csv", "--table", "protocols"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[2].startswith("tier,protocol,games") and {r.split(",")[0] for r in rows[3:]} == {"greedy", "random"}
    assert main(["dashboard", str(res.run_dir), "--out", str(tmp_path / "tiers.html")]) == 0
    assert (tmp_path / "tiers.html").read_text() == page


def test_bad_location_is_one_line(tmp_path):
    with pytest.raises(runfolder.RunDirError, match=r"nope://x: cannot open this location .*s3://bucket/path"):
        runfolder.read_manifest("nope://x")


# -- events = fraction: which games keep their events -------------------------------------------------------


def test_events_key_values(tmp_path):
    spec = tmp_path / "s.toml"
    for value, want in (
        ("0.1", 0.1),
        ('"all"', True),
        ('"none"', "none"),
        ("1", True),
        ("0", "none"),
        ("false", False),
    ):
        spec.write_text(f'name = "e"\nseed = 1\ngames = 2\nevents = {value}\n')
        assert load_spec(str(spec)).events == want
    for bad in ("2", '"some"', "-0.5"):
        spec.write_text(f'name = "e"\nseed = 1\ngames = 2\nevents = {bad}\n')
        with pytest.raises(SpecError, match=r"s.toml: key 'events': expected true, false, \"all\", \"none\""):
            load_spec(str(spec))


def test_sampled_games_follow_the_seed():
    seeds = mix64(np.arange(1, 200_001, dtype=np.uint64))  # spread-out seeds
    keep = sampled_games(seeds, 0.1)
    assert abs(keep.mean() - 0.1) < 0.005  # about the fraction asked for
    assert np.array_equal(keep[1000:3000], sampled_games(seeds[1000:3000], 0.1))  # any sharding
    assert np.array_equal(keep, sampled_games(seeds.copy(), 0.1))
    assert not np.array_equal(keep, sampled_games(seeds + np.uint64(1), 0.1))  # another seed, other games


# -- two Ray nodes, the run in a bucket ---------------------------------------------------------------------


@pytest.fixture
def bucket_cluster(tmp_path):
    """A head and a worker node in two namespaces joined by a veth pair, and an S3 server in the
    head's namespace on the head's address."""
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(reason)
    temp = Path(tempfile.mkdtemp(prefix="pls", dir="/tmp"))  # short: Ray's socket paths must fit
    try:
        with namespace_pair("ps", 214) as n:
            endpoint = f"http://{n.head_ip}:9000"
            env = {
                **os.environ,
                **CREDS,
                "AWS_ENDPOINT_URL": endpoint,
                "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
                "RAY_USAGE_STATS_ENABLED": "0",
                "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN": secrets.token_hex(32),
            }
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
            subprocess.Popen(
                ["ip", "netns", "exec", n.head_ns, str(BIN / "moto_server"), "-H", n.head_ip, "-p", "9000"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            ray = str(BIN / "ray")
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
                *ray_start(n, ray, temp, head=False),
                env=env,
                timeout=120,
            )
            wait_listening(n.head_ip, 9000, n.work_ns)  # the worker's node reaches the store
            make_bucket(endpoint, "lab", n.head_ns, env)
            yield {"head_ns": n.head_ns, "head_ip": n.head_ip, "work_ip": n.work_ip, "env": env}
    finally:
        shutil.rmtree(temp, ignore_errors=True)


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


def table_rows(run_dir: Path, kind: str, keys: list[str]):
    t = pq.read_table(run_dir / kind, partitioning=None)
    return t.sort_by([(k, "ascending") for k in keys]).drop_columns(["run_id"])


@pytest.mark.slow
def test_bucket_run_on_two_nodes_resumes_and_reports(bucket_cluster, tmp_path):
    n = bucket_cluster
    spec = tmp_path / "bucket.toml"
    spec.write_text(SPEC)
    in_ns = ("ip", "netns", "exec", n["head_ns"])
    protolab = (*in_ns, sys.executable, "-m", "protolab")
    out = "s3://lab/runs"
    driver = subprocess.Popen(
        [*protolab, "run", str(spec), "--address", f"{n['head_ip']}:6379", "--out", out, "--no-progress"],
        env=n["env"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killer = sh(*in_ns, sys.executable, "-c", KILL_AFTER_FIRST_SHARD, out, driver.pid, env=n["env"], timeout=180)
    driver.communicate(timeout=60)
    assert driver.returncode == -signal.SIGKILL
    run_uri = f"{out}/{killer.stdout.strip()}"

    r = sh(
        *protolab,
        "run",
        "--resume",
        run_uri,
        "--address",
        f"{n['head_ip']}:6379",
        "--no-progress",
        env=n["env"],
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "fallback" not in r.stdout  # every worker wrote to the bucket itself

    r = sh(*protolab, "report", run_uri, env=n["env"], cwd=tmp_path, check=False, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Recorded: events of a seeded 50% sample" in r.stdout and "4,000 games" in r.stdout

    local_copy = tmp_path / "copied"
    sh(*in_ns, sys.executable, "-c", COPY_DOWN, run_uri, local_copy, env=n["env"], timeout=120)
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
    local = run(str(spec), RunOptions(workers=2, out=str(tmp_path / "local"), show_progress=False))
    assert local.status == "complete"
    assert table_rows(local_copy, "games", ["game_index"]).equals(table_rows(local.run_dir, "games", ["game_index"]))
    assert table_rows(local_copy, "events", ["game_index", "seq"]).equals(
        table_rows(local.run_dir, "events", ["game_index", "seq"])
    )
    for kind in ("cards", "compiles", "tallies"):
        names = sorted(p.name for p in (local_copy / kind).iterdir())
        assert names == sorted(p.name for p in (local.run_dir / kind).iterdir()) and len(names) == 8
        for name in names:
            a, b = (pq.read_table(d / kind / name).drop_columns(["run_id"]) for d in (local_copy, local.run_dir))
            assert a.equals(b), (kind, name)
    games = pq.read_table(local_copy / "games")
    sampled = set(pq.read_table(local_copy / "events", columns=["game_index"]).column(0).to_pylist())
    assert 0.4 < len(sampled) / games.num_rows < 0.6  # about half the games kept their events

    # a shard object the report reads (its tallies) changed in the bucket after the run: the report
    # refuses it, naming the object
    tamper = (
        "import sys, pyarrow.fs as f\nfs, p = f.FileSystem.from_uri(sys.argv[1] + '/tallies/shard-00003.parquet')"
        "\nd = bytearray(fs.open_input_file(p).read()); d[len(d) // 2] ^= 1"
        "\nwith fs.open_output_stream(p) as o: o.write(bytes(d))"
    )
    sh(*in_ns, sys.executable, "-c", tamper, run_uri, env=n["env"])
    r = sh(*protolab, "report", run_uri, env=n["env"], cwd=tmp_path, check=False, timeout=300)
    assert r.returncode == 2 and "tallies/shard-00003.parquet: does not match its SHA-256" in r.stderr, r.stderr


def test_rayjob_manifest_has_the_fields_kuberay_documents():
    docs = list(yaml.safe_load_all((ROOT / "deploy/rayjob.yaml").read_text()))
    (job,) = [d for d in docs if d.get("kind") == "RayJob"]
    assert job["apiVersion"] == "ray.io/v1" and job["metadata"]["name"]
    spec = job["spec"]
    assert spec["entrypoint"].startswith("protolab run ") and "--address auto" in spec["entrypoint"]
    assert "s3://" in spec["entrypoint"]
    assert spec["shutdownAfterJobFinishes"] is True and spec["ttlSecondsAfterFinished"] > 0
    cluster = spec["rayClusterSpec"]
    head = cluster["headGroupSpec"]
    assert head["rayStartParams"] is not None
    (worker,) = cluster["workerGroupSpecs"]
    assert (
        worker["groupName"]
        and worker["replicas"] >= 1
        and worker["minReplicas"] <= worker["replicas"] <= worker["maxReplicas"]
    )
    images = set()
    for group in (head, worker):
        (container,) = group["template"]["spec"]["containers"]
        images.add(container["image"])
        assert container["resources"]["limits"]["memory"] and container["resources"]["requests"]["cpu"]
        names = {e["name"] for e in container.get("env", [])}
        assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= names  # workers write to the bucket
    assert len(images) == 1  # one protolab everywhere
    assert f"ray{cluster['rayVersion']}" in next(iter(images))  # the image's Ray is the cluster's
