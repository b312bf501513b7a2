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
    loop = int(s.get("loop_card", -1))
    record = {
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
    if loop >= 0:  # only a game ended by the loop bound names its card: every other record is as before
        record["loop_card"] = pool.cards[loop].name
    return record


def ending(record: dict[str, Any]) -> str:
    """How the game ended, in words: who won, or which rule drew it (the turn cap, the loop bound and
    the card whose text repeated)."""
    turns = record["turns"]
    if record["winner"] in (0, 1):
        return f"{'AB'[record['winner']]} wins after {turns} turns ({record['end_reason']})"
    if record["end_reason"] == "loop_guard":
        return f"a draw after {turns} turns (loop_guard: {record.get('loop_card', '?')} kept triggering its own text)"
    return f"a draw after {turns} turns ({record['end_reason']})"


def record_bytes(record: dict[str, Any]) -> bytes:
    """Canonical bytes of a record (sorted keys, no whitespace): equal records, equal bytes."""
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
