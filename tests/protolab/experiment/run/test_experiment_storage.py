"""Runs that live in an object store (analysis/runs/storage.py): an S3-compatible server (moto's
standalone server) started by the tests on 127.0.0.1, never on an outside address. The run on two Ray
nodes in a bucket (killed, resumed from the bucket, reported straight from it) is in
tests/protolab/experiment/test_experiment_cluster.py, on that file's namespace cluster."""

import io
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from fixtures_store import CREDS, make_bucket, start_moto

from analysis.runs import runfolder
from analysis.runs.manifest import ShardEntry
from protolab.experiment.run.runner import RunOptions, run
from protolab.experiment.run.shards import sampled_games
from protolab.experiment.seeds import mix64
from protolab.experiment.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[4]


# -- without Ray: the storage layer against a local S3 server on 127.0.0.1 ----------------------------------


@pytest.fixture
def s3(monkeypatch):
    proc, endpoint = start_moto()
    try:
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
        raw = {"index": i, "games": 5, "games_file": f"games/shard-{i:05d}.parquet", "games_bytes": 10}
        runfolder.append_journal(run_dir, ShardEntry.of({**raw, "games_sha256": "ab"}, "test"))
    assert [e.index for e in runfolder.read_journal(run_dir)] == [0, 1]
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
