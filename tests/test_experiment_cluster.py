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
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fixtures_cluster import namespace_pair, namespaces_unavailable, sh

import sim
from protolab.experiment.run.runner import RunOptions, run

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


def rows(run_dir: Path):
    g = pq.read_table(run_dir / "games").sort_by("game_index").drop_columns(["run_id"])
    e = pq.read_table(run_dir / "events").sort_by([("game_index", "ascending"), ("seq", "ascending")])
    return g, e.drop_columns(["run_id"])


@pytest.fixture
def two_nodes(tmp_path):
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(reason)
    temp = Path(tempfile.mkdtemp(prefix="plr", dir="/tmp"))       # short: Ray's socket paths must fit
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)     # "0" (tests/conftest.py) forbids joining a head
    try:
        with namespace_pair("pl", 213) as n:
            sh("ip", "netns", "exec", n.head_ns, RAY, "start", "--head", f"--node-ip-address={n.head_ip}",
               "--port=6379", "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
               f"--temp-dir={temp / 'h'}", env=env, timeout=120)
            sh("ip", "netns", "exec", n.work_ns, "sh", "-c",
               f"mount -t tmpfs tmpfs '{out}' && exec '{RAY}' start --address={n.head_ip}:6379 "
               f"--node-ip-address={n.work_ip} --num-cpus=1 --disable-usage-stats --temp-dir='{temp / 'w'}'",
               env=env, timeout=120)
            yield {"head_ns": n.head_ns, "head_ip": n.head_ip, "work_ip": n.work_ip, "env": env, "out": out}
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_two_node_cluster_matches_single_node(two_nodes, tmp_path):
    spec = tmp_path / "cluster.toml"
    spec.write_text(SPEC)
    shutil.copy(ROOT / "datasets/experiments/variants/fire1_worth_3.toml", tmp_path / "fire1_worth_3.toml")
    n = two_nodes
    r = sh("ip", "netns", "exec", n["head_ns"], sys.executable, "-m", "protolab", "run", spec,
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
    r = sh("ip", "netns", "exec", n["head_ns"], sys.executable, "-m", "protolab", "tune", spec,
           "--address", f"{n['head_ip']}:6379", "--out", n["out"] / "search", "--format", "json", env=n["env"],
           cwd=tmp_path, check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    there = json.loads(r.stdout)
    here = main_tune(load_spec(spec), tmp_path / "here", player(Local()), lambda *_: None)
    assert there["baseline"] == here["baseline"]
    assert [c["protocols"] for c in there["candidates"]] == [c["protocols"] for c in here["candidates"]]
