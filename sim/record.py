"""The per-game record: one plain, columnar-friendly dict per finished game. The runner writes
these rows to Parquet; `record_bytes` is the canonical serialisation used for determinism checks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sim.describe import LINES
from sim.engine._core import constants
from sim.pool import Pool

END_REASONS = constants()["end_reason"]


def make_record(pool: Pool, seed: int, strategies: Sequence[str], s: dict[str, Any], version: str) -> dict[str, Any]:
    names = pool.protocols
    winner = s["winner"]
    return {
        "seed": int(seed),
        "pool_hash": pool.hash,
        "engine_version": version,
        "strategy_0": strategies[0],
        "strategy_1": strategies[1],
        "protocols_0": [names[int(i)] for i in s["dealt"][0]],
        "protocols_1": [names[int(i)] for i in s["dealt"][1]],
        "first_player": int(s["first_player"]),
        "winner": int(winner) if winner in (0, 1) else -1,
        "end_reason": END_REASONS[s["end_reason"]],
        "turns": int(min(s["turn"], s["turn_cap"])),
        "compiles": [
            {
                "turn": int(t),
                "player": int(p),
                "line": LINES[int(line)],
                "protocol": names[int(pr)],
                "recompile": bool(r),
            }
            for t, p, line, pr, r in s["compiles"]
        ],
        "plays_face_up": list(map(int, s["plays_up"])),
        "plays_face_down": list(map(int, s["plays_down"])),
        "refreshes": list(map(int, s["refreshes"])),
        "control_gains": list(map(int, s["control_gains"])),
    }


def record_bytes(record: dict[str, Any]) -> bytes:
    """Canonical bytes of a record (sorted keys, no whitespace): equal records, equal bytes."""
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
