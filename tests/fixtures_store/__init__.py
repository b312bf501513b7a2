"""moto's S3 server on 127.0.0.1 (a free port): the object store the storage tests write to."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


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
