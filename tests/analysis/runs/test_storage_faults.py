"""Every wait on an object store is bounded and interruptible (analysis/runs/storage.py): an endpoint on
127.0.0.1 that accepts connections and never answers ends `protolab report` and `protolab run --out`
in one line within --storage-timeout, Ctrl-C ends the wait at once, and a store that refuses the
credentials is named as such by the start-up probe, before any game is played."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fixtures_store import start_moto

import sim
from analysis.runs.storage import StorageError, check_read_write, location

SIM_ROOT = Path(sim.__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_UP = 10  # seconds for the interpreter and protolab's imports on a busy, shared machine


class Endpoint(str):
    """The endpoint's URL, and the connections it has accepted so far."""

    held: list[socket.socket]


@pytest.fixture
def silent_endpoint():
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = Endpoint(f"http://127.0.0.1:{server.getsockname()[1]}")
    url.held = held
    try:
        yield url
    finally:
        stop.set()
        thread.join(5)
        for c in held:
            c.close()
        server.close()


def store_env(endpoint: str, **more: str) -> dict[str, str]:
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "protolab-test",
        "AWS_SECRET_ACCESS_KEY": "protolab-test",
        "AWS_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": endpoint,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("PROTOLAB_STORAGE_TIMEOUT", None)
    env.update(more)
    return env


def protolab(*argv: str) -> list[str]:
    return [sys.executable, "-m", "protolab", *argv]


def one_line_error(done: subprocess.CompletedProcess, *words: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("protolab: error: "), done.stderr[-2000:]
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_report_from_a_silent_store_ends_within_its_time_limit(silent_endpoint, tmp_path):
    t0 = time.monotonic()
    done = subprocess.run(
        protolab("report", "s3://lab/runs/r1", "--storage-timeout", "3"),
        cwd=tmp_path,
        env=store_env(silent_endpoint),
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - t0
    one_line_error(done, "s3://lab/runs/r1", "no answer from the object store within 3 s", "--storage-timeout")
    assert 3 <= took < 3 + START_UP, took


def test_the_time_limit_has_a_default_and_the_environment_reaches_it(silent_endpoint, tmp_path):
    done = subprocess.run(
        protolab("report", "s3://lab/runs/r1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=store_env(silent_endpoint, PROTOLAB_STORAGE_TIMEOUT="2"),
        timeout=120,
    )
    one_line_error(done, "within 2 s")


def test_run_out_to_a_silent_store_is_refused_before_any_game(silent_endpoint, tmp_path):
    t0 = time.monotonic()
    done = subprocess.run(
        protolab("run", "demo", "--out", "s3://lab/runs", "--storage-timeout", "2", "--no-progress"),
        cwd=tmp_path,
        env=store_env(silent_endpoint),
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_line_error(done, "--out s3://lab/runs", "no answer from the object store within 2 s")
    assert time.monotonic() - t0 < 2 + START_UP


def test_ctrl_c_ends_the_wait_at_once(silent_endpoint, tmp_path):
    proc = subprocess.Popen(
        protolab("report", "s3://lab/runs/r1", "--storage-timeout", "600"),
        cwd=tmp_path,
        env=store_env(silent_endpoint),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        t_start = time.monotonic()
        while not silent_endpoint.held and proc.poll() is None and time.monotonic() - t_start < 3 * START_UP:
            time.sleep(0.1)  # until protolab has connected: it is waiting on the store
        assert silent_endpoint.held, "protolab never connected to the store"
        time.sleep(1)
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=30)[1]
        assert time.monotonic() - t0 < 3
        assert proc.returncode == 130 and err.strip() == "protolab: interrupted", err[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e9"])
def test_storage_timeout_must_be_positive_and_bounded(tmp_path, value):
    done = subprocess.run(
        protolab("report", str(tmp_path), f"--storage-timeout={value}"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_line_error(done, "--storage-timeout")


@pytest.fixture(params=[0])
def strict_store(request):
    """moto's S3 server on 127.0.0.1 checking every request's credentials (after the first
    `request.param` requests, the set-up's)."""
    proc, endpoint = start_moto(INITIAL_NO_AUTH_ACTION_COUNT=str(request.param))
    try:
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(10)


def test_refused_credentials_are_named_before_any_game(strict_store, tmp_path):
    done = subprocess.run(
        protolab("run", "demo", "--out", "s3://lab/runs", "--no-progress"),
        cwd=tmp_path,
        env=store_env(strict_store),
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_line_error(done, "--out s3://lab/runs", "credentials", "AWS_ACCESS_KEY_ID")
    assert "shard" not in done.stdout


def test_probe_writes_reads_back_and_removes(tmp_path):
    folder = location(tmp_path)
    check_read_write(folder)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "ro").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        with pytest.raises(StorageError, match="cannot write"):
            check_read_write(location(tmp_path / "ro"))


@pytest.mark.parametrize("strict_store", [4], indirect=True)
def test_a_write_only_key_is_refused_before_any_game(strict_store, tmp_path):
    # a key allowed to write and list but not to read back: the probe must not take it for a usable store
    import json

    import boto3

    setup = {
        "endpoint_url": strict_store,
        "region_name": "us-east-1",
        "aws_access_key_id": "setup",
        "aws_secret_access_key": "setup",
    }
    boto3.client("s3", **setup).create_bucket(Bucket="lab")
    iam = boto3.client("iam", **setup)
    iam.create_user(UserName="writer")
    key = iam.create_access_key(UserName="writer")["AccessKey"]
    iam.put_user_policy(
        UserName="writer",
        PolicyName="write-only",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Resource": "*", "Action": ["s3:PutObject", "s3:DeleteObject", "s3:ListBucket"]}
                ],
            }
        ),
    )
    env = store_env(strict_store, AWS_ACCESS_KEY_ID=key["AccessKeyId"], AWS_SECRET_ACCESS_KEY=key["SecretAccessKey"])
    done = subprocess.run(
        protolab("run", "demo", "--out", "s3://lab/runs", "--no-progress"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_line_error(done, "--out s3://lab/runs", "refused access", "credentials")
