"""`protolab dashboard`: one self-contained HTML page a designer can open offline (plotly.js is
embedded from the installed plotly package, nothing is fetched), with the answers first: balance
flags, protocol win rates with intervals, the matchup heatmap, compile timing, game length, and a
sortable card-impact table. The page shell is analysis/pages/shell.py's."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.pages.cells import pct
from analysis.pages.shell import fig_html, filter_bar, interval_bars, layout, render_page, table_html, warnings_html
from analysis.pages.views import CSS as VIEW_CSS
from analysis.pages.views import JS as VIEW_JS
from analysis.pages.views import View, tabs, views_html
from analysis.runs.card_texts import card_texts
from analysis.studies.balance import queries
from analysis.studies.balance.card_pages import card_pages_html
from analysis.studies.balance.dashboard_summary import card_anchor, protocol_anchor, ranked_flags, summary_html
from analysis.studies.balance.loops import loops_html
from analysis.studies.balance.meta import meta_analysis
from analysis.studies.balance.meta_report import meta_html
from analysis.studies.balance.report import Report, against

LARGE = 18  # protocols above which the metagame section is summarised (816 trios at 18)
LARGE_PAIR_L2 = 10.0  # the pair-term regularisation used then (fit_payoff_model's default)
TOP_TRIOS = 25  # equilibrium trios listed then
COLORS = {"first": "#1f77b4", "second": "#ff7f0e", "draw": "#7f7f7f", "all": "#2ca02c"}


def fig_protocols(r: Report) -> go.Figure:
    """Win rate per protocol with its 95% interval, the band shaded; moving first/second as dots."""
    p = r.tables["protocols"].sort_values("win_rate")
    band = r.meta["band"]
    fig = go.Figure()
    fig.add_vrect(x0=0.5 - band, x1=0.5 + band, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"})
    text = [
        f"{row.protocol}: {row.win_rate:.1%} (95% CI {row.win_rate_low:.1%}-{row.win_rate_high:.1%}), "
        f"{row.games:,} games"
        for row in p.itertuples()
    ]
    fig.add_trace(
        go.Scatter(
            x=p["win_rate"],
            y=p["protocol"],
            mode="markers",
            name="win rate (95% CI)",
            marker={"size": 10, "color": "#222"},
            hovertext=text,
            hoverinfo="text",
            error_x=interval_bars(p["win_rate"], p["win_rate_low"], p["win_rate_high"]),
        )
    )
    byf = r.tables["protocols_by_first"]
    for who in ("first", "second"):
        d = byf[byf["first"] == who].set_index("protocol").reindex(p["protocol"])
        fig.add_trace(
            go.Scatter(
                x=d["win_rate"],
                y=d.index,
                mode="markers",
                name=f"moving {who}",
                marker={"size": 7, "symbol": "diamond", "color": COLORS[who], "opacity": 0.7},
            )
        )
    return layout(
        fig,
        "Protocol win rate (as part of a trio), 95% Wilson intervals; band shaded",
        height=max(360, 28 * len(p) + 120),
        xaxis={"tickformat": ".0%", "title": "win rate"},
    )


def fig_matchups(r: Report) -> go.Figure:
    """Heatmap: row's trio (holding that protocol) beats column's, centred on 50%."""
    long = r.tables["protocol_matchups"]
    m = queries.matrix(long, "protocol", "opponent")
    g = queries.matrix(long, "protocol", "opponent", "games").reindex(index=m.index, columns=m.columns)
    lo = queries.matrix(long, "protocol", "opponent", "win_rate_low").reindex(index=m.index, columns=m.columns)
    hi = queries.matrix(long, "protocol", "opponent", "win_rate_high").reindex(index=m.index, columns=m.columns)
    # by position in arrays, not by label (.loc per cell is most of the chart's time at 30 protocols)
    mv, gv, lov, hiv = (x.to_numpy() for x in (m, g, lo, hi))
    rows, cols = list(m.index), list(m.columns)
    hover = [
        [
            f"{a} vs {b}: {pct(mv[i, j], '')} (95% CI {pct(lov[i, j], '')}-{pct(hiv[i, j], '')}), "
            f"{'' if pd.isna(gv[i, j]) else f'{int(gv[i, j]):,}'} games"
            for j, b in enumerate(cols)
        ]
        for i, a in enumerate(rows)
    ]
    cells = [  # each cell shows its games under its rate (the hover adds the interval)
        ["" if pd.isna(gv[i, j]) else f"{pct(mv[i, j], '')}<br>{int(gv[i, j]):,} games" for j in range(len(cols))]
        for i in range(len(rows))
    ]
    rates = m.to_numpy(dtype=float)
    rates = rates[~np.isnan(rates)]  # a one-game run can have no decided matchup: no nanmax of nothing
    spread = max(float(np.max(np.abs(rates - 0.5))) if rates.size else 0.1, 0.02)
    fig = go.Figure(
        go.Heatmap(
            z=m.to_numpy(dtype=float),
            x=list(m.columns),
            y=list(m.index),
            colorscale="RdBu",
            zmid=0.5,
            zmin=0.5 - spread,
            zmax=0.5 + spread,
            hovertext=hover,
            hoverinfo="text",
            text=cells,
            texttemplate="%{text}",
            textfont={"size": 8},
            colorbar={"tickformat": ".0%", "title": "row wins"},
        )
    )
    fig.update_yaxes(autorange="reversed")
    return layout(
        fig,
        "Matchups: how often a trio holding the row protocol beats one holding the column protocol",
        height=max(420, 30 * len(m) + 140),
    )


def fig_compile_curves(r: Report) -> go.Figure:
    """Share of seat-games that have made their 1st / 2nd / 3rd compile by each turn."""
    c = r.tables["compile_curves"]
    fig = go.Figure()
    for k, dash in ((1, "solid"), (2, "dash"), (3, "dot")):
        d = c[c["k"] == k]
        fig.add_trace(
            go.Scatter(x=d["turn"], y=d["share"], mode="lines", name=f"compile {k}", line={"dash": dash, "width": 2})
        )
    return layout(
        fig,
        "Compile timing: share of seat-games with their k-th compile by turn",
        xaxis={"title": "turn"},
        yaxis={"tickformat": ".0%", "title": "share of seat-games", "range": [0, 1]},
    )


def fig_game_length(r: Report) -> go.Figure:
    """Histogram of game length, stacked by who won."""
    gl = r.tables["game_length"].groupby(["turns", "won_by"], as_index=False)["games"].sum()
    fig = go.Figure()
    for who in ("first", "second", "draw"):
        d = gl[gl["won_by"] == who]
        if len(d):
            fig.add_trace(
                go.Bar(
                    x=d["turns"],
                    y=d["games"],
                    name=f"won by {who} player" if who != "draw" else "draw",
                    marker={"color": COLORS[who]},
                )
            )
    return layout(
        fig,
        "Game length (turns), by who won",
        barmode="stack",
        bargap=0,
        xaxis={"title": "turns"},
        yaxis={"title": "games"},
    )


def fig_compiles_by_protocol(r: Report) -> go.Figure | None:
    cp = r.tables.get("compiles_by_protocol")
    if cp is None or cp.empty:
        return None
    cp = cp.sort_values("compile_rate")
    fig = go.Figure(
        go.Bar(
            x=cp["compile_rate"],
            y=cp["protocol"],
            orientation="h",
            marker={"color": "#9467bd"},
            error_x=interval_bars(cp["compile_rate"], cp["compile_rate_low"], cp["compile_rate_high"]),
            hovertext=[
                f"{x.protocol}: compiled in {x.compile_rate:.1%} of {x.appearances:,} "
                f"appearances, median turn {x.turn_median:.0f}"
                for x in cp.itertuples()
            ],
            hoverinfo="text",
        )
    )
    return layout(
        fig,
        "Compile rate per protocol (share of its appearances in which it was compiled)",
        height=max(360, 26 * len(cp) + 120),
        xaxis={"tickformat": ".0%"},
    )


def fig_strategies(r: Report) -> go.Figure | None:
    sr = r.tables.get("strategy_ratings")
    if sr is None or sr.empty:
        return None
    sr = sr.sort_values("rating")
    fig = go.Figure(
        go.Scatter(
            x=sr["rating"],
            y=sr["strategy"],
            mode="markers",
            marker={"size": 10},
            error_x=interval_bars(sr["rating"], sr["rating_low"], sr["rating_high"]),
        )
    )
    return layout(
        fig,
        "Strategy ratings (Bradley-Terry, Elo scale, 95% CI)",
        height=max(260, 40 * len(sr) + 120),
        xaxis={"title": "rating"},
    )


def cards_table(r: Report, pages: set[str]) -> str:
    """The card impact table; a card's name links to its card page when the page has one."""
    c = r.tables.get("card_impact")
    if c is None or c.empty:
        return "<p>No events in this run: card impact needs the events table.</p>"
    cols = [
        ("card", "card", "text"),
        ("deck games", "deck_games", "int"),
        ("drawn", "drawn_rate", "pct"),
        ("face-up", "up_rate", "pct"),
        ("face-down", "down_rate", "pct"),
        ("WR face-up", "up_wr", "pct"),
        ("n face-up", "up", "int"),
        ("WR face-down", "down_wr", "pct"),
        ("WR never played", "never_wr", "pct"),
        ("n never", "never", "int"),
        ("face-up minus never, points (95% CI)", "iwd", "diff"),
    ]
    return table_html(c, cols, "card-table", keys=("protocol", "card"), links=_card_links(pages))


def _card_links(pages: set[str]) -> dict[str, str]:
    return {n: "#" + card_anchor(n) for n in pages}


def card_value_html(r: Report, protocol_of: dict[str, str]) -> str:
    """The card-value section of a `protolab cardvalue` run (analysis/studies/balance/card_values.py), else empty."""
    c = r.tables.get("card_value")
    if c is None or c.empty:
        return ""
    shown = c.assign(
        _p=c["card"].map(protocol_of).fillna(""),
        restriction=c["restriction"].map({"avoid": "never played", "noup": "never face-up"}),
        check=c["restriction_held"].map({True: "held", False: "VIOLATED"}).fillna("unchecked"),
    )
    cols = [
        ("card", "card", "text"),
        ("restriction", "restriction", "text"),
        ("value: unrestricted minus restricted, points (95% CI)", "value", "diff"),
        ("adj. p", "p_adjusted", "p"),
        ("WR unrestricted", "win_rate_unrestricted", "pct"),
        ("WR restricted", "win_rate_restricted", "pct"),
        ("games", "games", "int"),
        ("baseline plays up", "baseline_up_plays", "int"),
        ("baseline plays down", "baseline_down_plays", "int"),
        ("restricted plays up", "restricted_up_plays", "int"),
        ("restriction", "check", "text"),
    ]
    links = _card_links(set(protocol_of))
    return (
        f"<section><h2>Card value under {html.escape(str(c.attrs.get('strategy', '')))} (restricted play)</h2>"
        '<p class="muted">What playing the card at all (never played) or face-up (never face-up) is worth to the '
        "side holding its protocol: its win rate against the same strategy unrestricted minus restricted, on "
        "shared seeds and trios (draws count half), with a paired 95% interval; p adjusted across all rows "
        f"({html.escape(str(c.attrs.get('correction', 'holm')))}).</p>"
        f'<div class="scroll">{table_html(shown, cols, "card-value", ("_p", "card"), links)}</div></section>'
    )


def trios_html(r: Report) -> str:
    """Every trio's win rate with its 95% Wilson interval and games, as a sortable table."""
    t = r.tables.get("trio_win_rates")
    if t is None or t.empty:
        return ""
    cols = [
        ("trio", "trio", "text"),
        ("win rate", "win_rate", "pct"),
        ("95% CI low", "win_rate_low", "pct"),
        ("95% CI high", "win_rate_high", "pct"),
        ("games", "games", "int"),
        ("wins", "wins", "int"),
        ("draws", "draws", "int"),
    ]
    t = t.assign(_p=t["trio"].str.replace(", ", "|", regex=False))
    return (
        f'<section id="trios"><h2>Trio win rate: {len(t):,} trios, best first (click a header to sort)</h2>'
        '<p class="muted">Each trio over all its decided games, either seat; 95% Wilson interval; draws '
        "beside it, never as half wins.</p>"
        f'<div class="scroll">{table_html(t, cols, "trios", ("_p", None))}</div></section>'
    )


def metagame_html(r: Report) -> str:
    """The metagame section (analysis/studies/balance/meta.py, no bootstrap) from the report's trio-vs-trio table.
    Above LARGE protocols it is summarised to stay quick and small: the payoff model's
    regularisation is fixed instead of cross-validated, and only the TOP most likely trios of the
    equilibrium are listed (every protocol's weight and Nash-averaged rating still are)."""
    t = r.tables.get("trio_matchups")
    if t is None or t.empty:
        return ""
    protocols = {p for col in ("trio_a", "trio_b") for x in t[col].unique() for p in x.split(", ")}
    large = len(protocols) > LARGE
    try:
        res = meta_analysis(
            t.assign(draws=0)[["trio_a", "trio_b", "games", "wins", "draws"]],
            bootstrap=0,
            pair_l2=LARGE_PAIR_L2 if large else None,
            alpharank=not large,
        )
    except ValueError as e:
        return meta_html(None, f"No metagame: {e}.")
    res.meta["runs"] = r.meta.get("run_ids", [])
    section = meta_html(res, top=TOP_TRIOS if large else None)
    if not large:
        return section
    note = (
        f'<p class="muted">{len(protocols)} protocols, {res.meta["trios"]:,} trios: summarised (pair '
        f"regularisation fixed at {LARGE_PAIR_L2:g}, not cross-validated; no alpha-rank; at most {TOP_TRIOS} trios "
        "listed). "
        f"The full analysis with bootstrap intervals: protolab meta {html.escape(' '.join(r.meta.get('runs', [])))}"
        "</p>"
    )
    return section.replace("</h2>", "</h2>" + note, 1)


def flags_html(r: Report, links: dict[str, str]) -> str:
    """Every flagged row as a sortable table (strongest evidence first), under its correction statement;
    `links`: a name -> its card page or its protocol's row."""
    f = r.tables["balance_flags"]
    flagged = ranked_flags(f)
    statement = html.escape(f.attrs.get("statement", r.meta.get("flags_statement", "")))
    if flagged.empty:
        return f'<p class="ok">Nothing flagged. <span class="muted">{statement}.</span></p>'
    shown = flagged.assign(
        against=[against(x) for _, x in flagged.iterrows()],
        _p=[
            str(x["protocol"]) if x["kind"] == "card" and isinstance(x.get("protocol"), str) else str(x["name"])
            for _, x in flagged.iterrows()
        ],
    )
    cols = [
        ("name", "name", "text"),
        ("kind", "kind", "text"),
        ("metric", "metric", "text"),
        ("win rate", "win_rate", "pct"),
        ("95% CI low", "win_rate_low", "pct"),
        ("95% CI high", "win_rate_high", "pct"),
        ("games", "games", "int"),
        ("direction", "direction", "text"),
        ("against", "against", "text"),
        ("adj. p", "p_adjusted", "p"),
        ("why", "why", "text"),
    ]
    return (
        f'<div class="scroll">{table_html(shown, cols, "flag-table", ("_p", "name"), links)}</div>'
        f'<p class="muted">{statement}.</p>'
    )


def protocols_html(r: Report, sets: dict[str, str]) -> str:
    """Every protocol's win rate with its interval, its set and its flag, as a sortable table."""
    p = r.tables["protocols"]
    flags = r.tables["balance_flags"]
    flagged = flags[flags["flagged"] & (flags["kind"] == "protocol")].set_index("name")["direction"]
    why = flags[flags["kind"] == "protocol"].set_index("name")["why"] if "why" in flags else pd.Series(dtype=str)
    shown = p.assign(
        set=[sets.get(x, "") for x in p["protocol"]],
        flag=[flagged.get(x, "") for x in p["protocol"]],
        why=[str(why.get(x, "not tested")) for x in p["protocol"]],
    )
    shown = shown.sort_values("win_rate", ascending=False).assign(_id=lambda d: d["protocol"].map(protocol_anchor))
    cols = [
        ("protocol", "protocol", "text"),
        ("set", "set", "text"),
        ("win rate", "win_rate", "pct"),
        ("95% CI low", "win_rate_low", "pct"),
        ("95% CI high", "win_rate_high", "pct"),
        ("games", "games", "int"),
        ("flag", "flag", "text"),
        ("why", "why", "text"),
    ]
    table = table_html(shown, cols, "protocol-table", ("protocol", None), ids="_id")
    return (
        "<section><h2>Protocols: win rate as part of a trio (click a header to sort)</h2>"
        f'<div class="scroll">{table}</div></section>'
    )


VIEWS = (
    ("verdict", "Verdict"),
    ("protocols", "Protocols"),
    ("cards", "Cards"),
    ("matchups", "Matchups"),
    ("games", "Games"),
)
CHARTS = {  # the view each chart is drawn in
    "protocols": "protocols",
    "compiles-by-protocol": "protocols",
    "matchups": "matchups",
    "compile-curves": "games",
    "game-length": "games",
    "strategies": "games",
}


def charts_by_view(r: Report) -> dict[str, str]:
    """Each view's charts as HTML sections, in CHARTS' order."""
    figs = {
        "protocols": fig_protocols(r),
        "matchups": fig_matchups(r),
        "compile-curves": fig_compile_curves(r),
        "game-length": fig_game_length(r),
        "compiles-by-protocol": fig_compiles_by_protocol(r),
        "strategies": fig_strategies(r),
    }
    out: dict[str, str] = {}
    for name, view in CHARTS.items():
        f = figs[name]
        if f is not None:
            out[view] = out.get(view, "") + f"<section>{fig_html(f, 'chart-' + name)}</section>"
    return out


CARDS_NOTE = """<p class="muted">Per card, over the seat-games whose deck holds it, decided games only (win rate
when drawn is left out: nearly every card of a held protocol is drawn, so it is the protocol's win rate again).
Face-up minus never: win rate when played face-up minus win rate when never played (the 17lands IWD
idea), in percentage points with a 95% Newcombe interval.</p>"""


def views(r: Report, examples: str, texts: dict, notes: list[str], protocol_of: dict[str, str]) -> list[View]:
    """The page's views (VIEWS), each a few sections: every table and chart of the report in one."""
    sets = {t.protocol: t.set for t in texts.values()}
    pages = set(protocol_of)
    links = {**_card_links(pages), **{p: "#" + protocol_anchor(p) for p in r.tables["protocols"]["protocol"]}}
    charts = charts_by_view(r)
    flags = r.tables["balance_flags"]
    impact = r.tables.get("card_impact")
    verdict = f"""{summary_html(r, warnings_html(r.meta["warnings"]), pages)}
<section id="flags"><h2>Balance flags</h2>{flags_html(r, links)}</section>
{loops_html(r.tables.get("loop_draws"))}"""
    cards = f"""<section id="card-impact"><h2>Card impact (click a header to sort, a card for its page)</h2>
{CARDS_NOTE}<div class="scroll">{cards_table(r, pages)}</div></section>
{card_value_html(r, protocol_of)}
{card_pages_html(texts, impact, r.tables.get("card_value"), flags, notes)}"""
    games = examples or (
        '<section id="example-games"><h2>Example games</h2><p class="muted">None on this page: '
        "<code>protolab dashboard RUN</code> of one run links its example games to their board pages.</p></section>"
    )
    return [
        ("verdict", "Verdict", verdict),
        ("protocols", "Protocols", protocols_html(r, sets) + charts.get("protocols", "")),
        ("cards", "Cards", cards),
        ("matchups", "Matchups", charts.get("matchups", "") + trios_html(r) + metagame_html(r)),
        ("games", "Games", games + charts.get("games", "")),
    ]


def render(r: Report, examples: str = "") -> str:
    """The whole page as one HTML string (plotly.js inline: it works with no network) of a few
    linked views (analysis/pages/views.py): the verdict first (analysis/studies/balance/dashboard_summary.py
    and the flags), then protocols, cards (the card pages among them), matchups and games, every
    table under the filter bar; `examples`: the example games section (analysis/pages/board_links.py),
    in the games view."""
    blocks = r.meta.get("provenance") or []
    texts, notes = card_texts(blocks[0]) if blocks else ({}, [])
    if len({b.get("pool_hash") for b in blocks}) > 1:
        notes.append("the pooled runs have different pools: card texts are the first run's")
    sets = {t.protocol: t.set for t in texts.values()}
    impact = r.tables.get("card_impact")
    protocol_of = {n: t.protocol for n, t in texts.items()}
    if impact is not None and not impact.empty:
        protocol_of.update({str(c): str(p) for c, p in zip(impact["card"], impact["protocol"], strict=True)})
    shown = views(r, examples, texts, notes, protocol_of)
    flags = r.tables["balance_flags"]
    nav = filter_bar(
        {p: sets.get(p, "") for p in r.tables["protocols"]["protocol"]},
        {str(x["name"]): str(x["direction"]) for _, x in flags[flags["flagged"]].iterrows()},
        tabs(shown),
    )
    played = f'<p class="warn played"><b>{html.escape(r.meta["played"])}</b></p>' if r.meta.get("played") else ""
    title = ", ".join(r.meta["run_ids"])
    return render_page(
        "", "protolab balance dashboard", title, played, views_html(shown), css=VIEW_CSS, nav=nav, script=VIEW_JS
    )
