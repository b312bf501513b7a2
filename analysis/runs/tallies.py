"""Per-shard tallies of the games (docs/data.md, `tallies`): the small counts every report table
that reads `games` is a roll-up of, written by each shard beside its games, so that a report's cost
grows with the number of shards, not of games.

Each tally is one grouped DuckDB query over a relation named `games` (TALLIES, the one declaration):
the shard writer runs it over the shard's games in memory; the report sums the shards' rows per key
(`read`). A run recorded before the tallies existed has none, and the report runs the same queries
over all its games instead (reading every row, as before), so both give the same numbers.

The Arrow schema of the `tallies` files is derived from the declaration: `tally` names the tally, the
key and value columns of all tallies sit side by side, each row filling those of its own tally."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from analysis.runs.schema import DICT, PROTOCOL_COLUMNS, conform

FIRST_PICKER_POSITIONS = (1, 4, 5)  # A's picks of the six; B's are 2, 3 and 6 (rules 1.1)
WON_BY = "case when winner < 0 then 'draw' when winner = first_player then 'first' else 'second' end"


def _names(columns: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(f"{c}::varchar" for c in columns) + "]"


def _trio(s: int) -> str:
    """A seat's trio as a label: its names sorted and joined with ", " (a trio is a set)."""
    return f"array_to_string(list_sort({_names(PROTOCOL_COLUMNS[3 * s : 3 * s + 3])}), ', ')"


def _compiled(s: int) -> str:
    return " + ".join(f"(seat{s}_compile{k}_turn is not null)::int" for k in (1, 2, 3))


@dataclass(frozen=True)
class Tally:
    """One grouped query over `games`: its key columns, its value columns with how shards merge them
    ("sum", "min" or "max"), and the query (whose output columns are exactly keys then values)."""

    name: str
    keys: dict[str, pa.DataType]
    values: dict[str, tuple[pa.DataType, str]]
    sql: str


_I64 = pa.int64()
_COUNT = (_I64, "sum")
_PAIRS_A = _names([PROTOCOL_COLUMNS[i] for i in (0, 0, 0, 1, 1, 1, 2, 2, 2)])
_PAIRS_B = _names([PROTOCOL_COLUMNS[j] for j in (3, 4, 5) * 3])
_PICKED = f"""select protocol, pos, winner,
                    case when pos in {FIRST_PICKER_POSITIONS} then first_player else 1 - first_player end as seat
             from (select first_player, winner, unnest(picks) as protocol, generate_subscripts(picks, 1) as pos
                   from games where picks is not null)"""

TALLIES: tuple[Tally, ...] = (
    # game length: the overview, the length histogram, turns to win
    Tally(
        "length",
        {"turns": pa.int16(), "end_reason": DICT, "won_by": DICT},
        {"games": _COUNT},
        f"""
        select turns, end_reason::varchar as end_reason, {WON_BY} as won_by, count(*) as games
        from games group by all""",
    ),
    # a protocol per appearance, by seat and by moving first
    Tally(
        "seat_protocol",
        {"protocol": DICT, "seat": pa.int32(), "first": pa.bool_()},
        {"games": _COUNT, "wins": _COUNT, "draws": _COUNT},
        f"""
        select protocol, seat, seat = first_player as first, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = seat) as wins, count(*) filter (where winner < 0) as draws
        from (select first_player, winner, unnest({_names(PROTOCOL_COLUMNS)}) as protocol,
                     unnest([0, 0, 0, 1, 1, 1]) as seat from games) group by all""",
    ),
    # protocol vs protocol: seat 0's protocol against seat 1's, seat 0's wins
    Tally(
        "protocol_pairs",
        {"protocol": DICT, "opponent": DICT},
        {"games": _COUNT, "wins": _COUNT},
        f"""
        select protocol, opponent, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = 0) as wins
        from (select winner, unnest({_PAIRS_A}) as protocol, unnest({_PAIRS_B}) as opponent from games)
        group by all""",
    ),
    # a trio's games in either seat
    Tally(
        "trios",
        {"trio": DICT},
        {"games": _COUNT, "wins": _COUNT, "draws": _COUNT},
        f"""
        select trio, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = seat) as wins, count(*) filter (where winner < 0) as draws
        from (select {_trio(0)} as trio, 0 as seat, winner from games
              union all select {_trio(1)}, 1, winner from games) group by all""",
    ),
    # first player per matchup; the trio bounds name a matchup's trios, `pairs` counts its distinct
    # trio pairs (exact when `parts`, the shards holding the matchup, is 1)
    Tally(
        "matchups",
        {"matchup": pa.int32()},
        {
            "games": _COUNT,
            "first_wins": _COUNT,
            "parts": _COUNT,
            "pairs": _COUNT,
            **{f"{t}_{m}": (pa.string(), m) for t in ("trio0", "trio1", "lo", "hi") for m in ("min", "max")},
        },
        f"""
        select matchup, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = first_player) as first_wins, 1 as parts,
               count(distinct hash(least(t0, t1), greatest(t0, t1))) filter (where winner >= 0) as pairs,
               {
            ", ".join(
                f"{m}({e}) filter (where winner >= 0) as {t}_{m}"
                for t, e in (("trio0", "t0"), ("trio1", "t1"), ("lo", "least(t0, t1)"), ("hi", "greatest(t0, t1)"))
                for m in ("min", "max")
            )
        }
        from (select matchup, first_player, winner, {_trio(0)} as t0, {_trio(1)} as t1 from games)
        group by matchup""",
    ),
    # the turn of each seat's k-th compile (null: not reached), by moving first
    Tally(
        "compile_turns",
        {"first": pa.bool_(), "k": pa.int32(), "turn": pa.int16()},
        {"n": _COUNT},
        " union all ".join(
            f"select first_player = {s} as first, {k} as k, seat{s}_compile{k}_turn as turn, "
            f"count(*) as n from games group by all"
            for s in (0, 1)
            for k in (1, 2, 3)
        ),
    ),
    # compiles and recompiles per seat-game
    Tally(
        "compile_counts",
        {"compiles": pa.int8(), "recompiles": pa.int16()},
        {"n": _COUNT},
        f"""
        select compiles, recompiles, count(*) as n
        from (select {_compiled(0)} as compiles, seat0_recompiles as recompiles from games
              union all select {_compiled(1)}, seat1_recompiles from games) group by all""",
    ),
    # strategy pairs for the ratings
    Tally(
        "strategy_pairs",
        {"strategy_0": DICT, "strategy_1": DICT, "first_player": pa.int8()},
        {"games": _COUNT, "wins0": _COUNT},
        """
        select strategy_0::varchar as strategy_0, strategy_1::varchar as strategy_1, first_player,
               count(*) filter (where winner >= 0) as games, count(*) filter (where winner = 0) as wins0
        from games group by all""",
    ),
    # drafted games: who won, and each pick by protocol and position
    Tally(
        "drafted",
        {"won_by": DICT},
        {"n": _COUNT},
        f"select {WON_BY} as won_by, count(*) as n from games where picks is not null group by all",
    ),
    Tally(
        "picks",
        {"protocol": DICT, "pos": pa.int8()},
        {"n": _COUNT, "games": _COUNT, "wins": _COUNT},
        f"""
        select protocol, pos, count(*) as n, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = seat) as wins
        from ({_PICKED}) group by all""",
    ),
)
BY_NAME = {t.name: t for t in TALLIES}


def _columns() -> dict[str, pa.DataType]:
    cols: dict[str, pa.DataType] = {}
    for t in TALLIES:
        for name, typ in [*t.keys.items(), *((n, v[0]) for n, v in t.values.items())]:
            if cols.setdefault(name, typ) != typ:
                raise TypeError(f"tally {t.name}: column {name} is {typ} here, {cols[name]} in another tally")
    return cols


_TYPES = _columns()
TALLIES_SCHEMA = pa.schema(
    [
        pa.field("run_id", DICT),
        pa.field("arm", DICT),
        pa.field("tally", DICT),
        *(pa.field(n, t) for n, t in _TYPES.items()),
    ]
)
TALLIES_COLUMNS = tuple(TALLIES_SCHEMA.names)


_LOCAL = threading.local()


def _connection() -> duckdb.DuckDBPyConnection:
    """This thread's DuckDB connection for shard tallies, made once (a worker plays many shards)."""
    con = getattr(_LOCAL, "con", None)
    if con is None:
        con = _LOCAL.con = duckdb.connect()
        con.execute("set threads = 1")
    return con


def shard_tallies(games: pa.Table) -> pa.Table:
    """The `tallies` table of one shard's games table (GAMES_SCHEMA): every tally's rows."""
    con = _connection()
    con.register("shard_games", games)
    try:
        # copied once into DuckDB's own format: ten queries over it cost less than ten Arrow scans
        con.execute("create or replace temp table games as select * from shard_games")
        # sorted, so that a shard's file is the same bytes whenever it is played
        parts = [con.sql(f"select * from ({t.sql}) order by all").to_arrow_table() for t in TALLIES]
    finally:
        con.execute("drop table if exists games")
        con.unregister("shard_games")
    which = np.repeat(np.arange(len(parts), dtype=np.int32), [p.num_rows for p in parts])
    data: dict[str, pa.Array] = {
        "run_id": _first_value(games, "run_id", len(which)),
        "arm": _first_value(games, "arm", len(which)),
        "tally": pa.DictionaryArray.from_arrays(pa.array(which), pa.array([t.name for t in TALLIES])),
    }
    for name, typ in _TYPES.items():
        chunks = [
            p.column(name).combine_chunks().cast(typ) if name in p.column_names else pa.nulls(p.num_rows, typ)
            for p in parts
        ]
        data[name] = pa.concat_arrays(chunks) if chunks else pa.nulls(0, typ)
    return conform(data, TALLIES_SCHEMA)


def _first_value(games: pa.Table, column: str, n: int) -> pa.DictionaryArray:
    """`n` times the value of a column that is the same in every game of a shard (run_id, arm)."""
    value = games.column(column)[0].as_py() if games.num_rows else ""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value], pa.string()))


def _merge_sql(t: Tally) -> str:
    keys = ", ".join(t.keys)
    values = ", ".join(
        f"sum({n})::bigint as {n}" if how == "sum" else f"{how}({n}) as {n}" for n, (_, how) in t.values.items()
    )
    return f"select {keys}, {values} from tallies where tally = '{t.name}' group by all"


def read(sql: Callable[[str], pd.DataFrame], name: str, from_tallies: bool) -> pd.DataFrame:
    """Tally `name` of the opened runs: the shards' rows summed per key when every shard has its
    tallies (view `tallies`), else the tally's query over every game (view `games`)."""
    t = BY_NAME[name]
    return sql(_merge_sql(t) if from_tallies else t.sql)
