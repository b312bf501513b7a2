"""A chaos run: a long `protolab run` played while its Ray workers are killed, once a whole node,
once the driver is stopped with Ctrl-C and resumed; at the end its rows must equal an undisturbed
run's (benchmarks/runrows.py), and the time it took is set against that run's.

    python benchmarks/chaos_run.py --games 2000000 --kill-every 20 --cluster

Both runs play the same spec (one matchup of `--games` games, random drafts, seats swapped,
`--strategies`, no events) on the same Ray: with --cluster, the two-node cluster of the suite's
tests (a head and a worker node of one CPU each, in two network namespaces: tests/fixtures_cluster,
root and `ip netns` needed), the driver joining it with --address; without, a local Ray of
--workers workers. The undisturbed run goes first and sets the clock: during the chaos run a random
`ray::play_shard` worker is killed (SIGKILL) every --kill-every seconds (or as soon as one plays),
except that the first kill
after 30% of the undisturbed time takes the whole worker node instead (every process in its
namespace), which is started again --node-back seconds later; once half the shards are recorded
the driver gets one SIGINT
(it must end with status 130) and `protolab run --resume` finishes the run, the kills going on.

Prints each event as it happens, then both times, the overhead and both rows hashes; exit status 1
if the rows differ or a step failed."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from runrows import rows_hash  # noqa: E402

from analysis.runs.runfolder import read_manifest  # noqa: E402

SPEC = """name = "chaos"
seed = {seed}
games = {games}
shard_games = {shard_games}
events = false
[seats]
strategies = ["{a}", "{b}"]
swap = true
[draft]
mode = "random"
"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (a local Ray's processes are the driver's)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
    out, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parent.items() if p in frontier} - out
        out |= frontier
    return out


def shard_workers(among: set[int]) -> list[int]:
    """Processes of `among` playing shards now (their title is `ray::play_shard`): only this
    benchmark's, never another Ray's on a shared machine."""
    out = []
    for pid in among:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::play_shard"):
                out.append(pid)
    return out


class Where:
    """The Ray the runs play on: a local Ray (each run starts its own) or the two-node cluster."""

    def __init__(self, workers: int):
        self.workers = workers
        self.prefix: list[str] = []
        self.extra = ["--workers", str(workers)]
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        self.node_kill = None  # a callable killing the worker node and starting it again, on a cluster
        self.driver = 0  # the pid of the driver playing now

    def processes(self) -> set[int]:
        """The processes of this Ray: a local Ray's are the driver's descendants."""
        return descendants(self.driver) if self.driver else set()

    def protolab(self, *args: str, cwd: Path) -> subprocess.Popen:
        p = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "protolab", *args, *self.extra, "--no-progress"],
            cwd=cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.driver = p.pid
        return p


@contextlib.contextmanager
def cluster(temp: Path, node_back: float) -> Iterator[Where]:
    """The suite's two-node cluster (tests/fixtures_cluster): head and worker node, one CPU each."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixtures_cluster import namespace_pair, namespaces_unavailable, ray_start, sh

    why = namespaces_unavailable()
    if why:
        sys.exit(f"--cluster: {why}")
    ray = Path(sys.executable).parent / "ray"
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    with namespace_pair("plc", 214) as n:
        sh(
            "ip",
            "netns",
            "exec",
            n.head_ns,
            *ray_start(n, ray, temp, head=True),
            env=env,
            timeout=180,
        )

        def start_worker() -> None:
            sh(
                "ip",
                "netns",
                "exec",
                n.work_ns,
                *ray_start(n, ray, temp, head=False),
                env=env,
                timeout=180,
            )

        start_worker()
        where = Where(2)
        where.prefix = ["ip", "netns", "exec", n.head_ns]
        where.extra = ["--address", f"{n.head_ip}:6379"]
        where.env = env

        def node_kill() -> None:
            pids = [int(p) for p in sh("ip", "netns", "pids", n.work_ns, check=False).stdout.split()]
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            log(f"killed the worker node {n.work_ip} ({len(pids)} processes); back in {node_back:g} s")
            time.sleep(node_back)
            start_worker()
            log(f"worker node {n.work_ip} started again")

        def processes() -> set[int]:
            return {int(p) for ns in (n.head_ns, n.work_ns) for p in sh("ip", "netns", "pids", ns).stdout.split()}

        where.node_kill = node_kill
        where.processes = processes  # type: ignore[method-assign]
        yield where


def play(where: Where, spec: Path, out: Path) -> tuple[float, Path]:
    """The undisturbed run: its seconds and folder."""
    t0 = time.monotonic()
    p = where.protolab("run", str(spec), "--out", str(out), cwd=spec.parent)
    _, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"the undisturbed run failed (exit {p.returncode}): {err[-2000:]}")
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    return time.monotonic() - t0, run


class Chaos:
    """Kills a random shard worker every `every` seconds from `start`; the first kill after
    `node_at` seconds takes the worker node instead (once, when the Ray has one)."""

    def __init__(self, where: Where, every: float, node_at: float, seed: int, most: int):
        self.where, self.every, self.node_at, self.most = where, every, node_at, most
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        self.kills, self.node_kills = 0, 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        wait = self.every
        while not self.stop.wait(wait):
            wait = self.every
            if self.where.node_kill is not None and not self.node_kills and time.monotonic() - self.t0 >= self.node_at:
                self.node_kills += 1
                self.where.node_kill()
                continue
            workers = shard_workers(self.where.processes())
            if not workers:  # none playing (a driver starting): try again soon, not a whole period later
                wait = 0.2
            elif self.kills < self.most:
                pid = self.rng.choice(sorted(workers))
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    self.kills += 1
                    log(f"killed worker {pid} (ray::play_shard; {len(workers)} playing)")


def recorded(out: Path) -> int:
    """Shards recorded in the run folder under `out`, run.json and its journal (the driver journals
    each batch at once and rewrites run.json only now and then); 0 before there is one."""
    for d in out.glob("*/run.json") if out.exists() else []:
        with contextlib.suppress(OSError, ValueError):
            return len(read_manifest(d.parent).shards)
    return 0


def chaos_run(where: Where, spec: Path, out: Path, ref_seconds: float, args) -> tuple[float, Path, dict]:
    """The disturbed run (see the module docstring): its seconds (both sessions), folder and counts."""
    chaos = Chaos(where, args.kill_every, 0.3 * ref_seconds, args.seed, args.kills)
    chaos.thread.start()
    t0 = time.monotonic()
    p = where.protolab("run", str(spec), "--out", str(out), cwd=spec.parent)
    half = max(1, args.games // args.shard_games // 2)  # the SIGINT once half the shards are recorded
    while p.poll() is None and recorded(out) < half:
        time.sleep(0.05)
    if p.poll() is not None:
        sys.exit(f"the chaos run ended before its SIGINT (exit {p.returncode}): {p.communicate()[1][-2000:]}")
    p.send_signal(signal.SIGINT)
    t_sig = time.monotonic()
    stdout, err = p.communicate()
    stop_s = time.monotonic() - t_sig
    log(f"SIGINT to the driver: exit {p.returncode} in {stop_s:.2f} s")
    if p.returncode != 130:
        sys.exit(f"the driver did not stop with 130 (exit {p.returncode}): {err[-2000:]}")
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    # run.json and its journal: a stop that met its deadline (a loaded machine) leaves the last
    # batches in the journal, not yet folded into run.json; they are kept all the same
    kept = len(read_manifest(run).shards)
    log(f"stopped with {kept} shards kept; resuming")
    r = where.protolab("run", "--resume", str(run), cwd=spec.parent)
    _, err = r.communicate()
    seconds = time.monotonic() - t0
    chaos.stop.set()
    chaos.thread.join()
    if r.returncode != 0:
        sys.exit(f"the resumed run failed (exit {r.returncode}): {err[-2000:]}")
    m = json.loads((run / "run.json").read_text())
    lost = sum(len(s.get("nodes_lost", [])) for s in m["sessions"])
    counts = {
        "worker_kills": chaos.kills,
        "node_kills": chaos.node_kills,
        "nodes_lost_recorded": lost,
        "sigint_exit": p.returncode,
        "sigint_stop_seconds": round(stop_s, 2),
        "shards_kept_at_sigint": kept,
        "shards": len(m["shards"]),
        "complete": m["complete"],
    }
    return seconds, run, counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--games", type=int, default=2_000_000, help="games of the run (default 2,000,000)")
    ap.add_argument("--shard-games", type=int, default=10_000, help="games per shard (default 10,000)")
    ap.add_argument("--strategies", nargs=2, default=["random", "random"], metavar="S", help="the two seats")
    ap.add_argument("--kill-every", type=float, default=20.0, help="seconds between two kills (default 20)")
    ap.add_argument("--kills", type=int, default=1_000_000, help="worker kills at most (default: no limit)")
    ap.add_argument("--cluster", action="store_true", help="play on the two-node namespace cluster (root)")
    ap.add_argument("--workers", type=int, default=2, help="local Ray workers without --cluster (default 2)")
    ap.add_argument("--node-back", type=float, default=5.0, help="seconds a killed node stays down (default 5)")
    ap.add_argument("--seed", type=int, default=1, help="the run's seed and the chaos's (default 1)")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = ap.parse_args()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background: children get the default
        signal.signal(signal.SIGINT, signal.default_int_handler)
    base = Path(tempfile.mkdtemp(prefix="plchaos", dir="/tmp"))  # short: Ray's socket paths must fit
    try:
        spec = base / "chaos.toml"
        a, b = args.strategies
        spec.write_text(SPEC.format(seed=args.seed, games=args.games, shard_games=args.shard_games, a=a, b=b))
        ctx = cluster(base, args.node_back) if args.cluster else contextlib.nullcontext(Where(args.workers))
        with ctx as where:
            log(f"undisturbed run: {args.games:,} games, {a} vs {b}, on {' '.join(where.extra)}")
            ref_s, ref = play(where, spec, base / "ref")
            log(f"undisturbed run: {ref_s:.1f} s")
            chaos_s, run, counts = chaos_run(where, spec, base / "chaos", ref_s, args)
            log(f"chaos run: {chaos_s:.1f} s")
        ref_hash, chaos_hash = rows_hash(ref), rows_hash(run)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    result = {
        "games": args.games,
        "strategies": args.strategies,
        "where": "two-node cluster" if args.cluster else f"local Ray, {args.workers} workers",
        "undisturbed_seconds": round(ref_s, 1),
        "chaos_seconds": round(chaos_s, 1),
        "overhead": round(chaos_s / ref_s - 1, 3),
        **counts,
        "rows_equal": ref_hash == chaos_hash,
        "undisturbed_rows": ref_hash,
        "chaos_rows": chaos_hash,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:24s} {v}")
    return 0 if result["rows_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
