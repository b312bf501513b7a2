"""The balance queries: each runs in DuckDB over the Parquet views and returns a small pandas
DataFrame with the game count beside every rate and a 95% Wilson interval around it.

Conventions (docs/analysis.md): a win rate counts decided games only (draws are reported beside
it, never as half wins); a protocol's rate is per appearance (a protocol in both trios of a game
counts once for each seat, so mirrors sit at exactly 50%); seats are 0 and 1 as in the run folder,
and "first" means the seat that took the first turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.runs import tallies
from analysis.runs.open import Runs
from analysis.runs.schema import CARD_COUNTS, POSITIONS, PROTOCOL_COLUMNS
from analysis.stats.proportions import add_rate, bradley_terry, newcombe_diff


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


# -- shared intermediates (computed once per opened run) ---------------------------------------


def tally(runs: Runs, name: str) -> pd.DataFrame:
    """A tally of the games (analysis/runs/tallies.py): from the shards' `tallies` when every shard has
    them, else by the same query over every game (runs from before the tallies)."""
    return runs.memo(f"tally_{name}", lambda: tallies.read(runs.sql, name, runs.has_tallies))


def _trio_key(s: int) -> str:
    # An order-free key of a seat's trio without building strings per game: xor of the names' hashes.
    return f"xor(xor(hash(seat{s}_protocol_left), hash(seat{s}_protocol_middle)), hash(seat{s}_protocol_right))"


def trio_table(runs: Runs) -> str:
    """Materialise `trio_agg`: game counts per (matchup, seat-0 trio, seat-1 trio, first player,
    winner). One scan of the rows of `games`, for what no tally holds (trio vs trio, whose size
    grows with the trio pairs played, and `meta`). Trios are
    labelled by their sorted names joined with ", " (a trio is a set; draft order is a position)."""

    def q() -> str:
        names = ", ".join(
            f"any_value(seat{s}_protocol_{p}) as p{s}{i}" for s in (0, 1) for i, p in enumerate(POSITIONS)
        )
        runs.execute(f"""
            create or replace temp table trio_agg as
            select matchup, first_player, winner, n,
                   [p00, p01, p02] as protos0, [p10, p11, p12] as protos1,
                   array_to_string(list_sort([p00, p01, p02]), ', ') as trio0,
                   array_to_string(list_sort([p10, p11, p12]), ', ') as trio1
            from (select matchup, first_player, winner, {_trio_key(0)} as k0, {_trio_key(1)} as k1, {names},
                         count(*) as n
                  from games group by matchup, first_player, winner, k0, k1)""")
        return "trio_agg"

    return runs.memo("trio_agg", q)


def seat_protocol_base(runs: Runs) -> pd.DataFrame:
    """Per (protocol, seat, moved first): decided games, wins, draws (60 rows at most)."""
    return tally(runs, "seat_protocol")


def trio_base(runs: Runs) -> pd.DataFrame:
    """Per (matchup, seat-0 trio, seat-1 trio, first player, winner): game counts."""

    def q() -> pd.DataFrame:
        t = trio_table(runs)
        return runs.sql(
            f"select matchup, trio0, trio1, first_player, winner, sum(n)::bigint as n from {t} group by all"
        )

    return runs.memo("trio", q)


def length_histogram(runs: Runs) -> pd.DataFrame:
    """Games per (turns, end reason, who won: first / second / draw): the one scan behind the
    overview, the game-length chart and turns to win."""
    return tally(runs, "length").sort_values(["turns", "end_reason", "won_by"]).reset_index(drop=True)


def _weighted_quantiles(
    values: np.ndarray, weights: np.ndarray, qs: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9)
) -> list[float]:
    """Lower quantiles (the smallest value whose cumulative weight reaches q) of a histogram."""
    weights = np.asarray(weights, dtype=float)
    if weights.sum() == 0:
        return [np.nan] * len(qs)
    order = np.argsort(values, kind="stable")
    v, cum = np.asarray(values, dtype=float)[order], np.cumsum(weights[order])
    return [float(v[min(np.searchsorted(cum, q * cum[-1]), len(v) - 1)]) for q in qs]


# -- overview, first player, game length -----------------------------------------------------------


def overview(runs: Runs) -> pd.DataFrame:
    """One row: games, decided, draws, end reasons, turns, first-player win rate with its interval."""
    h = length_histogram(runs)
    n = h["games"]
    turns = h["turns"].to_numpy(dtype=float)
    total = int(n.sum())
    df = pd.DataFrame(
        [
            {
                "runs": runs.label,
                "games": total,
                "decided": int(n[h["won_by"] != "draw"].sum()),
                "draws": int(n[h["won_by"] == "draw"].sum()),
                "first_wins": int(n[h["won_by"] == "first"].sum()),
                "mean_turns": float((turns * n).sum() / total) if total else np.nan,
                "median_turns": _weighted_quantiles(turns, n.to_numpy(), (0.5,))[0],
                "turn_cap": int(n[h["end_reason"] == "turn_cap"].sum()),
                "loop_guard": int(n[h["end_reason"] == "loop_guard"].sum()),
            }
        ]
    )
    return add_rate(df, "first_wins", "decided", "first_player_win_rate")


def first_player(runs: Runs) -> pd.DataFrame:
    """First-player advantage: overall, then per matchup of the spec (its trios named when fixed,
    "(seats swapped)" when both seat orders were played, else the number of drafted trio pairs).

    From the `matchups` tally; a matchup whose trios vary (only when runs of different draft modes
    are opened together) and whose games lie in several shards cannot count its distinct trio pairs
    from the tallies, and then the table comes from the rows (`_first_player_rows`)."""
    m = tally(runs, "matchups")
    games, first_wins = int(m["games"].sum()), int(m["first_wins"].sum())
    rows = [{"matchup": "all", "trios": "", "games": games, "first_wins": first_wins}]
    for r in m[m["games"] > 0].sort_values("matchup").itertuples() if len(m) > 1 else ():
        if r.trio0_min == r.trio0_max and r.trio1_min == r.trio1_max:
            trios = f"{r.trio0_min} vs {r.trio1_min}"
        elif r.lo_min == r.lo_max and r.hi_min == r.hi_max:
            trios = f"{r.lo_min} vs {r.hi_min} (seats swapped)"
        elif r.parts == 1:
            trios = f"drafted ({r.pairs} trio pairs)"
        else:
            return _first_player_rows(runs)
        rows.append({"matchup": str(r.matchup), "trios": trios, "games": int(r.games), "first_wins": int(r.first_wins)})
    df = pd.DataFrame(rows).astype({"games": np.int64, "first_wins": np.int64})
    return add_rate(df, "first_wins", "games")


def _first_player_rows(runs: Runs) -> pd.DataFrame:
    """`first_player` by one DuckDB roll-up of `trio_agg` (the rows of `games`)."""
    t = trio_table(runs)
    per_matchup = runs.sql(f"select min(matchup) < max(matchup) as many from {t}")["many"].iloc[0]
    lo, hi = "least(trio0, trio1)", "greatest(trio0, trio1)"
    # one seat order: min = max of both trios; both orders of one pair: of least/greatest; else count
    matchups = (
        f"""
        union all
        select matchup::varchar,
               case when min(trio0) = max(trio0) and min(trio1) = max(trio1) then min(trio0) || ' vs ' || min(trio1)
                    when min({lo}) = max({lo}) and min({hi}) = max({hi})
                        then min({lo}) || ' vs ' || min({hi}) || ' (seats swapped)'
                    else 'drafted (' || count(distinct hash({lo}, {hi})) || ' trio pairs)' end,
               sum(n)::bigint, coalesce(sum(n) filter (where winner = first_player), 0)::bigint, 1, matchup
        from {t} where winner >= 0 group by matchup"""
        if per_matchup
        else ""
    )
    df = runs.sql(f"""
        select matchup, trios, games, first_wins from (
            select 'all' as matchup, '' as trios, coalesce(sum(n), 0)::bigint as games,
                   coalesce(sum(n) filter (where winner = first_player), 0)::bigint as first_wins,
                   0 as part, -1 as m
            from {t} where winner >= 0
            {matchups})
        order by part, m""")
    return add_rate(df, "first_wins", "games")


def game_length(runs: Runs) -> pd.DataFrame:
    """Histogram of turns played, by end reason and by who won (first or second player)."""
    return length_histogram(runs).copy()


def turns_to_win(runs: Runs) -> pd.DataFrame:
    """Turns played in decided games: mean and quantiles, overall and by who won."""
    h = length_histogram(runs)
    h = h[h["won_by"] != "draw"]
    rows = []
    for who, g in [("all", h), ("first", h[h["won_by"] == "first"]), ("second", h[h["won_by"] == "second"])]:
        n = g["games"].to_numpy()
        t = g["turns"].to_numpy(dtype=float)
        q = _weighted_quantiles(t, n)
        mean = float((t * n).sum() / n.sum()) if n.sum() else np.nan
        rows.append(
            {
                "won_by": who,
                "games": int(n.sum()),
                "mean": mean,
                "p10": q[0],
                "p25": q[1],
                "median": q[2],
                "p75": q[3],
                "p90": q[4],
            }
        )
    return pd.DataFrame(rows)


# -- protocols -------------------------------------------------------------------------------------


def protocol_win_rates(runs: Runs, by: str = "overall") -> pd.DataFrame:
    """Protocol win rate as part of a trio; `by` is "overall", "seat" (0/1), "first" (moved first
    or second) or "position" (left/middle/right in draft order)."""
    keys = {"overall": [], "seat": ["seat"], "first": ["first"], "position": ["position"]}[by]
    b = _position_base(runs) if by == "position" else seat_protocol_base(runs)
    df = b.groupby(["protocol", *keys], as_index=False)[["games", "wins", "draws"]].sum()
    if by == "first":
        df["first"] = np.where(df["first"], "first", "second")
    if by == "position":
        df["position"] = [POSITIONS[i] for i in df["position"]]
    add_rate(df)
    return df.sort_values([*keys, "win_rate"], ascending=[True] * len(keys) + [False]).reset_index(drop=True)


def _position_base(runs: Runs) -> pd.DataFrame:
    """Per (protocol, position in draft order): needs the raw columns, so it is its own scan (not
    part of the default report)."""
    return runs.memo(
        "position",
        lambda: runs.sql(f"""
        select protocol, position, count(*) filter (where winner >= 0) as games,
               count(*) filter (where winner = seat) as wins, count(*) filter (where winner < 0) as draws
        from (select winner, unnest({_list(PROTOCOL_COLUMNS)}) as protocol,
                     unnest([0, 0, 0, 1, 1, 1]) as seat, unnest([0, 1, 2, 0, 1, 2]) as position from games)
        group by all"""),
    )


def protocol_matchups(runs: Runs) -> pd.DataFrame:
    """Protocol vs protocol, long form: how often a trio holding A beats a trio holding B (both
    seat orders pooled). Pivot with `matrix()`; cell (A, B) + cell (B, A) = 100%."""
    raw = tally(runs, "protocol_pairs").rename(columns={"protocol": "a", "opponent": "b"})
    fwd = raw.rename(columns={"a": "protocol", "b": "opponent"})
    rev = raw.rename(columns={"b": "protocol", "a": "opponent"}).assign(wins=lambda d: d["games"] - d["wins"])
    df = pd.concat([fwd, rev]).groupby(["protocol", "opponent"], as_index=False)[["games", "wins"]].sum()
    return add_rate(df).sort_values(["protocol", "opponent"]).reset_index(drop=True)


def matrix(long: pd.DataFrame, row: str, col: str, value: str = "win_rate") -> pd.DataFrame:
    """Pivot a long matchup table into a matrix (rows beat columns at `value`)."""
    return long.pivot(index=row, columns=col, values=value)


def trio_matchups(runs: Runs, min_games: int = 1) -> pd.DataFrame:
    """Trio vs trio, long form (each unordered pair once, trio_a < trio_b): games, trio_a's win
    rate with interval, and the first player's win rate in that pairing. One DuckDB roll-up of
    `trio_agg`."""
    t = trio_table(runs)
    df = runs.sql(
        f"""
        select least(trio0, trio1) as trio_a, greatest(trio0, trio1) as trio_b, sum(n)::bigint as games,
               coalesce(sum(n) filter (where winner = (trio0 > trio1)::int), 0)::bigint as wins,
               coalesce(sum(n) filter (where winner = first_player), 0)::bigint as first_wins
        from {t} where winner >= 0
        group by all having sum(n) >= ?
        order by games desc, trio_a, trio_b""",
        [min_games],
    )
    add_rate(df)
    return add_rate(df, "first_wins", "games", "first_player_win_rate")


def trio_win_rates(runs: Runs, min_games: int = 1) -> pd.DataFrame:
    """Each trio's win rate over all its decided games (either seat), with its draws beside it:
    the `trios` tally."""
    t = tally(runs, "trios")
    df = t.loc[t["games"] >= min_games, ["trio", "games", "wins", "draws"]].reset_index(drop=True)
    return add_rate(df).sort_values(["win_rate", "trio"], ascending=[False, True]).reset_index(drop=True)


# -- compiles --------------------------------------------------------------------------------------


def compile_histogram(runs: Runs) -> pd.DataFrame:
    """Per (first/second player, k = 1..3, turn of the seat's k-th compile or null): seat-games."""
    return tally(runs, "compile_turns")


def compile_timing(runs: Runs) -> pd.DataFrame:
    """Turn of each seat's first, second and third compile: how often it happens at all (rate over
    seat-games) and when (quantiles over the seat-games where it happened); overall and by mover."""
    h = compile_histogram(runs)
    rows = []
    for who, part in [("all", h), ("first", h[h["first"]]), ("second", h[~h["first"]])]:
        for k in (1, 2, 3):
            g = part[part["k"] == k]
            total = int(g["n"].sum())
            done = g[g["turn"].notna()].sort_values("turn")
            n = int(done["n"].sum())
            row: dict[str, Any] = {"player": who, "compile": k, "seat_games": total, "reached": n}
            cum = done["n"].cumsum().to_numpy()
            t = done["turn"].to_numpy()
            for name, q in (("p10", 0.1), ("p25", 0.25), ("median", 0.5), ("p75", 0.75), ("p90", 0.9)):
                row[name] = float(t[np.searchsorted(cum, q * n)]) if n else np.nan
            row["mean"] = float((t * done["n"]).sum() / n) if n else np.nan
            rows.append(row)
    return add_rate(pd.DataFrame(rows), "reached", "seat_games", "rate")


def compile_curves(runs: Runs) -> pd.DataFrame:
    """Cumulative share of seat-games that have made their k-th compile by each turn (for charts)."""
    h = compile_histogram(runs)
    total = h[h["k"] == 1]["n"].sum()
    d = h[h["turn"].notna()].groupby(["k", "turn"], as_index=False)["n"].sum().sort_values(["k", "turn"])
    d["share"] = d.groupby("k")["n"].cumsum() / total if total else np.nan
    return d.rename(columns={"n": "seat_games"}).reset_index(drop=True)


def compile_rates(runs: Runs) -> pd.DataFrame:
    """Compiles and recompiles per seat-game, and the share of seat-games with a recompile."""
    t = tally(runs, "compile_counts")
    n = t["n"].to_numpy(np.int64)
    total = int(n.sum())

    def mean(x: np.ndarray) -> float:
        return float(np.int64((x * n).sum()) / np.int64(total)) if total else np.nan

    return pd.DataFrame(
        [
            {
                "seat_games": total,
                "compiles_per_game": mean(t["compiles"].to_numpy(np.int64)),
                "recompiles_per_game": mean(t["recompiles"].to_numpy(np.int64)),
                "share_with_recompile": mean((t["recompiles"].to_numpy(np.int64) > 0).astype(np.int64)),
            }
        ]
    )


def _summary_source(what: str, table: str, available: bool, source: str | None) -> str:
    """Which table answers a query: the per-shard summary `table` when every shard has one (or
    when asked for), else `events`."""
    if source is None:
        return table if available else "events"
    if source not in (table, "events"):
        raise ValueError(f"{what}: source must be '{table}' or 'events', not {source!r}")
    if source == table and not available:
        raise ValueError(f"{what}: source '{table}' needs a {table} file for every shard")
    return source


def _compile_events(runs: Runs, source: str | None = None) -> pd.DataFrame:
    """Compile and recompile events, with the compile's ordinal for its seat (1st, 2nd, 3rd),
    aggregated to (kind, protocol, line, ordinal, turn) counts, in that order.

    From the runs' `compiles` tables (some thousands of rows per shard, written with the shards) when
    every shard has one, else from `events` (every compile event numbered per game and seat: most
    of the report's time at millions of games). `source` ("compiles" or "events") forces one; the
    result is the same."""
    source = _summary_source("compile events", "compiles", runs.has_compiles, source)
    order = "order by kind, protocol, line, ordinal nulls first, turn"

    def from_compiles() -> pd.DataFrame:
        return runs.sql(f"""
            select kind, protocol, line, ordinal::bigint as ordinal, turn, sum(n)::bigint as n
            from compiles group by all {order}""")

    def from_events() -> pd.DataFrame:
        rid = "" if runs.single else "run_id, "
        return runs.sql(f"""
            select kind, protocol, line, ordinal, turn, count(*) as n from (
                select kind, protocol, line, turn,
                       case when kind = 'compile' then row_number() over
                           (partition by {rid}game_index, seat, kind order by turn) end as ordinal
                from events where kind in ('compile', 'recompile'))
            group by all {order}""")

    return runs.memo(f"compile_events_{source}", from_compiles if source == "compiles" else from_events)


def _quantiles(turn: np.ndarray, n: np.ndarray, qs: tuple[float, ...] = (0.25, 0.5, 0.75)) -> list[float]:
    return _weighted_quantiles(turn, n, qs)


def compiles_by(runs: Runs, by: str = "protocol") -> pd.DataFrame:
    """Per protocol (or per line: left/middle/right at compile time), from the compile events
    (`_compile_events`): compile rate over the protocol's appearances, recompiles per appearance,
    the turn of its compile and the share compiled as a seat's 1st, 2nd and 3rd compile, with the
    median turn for each."""
    if not runs.has_events and not runs.has_compiles:
        return pd.DataFrame()
    ev = _compile_events(runs)
    key = "protocol" if by == "protocol" else "line"
    comp = ev[ev["kind"] == "compile"]
    rows = []
    for name, g in comp.groupby(key):
        n = int(g["n"].sum())
        q25, med, q75 = _quantiles(g["turn"].to_numpy(float), g["n"].to_numpy())
        row = {key: name, "compiles": n, "turn_p25": q25, "turn_median": med, "turn_p75": q75}
        for k in (1, 2, 3):
            gk = g[g["ordinal"] == k]
            row[f"share_as_{k}"] = gk["n"].sum() / n if n else np.nan
            row[f"median_turn_as_{k}"] = _quantiles(gk["turn"].to_numpy(float), gk["n"].to_numpy(), (0.5,))[0]
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    re = ev[ev["kind"] == "recompile"].groupby(key)["n"].sum()
    df["recompiles"] = df[key].map(re).fillna(0).astype(np.int64)
    if by == "protocol":
        base = seat_protocol_base(runs)
        appear = base.groupby("protocol")[["games", "draws"]].sum().sum(axis=1)
        df.insert(1, "appearances", df["protocol"].map(appear).fillna(0).astype(np.int64))
        add_rate(df, "compiles", "appearances", "compile_rate")
        df["recompiles_per_appearance"] = df["recompiles"] / df["appearances"].where(df["appearances"] > 0)
        df = df.sort_values("compile_rate", ascending=False)
    else:
        df["line"] = [POSITIONS[int(x)] if 0 <= x < 3 else str(x) for x in df["line"]]
        df.insert(2, "share", df["compiles"] / df["compiles"].sum())
    return df.reset_index(drop=True)


# -- cards -----------------------------------------------------------------------------------------


def _card_counts_from_cards(runs: Runs) -> pd.DataFrame:
    """Per card, the counts summed over the shards' `cards` tables."""
    sums = ", ".join(f"sum({c})::bigint as {c}" for c in CARD_COUNTS)
    return runs.sql(f"select card, min(protocol) as protocol, {sums} from cards group by card")


def _card_counts_from_events(runs: Runs) -> pd.DataFrame:
    """Per card, the same counts from `events` (one group per game, seat and card)."""
    rid = "" if runs.single else "run_id, "
    on = "f.game_index = g.game_index" + ("" if runs.single else " and f.run_id = g.run_id")
    own = " or ".join(
        f"(f.seat = {s} and f.protocol in (g.seat{s}_protocol_left, g.seat{s}_protocol_middle, "
        f"g.seat{s}_protocol_right))"
        for s in (0, 1)
    )
    return runs.sql(f"""
        with f as (
            select {rid}game_index, seat, card, protocol,
                   bool_or(kind = 'draw') as drawn, bool_or(kind = 'play_face_up') as up,
                   bool_or(kind = 'play_face_down') as down
            from events where kind in ('draw', 'play_face_up', 'play_face_down') and card is not null
            group by {rid}game_index, seat, card, protocol),
        j as (
            select f.card, f.protocol, f.drawn, f.up, f.down, g.winner = f.seat as won
            from f join games g on {on}
            where g.winner >= 0 and ({own}))
        select card, min(protocol) as protocol,
               count(*) filter (where drawn) as drawn, count(*) filter (where drawn and won) as drawn_wins,
               count(*) filter (where up) as up, count(*) filter (where up and won) as up_wins,
               count(*) filter (where down) as down, count(*) filter (where down and won) as down_wins,
               count(*) filter (where up or down) as played,
               count(*) filter (where (up or down) and won) as played_wins
        from j group by card""")


def card_impact(runs: Runs, source: str | None = None) -> pd.DataFrame:
    """Card impact in the spirit of 17lands, per card, over the seat-games whose deck holds it
    (its protocol is in the seat's trio), decided games only:

    drawn / face-up / face-down rates (share of those seat-games in which the seat drew it, or
    played it face-up or face-down at least once), the win rate when drawn (GIH WR), when played
    face-up, when played face-down, and when never played; `iwd` = face-up win rate minus
    never-played win rate, with a Newcombe interval. Cards drawn or played from the opponent's
    deck are not counted (they are not in that seat's deck).

    The counts come from the runs' `cards` tables (a few thousand rows per run, written with the
    shards) when every shard has one, else from `events` (one group per game, seat and card: slow
    at millions of games). `source` ("cards" or "events") forces one; the result is the same."""
    source = _summary_source("card_impact", "cards", runs.has_cards, source)
    if source == "events" and not runs.has_events:
        return pd.DataFrame()

    counts = _card_counts_from_cards if source == "cards" else _card_counts_from_events
    df = runs.memo(f"cards_{source}", lambda: counts(runs)).copy()
    base = seat_protocol_base(runs).groupby("protocol")[["games", "wins"]].sum()
    df.insert(2, "deck_games", df["protocol"].map(base["games"]).fillna(0).astype(np.int64))
    deck_wins = df["protocol"].map(base["wins"]).fillna(0).astype(np.int64)
    df["never"] = df["deck_games"] - df["played"]
    df["never_wins"] = deck_wins - df["played_wins"]
    n = df["deck_games"].where(df["deck_games"] > 0)
    for c in ("drawn", "up", "down"):
        df[f"{c}_rate"] = df[c] / n
    add_rate(df, "drawn_wins", "drawn", "gih_wr")
    add_rate(df, "up_wins", "up", "up_wr")
    add_rate(df, "down_wins", "down", "down_wr")
    add_rate(df, "never_wins", "never", "never_wr")
    d, lo, hi = newcombe_diff(df["never_wins"], df["never"], df["up_wins"], df["up"])
    df["iwd"], df["iwd_low"], df["iwd_high"] = d, lo, hi
    return df.sort_values(["iwd", "card"], ascending=[False, True], na_position="last").reset_index(drop=True)


# -- strategies ------------------------------------------------------------------------------------


def strategy_pairs(runs: Runs) -> pd.DataFrame:
    """Decided games and seat-0 wins per (strategy_0, strategy_1, first player)."""
    return tally(runs, "strategy_pairs")


def strategy_ratings(runs: Runs) -> tuple[pd.DataFrame, dict]:
    """Bradley-Terry ratings (Elo scale, 95% intervals) when the run has two or more strategies;
    an empty frame otherwise. The fit includes a first-player term so seat order cannot bias it."""
    pairs = strategy_pairs(runs)
    pairs = pairs[pairs["games"] > 0]
    if len(set(pairs["strategy_0"]) | set(pairs["strategy_1"])) < 2:
        return pd.DataFrame(), {}
    return bradley_terry(pairs)
