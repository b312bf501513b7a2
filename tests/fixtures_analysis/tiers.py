"""A tier study written without the engine (T1 against T2 under each tier), for the tier and gap tests."""

import json
from pathlib import Path

from fixtures_analysis.known import T1, T2
from fixtures_analysis.synth import write_run


def tier_run(path: Path, t1_wins: dict[str, int], games: int = 200) -> Path:
    """A tier study written without the engine: each tier plays the same `games` seeds of T1 (seat 0)
    against T2, T1 winning the first t1_wins[tier]; one shard per tier."""
    rows = []
    for k, (tier, wins) in enumerate(t1_wins.items()):
        for g in range(games):
            row = {
                "game_index": k * games + g,
                "seed": g,
                "first_player": g % 2,
                "winner": 0 if g < wins else 1,
                "strategy_0": tier,
                "strategy_1": tier,
            }
            row.update({f"seat0_protocol_{p}": x for p, x in zip(("left", "middle", "right"), T1, strict=True)})
            row.update({f"seat1_protocol_{p}": x for p, x in zip(("left", "middle", "right"), T2, strict=True)})
            rows.append(row)
    write_run(path, rows, run_id=path.name, shard_games=games)
    m = json.loads((path / "run.json").read_text())
    m["spec"] = {
        "name": path.name,
        "seed": 3,
        "tiers": list(t1_wins),
        "draft": {"mode": "random"},
        "arms": [{"name": t, "sets": ["Main 1"], "strategies": [t, t], "cards": []} for t in t1_wins],
    }
    for shard, tier in zip(m["shards"], t1_wins, strict=True):
        shard["arm"] = tier
    (path / "run.json").write_text(json.dumps(m))
    return path
