"""A script plays a playtest through `protolab play`'s JSON API (docs/play-api.md): N games against
the learned player (the command's default opponent), each decision a random legal option, with
one illegal option per game that must be refused (HTTP 409) and change nothing. Then every game
of the run folder is replayed from its recorded decisions and checked against its stored row.

    python benchmarks/play_api.py --games 50

Prints games, decisions, the server's time per decision and whether every check held (exit status
1 otherwise)."""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from protolab.experiment.run.replay import replay_run


def call(url: str, body: dict | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opponent", default="learned")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="play-api-")) / "pt"
    cmd = [sys.executable, "-m", "protolab", "play", "--games", str(args.games), "--seed", str(args.seed)]
    cmd += ["--opponent", args.opponent, "--out", str(out), "--port", "0"]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=out.parent)
    assert server.stdout is not None
    base = next(m.group(1) for line in server.stdout if (m := re.search(r"(http://127\.0\.0\.1:\d+)/", line)))
    rng = random.Random(args.seed)
    decisions = refused = probes = 0
    ended = []
    t0 = time.perf_counter()
    try:
        for g in range(args.games):
            _, s = call(base + "/api/state")
            assert isinstance(s, dict) and s["game"] == g
            probe = rng.randrange(1, 40)  # the decision at which an illegal option is sent
            while not s["over"]:
                if s["decision"] == probe:
                    status, text = call(base + "/api/decide", {"option": len(s["options"])})
                    unchanged = call(base + "/api/state")[1] == s
                    refused += status == 409 and unchanged
                    probes += 1
                    print(f"  game {g}: illegal option -> {status} {str(text).strip()!r}; unchanged: {unchanged}")
                status, s = call(base + "/api/decide", {"option": rng.randrange(len(s["options"]))})
                assert status == 200, s
                decisions += 1
            ended.append(s["result"])
            if g < args.games - 1:
                status, s = call(base + "/api/next", {})
                assert status == 200, s
        played = time.perf_counter() - t0
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    t1 = time.perf_counter()
    exact = sum(replay_run(str(out), g)[-1].startswith("Checked: the replay matches") for g in range(args.games))
    replayed = time.perf_counter() - t1
    print(
        f"{args.games} games against {args.opponent} through the API: {len(ended)} ended "
        f"({sum(r['winner'] == 'A' for r in ended)} won by the script), {decisions} decisions in {played:.1f} s "
        f"({1000 * played / max(1, decisions):.1f} ms per decision, HTTP included); "
        f"{exact} of {args.games} replay exactly ({replayed:.1f} s); illegal options refused with 409 and no "
        f"change: {refused} of {probes} sent; folder {out}"
    )
    ok = len(ended) == exact == args.games and refused == probes > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
