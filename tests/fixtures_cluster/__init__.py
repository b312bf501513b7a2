"""Two network namespaces joined by a veth pair: the test's own 'machines' for multi-node Ray runs
(nothing leaves them; every process inside is the test's own and is ended on the way out)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def sh(*args, check=True, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(list(map(str, args)), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def ray_start(n: Pair, ray: object, temp: Path, head: bool) -> list[str]:
    """`ray start` of the pair's head node (`head`) or worker node, one CPU each, each with its own
    folder under `temp` (short: Ray's socket paths must fit): the arguments, to run in that node's
    namespace (`ip netns exec NS ...`)."""
    if head:
        where = ["--head", f"--node-ip-address={n.head_ip}", "--port=6379", "--include-dashboard=false"]
    else:
        where = [f"--address={n.head_ip}:6379", f"--node-ip-address={n.work_ip}"]
    folder = temp / ("h" if head else "w")
    return [str(ray), "start", *where, "--num-cpus=1", "--disable-usage-stats", f"--temp-dir={folder}"]


def namespaces_unavailable() -> str | None:
    """Why namespaces cannot be made here (a reason to skip), or None."""
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    probe = f"plprobe{os.getpid()}"
    r = sh("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"cannot create network namespaces here (`ip netns add`: {r.stderr.strip()})"
    sh("ip", "netns", "del", probe, check=False)
    return None


@dataclass(frozen=True)
class Pair:
    head_ns: str
    work_ns: str
    head_ip: str
    work_ip: str


@contextmanager
def namespace_pair(prefix: str, subnet: int) -> Iterator[Pair]:
    """Namespaces `<prefix>h<tag>` and `<prefix>w<tag>` on 10.<subnet>.x.1 and .2 (x from the pid, so
    parallel test runs do not collide); on exit every process in them is killed and they are removed."""
    tag = os.getpid() % 100_000
    net = f"10.{subnet}.{tag % 200 + 20}"
    pair = Pair(f"{prefix}h{tag}", f"{prefix}w{tag}", f"{net}.1", f"{net}.2")
    head_dev, work_dev = f"{pair.head_ns}a", f"{pair.head_ns}b"
    try:
        sh("ip", "netns", "add", pair.head_ns)
        sh("ip", "netns", "add", pair.work_ns)
        sh("ip", "link", "add", head_dev, "type", "veth", "peer", "name", work_dev)
        sh("ip", "link", "set", head_dev, "netns", pair.head_ns)
        sh("ip", "link", "set", work_dev, "netns", pair.work_ns)
        for ns, dev, ip in ((pair.head_ns, head_dev, pair.head_ip), (pair.work_ns, work_dev, pair.work_ip)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield pair
    finally:
        for ns in (pair.head_ns, pair.work_ns):
            for pid in map(int, sh("ip", "netns", "pids", ns, check=False).stdout.split()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.5)
        for ns in (pair.head_ns, pair.work_ns):
            sh("ip", "netns", "del", ns, check=False)
