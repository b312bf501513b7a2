"""The golden trace: records and full decision/effect logs of fixed seeds, committed in
tests/golden/trace.json. Optimisations must leave it byte-identical; regenerate it (--write)
only when the rules deliberately change, and say so in the commit.

    python -m protolab.golden                   # compare with tests/golden/trace.json
    python -m protolab.golden --write           # regenerate it (run from the repository root)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from sim.describe import format_log
from sim.pool import FIRST_BOX, load_pool
from sim.record import record_bytes
from sim.state import State
from strategies.spec import make_seat

TRACE = Path("tests") / "golden" / "trace.json"
CASES = [
    ("random", "random", range(0, 40)),
    ("greedy", "greedy", range(100, 110)),
    ("rush", "control", range(200, 205)),
    ("search:sims=8,depth=1", "disrupt", range(300, 302)),
]


def trace() -> dict:
    pool = load_pool(FIRST_BOX)
    games = []
    for a, b, seeds in CASES:
        for seed in seeds:
            g = State(pool, seed=seed)
            g.core.run([], (make_seat(a, pool), make_seat(b, pool)), True)
            state = g.core.state()
            log = "\n".join(format_log(pool, state, g.core.log_entries()))
            logged = g.record((a, b))
            g.core.run([], (make_seat(a, pool), make_seat(b, pool)))
            rec = g.record((a, b))
            assert rec == logged, f"logging changed the game {a} vs {b} seed {seed}"
            games.append(
                {
                    "strategies": [a, b],
                    "seed": seed,
                    "record": json.loads(record_bytes(rec)),
                    "log_lines": log.count("\n") + 1,
                    "log_sha256": hashlib.sha256(log.encode()).hexdigest(),
                }
            )
    return {"pool_hash": pool.hash, "games": games}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="regenerate the committed trace")
    ap.add_argument("--path", type=Path, default=TRACE, help=f"the trace file (default {TRACE})")
    args = ap.parse_args(argv)
    now = trace()
    if args.write:
        args.path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"wrote {args.path} ({len(now['games'])} games)")
        return 0
    old = json.loads(args.path.read_text())
    bad = [f"{n['strategies']} seed {n['seed']}" for o, n in zip(old["games"], now["games"], strict=True) if o != n]
    if bad or old["pool_hash"] != now["pool_hash"]:
        print("golden trace differs: " + (", ".join(bad[:10]) or "pool hash"))
        return 1
    print(f"golden trace identical ({len(now['games'])} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
