"""How `protolab report` scales with the games of a run (issue 27): fabricate a run folder of many
shards, then time the report on it, e.g. 1,000 shards of 100,000 games (100M games):

    python benchmarks/report_scale.py /tmp/scale --shards 1000 --games 100000
    /usr/bin/time -v protolab report /tmp/scale/run > /dev/null

Playing 100M games takes hours, so the shards are synthetic: a few thousand greedy games are played
here, `--base` distinct shards of `--games` rows are drawn from them with replacement (real game
rows, real tallies from analysis.runs.tallies), and shard i is shard i mod base, hard-linked under its
own name. Every shard is listed in run.json with its sizes, row counts and checksums, as the runner
writes it, so the report opens, verifies and reads it as a real run: the footer of every games file,
the SHA-256 of every tallies file, and the tallies' rows (the game rows are not read)."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

import numpy as np

from analysis.runs.runfolder import TABLES, parquet_bytes, sha256, write_manifest
from analysis.runs.tallies import shard_tallies
from protolab.experiment.run.ledger import new_manifest, now
from protolab.experiment.run.plan import make_plan
from protolab.experiment.run.shards import batch_games
from protolab.experiment.spec import Spec, parse_spec
from sim.pool import DEFAULT_SETS, load_pool
from strategies.seats import play_games

RUN_ID = "report-scale"


def base_shards(out: Path, base: int, games: int, played: int, seed: int) -> list[dict[str, object]]:
    """`base` shards of `games` rows drawn from `played` real greedy games; their files in `out`."""
    pool = load_pool(sets=DEFAULT_SETS)
    cols = play_games(
        pool,
        np.arange(1, played + 1, dtype=np.uint64),
        ("greedy", "greedy"),
        turn_cap=200,
        first_player=None,
        protocols=None,
        events=False,
    )
    rows = batch_games(pool, cols, ("greedy", "greedy"))
    rng = np.random.default_rng(seed)
    shards = []
    for b in range(base):
        games_table = rows.take(rng.integers(0, rows.num_rows, games))
        shard: dict[str, object] = {}
        for kind, table in (("games", games_table), ("tallies", shard_tallies(games_table))):
            blob = parquet_bytes(table, kind)
            (out / f"{b}-{kind}.parquet").write_bytes(blob)
            shard.update({f"{kind}_rows": table.num_rows, f"{kind}_bytes": len(blob), f"{kind}_sha256": sha256(blob)})
        shards.append(shard)
    return shards


def spec_of(shards: int, games: int, seed: int) -> Spec:
    """The spec such a run would have been played from, parsed by the runner's own parser."""
    raw = {
        "name": RUN_ID,
        "seed": seed,
        "games": shards * games,
        "turn_cap": 200,
        "shard_games": games,
        "events": False,
        "pool": {"sets": list(DEFAULT_SETS)},
        "seats": {"strategies": ["greedy", "greedy"], "swap": False},
        "draft": {"mode": "random"},
    }
    return parse_spec(raw, f"{RUN_ID}.toml", Path.cwd())


def fabricate(out: Path, shards: int, games: int, base: int, played: int, seed: int) -> Path:
    """The run folder `out/run`: `shards` shards of `games` games each, its run.json written by the
    runner's own code (new_manifest), so that it stays a run.json the report accepts."""
    if out.exists():
        shutil.rmtree(out)
    (out / "base").mkdir(parents=True)
    run = out / "run"
    for kind in TABLES:
        (run / kind).mkdir(parents=True)
    plan = make_plan(spec_of(shards, games, seed), shard_games=games)
    assert len(plan.shards) == shards, (len(plan.shards), shards)
    made = base_shards(out / "base", base, games, played, seed)
    manifest = new_manifest(plan, RUN_ID)
    for shard in plan.shards:
        b = shard.index % base
        entry: dict[str, object] = {
            "index": shard.index,
            "arm": plan.spec.arms[shard.arm].name,
            "first_game": shard.first_game,
            "games": shard.games,
            "matchups": [0, 0],
            **made[b],
        }
        for kind in ("games", "tallies"):
            entry[f"{kind}_file"] = f"{kind}/{shard.name}.parquet"
            os.link(out / "base" / f"{b}-{kind}.parquet", run / str(entry[f"{kind}_file"]))
        manifest.shards.append(entry)
    manifest.complete, manifest.finished = True, now()
    write_manifest(run, manifest)
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder to fabricate in (replaced): the run is OUT/run")
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--games", type=int, default=100_000, help="games per shard")
    ap.add_argument("--base", type=int, default=10, help="distinct shards (the others are hard links to them)")
    ap.add_argument("--played", type=int, default=4000, help="real games the rows are drawn from")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    t0 = time.perf_counter()
    run = fabricate(a.out, a.shards, a.games, a.base, a.played, a.seed)
    print(
        f"{run}: {a.shards:,} shards of {a.games:,} games ({a.shards * a.games:,} games) "
        f"in {time.perf_counter() - t0:.1f} s; now: /usr/bin/time -v protolab report {run}"
    )


if __name__ == "__main__":
    main()
