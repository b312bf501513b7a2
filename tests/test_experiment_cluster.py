"""A two-node Ray cluster on this machine: a head and a worker node, each in a network namespace
the test creates (a veth pair, two addresses of its own, nothing else). `protolab run --address`
against the head must run shards on both nodes and give the same rows as a single-node run.

The worker node also gets an empty tmpfs over the output folder, so it does not see the run
folder at all, like a cluster without a shared disk: its shards come back to the driver as bytes.
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sim
from sim.experiment.runner import RunOptions, run

ROOT = Path(__file__).resolve().parents[1]
SIM_ROOT = Path(sim.__file__).resolve().parents[1]      # the checkout, or site-packages when installed
RAY = str(Path(sys.executable).with_name("ray"))
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


def sh(*args, check=True, **kw):
    r = subprocess.run(list(map(str, args)), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def namespaces_unavailable() -> str | None:
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    probe = f"plprobe{os.getpid()}"
    r = sh("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"cannot create network namespaces here (`ip netns add`: {r.stderr.strip()})"
    sh("ip", "netns", "del", probe, check=False)
    return None


def rows(run_dir: Path):
    g = pq.read_table(run_dir / "games").sort_by("game_index").drop_columns(["run_id"])
    e = pq.read_table(run_dir / "events").sort_by([("game_index", "ascending"), ("seq", "ascending")])
    return g, e.drop_columns(["run_id"])


@pytest.fixture
def two_nodes(tmp_path):
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(reason)
    tag = os.getpid() % 100_000
    head_ns, work_ns = f"plh{tag}", f"plw{tag}"
    net = f"10.213.{tag % 200 + 20}"
    head_ip, work_ip = f"{net}.1", f"{net}.2"
    temp = Path(tempfile.mkdtemp(prefix="plr", dir="/tmp"))       # short: Ray's socket paths must fit
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)     # "0" (tests/conftest.py) forbids joining a head
    try:
        sh("ip", "netns", "add", head_ns)
        sh("ip", "netns", "add", work_ns)
        sh("ip", "link", "add", f"{head_ns}a", "type", "veth", "peer", "name", f"{head_ns}b")
        sh("ip", "link", "set", f"{head_ns}a", "netns", head_ns)
        sh("ip", "link", "set", f"{head_ns}b", "netns", work_ns)
        for ns, dev, ip in ((head_ns, f"{head_ns}a", head_ip), (work_ns, f"{head_ns}b", work_ip)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", head_ns, RAY, "start", "--head", f"--node-ip-address={head_ip}", "--port=6379",
           "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp / 'h'}",
           env=env, timeout=120)
        sh("ip", "netns", "exec", work_ns, "sh", "-c",
           f"mount -t tmpfs tmpfs '{out}' && exec '{RAY}' start --address={head_ip}:6379 "
           f"--node-ip-address={work_ip} --num-cpus=1 --disable-usage-stats --temp-dir='{temp / 'w'}'",
           env=env, timeout=120)
        yield {"head_ns": head_ns, "head_ip": head_ip, "work_ip": work_ip, "env": env, "out": out}
    finally:
        for ns in (head_ns, work_ns):                 # every process in our namespaces is ours
            r = sh("ip", "netns", "pids", ns, check=False)
            for pid in map(int, r.stdout.split()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.5)
        for ns in (head_ns, work_ns):
            sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(temp, ignore_errors=True)


def test_two_node_cluster_matches_single_node(two_nodes, tmp_path):
    spec = tmp_path / "cluster.toml"
    spec.write_text(SPEC)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", tmp_path / "fire1_worth_3.toml")
    n = two_nodes
    r = sh("ip", "netns", "exec", n["head_ns"], sys.executable, "-m", "sim.cli", "run", spec,
           "--address", f"{n['head_ip']}:6379", "--out", n["out"], "--no-progress", env=n["env"], cwd=tmp_path,
           check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "Ray cluster at" in r.stdout and "(2 CPUs)" in r.stdout
    (run_dir,) = [p for p in n["out"].iterdir() if p.is_dir()]
    m = json.loads((run_dir / "run.json").read_text())
    assert m["complete"] and len(m["shards"]) == 8 and m["games"] == 8000
    nodes = {s["worker"]["node"] for s in m["shards"]}
    assert nodes == {n["head_ip"], n["work_ip"]}, nodes                 # shards ran on both nodes
    by = {s["worker"]["node"]: s["written_by"] for s in m["shards"]}
    assert by == {n["head_ip"]: "worker", n["work_ip"]: "driver"}    # no shared disk: bytes came back

    local = run(str(spec), RunOptions(workers=2, out=str(tmp_path / "local"), show_progress=False))
    assert local.status == "complete"
    g, e = rows(run_dir)
    g0, e0 = rows(local.run_dir)
    assert g.equals(g0) and e.equals(e0)


def test_cluster_yaml_is_a_valid_launcher_config():
    """cluster.yaml passes the checks `ray up` makes, with placeholders where addresses go."""
    import yaml
    from ray.autoscaler._private.util import prepare_config, validate_config

    raw = yaml.safe_load((ROOT / "cluster.yaml").read_text())
    validate_config(prepare_config(raw))
    assert raw["provider"]["type"] == "local"
    assert raw["provider"]["head_ip"] == "HEAD_IP_ADDRESS"
    assert all("WORKER_IP" in w for w in raw["provider"]["worker_ips"])
    assert any("pip install" in c and "~/protolab" in c for c in raw["setup_commands"])
