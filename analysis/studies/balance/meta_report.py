"""`protolab meta`: the metagame of a run (analysis/studies/balance/meta.py) in the terminal, as JSON or CSV, and as
the dashboard's metagame section."""

from __future__ import annotations

import html
import json
from typing import Any

import pandas as pd

from analysis.pages.cells import ci, num, pct, pts, table
from analysis.pages.shell import filter_attrs
from analysis.studies.balance.meta import MetaResult, compare_meta
from analysis.studies.balance.picks import print_draft
from analysis.studies.balance.report import records

TABLES = ("protocols", "trios", "fit", "iterations", "picks", "first_pick")


def to_json(res: MetaResult, moved: pd.DataFrame | None = None) -> str:
    out: dict[str, Any] = {
        "meta": res.meta,
        "health": res.health,
        "fit": records(res.fit),
        "protocols": records(res.protocols),
        "trios": records(res.trios),
    }
    if not res.iterations.empty:
        out["iterations"] = records(res.iterations)
    if not res.picks.empty:
        out["draft"] = {"picks": records(res.picks), "first_pick": records(res.first_pick)}
    if moved is not None:
        out["compare"] = {"protocol_tv": moved.attrs["protocol_tv"], "protocols": records(moved)}
    return json.dumps(out, indent=1, default=str)


def table_of(res: MetaResult, name: str) -> pd.DataFrame:
    return {
        "protocols": res.protocols,
        "trios": res.trios,
        "fit": res.fit,
        "iterations": res.iterations,
        "picks": res.picks,
        "first_pick": res.first_pick,
    }[name]


def health_lines(res: MetaResult) -> list[str]:
    """The meta health summary in words."""
    h = res.health
    boot = res.meta["bootstrap"]
    lines = [
        f"Equilibrium support: {h['support_size']} trio(s); the most played trio has probability "
        f"{h['top_trio_probability']:.1%}.",
        f"Effective number of viable protocols: {h['effective_protocols']:.1f} of {h['protocols']} "
        f"({h['protocols_used']} used at all).",
    ]
    if "support_size_interval" in h:
        lo, hi = h["support_size_interval"]
        elo, ehi = h["effective_protocols_interval"]
        lines.append(
            f"Over {boot} bootstrap replicates: support {lo:.0f}-{hi:.0f} trios, effective protocols "
            f"{elo:.1f}-{ehi:.1f} (95%)."
        )
        never = h["never_used_protocols"]
        lines.append("Never used by any replicate's equilibrium: " + (", ".join(never) if never else "none") + ".")
    else:
        unused = h["unused_protocols"]
        lines.append("Not used by the equilibrium: " + (", ".join(unused) if unused else "none") + ".")
    return lines


def print_meta(res: MetaResult, console, top: int = 15, moved: pd.DataFrame | None = None) -> None:
    """The metagame in the terminal: what was fitted on what, its health in words, then a table each."""
    m = res.meta
    console.print(
        f"[bold]Metagame[/bold] of {', '.join(m.get('runs', []))}: {m['games']:,} decided games over "
        f"{m['pairs_played']:,} of {m['pairs_possible']:,} trio pairs; {m['trios']:,} trios of "
        f"{m['protocols']} protocols. Unplayed pairs come from the payoff model; played ones are shrunk "
        f"toward it by {m['prior_games']:g} games.",
        highlight=False,
    )
    for w in m.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    for line in health_lines(res):
        console.print(line, highlight=False)
    console.print(_protocols_table(res))
    console.print(_trios_table(res, top))
    if not res.fit.empty:
        console.print(_fit_table(res.fit))
    if not res.iterations.empty:
        console.print(_iterations_table(res.iterations, res.meta.get("stopped", "")))
    if not res.picks.empty:
        print_draft(res.picks, res.first_pick, console)
    if moved is not None:
        console.print(_moved_table(moved))


def _bootstrap_cells(r: Any, frame: pd.DataFrame, weight: str, share: str) -> list[str]:
    """An equilibrium weight's bootstrap interval and the share of resamples whose equilibrium uses
    it; "-" for each when the metagame was solved without a bootstrap (no such columns)."""
    low, high = f"{weight}_low", f"{weight}_high"
    return [
        ci(getattr(r, low), getattr(r, high)) if low in frame else "-",
        pct(getattr(r, share)) if share in frame else "-",
    ]


def _protocols_table(res: MetaResult):
    boot = "95% bootstrap" if res.meta["bootstrap"] else "no bootstrap"
    p = res.protocols
    rows = [
        [
            r.protocol,
            pct(r.nash_weight),
            *_bootstrap_cells(r, p, "nash_weight", "used_share"),
            pts(r.best_trio_rating),
            pct(r.alpharank_weight),
            f"{r.effect:+.2f}",
            pct(r.uniform_win_rate),
            r.best_trio,
        ]
        for r in p.itertuples()
    ]
    return table(
        f"Protocols: weight in the equilibrium ({boot} intervals)",
        [
            "protocol",
            "Nash weight",
            "interval",
            "used in",
            "best trio vs Nash (pts)",
            "alpha-rank",
            "effect (logit)",
            "vs uniform field",
            "best trio",
        ],
        rows,
        "Nash weight: chance the equilibrium's trio holds the protocol (sums to 300%).",
    )


def _trios_table(res: MetaResult, top: int):
    t = res.trios.head(top)
    rows = [
        [
            r.trio,
            pct(r.nash_probability),
            *_bootstrap_cells(r, t, "nash_probability", "in_support_share"),
            pts(r.nash_rating),
            pct(r.alpharank),
            pct(r.uniform_win_rate),
            num(r.games),
        ]
        for r in t.itertuples()
    ]
    return table(
        f"Trios: the equilibrium first (top {len(t)} of {len(res.trios):,})",
        ["trio", "Nash prob.", "interval", "in support", "vs Nash (pts)", "alpha-rank", "vs uniform field", "games"],
        rows,
        f"all: protolab meta ... --format csv --table trios. Exploitability of the point "
        f"equilibrium: {res.meta['exploitability']:.2g}.",
    )


def _fit_table(fit: pd.DataFrame):
    rows = [[r.model, f"{r.log_loss:.4f}", f"{r.brier:.4f}", "chosen" if r.chosen else ""] for r in fit.itertuples()]
    return table(
        f"Payoff model, held-out fit ({fit.attrs.get('folds', 5)}-fold over trio pairs, per game; lower is better)",
        ["model", "log-loss", "Brier", ""],
        rows,
    )


def _iterations_table(it: pd.DataFrame, stopped: str):
    rows = [
        [
            str(r.iteration),
            num(r.trios),
            num(r.support_size),
            f"{r.exploitability:.3f}",
            "-" if pd.isna(r.tv_change) else f"{r.tv_change:.3f}",
            num(r.games),
            str(r.added or "-"),
        ]
        for r in it.itertuples()
    ]
    return table(
        "PSRO iterations",
        ["iteration", "population", "support", "exploitability", "TV change", "games", "best responses added"],
        rows,
        stopped,
    )


def _moved_table(moved: pd.DataFrame):
    rows = [
        [r.protocol, pct(r.nash_weight_base), pct(r.nash_weight_variant), pts(r.nash_weight_change)]
        for r in moved.itertuples()
    ]
    return table(
        f"How the equilibrium moved (protocol weights; total variation {moved.attrs['protocol_tv']:.3f})",
        ["protocol", "base", "this run", "change (pts)"],
        rows,
    )


def meta_html(res: MetaResult | None, note: str = "", top: int | None = None) -> str:
    """The dashboard's metagame section: health, protocol weights, the equilibrium's trios (the
    `top` most likely when given, with a line saying how many more)."""
    if res is None:
        return (
            f'<section id="metagame"><h2>Metagame</h2><p class="muted">{html.escape(note)}</p></section>'
            if note
            else ""
        )
    items = "".join(f"<li>{html.escape(x)}</li>" for x in health_lines(res))
    items += "".join(f'<li class="warn">warning: {html.escape(w)}</li>' for w in res.meta.get("warnings") or [])
    p = res.protocols
    prow = "".join(
        f"<tr{filter_attrs(r.protocol)}><td>{html.escape(r.protocol)}</td>"
        f"<td class='n'>{pct(r.nash_weight)}</td>"
        f"<td class='n'>{pts(r.best_trio_rating)}</td><td class='n'>{pct(r.alpharank_weight)}</td>"
        f"<td class='n'>{pct(r.uniform_win_rate)}</td><td>{html.escape(r.best_trio)}</td></tr>"
        for r in p.itertuples()
    )
    t = res.trios[res.trios["nash_probability"] > 1e-6]
    rest = ""
    if top is not None and len(t) > top:
        rest = f"<p class='muted'>{len(t) - top:,} more trios in the equilibrium (protolab meta RUN).</p>"
        t = t.nlargest(top, "nash_probability")
    trow = "".join(
        f"<tr{filter_attrs(r.trio.replace(', ', '|'))}><td>{html.escape(r.trio)}</td>"
        f"<td class='n'>{pct(r.nash_probability)}</td>"
        f"<td class='n'>{pct(r.uniform_win_rate)}</td><td class='n'>{num(r.games)}</td></tr>"
        for r in t.itertuples()
    )
    head = "<table class='sortable'><thead><tr>{}</tr></thead><tbody>{}</tbody></table>"
    return (
        '<section id="metagame"><h2>Metagame: the equilibrium of "choose a trio"</h2>'
        "<p class='muted'>The symmetric zero-sum game in which each player picks a trio and scores its win "
        "rate minus 50% (unplayed pairs from the payoff model). The equilibrium is the mix of trios no trio "
        f"beats; Nash weight is the chance it holds a protocol. docs/analysis.md, Metagame.</p><ul>{items}</ul>"
        + head.format(
            "<th>protocol</th><th>Nash weight</th><th>best trio vs Nash (pts)</th><th>alpha-rank</th>"
            "<th>vs uniform field</th><th>best trio</th>",
            prow,
        )
        + "<h3>Trios in the equilibrium</h3>"
        + head.format("<th>trio</th><th>probability</th><th>vs uniform field</th><th>games</th>", trow)
        + rest
        + "</section>"
    )


def moved_table(base: MetaResult, variant: MetaResult) -> pd.DataFrame:
    return compare_meta(base, variant)
