"""Run folders in the exact schema of docs/data.md, written without the engine.

Two uses: the tests write small runs whose answers are known by construction (`write_run`, with
defaults for the columns a test does not care about), and the benchmark writes a large synthetic
run with realistic cardinalities (`synth_run`, ~15 protocols, 90 cards, ~150 events per game) to
time the report at 10 million games. Both can also write the per-card `cards` table and the
`compiles` table, aggregated from each shard's games and events with DuckDB (`add_cards`,
`add_compiles`; an independent implementation of what the runner computes with numpy). Command line:

    python -m fixtures_analysis.synth OUT_DIR --games 10000000 [--events-games N] [--shard-games 100000] [--no-cards]
                             [--no-compiles]
    python -m fixtures_analysis.synth --add-cards RUN_DIR        # cards files for an existing run with events
    python -m fixtures_analysis.synth --add-compiles RUN_DIR     # compiles files for an existing run with events
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.runs.schema import (
    CARDS_SCHEMA,
    COMPILES_SCHEMA,
    END_REASONS,
    EVENT_KINDS,
    EVENTS_SCHEMA,
    GAMES_SCHEMA,
    POSITIONS,
    SEATS,
    required,
)

# Synthetic runs hold the required columns only (like runs written before the optional ones).
GAMES = required(GAMES_SCHEMA, "games")
EVENTS = required(EVENTS_SCHEMA, "events")

PROTOCOLS = (
    "Apathy",
    "Darkness",
    "Death",
    "Fire",
    "Gravity",
    "Hate",
    "Life",
    "Light",
    "Love",
    "Metal",
    "Plague",
    "Psychic",
    "Speed",
    "Spirit",
    "Water",
)
CARDS = tuple(f"{p} {v}" for p in PROTOCOLS for v in range(6))

GAMES_ROW_GROUP = 128 * 1024
EVENTS_ROW_GROUP = 1024 * 1024
CARDS_ROW_GROUP = 128 * 1024
COMPILES_ROW_GROUP = 128 * 1024


# -- writing ---------------------------------------------------------------------------------------


def _column(values: Any, field: pa.Field) -> pa.Array:
    if pa.types.is_dictionary(field.type):
        if isinstance(values, pa.DictionaryArray):
            return values
        return pa.array(values, pa.string()).dictionary_encode().cast(field.type)
    return pa.array(values, field.type)


def _table(columns: Mapping[str, Any], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays([_column(columns[f.name], f) for f in schema], schema=schema)


def _write(table: pa.Table, path: Path, row_group: int) -> str:
    """Write under a temporary name and rename (a file under its final name is whole); sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("." + path.name + ".tmp")
    pq.write_table(table, tmp, row_group_size=row_group)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    os.replace(tmp, path)
    return digest


def game_defaults(i: int, run_id: str) -> dict[str, Any]:
    """A plain decided game (seat 0 beats seat 1 on turn 10): tests override what they test."""
    row: dict[str, Any] = {
        "run_id": run_id,
        "game_index": i,
        "matchup": 0,
        "seed": i,
        "pool_hash": "pool",
        "spec_hash": "spec",
        "engine_version": "0.1.0",
        "strategy_0": "random",
        "strategy_1": "random",
        "first_player": 0,
        "winner": 0,
        "end_reason": "compiled",
        "turns": 10,
    }
    for s in SEATS:
        for k in (1, 2, 3):
            row[f"seat{s}_compile{k}_turn"] = None
        for c in ("recompiles", "plays_face_up", "plays_face_down", "refreshes", "control_gains"):
            row[f"seat{s}_{c}"] = 0
    row.update({f"seat0_protocol_{p}": x for p, x in zip(POSITIONS, ("Fire", "Water", "Death"), strict=True)})
    row.update({f"seat1_protocol_{p}": x for p, x in zip(POSITIONS, ("Hate", "Light", "Life"), strict=True)})
    return row


def write_run(
    path: str | Path,
    games: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]] | None = None,
    run_id: str = "test-run",
    shard_games: int = 1000,
    complete: bool = True,
    cards: bool = False,
    compiles: bool = False,
) -> Path:
    """Write a small run folder from row dicts. Missing game columns take `game_defaults`
    (game_index defaults to the row's position); missing event columns are null/False. With
    `cards` (and events), each shard also gets its `cards` file (`add_cards`); with `compiles`,
    its `compiles` file (`add_compiles`)."""
    path = Path(path)
    grows = []
    for i, g in enumerate(games):
        row = game_defaults(i, run_id)
        row.update(g)
        grows.append(row)
    erows = []
    for e in events or ():
        row = {
            "run_id": run_id,
            "turn": 0,
            "seat": 0,
            "kind": "draw",
            "card": None,
            "protocol": None,
            "line": None,
            "by_effect": False,
        }
        row.update(e)
        erows.append(row)
    erows.sort(key=lambda r: (r["game_index"], r["turn"]))
    shards = []
    n = len(grows)
    for si, start in enumerate(range(0, max(n, 1), shard_games)):
        part = grows[start : start + shard_games]
        lo, hi = start, start + len(part)
        ev = [e for e in erows if lo <= e["game_index"] < hi]
        gt = _table({c: [r[c] for r in part] for c in GAMES.names}, GAMES)
        shard: dict[str, Any] = {
            "index": si,
            "matchup": 0,
            "first_game": lo,
            "games": len(part),
            "games_file": f"games/shard-{si:05d}.parquet",
            "games_rows": len(part),
        }
        shard["games_sha256"] = _write(gt, path / shard["games_file"], GAMES_ROW_GROUP)
        if events is not None:
            et = _table({c: [r[c] for r in ev] for c in EVENTS.names}, EVENTS)
            shard["events_file"] = f"events/shard-{si:05d}.parquet"
            shard["events_rows"] = len(ev)
            shard["events_sha256"] = _write(et, path / shard["events_file"], EVENTS_ROW_GROUP)
        shards.append(shard)
    _manifest(path, run_id, n, shards, complete)
    if cards and events is not None:
        add_cards(path)
    if compiles and events is not None:
        add_compiles(path)
    return path


def _manifest(
    path: Path,
    run_id: str,
    games: int,
    shards: list[dict[str, Any]],
    complete: bool,
    spec: dict[str, Any] | None = None,
) -> None:
    manifest = {
        "run_id": run_id,
        "format": 1,
        "complete": complete,
        "spec": spec or {"name": run_id},
        "spec_hash": "spec",
        "pool_hash": "pool",
        "engine_version": "0.1.0",
        "protolab_version": "0.1.0",
        "games": games,
        "shards": shards,
    }
    (path / "run.json").write_text(json.dumps(manifest, indent=1))


# -- the cards and compiles tables, aggregated from events ------------------------------------------


def _sql_files(*files: Path) -> str:
    return ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)


def cards_of_shard(con: Any, games_file: Path, events_file: Path) -> pa.Table:
    """The `cards` table of one shard (docs/data.md), by DuckDB from its games and events files:
    per (arm, card), the seat-games of decided games whose deck holds the card (its protocol in
    the seat's trio) in which the seat drew it / played it face-up / face-down at least once."""
    names = pq.read_schema(games_file).names
    arm = "g.arm" if "arm" in names else "'base'"
    own = " or ".join(
        f"(e.seat = {s} and e.protocol in (g.seat{s}_protocol_left, g.seat{s}_protocol_middle, "
        f"g.seat{s}_protocol_right))"
        for s in SEATS
    )
    t = con.sql(f"""
        with e as (
            select game_index, seat, card, protocol,
                   bool_or(kind = 'draw') as drawn, bool_or(kind = 'play_face_up') as up,
                   bool_or(kind = 'play_face_down') as down
            from read_parquet([{_sql_files(events_file)}])
            where kind in ('draw', 'play_face_up', 'play_face_down') and card is not null
            group by all),
        j as (
            select g.run_id::varchar as run_id, {arm}::varchar as arm, e.card::varchar as card,
                   e.protocol::varchar as protocol, e.drawn, e.up, e.down, g.winner = e.seat as won
            from e join read_parquet([{_sql_files(games_file)}]) g on e.game_index = g.game_index
            where g.winner >= 0 and ({own}))
        select run_id, arm, card, protocol,
               count(*) filter (where drawn) as drawn, count(*) filter (where drawn and won) as drawn_wins,
               count(*) filter (where up) as up, count(*) filter (where up and won) as up_wins,
               count(*) filter (where down) as down, count(*) filter (where down and won) as down_wins,
               count(*) filter (where up or down) as played,
               count(*) filter (where (up or down) and won) as played_wins
        from j group by all order by arm, card""").to_arrow_table()
    return _conform(t, CARDS_SCHEMA)


def compiles_of_shard(con: Any, games_file: Path, events_file: Path) -> pa.Table:
    """The `compiles` table of one shard (docs/data.md), by DuckDB from its events (and the games'
    `arm`): compile and recompile events counted per (arm, kind, protocol, line, ordinal, turn),
    the ordinal numbering a seat's compiles 1, 2, 3 in turn order (null for recompiles)."""
    names = pq.read_schema(games_file).names
    if "arm" in names:
        arm, join = "g.arm", f"join read_parquet([{_sql_files(games_file)}]) g using (game_index)"
    else:
        arm, join = "'base'", ""
    t = con.sql(f"""
        select run_id, arm, kind, protocol, line, ordinal, turn, count(*) as n from (
            select e.run_id::varchar as run_id, {arm}::varchar as arm, e.kind::varchar as kind,
                   e.protocol::varchar as protocol, e.line, e.turn,
                   case when e.kind = 'compile' then row_number() over
                       (partition by e.game_index, e.seat, e.kind order by e.turn) end as ordinal
            from read_parquet([{_sql_files(events_file)}]) e {join}
            where e.kind in ('compile', 'recompile'))
        group by all order by arm, kind, protocol, line, ordinal, turn""").to_arrow_table()
    return _conform(t, COMPILES_SCHEMA)


def _conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    cols = []
    for f in schema:
        col = t[f.name].combine_chunks()
        cols.append(col.dictionary_encode().cast(f.type) if pa.types.is_dictionary(f.type) else col.cast(f.type))
    return pa.Table.from_arrays(cols, schema=schema)


SUMMARIES = {"cards": (cards_of_shard, CARDS_ROW_GROUP), "compiles": (compiles_of_shard, COMPILES_ROW_GROUP)}


def add_summary(run_dir: str | Path, kind: str, threads: int | None = None) -> int:
    """Write `<kind>/<shard>.parquet` (kind `cards` or `compiles`) for every shard of the run that
    has an events file, and record it in run.json (file, rows, bytes, sha256) like the runner
    does. Returns the files written."""
    import duckdb

    of_shard, row_group = SUMMARIES[kind]
    run_dir = Path(run_dir)
    manifest = json.loads((run_dir / "run.json").read_text())
    con = duckdb.connect()
    con.execute(f"set threads = {int(threads or os.cpu_count() or 1)}")
    con.execute("set preserve_insertion_order = false")
    n = 0
    for shard in manifest["shards"]:
        if not shard.get("events_file"):
            continue
        rel = f"{kind}/" + Path(shard["events_file"]).name
        table = of_shard(con, run_dir / shard["games_file"], run_dir / shard["events_file"])
        shard[f"{kind}_file"] = rel
        shard[f"{kind}_rows"] = table.num_rows
        shard[f"{kind}_sha256"] = _write(table, run_dir / rel, row_group)
        shard[f"{kind}_bytes"] = (run_dir / rel).stat().st_size
        n += 1
    con.close()
    tmp = run_dir / ".run.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, run_dir / "run.json")
    return n


def add_cards(run_dir: str | Path, threads: int | None = None) -> int:
    """`add_summary(run_dir, "cards")`."""
    return add_summary(run_dir, "cards", threads)


def add_compiles(run_dir: str | Path, threads: int | None = None) -> int:
    """`add_summary(run_dir, "compiles")`."""
    return add_summary(run_dir, "compiles", threads)


# -- synthetic benchmark data ----------------------------------------------------------------------

# Planted effects (log-odds), so the benchmark's answers look like a real run's.
PROTOCOL_STRENGTH = np.linspace(-0.15, 0.15, len(PROTOCOLS))
FIRST_PLAYER_EDGE = 0.2
STRATEGIES = ("random", "greedy", "compiler")
STRATEGY_STRENGTH = np.array([0.0, 0.3, 0.5])
# Non-compile event mix after the opening hands (compiles come from the games table).
BODY_KINDS = np.array([EVENT_KINDS.index(k) for k in ("draw", "play_face_up", "play_face_down", "delete", "control")])
EVENT_P = np.array([0.34, 0.08, 0.24, 0.30, 0.04])


def _dict(indices: np.ndarray, dictionary: Sequence[str], mask: np.ndarray | None = None) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(
        pa.array(indices.astype(np.int32), mask=mask), pa.array(list(dictionary), pa.string())
    )


def _const(value: str, n: int) -> pa.DictionaryArray:
    return _dict(np.zeros(n, np.int32), [value])


def _synth_shard(args: tuple[str, str, int, int, int, bool, bool]) -> dict[str, Any]:
    out, run_id, si, first, n, with_events, strategies = args
    rng = np.random.default_rng([si, 12345])
    gi = np.arange(first, first + n, dtype=np.int64)
    draft = np.argsort(rng.random((n, len(PROTOCOLS))), axis=1)[:, :6].astype(np.int32)
    first_player = rng.integers(0, 2, n).astype(np.int8)
    s0 = rng.integers(0, len(STRATEGIES), n) if strategies else np.zeros(n, np.int64)
    s1 = rng.integers(0, len(STRATEGIES), n) if strategies else np.zeros(n, np.int64)
    logit = (
        PROTOCOL_STRENGTH[draft[:, :3]].sum(1)
        - PROTOCOL_STRENGTH[draft[:, 3:]].sum(1)
        + np.where(first_player == 0, FIRST_PLAYER_EDGE, -FIRST_PLAYER_EDGE)
        + STRATEGY_STRENGTH[s0]
        - STRATEGY_STRENGTH[s1]
    )
    winner = (rng.random(n) > 1 / (1 + np.exp(-logit))).astype(np.int8)  # 0 if seat 0 wins
    draw = rng.random(n) < 0.002
    winner[draw] = -1
    turns = np.where(draw, 200, np.clip(30 + rng.gamma(4.0, 12.0, n), 8, 199)).astype(np.int16)
    end_reason = np.where(draw, 1, 0)
    cols: dict[str, Any] = {
        "run_id": _const(run_id, n),
        "game_index": gi,
        "matchup": np.zeros(n, np.int32),
        "seed": rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64),
        "pool_hash": _const("56922ba8f7efbd99", n),
        "spec_hash": _const("synthetic", n),
        "engine_version": _const("0.1.0", n),
        "strategy_0": _dict(s0, STRATEGIES),
        "strategy_1": _dict(s1, STRATEGIES),
        "first_player": first_player,
        "winner": winner,
        "end_reason": _dict(end_reason, END_REASONS),
        "turns": turns,
    }
    for s in SEATS:
        for p, pos in enumerate(POSITIONS):
            cols[f"seat{s}_protocol_{pos}"] = _dict(draft[:, s * 3 + p], PROTOCOLS)
    # Compiles: the winner compiles three times, the last on the final turn; others 0-2 times.
    compile_turns = np.zeros((n, 2, 3), np.int16)
    compiled = np.zeros((n, 2, 3), bool)
    for s in SEATS:
        u = np.sort(rng.random((n, 3)), axis=1)
        t = np.maximum(1, (turns[:, None] * (0.3 + 0.7 * u))).astype(np.int16)
        k = rng.choice(3, n, p=[0.3, 0.4, 0.3])
        wins = winner == s
        t[wins, 2] = turns[wins]
        k[wins] = 3
        t = np.minimum(t, turns[:, None])
        compiled[:, s] = np.arange(3)[None, :] < k[:, None]
        compile_turns[:, s] = t
        for j in range(3):
            cols[f"seat{s}_compile{j + 1}_turn"] = pa.array(t[:, j], pa.int16(), mask=~compiled[:, s, j])
        cols[f"seat{s}_recompiles"] = (rng.poisson(1.2, n) * (k > 0)).astype(np.int16)
        cols[f"seat{s}_plays_face_up"] = rng.poisson(8, n).astype(np.int16)
        cols[f"seat{s}_plays_face_down"] = rng.poisson(24, n).astype(np.int16)
        cols[f"seat{s}_refreshes"] = rng.poisson(3, n).astype(np.int16)
        cols[f"seat{s}_control_gains"] = rng.poisson(4, n).astype(np.int16)
    games = pa.Table.from_arrays([cols[f.name] for f in GAMES], schema=GAMES)
    outp = Path(out)
    shard: dict[str, Any] = {
        "index": si,
        "matchup": 0,
        "first_game": first,
        "games": n,
        "games_file": f"games/shard-{si:05d}.parquet",
        "games_rows": n,
    }
    shard["games_sha256"] = _write(games, outp / shard["games_file"], GAMES_ROW_GROUP)
    if with_events:
        ev = _synth_events(rng, gi, turns, first_player, draft, compile_turns, compiled, cols, run_id)
        shard["events_file"] = f"events/shard-{si:05d}.parquet"
        shard["events_rows"] = ev.num_rows
        shard["events_sha256"] = _write(ev, outp / shard["events_file"], EVENTS_ROW_GROUP)
    return shard


def _synth_events(
    rng: np.random.Generator,
    gi: np.ndarray,
    turns: np.ndarray,
    first_player: np.ndarray,
    draft: np.ndarray,
    compile_turns: np.ndarray,
    compiled: np.ndarray,
    cols: dict[str, Any],
    run_id: str,
) -> pa.Table:
    n = len(gi)
    per = 10 + (1.75 * turns).astype(np.int64)  # 10 opening draws, ~1.75 per turn
    e = int(per.sum())
    g = np.repeat(np.arange(n), per)
    k = np.arange(e) - np.repeat(np.cumsum(per) - per, per)
    body = k >= 10
    turn = np.where(body, 1 + ((k - 10) * turns[g]) // np.maximum(per[g] - 10, 1), 0).astype(np.int16)
    seat = np.where(body, (first_player[g] + turn - 1) % 2, k // 5).astype(np.int8)
    kind = np.where(body, BODY_KINDS[rng.choice(len(EVENT_P), e, p=EVENT_P)], EVENT_KINDS.index("draw"))
    pos = rng.integers(0, 3, e)
    proto = draft[g, seat.astype(np.int64) * 3 + pos]
    card = proto * 6 + rng.integers(0, 6, e)
    is_control = kind == EVENT_KINDS.index("control")
    field = np.isin(kind, [EVENT_KINDS.index(x) for x in ("play_face_up", "play_face_down", "delete")])
    line = np.where(field, pos, 0).astype(np.int8)
    # Compile and recompile events, consistent with the games table.
    cg, cs, cj = np.nonzero(compiled)
    order = np.argsort(rng.random((n, 2, 3)), axis=2)  # which of the trio is compiled k-th
    cpos = order[cg, cs, cj]
    parts_g = [g, cg]
    parts_turn = [turn, compile_turns[cg, cs, cj]]
    parts_seat = [seat, cs.astype(np.int8)]
    parts_kind = [kind, np.full(len(cg), EVENT_KINDS.index("compile"))]
    parts_proto = [proto, draft[cg, cs * 3 + cpos]]
    parts_card_mask = [is_control, np.ones(len(cg), bool)]
    parts_card = [card, np.zeros(len(cg), np.int64)]
    parts_line = [line, cpos.astype(np.int8)]
    parts_line_mask = [~field, np.zeros(len(cg), bool)]
    for s in SEATS:
        r = np.asarray(cols[f"seat{s}_recompiles"]).astype(np.int64)
        rg = np.repeat(np.arange(n), r)
        if len(rg) == 0:
            continue
        t0 = compile_turns[rg, s, 0].astype(np.int64)
        rt = (t0 + rng.random(len(rg)) * (turns[rg] - t0)).astype(np.int16)
        rp = order[rg, s, 0]
        parts_g.append(rg)
        parts_turn.append(rt)
        parts_seat.append(np.full(len(rg), s, np.int8))
        parts_kind.append(np.full(len(rg), EVENT_KINDS.index("recompile")))
        parts_proto.append(draft[rg, s * 3 + rp])
        parts_card_mask.append(np.ones(len(rg), bool))
        parts_card.append(np.zeros(len(rg), np.int64))
        parts_line.append(rp.astype(np.int8))
        parts_line_mask.append(np.zeros(len(rg), bool))
    G, T = np.concatenate(parts_g), np.concatenate(parts_turn)
    idx = np.lexsort((T, G))
    kind_all = np.concatenate(parts_kind)[idx]
    card_mask = np.concatenate(parts_card_mask)[idx]
    proto_all = np.concatenate(parts_proto)[idx]
    m = len(idx)
    arrays = {
        "run_id": _const(run_id, m),
        "game_index": gi[G[idx]],
        "turn": T[idx],
        "seat": np.concatenate(parts_seat)[idx],
        "kind": _dict(kind_all, EVENT_KINDS),
        "card": _dict(np.concatenate(parts_card)[idx], CARDS, mask=card_mask),
        "protocol": _dict(proto_all, PROTOCOLS, mask=kind_all == EVENT_KINDS.index("control")),
        "line": pa.array(np.concatenate(parts_line)[idx], pa.int8(), mask=np.concatenate(parts_line_mask)[idx]),
        "by_effect": rng.random(m) < 0.1,
    }
    return pa.Table.from_arrays([arrays[f.name] for f in EVENTS], schema=EVENTS)


def synth_run(
    out: str | Path,
    games: int,
    events_games: int | None = None,
    shard_games: int = 100_000,
    workers: int = 2,
    strategies: bool = True,
    run_id: str = "synthetic",
    cards: bool = True,
    compiles: bool = True,
) -> Path:
    """A synthetic run of `games` games; the first `events_games` (default all) also get events
    (and, with `cards` / `compiles`, cards / compiles files aggregated from them). Shards are written in parallel by
    `workers` processes."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ev_games = games if events_games is None else events_games
    jobs = []
    for si, first in enumerate(range(0, games, shard_games)):
        n = min(shard_games, games - first)
        jobs.append((str(out), run_id, si, first, n, first + n <= ev_games, strategies))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        shards = list(pool.map(_synth_shard, jobs))
    _manifest(out, run_id, games, shards, True, {"name": "synthetic", "games": games})
    if cards:
        add_cards(out, workers)
    if compiles:
        add_compiles(out, workers)
    return out


def main(argv: Iterable[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="write a synthetic run folder in the schema of docs/data.md")
    ap.add_argument("out", help="the run folder to write (with --add-cards: an existing run folder)")
    ap.add_argument(
        "--add-cards",
        action="store_true",
        help="only add cards files, aggregated from the events, to the existing run OUT",
    )
    ap.add_argument(
        "--add-compiles",
        action="store_true",
        help="only add compiles files, aggregated from the events, to the existing run OUT",
    )
    ap.add_argument("--no-cards", action="store_true", help="write no cards files")
    ap.add_argument("--no-compiles", action="store_true", help="write no compiles files")
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--events-games", type=int, help="games that get events (default: all; 0: none)")
    ap.add_argument("--shard-games", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--one-strategy", action="store_true", help="random vs random only")
    a = ap.parse_args(list(argv) if argv is not None else None)
    t0 = time.perf_counter()
    if a.add_cards or a.add_compiles:
        for kind in ("cards",) * a.add_cards + ("compiles",) * a.add_compiles:
            n = add_summary(a.out, kind, a.workers)
            print(f"wrote {n} {kind} files in {a.out} in {time.perf_counter() - t0:.1f} s")
        return
    synth_run(
        a.out,
        a.games,
        a.events_games,
        a.shard_games,
        a.workers,
        not a.one_strategy,
        cards=not a.no_cards,
        compiles=not a.no_compiles,
    )
    print(f"wrote {a.out} ({a.games:,} games) in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
