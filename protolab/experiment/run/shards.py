"""Play one shard: the body of a Ray task. Seeds come from (master seed, matchup, game), games run
in C batches with the GIL released, and the result is Arrow tables (docs/data.md): `games`, and
its summary `tallies` (analysis/runs/tallies.py), and with events `events` and its summaries `cards`
(per card) and `compiles` (per compile protocol, line, ordinal and turn).

Seat swapping on paired seeds: games 2k and 2k+1 of a matchup share a seed. Game 2k is played
first (its trios drafted or fixed, first player by the seeded coin); game 2k+1 replays the seed
with the sides exchanged: seat 0 gets what seat 1 had (trio, strategy) and vice versa, while the
first turn stays with the same seat, so the side that went first now goes second."""

from __future__ import annotations

import os
import resource
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from sim.engine._core import constants

from analysis.runs.manifest import ShardEntry
from analysis.runs.runfolder import parquet_bytes, sees_run_dir, sha256, shard_paths
from analysis.runs.schema import (
    CARD_COUNTS,
    CARDS_SCHEMA,
    COMPILES_SCHEMA,
    EVENT_KINDS,
    EVENTS_SCHEMA,
    GAMES_SCHEMA,
    PICKS_FIELD,
    POSITIONS,
    conform,
)
from analysis.runs.tallies import shard_tallies
from protolab.experiment.pools import pool_of
from protolab.experiment.run import nodes
from protolab.experiment.seeds import game_seeds, mix64
from sim.batch import MAX_COMPILES, RECORDED_COLUMNS, play_columns
from sim.pool import ENGINE_VERSION, Pool
from sim.record import END_REASONS
from strategies.seats import Seats, make_seats

if TYPE_CHECKING:  # a type only: a worker never calls into the planner
    from protolab.experiment.run.plan import Matchup


@dataclass(frozen=True)
class Dictionaries:
    """The value lists of every dictionary column, the same in every shard of a run, so that all
    shard files have one schema and readers never have to reconcile dictionaries."""

    arms: tuple[str, ...]
    pool_hashes: tuple[str, ...]
    strategies: tuple[str, ...]
    protocols: tuple[str, ...]
    cards: tuple[str, ...]
    end_reasons: tuple[str, ...]
    event_kinds: tuple[str, ...]

    @classmethod
    def of(cls, arms: Sequence[str], pools: Sequence[Pool], strategies: Sequence[str]) -> Dictionaries:
        """The dictionaries of games played by these arms, pools and strategy specs."""
        return cls(
            arms=tuple(arms),
            pool_hashes=tuple(dict.fromkeys(p.hash for p in pools)),
            strategies=tuple(sorted(set(strategies))),
            protocols=tuple(sorted({n for p in pools for n in p.protocols})),
            cards=tuple(sorted({c.name for p in pools for c in p.cards})),
            end_reasons=_END,
            event_kinds=EVENT_KINDS,
        )


@dataclass(frozen=True)
class ShardTask:
    """Everything a worker needs, on any machine: no paths to the driver's files."""

    run_id: str
    index: int
    name: str
    arm_index: int
    arm_name: str | None
    strategies: tuple[str, str]  # the arm's seat 0 and seat 1 strategy specs
    sets: tuple[str, ...]  # the arm's pool: official sets plus card files (path as written, contents)
    cards: tuple[tuple[str, str], ...]
    pool_hash: str
    first_game: int  # global game index of the shard's first game
    games: int
    arm_first_game: int  # global game index of the arm's first game
    games_per_matchup: int
    arm_matchup_first: int  # the arm's first matchup number (plan.Plan.arm_matchups): its games' seeds
    matchup_base: int  # matchups[0] is this matchup number
    matchups: tuple[Matchup, ...]  # the matchups the shard touches; empty for random drafts
    master_seed: int  # the run's seed; each game's seed derives from it (seeds.py)
    swap: bool
    turn_cap: int
    events: bool | str | float  # spec.parse_events: true, false, "none" or a fraction of the games
    spec_hash: str
    engine_version: str
    dicts: Dictionaries
    run_dir: str = ""
    token: str = ""
    draft: tuple[str, ...] = ("random", "random")  # each seat's draft strategy (draft mode "draft")
    draft_files: tuple[tuple[str, str], ...] = ()  # (path as written, contents) of the tables it names


_POOLS: dict[str, Pool] = {}


def pool_for(task: ShardTask) -> Pool:
    """The arm's pool, built once per worker process from the sets and card texts the task carries
    (pools.pool_of, as every feature's workers build theirs), checked against the driver's hash."""
    pool = _POOLS.get(task.pool_hash)
    if pool is None:
        pool = pool_of(task.sets, task.cards)
        if pool.hash != task.pool_hash:
            raise RuntimeError(
                f"arm {task.arm_name!r}: this worker built pool {pool.hash}, the driver "
                f"{task.pool_hash}; are both on the same protolab version?"
            )
        _POOLS[task.pool_hash] = pool
    return pool


_SEATS: dict[tuple[Any, ...], Seats] = {}


def seats_for(pool: Pool, strategies: Sequence[str], task: ShardTask | None = None) -> Seats:
    """The engine seats of a batch, built once per worker process for each (pool, seat order,
    draft): an arm's seats, and its swapped seats, serve every shard the worker plays. Built seats
    keep nothing from one game to the next (a batch already plays all its games with one pair)."""
    draft, files = (task.draft, task.draft_files) if task is not None else ("random", ())
    key = (pool.hash, tuple(strategies), draft, files)
    seats = _SEATS.get(key)
    if seats is None:
        seats = _SEATS[key] = make_seats(pool, strategies, draft, dict(files).__getitem__)
    return seats


def play(
    pool: Pool,
    seeds: np.ndarray,
    strategies: Sequence[str],
    turn_cap: int,
    first_player: int | None,
    protocols: Sequence[Sequence[Sequence[str]]] | None,
    events: bool,
    task: ShardTask | None = None,
) -> dict[str, np.ndarray]:
    """One C batch with the seats' built-in strategies (validated by `spec.check_strategy`); with
    `task`, the seats draft by its draft strategies (their tables from the task, not from files)."""
    seats = seats_for(pool, strategies, task)
    if seats.trios is not None and not protocols:
        protocols = [seats.trios]
    return play_columns(
        pool, seeds, seats.configs, turn_cap=turn_cap, first_player=first_player, protocols=protocols, events=events
    )


_EVENT_FIELDS = ("turn", "player", "kind", "card", "line", "extra")


def play_shard_columns(task: ShardTask) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None, dict[str, Any]]:
    """Play the shard's games; returns game columns (shard order), event columns and facts
    (matchup, game in matchup, strategies per game)."""
    pool = pool_for(task)
    n = task.games
    local = np.arange(task.first_game - task.arm_first_game, task.first_game - task.arm_first_game + n, dtype=np.int64)
    matchup = task.arm_matchup_first + local // task.games_per_matchup
    game = local % task.games_per_matchup
    seeds = game_seeds(task.master_seed, matchup, game, task.swap)
    s0, s1 = task.strategies
    swapped = (game % 2 == 1) if task.swap else np.zeros(n, bool)

    def trios_of(idx: np.ndarray) -> list[Matchup] | None:
        if not task.matchups:
            return None
        return [task.matchups[int(m) - task.matchup_base] for m in matchup[idx]]

    first_idx = np.flatnonzero(~swapped)
    results = []
    events = task.events is not False  # "none" and a fraction play with events: the summaries need them
    first_cols = play(pool, seeds[first_idx], (s0, s1), task.turn_cap, None, trios_of(first_idx), events, task)
    results.append((first_idx, (s0, s1), first_cols))
    if task.swap:
        # partner of odd game i is game i - 1 (pairs never cross a shard: shard sizes are even)
        pos = np.empty(n, np.int64)
        pos[first_idx] = np.arange(len(first_idx))
        names = pool.protocols
        for fp in (0, 1):
            odd = np.flatnonzero(swapped)
            partner = pos[odd - 1]
            odd = odd[first_cols["first_player"][partner] == fp]
            if not len(odd):
                continue
            pr = first_cols["protocols"][pos[odd - 1]]
            trios = [(tuple(names[x] for x in row[3:]), tuple(names[x] for x in row[:3])) for row in pr.tolist()]
            cols = play(pool, seeds[odd], (s1, s0), task.turn_cap, fp, trios, events)
            results.append((odd, (s1, s0), cols))

    out: dict[str, np.ndarray] = {}
    for f in RECORDED_COLUMNS:
        proto = first_cols[f]
        out[f] = np.empty((n,) + proto.shape[1:], proto.dtype)
    strat = np.zeros((n, 2), np.int8)
    sidx = {s: i for i, s in enumerate(task.dicts.strategies)}
    for idx, (a, b), cols in results:
        for f in RECORDED_COLUMNS:
            out[f][idx] = cols[f]
        strat[idx, 0] = sidx[a]
        strat[idx, 1] = sidx[b]
    facts = {"matchup": matchup, "game": game, "strategies": strat}
    if not events:
        return out, None, facts
    return out, _shard_events(results, n), facts


def _shard_events(results: list[tuple[np.ndarray, tuple[str, str], dict[str, Any]]], n: int) -> dict[str, np.ndarray]:
    """The events of the shard's batches (each with its games' shard positions) in shard order:
    by game, then event order (a counting sort), each numbered within its game (`seq`)."""
    if len(results) == 1:
        ev = dict(results[0][2]["events"])
        ev["game"] = ev["game"].astype(np.int64)
        ev["seq"] = _seq(ev["game"], n)
        return ev
    counts = np.zeros(n, np.int64)
    for idx, _, cols in results:
        counts += np.bincount(idx[cols["events"]["game"]], minlength=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    ev = {f: np.empty(total, results[0][2]["events"][f].dtype) for f in _EVENT_FIELDS}
    ev["game"] = np.empty(total, np.int64)
    ev["seq"] = np.empty(total, np.int32)
    for idx, _, cols in results:
        e = cols["events"]
        g = idx[e["game"]]
        seq = _seq(e["game"], len(idx))
        at = offsets[g] + seq
        for f in _EVENT_FIELDS:
            ev[f][at] = e[f]
        ev["game"][at] = g
        ev["seq"][at] = seq
    return ev


def _seq(game: np.ndarray, n: int) -> np.ndarray:
    """Position of each event within its game, for events grouped by game in order."""
    counts = np.bincount(game, minlength=n)
    starts = np.zeros(n, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    out: np.ndarray = (np.arange(len(game), dtype=np.int64) - starts[game]).astype(np.int32)
    return out


# -- Arrow ------------------------------------------------------------------------------------------


def _dict(indices: np.ndarray, values: Sequence[str], mask: np.ndarray | None = None) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(indices, mask=mask), pa.array(list(values), pa.string()))


def _const(n: int, value: str) -> pa.DictionaryArray:
    return _dict(np.zeros(n, np.int8), [value])


@dataclass(frozen=True)
class Batch:
    """What a games table records of where its games came from, for games played outside a run
    (`protolab simulate`): the fields of ShardTask that `games_table` reads."""

    dicts: Dictionaries
    games: int
    pool_hash: str
    run_id: str = "simulate"
    first_game: int = 0
    arm_index: int = 0
    spec_hash: str = ""
    engine_version: str = ENGINE_VERSION


def batch_games(pool: Pool, cols: dict[str, np.ndarray], strategies: Sequence[str]) -> pa.Table:
    """The games table (analysis/runs/schema.py) of one batch played in this process, seat 0 playing
    strategies[0]: the rows a run would write, so its figures come from the same queries."""
    dicts = Dictionaries.of(("batch",), (pool,), strategies)
    n = len(cols["seed"])
    seat = np.array([dicts.strategies.index(x) for x in strategies], np.int8)
    facts = {
        "matchup": np.zeros(n, np.int32),
        "game": np.arange(n, dtype=np.int32),
        "strategies": np.broadcast_to(seat, (n, 2)),
    }
    return games_table(Batch(dicts, n, pool.hash), pool, cols, facts)


def loop_cards(codes: np.ndarray, pool: Pool) -> pa.Array:
    """The loop bound's card of each game by name (null where the game did not end in a loop)."""
    looped = np.asarray(codes) >= 0
    return _dict(np.where(looped, codes, 0).astype(np.int32), [c.name for c in pool.cards], mask=~looped)


def games_table(task: ShardTask | Batch, pool: Pool, cols: dict[str, np.ndarray], facts: dict[str, Any]) -> pa.Table:
    d = task.dicts
    n = task.games
    proto_map = np.array([d.protocols.index(p) for p in pool.protocols], np.int8)
    reason_map = np.array([d.end_reasons.index(r) if r in d.end_reasons else 0 for r in _END], np.int8)
    winner = cols["winner"].astype(np.int8)
    winner = np.where((winner == 0) | (winner == 1), winner, np.int8(-1)).astype(np.int8)
    data: dict[str, pa.Array] = {
        "run_id": _const(n, task.run_id),
        "game_index": pa.array(np.arange(task.first_game, task.first_game + n, dtype=np.int64)),
        "arm": _dict(np.full(n, task.arm_index, np.int8), d.arms),
        "matchup": pa.array(facts["matchup"].astype(np.int32)),
        "game_in_matchup": pa.array(facts["game"].astype(np.int32)),
        "seed": pa.array(cols["seed"].astype(np.uint64)),
        "pool_hash": _dict(np.full(n, d.pool_hashes.index(task.pool_hash), np.int8), d.pool_hashes),
        "spec_hash": _const(n, task.spec_hash),
        "engine_version": _const(n, task.engine_version),
        "strategy_0": _dict(facts["strategies"][:, 0], d.strategies),
        "strategy_1": _dict(facts["strategies"][:, 1], d.strategies),
    }
    for seat in (0, 1):
        for k, side in enumerate(POSITIONS):
            data[f"seat{seat}_protocol_{side}"] = _dict(proto_map[cols["protocols"][:, seat * 3 + k]], d.protocols)
    data["first_player"] = pa.array(cols["first_player"].astype(np.int8))
    data["winner"] = pa.array(winner)
    data["end_reason"] = _dict(reason_map[cols["end_reason"]], d.end_reasons)
    data["loop_card"] = loop_cards(cols["loop_card"], pool)
    data["turns"] = pa.array(cols["turns"].astype(np.int16))
    nc = np.minimum(cols["n_compiles"].astype(np.int64), MAX_COMPILES)
    valid = np.arange(MAX_COMPILES)[None, :] < nc[:, None]
    first_compile = valid & (cols["compile_recompile"] == 0)
    for seat in (0, 1):
        mine = first_compile & (cols["compile_player"] == seat)
        rank = np.cumsum(mine, axis=1)
        for r in (1, 2, 3):
            hit = mine & (rank == r)
            has = hit.any(axis=1)
            turn = cols["compile_turn"][np.arange(n), hit.argmax(axis=1)].astype(np.int16)
            data[f"seat{seat}_compile{r}_turn"] = pa.array(turn, mask=~has)
    for seat in (0, 1):
        rec = valid & (cols["compile_recompile"] != 0) & (cols["compile_player"] == seat)
        data[f"seat{seat}_recompiles"] = pa.array(rec.sum(axis=1).astype(np.int16))
    for seat in (0, 1):
        data[f"seat{seat}_plays_face_up"] = pa.array(cols["plays_up"][:, seat].astype(np.int16))
        data[f"seat{seat}_plays_face_down"] = pa.array(cols["plays_down"][:, seat].astype(np.int16))
        data[f"seat{seat}_refreshes"] = pa.array(cols["refreshes"][:, seat].astype(np.int16))
        data[f"seat{seat}_control_gains"] = pa.array(cols["control_gains"][:, seat].astype(np.int16))
    data[PICKS_FIELD.name] = picks_array(cols["picks"], pool.protocols)
    return conform(data, GAMES_SCHEMA)


def picks_array(picks: np.ndarray, names: Sequence[str]) -> pa.Array:
    """The `picks` column (analysis/runs/schema.py PICKS_FIELD): six protocol names per drafted game, null
    for games that did not draft (pick ids -1)."""
    n = len(picks)
    drafted = picks[:, 0] >= 0
    values = pa.array(
        np.array(list(names), dtype=object)[np.where(drafted[:, None], picks, 0).ravel()], PICKS_FIELD.type.value_type
    )
    offsets = pa.array(np.arange(0, 6 * n + 1, 6, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values, type=PICKS_FIELD.type, mask=pa.array(~drafted))


def events_table(task: ShardTask, pool: Pool, ev: dict[str, np.ndarray]) -> pa.Table:
    d = task.dicts
    n = len(ev["game"])
    kinds = _kinds()
    kind_map = np.zeros(max(kinds) + 1, np.int8)
    for code, name in kinds.items():
        kind_map[code] = d.event_kinds.index(name)
    kind = ev["kind"].astype(np.int64)
    is_compile = (kind == _KIND_CODE["compile"]) | (kind == _KIND_CODE["recompile"])
    card = ev["card"].astype(np.int64)
    has_card = (card >= 0) & ~is_compile
    card_map = np.array([d.cards.index(c.name) for c in pool.cards], np.int16)
    card_proto = np.array([d.protocols.index(c.protocol) for c in pool.cards], np.int8)
    proto_map = np.array([d.protocols.index(p) for p in pool.protocols], np.int8)
    safe = np.where(has_card, card, 0)
    proto = np.where(is_compile, proto_map[np.where(is_compile, card, 0)], card_proto[safe]).astype(np.int8)
    line = ev["line"].astype(np.int8)
    return conform(
        {
            "run_id": _const(n, task.run_id),
            "game_index": pa.array(ev["game"] + np.int64(task.first_game)),
            "seq": pa.array(ev["seq"].astype(np.int32)),
            "turn": pa.array(ev["turn"].astype(np.int16)),
            "seat": pa.array(ev["player"].astype(np.int8)),
            "kind": _dict(kind_map[kind], d.event_kinds),
            "card": _dict(card_map[safe], d.cards, mask=~has_card),
            "protocol": _dict(proto, d.protocols, mask=~(has_card | is_compile)),
            "line": pa.array(line, mask=line < 0),
            "by_effect": pa.array(ev["extra"] != 0),
        },
        EVENTS_SCHEMA,
    )


def cards_table(task: ShardTask, pool: Pool, cols: dict[str, np.ndarray], ev: dict[str, np.ndarray]) -> pa.Table:
    """Per (arm, card): the seat-game counts behind card impact (docs/data.md, `cards`), so that
    the analysis sums a few thousand rows instead of grouping every event by (game, seat, card).

    Decided games only, and only cards of the seat's own deck (the card's protocol is in that
    seat's trio). Each count is a number of (game, seat) pairs: `up` counts the seat-games in
    which the seat played the card face-up at least once, `up_wins` those the seat won.

    Vectorised: one scatter of the shard's draw and play events into dense flags indexed by
    (kind, card, seat-game), so a card seen twice in a seat-game counts once, then row sums;
    3 x cards x 2 x games bytes (27 MB at 50,000 games and 90 cards)."""
    d = task.dicts
    n, n_cards = task.games, len(pool.cards)
    sg = 2 * n  # seat-games: game * 2 + seat
    kind, card, seat = ev["kind"], ev["card"], ev["player"]
    up, down = kind == _KIND_CODE["play_face_up"], kind == _KIND_CODE["play_face_down"]
    keep = ((kind == _KIND_CODE["draw"]) | up | down) & (card >= 0) & ((seat == 0) | (seat == 1))
    # row = kind slot (0 drawn, 1 face-up, 2 face-down) * cards + card, in a narrow type; events
    # left out go to one extra row that is dropped
    narrow = np.int16 if 3 * n_cards < 2**15 else np.int32
    row = (up.view(np.int8) + 2 * down.view(np.int8)).astype(narrow)
    row *= narrow(n_cards)
    row += card
    row = np.where(keep, row, narrow(3 * n_cards))
    flat = np.multiply(row, n, dtype=np.intp)
    flat += ev["game"]
    flat *= 2
    flat += seat & 1
    flags: np.ndarray = np.zeros((3 * n_cards + 1) * sg, bool)
    flags[flat] = True  # a card seen twice in a seat-game counts once
    flags = flags[: 3 * n_cards * sg].reshape(3, n_cards, sg)
    # own[card, seat-game]: the game is decided and the card's protocol is in the seat's trio
    winner = cols["winner"]
    own_proto = np.zeros((len(pool.protocols), n, 2), bool)
    own_proto[
        cols["protocols"].astype(np.intp).reshape(n, 2, 3), np.arange(n)[:, None, None], np.arange(2)[None, :, None]
    ] = True
    own_proto &= ((winner == 0) | (winner == 1))[None, :, None]
    card_proto = np.array([pool.protocols.index(c.protocol) for c in pool.cards], np.intp)
    flags &= own_proto[card_proto].reshape(n_cards, sg)
    won = (winner[:, None] == np.arange(2, dtype=winner.dtype)[None, :]).reshape(sg)
    counts: dict[str, np.ndarray] = {}
    for name, m in (("drawn", flags[0]), ("up", flags[1]), ("down", flags[2]), ("played", flags[1] | flags[2])):
        counts[name] = m.view(np.uint8).sum(axis=1, dtype=np.int32).astype(np.int64)
        counts[f"{name}_wins"] = (m & won).view(np.uint8).sum(axis=1, dtype=np.int32).astype(np.int64)
    card_map = np.array([d.cards.index(x.name) for x in pool.cards], np.int64)
    rows = np.flatnonzero(counts["drawn"] + counts["played"])  # the cards that occur
    rows = rows[np.argsort(card_map[rows], kind="stable")]  # in dictionary (name) order
    m = len(rows)
    data: dict[str, pa.Array] = {
        "run_id": _const(m, task.run_id),
        "arm": _dict(np.full(m, task.arm_index, np.int8), d.arms),
        "card": _dict(card_map[rows].astype(np.int16), d.cards),
        "protocol": _dict(np.array([d.protocols.index(pool.cards[i].protocol) for i in rows], np.int8), d.protocols),
    }
    for name in CARD_COUNTS:
        data[name] = pa.array(counts[name][rows])
    return conform(data, CARDS_SCHEMA)


def compiles_table(task: ShardTask, pool: Pool, cols: dict[str, np.ndarray], ev: dict[str, np.ndarray]) -> pa.Table:
    """Per (arm, kind, protocol, line, ordinal, turn): the number of compile and recompile events
    (docs/data.md, `compiles`), so that the per-protocol and per-line compile tables sum some
    thousands of rows per shard instead of numbering every compile event of the run. `ordinal` is 1, 2, 3 for a
    seat's compiles in game order, null for recompiles; `line` and `protocol` as in `events`.

    From the game columns the batch already has (MAX_COMPILES compiles per game); a game with
    more (recorded only in part there) takes its compiles from its events instead."""
    d = task.dicts
    nc = cols["n_compiles"].astype(np.int64)
    over = nc > MAX_COMPILES
    valid = (np.arange(MAX_COMPILES)[None, :] < nc[:, None]) & ~over[:, None]
    g, j = np.nonzero(valid)  # by game, then in game order
    game, turn, seat = g, cols["compile_turn"][g, j].astype(np.int64), cols["compile_player"][g, j].astype(np.int64)
    line, proto = cols["compile_line"][g, j].astype(np.int64), cols["compile_protocol"][g, j].astype(np.int64)
    rec = cols["compile_recompile"][g, j] != 0
    if over.any():
        k = ev["kind"]
        e = np.flatnonzero(((k == _KIND_CODE["compile"]) | (k == _KIND_CODE["recompile"])) & over[ev["game"]])
        game = np.concatenate([game, ev["game"][e]])
        turn = np.concatenate([turn, ev["turn"][e].astype(np.int64)])
        seat = np.concatenate([seat, ev["player"][e].astype(np.int64)])
        line = np.concatenate([line, ev["line"][e].astype(np.int64)])
        proto = np.concatenate([proto, ev["card"][e].astype(np.int64)])  # a compile event's card is its protocol
        rec = np.concatenate([rec, k[e] == _KIND_CODE["recompile"]])
    # ordinal: rank of each first compile among its seat-game's first compiles, in game order
    ordinal = np.zeros(len(game), np.int64)  # 0: null (a recompile)
    first = np.flatnonzero(~rec)
    key = game[first] * 2 + seat[first]
    order = np.argsort(key, kind="stable")
    ks = key[order]
    pos = np.arange(len(ks))
    boundary = np.ones(len(ks), bool)
    boundary[1:] = ks[1:] != ks[:-1]
    start = np.maximum.accumulate(np.where(boundary, pos, 0))
    ordinal[first[order]] = pos - start + 1
    # one integer per (kind, protocol, line, ordinal, turn), protocols in dictionary order
    proto_map = np.array([d.protocols.index(p) for p in pool.protocols], np.int64)
    n_turns = int(turn.max()) + 1 if len(turn) else 1
    packed = (((rec.astype(np.int64) * len(d.protocols) + proto_map[proto]) * 3 + line) * 4 + ordinal) * n_turns + turn
    keys, n = np.unique(packed, return_counts=True)
    t, rest = keys % n_turns, keys // n_turns
    o, rest = rest % 4, rest // 4
    ln, rest = rest % 3, rest // 3
    pr, rc = rest % len(d.protocols), rest // len(d.protocols)
    kind_ix = np.array([d.event_kinds.index("compile"), d.event_kinds.index("recompile")], np.int8)
    m = len(keys)
    return conform(
        {
            "run_id": _const(m, task.run_id),
            "arm": _dict(np.full(m, task.arm_index, np.int8), d.arms),
            "kind": _dict(kind_ix[rc], d.event_kinds),
            "protocol": _dict(pr.astype(np.int8), d.protocols),
            "line": pa.array(ln.astype(np.int8)),
            "ordinal": pa.array(o.astype(np.int8), mask=o == 0),
            "turn": pa.array(t.astype(np.int16)),
            "n": pa.array(n.astype(np.int64)),
        },
        COMPILES_SCHEMA,
    )


def _kinds() -> dict[int, str]:
    return dict(constants()["event_kind"])


_END = tuple(END_REASONS[i] for i in sorted(END_REASONS))
_KIND_CODE = {v: k for k, v in _kinds().items()}


_K_EVENTS_SAMPLE = np.uint64(0xE7037ED1A0B428DB)


def sampled_games(seeds: np.ndarray, fraction: float) -> np.ndarray:
    """Which games keep their events under `events = fraction`: a hash of each game's seed below
    the fraction. The seed comes from (master seed, matchup, game), so the choice is reproducible
    from the master seed, the same in every arm (common random numbers) and for both games of a
    seat-swapped pair, whatever the sharding."""
    h = mix64(np.asarray(seeds, np.uint64) ^ _K_EVENTS_SAMPLE)
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53 < fraction


def play_shard_tables(task: ShardTask) -> dict[str, pa.Table]:
    """The shard's tables by kind (analysis.runs.runfolder.TABLES): `games` and its `tallies`, and unless
    events = false the summaries `cards` and `compiles` from every game, and `events` of every game,
    of a seeded fraction of them, or of none."""
    cols, ev, facts = play_shard_columns(task)
    pool = pool_for(task)
    games = games_table(task, pool, cols, facts)
    tables = {"games": games, "tallies": shard_tallies(games)}
    if ev is not None:
        tables["cards"] = cards_table(task, pool, cols, ev)
        tables["compiles"] = compiles_table(task, pool, cols, ev)
        if isinstance(task.events, float):
            keep = sampled_games(cols["seed"], task.events)[ev["game"]]
            ev = {k: v[keep] for k, v in ev.items()}
        if task.events != "none":
            tables["events"] = events_table(task, pool, ev)
    return tables


def worker_facts(t0: float) -> dict[str, Any]:
    """Where and how the shard ran (kept in run.json, not in the rows): the node by address, Ray's
    node id and host name (two nodes on one host are told apart by id), the process and its cost."""
    try:
        where = nodes.here()
    except Exception:  # noqa: BLE001 - informative only
        where = {"node": socket.gethostname(), "node_id": "", "host": socket.gethostname()}
    return {
        **where,
        "pid": os.getpid(),
        "seconds": round(time.perf_counter() - t0, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def execute(task: ShardTask) -> dict[str, Any]:
    """The Ray task: play the shard and produce its Parquet files (games, tallies; events, cards, compiles).

    If this worker reaches the run location (the same machine, a shared disk, or the object store
    the run lives in) it writes the files there itself, each whole, and returns only a receipt: the
    shard entry (file names, sizes, checksums, row counts) and where and how long it ran. Otherwise
    (the explicit fallback) it returns the files' bytes as well, and the driver writes them."""

    t0 = time.perf_counter()
    tables = play_shard_tables(task)
    t_play = time.perf_counter()
    data: dict[str, bytes] = {}
    rows: dict[str, int] = {}
    for kind in list(tables):
        table = tables.pop(kind)  # encoded one at a time, each freed once encoded
        data[kind] = parquet_bytes(table, kind)
        rows[kind] = table.num_rows
        del table
    t_encode = time.perf_counter()
    direct = bool(task.run_dir) and sees_run_dir(task.run_dir, task.token)
    paths = shard_paths(task.run_dir or ".", task.name) if direct else {}
    for kind, blob in data.items():
        if direct:
            paths[kind].write_atomic(blob)
    entry = shard_entry(
        task.index, task.arm_name, task.first_game, task.games, _matchup_range(task), task.name, data, rows
    )
    facts = worker_facts(t0)
    facts["phases"] = {
        "play": round(t_play - t0, 3),
        "encode": round(t_encode - t_play, 3),
        "write": round(time.perf_counter() - t_encode, 3),
    }
    return {"entry": entry, "data": None if direct else data, "worker": facts}


def shard_entry(
    index: int,
    arm: str | None,
    first_game: int,
    games: int,
    matchups: list[int],
    name: str,
    data: dict[str, bytes],
    rows: dict[str, int],
) -> ShardEntry:
    """The run.json entry of a shard whose tables encode to `data` (kind -> file bytes) with `rows`
    rows each: its games, then per table rows, and file, size and SHA-256 (the stored order)."""
    raw: dict[str, Any] = {"index": index, "arm": arm, "first_game": first_game, "games": games, "matchups": matchups}
    raw.update({f"{kind}_rows": n for kind, n in rows.items()})
    for kind, blob in data.items():
        raw.update(
            {f"{kind}_file": f"{kind}/{name}.parquet", f"{kind}_bytes": len(blob), f"{kind}_sha256": sha256(blob)}
        )
    return ShardEntry.of(raw, f"shard {index}")


def _matchup_range(task: ShardTask) -> list[int]:
    lo = task.arm_matchup_first + (task.first_game - task.arm_first_game) // task.games_per_matchup
    hi = task.arm_matchup_first + (task.first_game - task.arm_first_game + task.games - 1) // task.games_per_matchup
    return [int(lo), int(hi)]
