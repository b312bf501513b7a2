"""Whole games at C speed: the batch path used by `protolab bench`, `simulate` and the runner.

The C loop plays every seed with the built-in strategies and fills preallocated numpy columns
without the GIL; `records()` turns the columns into the same records the step API gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.engine._core import play_batch
from sim.pool import ENGINE_VERSION, Pool
from sim.record import END_REASONS, LINES

MAX_COMPILES = 64


def play_columns(pool: Pool, seeds: Sequence[int] | np.ndarray, turn_cap: int = 200,
                 first_player: int | None = None,
                 protocols: Sequence[Sequence[Sequence[str]]] | None = None,
                 check_invariants: bool = False, events: bool = False,
                 strategies: Sequence[str] = ("random", "random"), draft: str = "random") -> dict[str, np.ndarray]:
    """Play one game per seed with these strategy specs (seat 0, seat 1; strategies/spec.py);
    returns columns (one row per game). `draft` is a draft strategy (strategies.spec.parse_draft).

    `protocols`, if given, is a list of matchups ((a, b, c), (d, e, f)) used round-robin by game
    index; otherwise every game drafts. With `check_invariants` the engine verifies the
    position at every decision and turn boundary and stops a game at the first violation
    (column `violation`, 0 when none). With `events`, `out["events"]` holds the dataset events
    (draws, plays, deletes, compiles, control gains) as columns whose `game` is the row index."""
    from strategies.spec import make_seat, parse_draft

    seats = tuple(make_seat(s, pool) for s in strategies)
    dkind, payload = parse_draft(draft, pool)
    if dkind == "fixed" and not protocols:
        protocols = [payload]
    elif dkind == "table":
        for seat in seats:
            seat.set_draft_table(payload)
    seeds = np.ascontiguousarray(np.asarray(seeds, dtype=np.uint64))
    n = len(seeds)
    if protocols:
        fixed = np.array([[pool.protocol(x) for side in m for x in side] for m in protocols], dtype=np.int16)
    else:
        fixed = np.zeros((0, 6), dtype=np.int16)
    out = {
        "winner": np.zeros(n, np.int8), "first_player": np.zeros(n, np.int8),
        "end_reason": np.zeros(n, np.int8), "turns": np.zeros(n, np.int16),
        "protocols": np.zeros((n, 6), np.int16),
        "plays_up": np.zeros((n, 2), np.int16), "plays_down": np.zeros((n, 2), np.int16),
        "refreshes": np.zeros((n, 2), np.int16), "control_gains": np.zeros((n, 2), np.int16),
        "n_compiles": np.zeros(n, np.int16),
        "compile_turn": np.zeros((n, MAX_COMPILES), np.int16),
        "compile_player": np.zeros((n, MAX_COMPILES), np.int8),
        "compile_line": np.zeros((n, MAX_COMPILES), np.int8),
        "compile_protocol": np.zeros((n, MAX_COMPILES), np.int16),
        "compile_recompile": np.zeros((n, MAX_COMPILES), np.int8),
        "violation": np.zeros(n, np.int8),
    }
    ev = play_batch(pool.core, seeds, turn_cap, -1 if first_player is None else first_player, fixed, out,
                    MAX_COMPILES, check_invariants, events, seats)
    if events:
        out["events"] = ev
    out["seed"] = seeds
    return out


def records(pool: Pool, cols: dict[str, np.ndarray],
            strategies: Sequence[str] = ("random", "random")) -> list[dict[str, Any]]:
    """The columns as per-game records (identical to `Game.record()` for the same game)."""
    names = pool.protocols
    out = []
    for i in range(len(cols["seed"])):
        w = int(cols["winner"][i])
        nc = min(int(cols["n_compiles"][i]), MAX_COMPILES)
        out.append({
            "seed": int(cols["seed"][i]),
            "pool_hash": pool.hash,
            "engine_version": ENGINE_VERSION,
            "strategy_0": strategies[0],
            "strategy_1": strategies[1],
            "protocols_0": [names[x] for x in cols["protocols"][i, :3]],
            "protocols_1": [names[x] for x in cols["protocols"][i, 3:]],
            "first_player": int(cols["first_player"][i]),
            "winner": w if w in (0, 1) else -1,
            "end_reason": END_REASONS[int(cols["end_reason"][i])],
            "turns": int(cols["turns"][i]),
            "compiles": [
                {"turn": int(cols["compile_turn"][i, j]), "player": int(cols["compile_player"][i, j]),
                 "line": LINES[cols["compile_line"][i, j]],
                 "protocol": names[cols["compile_protocol"][i, j]],
                 "recompile": bool(cols["compile_recompile"][i, j])}
                for j in range(nc)
            ],
            "plays_face_up": [int(x) for x in cols["plays_up"][i]],
            "plays_face_down": [int(x) for x in cols["plays_down"][i]],
            "refreshes": [int(x) for x in cols["refreshes"][i]],
            "control_gains": [int(x) for x in cols["control_gains"][i]],
        })
    return out
