"""`protolab report`: every balance table of a run, computed once, shown as rich tables in the
terminal or written as JSON / CSV for other tools."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.pages.cells import ci, matrix_tables, num, pct, table
from analysis.runs.open import Runs
from analysis.runs.provenance import csv_header, of_runs, print_lines
from analysis.runs.runfolder import events_statement, write_atomic
from analysis.studies.balance import loops, picks, queries
from analysis.studies.balance.card_values import card_value, print_card_value
from analysis.studies.balance.flags import balance_flags
from analysis.studies.balance.played import person_seats, played_statement, withheld
from analysis.studies.balance.rule_note import csv_lines, note_lines, rule_notes

# Tables no tally holds (their size grows with the trio pairs played, up to millions of rows in a
# random-draft run): computed from the rows of `games` the first time they are used (a JSON or CSV
# of every table, the dashboard), not for the terminal report, which does not show them.
FROM_ROWS = ("trio_matchups",)


class Tables(MutableMapping[str, pd.DataFrame]):
    """A report's tables by name, in report order; a table of FROM_ROWS is computed when first read
    (and at the latest when its runs are closed), its seconds then added to `timings`."""

    def __init__(self, runs: Runs, timings: dict[str, float]) -> None:
        self._runs, self._timings = runs, timings
        self._done: dict[str, pd.DataFrame] = {}
        self._pending: dict[str, Callable[[Runs], pd.DataFrame]] = {}
        runs.before_close(self._compute_all)

    def defer(self, name: str, fn: Callable[[Runs], pd.DataFrame]) -> None:
        self._pending[name] = fn

    def _compute_all(self) -> None:
        for name in list(self._pending):
            self[name]

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name in self._pending:
            t0 = time.perf_counter()
            self._done[name] = self._pending[name](self._runs)
            del self._pending[name]
            self._timings[name] = time.perf_counter() - t0
        return self._done[name]

    def __setitem__(self, name: str, df: pd.DataFrame) -> None:
        self._pending.pop(name, None)
        self._done[name] = df

    def __delitem__(self, name: str) -> None:
        if self._pending.pop(name, None) is None:
            del self._done[name]

    def __contains__(self, name: object) -> bool:
        return name in self._done or name in self._pending

    def __iter__(self) -> Iterator[str]:
        return iter([n for n in TABLE_NAMES if n in self] + [n for n in self._done if n not in TABLE_NAMES])

    def __len__(self) -> int:
        return len(self._done) + len(self._pending)


@dataclass
class Report:
    """Named tables plus what produced them; `timings` holds seconds per table."""

    tables: MutableMapping[str, pd.DataFrame]
    meta: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def _tables(band: float, method: str, alpha: float) -> list[tuple[str, Callable[[Runs], pd.DataFrame]]]:
    return [
        ("overview", queries.overview),
        ("protocols", queries.protocol_win_rates),
        ("protocols_by_seat", lambda r: queries.protocol_win_rates(r, "seat")),
        ("protocols_by_first", lambda r: queries.protocol_win_rates(r, "first")),
        ("protocol_matchups", queries.protocol_matchups),
        ("trio_win_rates", queries.trio_win_rates),
        ("trio_matchups", queries.trio_matchups),
        ("first_player", queries.first_player),
        ("compile_timing", queries.compile_timing),
        ("compile_curves", queries.compile_curves),
        ("compile_rates", queries.compile_rates),
        ("turns_to_win", queries.turns_to_win),
        ("game_length", queries.game_length),
        ("loop_draws", loops.loop_draws),
        ("compiles_by_protocol", lambda r: queries.compiles_by(r, "protocol")),
        ("compiles_by_line", lambda r: queries.compiles_by(r, "line")),
        ("card_impact", queries.card_impact),
        ("strategy_ratings", lambda r: queries.strategy_ratings(r)[0]),
        ("balance_flags", lambda r: balance_flags(r, band, method, alpha)),
        ("card_value", lambda r: card_value(r, method)),  # empty unless a `protolab cardvalue` run
        ("draft_picks", picks.report_picks),  # empty unless the run's games drafted
        ("draft_first_pick", picks.report_first_pick),
    ]


TABLE_NAMES = tuple(name for name, _ in _tables(0.05, "holm", 0.05))


def build_report(
    runs: Runs,
    band: float = 0.05,
    method: str = "holm",
    alpha: float = 0.05,
    only: list[str] | None = None,
    flag_played: bool = False,
) -> Report:
    """Compute the report's tables (all, or those named in `only`), timing each; those of FROM_ROWS
    when first used unless named in `only`. A playtest's (a person's games) raises no balance flag
    unless `flag_played`, and says so first (analysis/studies/balance/played.py)."""
    timings: dict[str, float] = {}
    tables = Tables(runs, timings)
    for name, fn in _tables(band, method, alpha):
        if only and name not in only:
            continue
        if name in FROM_ROWS and not only:
            tables.defer(name, fn)
            continue
        t0 = time.perf_counter()
        tables[name] = fn(runs)
        timings[name] = time.perf_counter() - t0
    meta: dict[str, Any] = {
        "runs": [str(p) for p in runs.paths],
        "run_ids": runs.run_ids,
        "has_events": runs.has_events,
        "events": events_statement(runs.manifests),
        "warnings": list(runs.warnings),
        "band": band,
        "correction": method,
        "alpha": alpha,
        "provenance": of_runs(runs),
    }
    if person_seats(meta["provenance"]):
        games = int(runs.sql("select count(*) as n from games")["n"].iloc[0])
        meta["played"] = played_statement(meta["provenance"], games, flag_played)
        if not flag_played and "balance_flags" in tables:
            tables["balance_flags"] = withheld(tables["balance_flags"])
    notes = rule_notes(meta["provenance"])
    if notes is not None:  # made with card files: the choices they change (rule_note.py)
        meta["rule_notes"] = notes
    if "balance_flags" in tables:
        meta["flags_statement"] = tables["balance_flags"].attrs.get("statement", "")
    _, extra = queries.strategy_ratings(runs) if (not only or "strategy_ratings" in only) else (None, {})
    meta.update({k: float(v) for k, v in extra.items()})
    return Report(tables, meta, timings)


# -- machine-readable ------------------------------------------------------------------------------


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as JSON-ready records (NaN -> null, numpy scalars -> Python), converted column by
    column (a round robin's tables have tens of thousands of rows)."""
    return df.astype(object).where(df.notna(), None).to_dict(orient="records")


def to_json(report: Report) -> str:
    return json.dumps(
        {"meta": report.meta, "tables": {k: records(v) for k, v in report.tables.items()}}, indent=1, default=str
    )


def write_csv(report: Report, out_dir: str | Path) -> list[Path]:
    """One CSV per table in `out_dir`."""

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in report.tables.items():
        f = out / f"{name}.csv"
        write_atomic(f, table_csv(report, df).encode("utf-8"))  # whole or not at all, like every output
        written.append(f)
    return written


def table_csv(report: Report, df: pd.DataFrame) -> str:
    """One table as CSV, after the provenance header (`# Produced by ...` lines; read it with
    `comment="#"`)."""
    return (
        csv_header(report.meta.get("provenance") or [])
        + csv_lines(report.meta.get("rule_notes"))
        + df.to_csv(index=False)
    )


# -- terminal --------------------------------------------------------------------------------------


def head_and_tail(df: pd.DataFrame, n: int) -> pd.DataFrame:
    """The first and last n rows of a sorted table (all of it when it has at most 2n rows)."""
    return df if len(df) <= 2 * n else pd.concat([df.head(n), df.tail(n)])


def rest_note(report: Report, table: str, shown: int, total: int, what: str) -> str | None:
    """Where the rows a terminal table leaves out are: the CSV or JSON of that table."""
    if shown >= total:
        return None
    runs = " ".join(report.meta["runs"])
    return (
        f"{shown} of {total:,} {what} shown; all: protolab report {runs} --format csv --table {table} "
        "(or --format json)"
    )


def print_trios(report: Report, console, top: int = 10) -> None:
    """Trio win rates (95% Wilson), the best and the worst `top` with a pointer to the rest."""
    tw = report.tables.get("trio_win_rates")
    if tw is None or tw.empty:
        return

    def rows(d: pd.DataFrame) -> list[list[str]]:
        return [
            [t, pct(w), ci(lo, hi), num(g), num(dr)]
            for t, w, lo, hi, g, dr in zip(
                d["trio"], d["win_rate"], d["win_rate_low"], d["win_rate_high"], d["games"], d["draws"], strict=True
            )
        ]

    cols = ["trio", "win rate", "95% CI", "games", "draws"]
    n = min(top, len(tw))
    note = rest_note(report, "trio_win_rates", 2 * n if len(tw) > n else n, len(tw), "trios")
    console.print(table(f"Trio win rate (decided games, either seat): best {n}", cols, rows(tw.head(n))))
    if len(tw) > n:
        console.print(
            table(
                f"Trio win rate: worst {min(n, len(tw) - n)}",
                cols,
                rows(tw.tail(min(n, len(tw) - n)).iloc[::-1]),
                caption=note,
            )
        )


def against(r: pd.Series) -> str:
    """What a flag row was tested against: the band, or (a card) its protocol's other cards."""
    if r.get("kind") != "card" or pd.isna(r.get("baseline_rate")):
        return str(r.get("versus", "the band"))
    return (
        f"{r['versus']} ({pct(r['baseline_rate'])}; {r['difference'] * 100:+.1f} points, 95% CI "
        f"{r['difference_low'] * 100:+.1f} to {r['difference_high'] * 100:+.1f})"
    )


def print_report(report: Report, console, top_cards: int = 10) -> None:
    """The key tables, each rate with its 95% interval and game count."""
    _print_header(report, console)
    _print_loops(report, console)
    _print_flags(report, console)
    _print_protocols(report, console)
    _print_first_player(report, console, top_cards)
    print_trios(report, console, top_cards)
    _print_compiles(report, console)
    _print_cards(report, console, top_cards)
    _print_ratings_and_turns(report, console)
    tb = report.tables
    if not tb.get("card_value", pd.DataFrame()).empty:
        print_card_value(tb["card_value"], console)
    if not tb.get("draft_picks", pd.DataFrame()).empty:
        picks.print_draft(tb["draft_picks"], tb["draft_first_pick"], console)


def print_table(report: Report, name: str, console) -> None:
    """`report --table NAME` in the terminal: the provenance, then that table alone (its own layout
    where the report has one, else every column as computed)."""
    _print_provenance(report, console)
    df = report.tables[name]
    if name == "card_value" and not df.empty:
        print_card_value(df, console)
        return
    rows = [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in df.itertuples(index=False)]
    console.print(table(name, [str(c) for c in df.columns], rows))


def _print_provenance(report: Report, console) -> None:
    if report.meta.get("played"):  # a person's games: said before any figure
        console.print(f"[bold yellow]{report.meta['played']}[/bold yellow]", soft_wrap=True)
    for w in report.meta["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}", soft_wrap=True)  # a path or a shard name stays whole
    if report.meta.get("events"):
        console.print(f"Recorded: {report.meta['events']}")
    print_lines(report.meta.get("provenance") or [], console)


def _print_header(report: Report, console) -> None:
    """Warnings, provenance and the one-line overview."""
    tb = report.tables
    _print_provenance(report, console)
    o = tb["overview"].iloc[0]
    console.print(
        f"[bold]{', '.join(report.meta['run_ids'])}[/bold]: {int(o['games']):,} games, "
        f"{int(o['decided']):,} decided, {int(o['draws']):,} draws "
        f"(turn cap {int(o['turn_cap']):,}, loop guard {int(o['loop_guard']):,}); "
        f"turns mean {o['mean_turns']:.1f}, median {o['median_turns']:.0f}"
    )
    console.print(
        f"First player wins {pct(o['first_player_win_rate'])} "
        f"(95% CI {ci(o['first_player_win_rate_low'], o['first_player_win_rate_high'])}) "
        f"of {int(o['decided']):,} decided games"
    )


def _print_loops(report: Report, console) -> None:
    """Where games ended by the loop bound: the cards whose text repeated (report --table loop_draws)."""
    t = report.tables.get("loop_draws")
    if t is None or t.empty:
        return
    cards = t[t["kind"] == "card"]
    named = "; ".join(f"{r['name']} {int(r['loops']):,}" for _, r in cards.iterrows()) or "no card named"
    console.print(f"[bold red]Loop draws[/bold red] by card whose text repeated: {named} (report --table loop_draws)")


def _print_flags(report: Report, console) -> None:
    """The verdicts: the flag table, and beside it the notes on choices the run's card files change."""
    f = report.tables["balance_flags"]
    flagged = f[f["flagged"]]
    rows = [
        [
            r["name"],
            r["kind"],
            pct(r["win_rate"]),
            ci(r["win_rate_low"], r["win_rate_high"]),
            num(r["games"]),
            f"{r['direction']} {against(r)}",
            f"{r['p_adjusted']:.2g}",
        ]
        for _, r in flagged.iterrows()
    ]
    console.print(
        table(
            "Balance flags",
            ["name", "kind", "win rate", "95% CI", "games", "against", "adj. p"],
            rows,
            caption=f.attrs.get("statement", "") + ("" if rows else ": nothing flagged"),
        )
    )
    for line in note_lines(report.meta.get("rule_notes")):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _print_protocols(report: Report, console) -> None:
    """Protocol win rates, then the protocol matchup matrix (in column blocks that fit)."""
    tb = report.tables
    p = tb["protocols"]
    byf = tb["protocols_by_first"].set_index(["protocol", "first"])
    rows = []
    for _, r in p.iterrows():
        fr = [
            pct(byf.loc[(r["protocol"], w), "win_rate"]) if (r["protocol"], w) in byf.index else "-"
            for w in ("first", "second")
        ]
        rows.append(
            [
                r["protocol"],
                pct(r["win_rate"]),
                ci(r["win_rate_low"], r["win_rate_high"]),
                num(r["games"]),
                *fr,
                num(r["draws"]),
            ]
        )
    console.print(
        table(
            "Protocol win rate (as part of a trio; decided games)",
            ["protocol", "win rate", "95% CI", "games", "moving first", "moving second", "draws"],
            rows,
        )
    )

    m = queries.matrix(tb["protocol_matchups"], "protocol", "opponent")
    short = {c: c[:5] for c in m.columns}
    rows = [[str(idx)] + [pct(v) if not math.isnan(v) else "" for v in r] for idx, r in m.iterrows()]
    for t in matrix_tables(
        "Matchups: row's trio beats column's trio", ["vs"] + [short[c] for c in m.columns], rows, console.width
    ):
        console.print(t)


def _print_first_player(report: Report, console, top_cards: int) -> None:
    tb = report.tables
    fp = tb["first_player"]
    if len(fp) > 1:
        per = fp.iloc[1:].sort_values(["win_rate", "games"], ascending=[False, False], na_position="last")
        shown = pd.concat([fp.iloc[:1], head_and_tail(per, top_cards)])
        rows = [
            [str(m), t, pct(w), ci(lo, hi), num(g)]
            for m, t, w, lo, hi, g in zip(
                shown["matchup"],
                shown["trios"],
                shown["win_rate"],
                shown["win_rate_low"],
                shown["win_rate_high"],
                shown["games"],
                strict=True,
            )
        ]
        title = "First-player win rate per matchup" + (
            "" if len(shown) == len(fp) else f" (the {top_cards} highest and lowest)"
        )
        console.print(
            table(
                title,
                ["matchup", "trios", "first wins", "95% CI", "games"],
                rows,
                caption=rest_note(report, "first_player", len(shown) - 1, len(fp) - 1, "matchups"),
            )
        )


def _print_compiles(report: Report, console) -> None:
    tb = report.tables
    ct = tb["compile_timing"]
    rows = [
        [
            r["player"],
            str(r["compile"]),
            pct(r["rate"]),
            ci(r["rate_low"], r["rate_high"]),
            num(r["reached"]),
            f"{r['median']:.0f}",
            f"{r['p25']:.0f}-{r['p75']:.0f}",
        ]
        for _, r in ct.iterrows()
        if r["reached"] > 0
    ]
    console.print(
        table(
            "Compile timing: turn of each seat's 1st, 2nd, 3rd compile",
            ["player", "compile", "happens", "95% CI", "seat-games with it", "median turn", "IQR"],
            rows,
        )
    )

    cp = tb["compiles_by_protocol"]
    if not cp.empty:
        rows = [
            [
                r["protocol"],
                pct(r["compile_rate"]),
                ci(r["compile_rate_low"], r["compile_rate_high"]),
                num(r["appearances"]),
                f"{r['turn_median']:.0f}",
                pct(r["share_as_1"]),
                pct(r["share_as_3"]),
                f"{r['recompiles_per_appearance']:.2f}",
            ]
            for _, r in cp.iterrows()
        ]
        console.print(
            table(
                "Compiles per protocol",
                ["protocol", "compiled", "95% CI", "appearances", "median turn", "as 1st", "as 3rd", "recompiles/app."],
                rows,
            )
        )


def _print_cards(report: Report, console, top_cards: int) -> None:
    tb = report.tables
    cards = tb["card_impact"]
    if not cards.empty:

        def card_rows(d: pd.DataFrame) -> list[list[str]]:
            return [
                [
                    r["card"],
                    pct(r["drawn_rate"]),
                    pct(r["up_rate"]),
                    pct(r["down_rate"]),
                    pct(r["up_wr"]),
                    num(r["up"]),
                    pct(r["never_wr"]),
                    num(r["never"]),
                    f"{r['iwd'] * 100:+.1f} ({r['iwd_low'] * 100:+.1f}, {r['iwd_high'] * 100:+.1f})",
                ]
                for _, r in d.iterrows()
            ]

        cols = [
            "card",
            "drawn",
            "face-up",
            "face-down",
            "WR face-up",
            "n",
            "WR never played",
            "n",
            "difference, points (95% CI)",
        ]
        # Ranked by evidence, not by the size of the difference alone: a card seen face-up once
        # has a huge difference and an interval to match, so it sorts by its interval's bound.
        d = cards.dropna(subset=["iwd"])
        top = d.sort_values(["iwd_low", "card"], ascending=[False, True]).head(top_cards)
        bottom = d.sort_values(["iwd_high", "card"], ascending=[True, True]).head(top_cards)
        console.print(
            table(
                f"Card impact: top {top_cards} by face-up vs never played (by the interval's lower bound)",
                cols,
                card_rows(top),
            )
        )
        console.print(
            table(f"Card impact: bottom {top_cards} (by the interval's upper bound)", cols, card_rows(bottom))
        )


def _print_ratings_and_turns(report: Report, console) -> None:
    tb = report.tables
    sr = tb["strategy_ratings"]
    if not sr.empty:
        rows = [
            [
                r["strategy"],
                f"{r['rating']:.0f}",
                f"{r['rating_low']:.0f}-{r['rating_high']:.0f}",
                pct(r["win_rate"]),
                num(r["games"]),
            ]
            for _, r in sr.iterrows()
        ]
        fpe = report.meta.get("first_player_elo")
        console.print(
            table(
                "Strategy ratings (Bradley-Terry, Elo scale)",
                ["strategy", "rating", "95% CI", "win rate", "games"],
                rows,
                caption=f"first-player term {fpe:+.0f} Elo" if fpe is not None else None,
            )
        )

    tw = tb["turns_to_win"]
    rows = [
        [r["won_by"], num(r["games"]), f"{r['mean']:.1f}", f"{r['median']:.0f}", f"{r['p10']:.0f}-{r['p90']:.0f}"]
        for _, r in tw.iterrows()
    ]
    console.print(table("Turns to win", ["winner moved", "games", "mean", "median", "10-90%"], rows))
