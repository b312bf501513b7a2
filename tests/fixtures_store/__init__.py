"""moto's S3 server on 127.0.0.1 (a free port), or inside a test's network namespace: the object store the
storage and cluster tests write to."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from fixtures_cluster import sh


def start_moto(**env: str) -> tuple[subprocess.Popen, str]:
    """Start moto_server with `env` added to this environment (e.g. INITIAL_NO_AUTH_ACTION_COUNT="0":
    check every request's credentials); the process and its endpoint, once it accepts connections."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                proc.terminate()
                raise AssertionError("moto_server did not start") from None
            time.sleep(0.1)


# The test credentials moto accepts, for every process that reaches a test's S3 server.
CREDS = {
    "AWS_ACCESS_KEY_ID": "protolab-test",
    "AWS_SECRET_ACCESS_KEY": "protolab-test",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def in_ns(ns: str | None) -> tuple[str, ...]:
    """The prefix that runs a command in network namespace `ns` (none: this one)."""
    return ("ip", "netns", "exec", ns) if ns else ()


def wait_listening(host: str, port: int, ns: str | None = None, timeout: float = 30) -> None:
    """Wait until `host:port` accepts connections, as seen from namespace `ns`."""
    code = (
        f"import socket,time\nt=time.time()+{timeout}\nwhile True:\n try:\n  socket.create_connection(('{host}',"
        f"{port}),1).close();break\n except OSError:\n  assert time.time()<t,'no answer'\n  time.sleep(0.2)"
    )
    sh(*in_ns(ns), sys.executable, "-c", code, timeout=timeout + 10)


def make_bucket(endpoint: str, bucket: str, ns: str | None = None, env: dict[str, str] | None = None) -> None:
    """Create `bucket` on the S3 server at `endpoint`, from namespace `ns`."""
    code = (
        "import pyarrow.fs as f,sys; f.S3FileSystem(endpoint_override=sys.argv[1], allow_bucket_creation=True)"
        ".create_dir(sys.argv[2])"
    )
    sh(*in_ns(ns), sys.executable, "-c", code, endpoint, bucket, env=env)
