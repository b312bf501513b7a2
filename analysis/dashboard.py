"""`protolab dashboard`: one self-contained HTML page a designer can open offline (plotly.js is
embedded from the installed plotly package, nothing is fetched), with the answers first: balance
flags, protocol win rates with intervals, the matchup heatmap, compile timing, game length, and a
sortable card-impact table. `--serve` serves the page on 127.0.0.1 only."""

from __future__ import annotations

import html
import math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from analysis import queries
from analysis.meta import meta_analysis
from analysis.meta_report import meta_html
from analysis.provenance import as_html
from analysis.report import Report, against
from analysis.runfolder import write_atomic

FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
COLORS = {"first": "#1f77b4", "second": "#ff7f0e", "draw": "#7f7f7f", "all": "#2ca02c"}


def _layout(fig: go.Figure, title: str, height: int = 420, **kw: Any) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0.01}, height=height, margin={"l": 70, "r": 20, "t": 50, "b": 50},
                      font={"family": FONT, "size": 12}, template="plotly_white",
                      legend={"orientation": "h", "y": -0.15}, **kw)
    return fig


def _pct(x: float) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def fig_protocols(r: Report) -> go.Figure:
    """Win rate per protocol with its 95% interval, the band shaded; moving first/second as dots."""
    p = r.tables["protocols"].sort_values("win_rate")
    band = r.meta["band"]
    fig = go.Figure()
    fig.add_vrect(x0=0.5 - band, x1=0.5 + band, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"})
    text = [f"{row.protocol}: {row.win_rate:.1%} (95% CI {row.win_rate_low:.1%}-{row.win_rate_high:.1%}), "
            f"{row.games:,} games" for row in p.itertuples()]
    fig.add_trace(go.Scatter(x=p["win_rate"], y=p["protocol"], mode="markers", name="win rate (95% CI)",
                             marker={"size": 10, "color": "#222"}, hovertext=text, hoverinfo="text",
                             error_x={"type": "data", "symmetric": False,
                                      "array": p["win_rate_high"] - p["win_rate"],
                                      "arrayminus": p["win_rate"] - p["win_rate_low"]}))
    byf = r.tables["protocols_by_first"]
    for who in ("first", "second"):
        d = byf[byf["first"] == who].set_index("protocol").reindex(p["protocol"])
        fig.add_trace(go.Scatter(x=d["win_rate"], y=d.index, mode="markers", name=f"moving {who}",
                                 marker={"size": 7, "symbol": "diamond", "color": COLORS[who], "opacity": 0.7}))
    return _layout(fig, "Protocol win rate (as part of a trio), 95% Wilson intervals; band shaded",
                   height=max(360, 28 * len(p) + 120), xaxis={"tickformat": ".0%", "title": "win rate"})


def fig_matchups(r: Report) -> go.Figure:
    """Heatmap: row's trio (holding that protocol) beats column's, centred on 50%."""
    long = r.tables["protocol_matchups"]
    m = queries.matrix(long, "protocol", "opponent")
    g = queries.matrix(long, "protocol", "opponent", "games").reindex(index=m.index, columns=m.columns)
    lo = queries.matrix(long, "protocol", "opponent", "win_rate_low").reindex(index=m.index, columns=m.columns)
    hi = queries.matrix(long, "protocol", "opponent", "win_rate_high").reindex(index=m.index, columns=m.columns)
    hover = [[f"{a} vs {b}: {_pct(m.loc[a, b])} (95% CI {_pct(lo.loc[a, b])}-{_pct(hi.loc[a, b])}), "
              f"{'' if pd.isna(g.loc[a, b]) else f'{int(g.loc[a, b]):,}'} games" for b in m.columns] for a in m.index]
    spread = float(np.nanmax(np.abs(m.to_numpy(dtype=float) - 0.5))) if m.size else 0.1
    spread = max(spread, 0.02)
    fig = go.Figure(go.Heatmap(z=m.to_numpy(dtype=float), x=list(m.columns), y=list(m.index), colorscale="RdBu",
                               zmid=0.5, zmin=0.5 - spread, zmax=0.5 + spread, hovertext=hover, hoverinfo="text",
                               colorbar={"tickformat": ".0%", "title": "row wins"}))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Matchups: how often a trio holding the row protocol beats one holding the column protocol",
                   height=max(420, 30 * len(m) + 140))


def fig_compile_curves(r: Report) -> go.Figure:
    """Share of seat-games that have made their 1st / 2nd / 3rd compile by each turn."""
    c = r.tables["compile_curves"]
    fig = go.Figure()
    for k, dash in ((1, "solid"), (2, "dash"), (3, "dot")):
        d = c[c["k"] == k]
        fig.add_trace(go.Scatter(x=d["turn"], y=d["share"], mode="lines", name=f"compile {k}",
                                 line={"dash": dash, "width": 2}))
    return _layout(fig, "Compile timing: share of seat-games with their k-th compile by turn",
                   xaxis={"title": "turn"}, yaxis={"tickformat": ".0%", "title": "share of seat-games",
                                                   "range": [0, 1]})


def fig_game_length(r: Report) -> go.Figure:
    """Histogram of game length, stacked by who won."""
    gl = r.tables["game_length"].groupby(["turns", "won_by"], as_index=False)["games"].sum()
    fig = go.Figure()
    for who in ("first", "second", "draw"):
        d = gl[gl["won_by"] == who]
        if len(d):
            fig.add_trace(go.Bar(x=d["turns"], y=d["games"], name=f"won by {who} player" if who != "draw" else "draw",
                                 marker={"color": COLORS[who]}))
    return _layout(fig, "Game length (turns), by who won", barmode="stack", bargap=0,
                   xaxis={"title": "turns"}, yaxis={"title": "games"})


def fig_compiles_by_protocol(r: Report) -> go.Figure | None:
    cp = r.tables.get("compiles_by_protocol")
    if cp is None or cp.empty:
        return None
    cp = cp.sort_values("compile_rate")
    fig = go.Figure(go.Bar(x=cp["compile_rate"], y=cp["protocol"], orientation="h", marker={"color": "#9467bd"},
                           error_x={"type": "data", "symmetric": False,
                                    "array": cp["compile_rate_high"] - cp["compile_rate"],
                                    "arrayminus": cp["compile_rate"] - cp["compile_rate_low"]},
                           hovertext=[f"{x.protocol}: compiled in {x.compile_rate:.1%} of {x.appearances:,} "
                                      f"appearances, median turn {x.turn_median:.0f}" for x in cp.itertuples()],
                           hoverinfo="text"))
    return _layout(fig, "Compile rate per protocol (share of its appearances in which it was compiled)",
                   height=max(360, 26 * len(cp) + 120), xaxis={"tickformat": ".0%"})


def fig_strategies(r: Report) -> go.Figure | None:
    sr = r.tables.get("strategy_ratings")
    if sr is None or sr.empty:
        return None
    sr = sr.sort_values("rating")
    fig = go.Figure(go.Scatter(x=sr["rating"], y=sr["strategy"], mode="markers", marker={"size": 10},
                               error_x={"type": "data", "symmetric": False,
                                        "array": sr["rating_high"] - sr["rating"],
                                        "arrayminus": sr["rating"] - sr["rating_low"]}))
    return _layout(fig, "Strategy ratings (Bradley-Terry, Elo scale, 95% CI)", height=max(260, 40 * len(sr) + 120),
                   xaxis={"title": "rating"})


def _table_html(df: pd.DataFrame, cols: list[tuple[str, str, str]], table_id: str) -> str:
    """A sortable table: cols are (header, column, format) with format pct|int|text|diff."""
    head = "".join(f'<th data-col="{i}">{html.escape(h)}</th>' for i, (h, _, _) in enumerate(cols))
    body = []
    for _, row in df.iterrows():
        cells = []
        for _, c, fmt in cols:
            v = row[c]
            if fmt == "text":
                cells.append(f'<td data-v="{html.escape(str(v))}">{html.escape(str(v))}</td>')
                continue
            missing = v is None or (isinstance(v, float) and math.isnan(v))
            sv = "" if missing else f"{float(v):.6g}"
            shown = ("" if missing else f"{v:.1%}" if fmt == "pct" else f"{int(v):,}" if fmt == "int"
                     else f"{v:.2g}" if fmt == "p"
                     else f"{v * 100:+.1f} ({row[c + '_low'] * 100:+.1f} to {row[c + '_high'] * 100:+.1f})")
            cells.append(f'<td class="n" data-v="{sv}">{shown}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def cards_table(r: Report) -> str:
    c = r.tables.get("card_impact")
    if c is None or c.empty:
        return "<p>No events in this run: card impact needs the events table.</p>"
    cols = [("card", "card", "text"), ("deck games", "deck_games", "int"),
            ("drawn", "drawn_rate", "pct"), ("face-up", "up_rate", "pct"), ("face-down", "down_rate", "pct"),
            ("WR face-up", "up_wr", "pct"), ("n face-up", "up", "int"),
            ("WR face-down", "down_wr", "pct"), ("WR never played", "never_wr", "pct"), ("n never", "never", "int"),
            ("face-up minus never, points (95% CI)", "iwd", "diff")]
    return _table_html(c, cols, "cards")


def card_value_html(r: Report) -> str:
    """The card-value section of a `protolab cardvalue` run (analysis/cardvalue.py); empty otherwise."""
    c = r.tables.get("card_value")
    if c is None or c.empty:
        return ""
    shown = c.assign(restriction=c["restriction"].map({"avoid": "never played", "noup": "never face-up"}),
                     check=c["restriction_held"].map({True: "held", False: "VIOLATED"}).fillna("unchecked"))
    cols = [("card", "card", "text"), ("restriction", "restriction", "text"),
            ("value: unrestricted minus restricted, points (95% CI)", "value", "diff"),
            ("adj. p", "p_adjusted", "p"), ("WR unrestricted", "win_rate_unrestricted", "pct"),
            ("WR restricted", "win_rate_restricted", "pct"), ("games", "games", "int"),
            ("baseline plays up", "baseline_up_plays", "int"), ("baseline plays down", "baseline_down_plays", "int"),
            ("restricted plays up", "restricted_up_plays", "int"), ("restriction", "check", "text")]
    return (f'<section><h2>Card value under {html.escape(str(c.attrs.get("strategy", "")))} (restricted play)</h2>'
            '<p class="muted">What playing the card at all (never played) or face-up (never face-up) is worth to the '
            "side holding its protocol: its win rate against the same strategy unrestricted minus restricted, on "
            "shared seeds and trios (draws count half), with a paired 95% interval; p adjusted across all rows "
            f'({html.escape(str(c.attrs.get("correction", "holm")))}).</p>'
            f'<div class="scroll">{_table_html(shown, cols, "card-value")}</div></section>')


def trios_html(r: Report) -> str:
    """Every trio's win rate with its 95% Wilson interval and games, as a sortable table."""
    t = r.tables.get("trio_win_rates")
    if t is None or t.empty:
        return ""
    cols = [("trio", "trio", "text"), ("win rate", "win_rate", "pct"), ("95% CI low", "win_rate_low", "pct"),
            ("95% CI high", "win_rate_high", "pct"), ("games", "games", "int"), ("wins", "wins", "int"),
            ("draws", "draws", "int")]
    return (f"<section><h2>Trio win rate: {len(t):,} trios, best first (click a header to sort)</h2>"
            '<p class="muted">Each trio over all its decided games, either seat; 95% Wilson interval; draws '
            "beside it, never as half wins.</p>"
            f'<div class="scroll">{_table_html(t, cols, "trios")}</div></section>')


def metagame_html(r: Report) -> str:
    """The metagame section (analysis/meta.py, no bootstrap) from the report's trio-vs-trio table."""

    t = r.tables.get("trio_matchups")
    if t is None or t.empty:
        return ""
    protocols = {p for col in ("trio_a", "trio_b") for x in t[col].unique() for p in x.split(", ")}
    if len(protocols) > 18:          # 816 trios: beyond that the page would wait on the solver
        return meta_html(None, f"{len(protocols)} protocols: see protolab meta {' '.join(r.meta.get('runs', []))}.")
    try:
        res = meta_analysis(t.assign(draws=0)[["trio_a", "trio_b", "games", "wins", "draws"]], bootstrap=0)
    except ValueError as e:
        return meta_html(None, f"No metagame: {e}.")
    res.meta["runs"] = r.meta.get("run_ids", [])
    return meta_html(res)


def flags_html(r: Report) -> str:
    f = r.tables["balance_flags"]
    flagged = f[f["flagged"]]
    statement = html.escape(f.attrs.get("statement", r.meta.get("flags_statement", "")))
    if flagged.empty:
        return f'<p class="ok">Nothing flagged. <span class="muted">{statement}.</span></p>'

    items = "".join(
        f'<li class="{x["direction"]}"><b>{html.escape(str(x["name"]))}</b> ({x["kind"]}, '
        f'{html.escape(x["metric"])}): {x["win_rate"]:.1%} (95% CI {x["win_rate_low"]:.1%}-{x["win_rate_high"]:.1%}, '
        f'{int(x["games"]):,} games), {x["direction"]} {html.escape(against(x))}; adjusted p = '
        f'{x["p_adjusted"]:.2g}</li>' for _, x in flagged.iterrows())
    return f'<ul class="flags">{items}</ul><p class="muted">{statement}.</p>'


def _fig_html(fig: go.Figure, div_id: str) -> str:
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


CSS = """
body{font-family:FONT;margin:0;background:#fafafa;color:#222}
header{background:#222;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#ccc;font-size:13px}header p.prov{color:#9fc3e8;font-size:12px}
main{max-width:1200px;margin:0 auto;padding:12px 24px}
section{background:#fff;border:1px solid #e3e3e3;border-radius:6px;margin:14px 0;padding:10px 14px}
h2{font-size:16px;margin:6px 0 8px}.muted{color:#777;font-size:12px}.ok{color:#2a7a2a}
.flags li{margin:3px 0}.flags li.above{color:#a01818}.flags li.below{color:#1a4fa0}
.warn{color:#a06000}
table.sortable{border-collapse:collapse;font-size:12px;width:100%}
table.sortable th{cursor:pointer;background:#f0f0f0;position:sticky;top:0;padding:4px 6px;text-align:left;
 border-bottom:1px solid #ccc;white-space:nowrap}
table.sortable th.asc:after{content:" \\25B2"}table.sortable th.desc:after{content:" \\25BC"}
table.sortable td{padding:3px 6px;border-bottom:1px solid #eee}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.scroll{max-height:520px;overflow:auto}
""".replace("FONT", FONT)

SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('th').forEach(function (th) {
    th.addEventListener('click', function () {
      var i = +th.dataset.col, asc = !th.classList.contains('asc');
      t.querySelectorAll('th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var rows = Array.prototype.slice.call(t.tBodies[0].rows);
      rows.sort(function (a, b) {
        var x = a.cells[i].dataset.v, y = b.cells[i].dataset.v, fx = parseFloat(x), fy = parseFloat(y);
        var c = (!isNaN(fx) && !isNaN(fy)) ? fx - fy : (x === '' ? 1 : y === '' ? -1 : x.localeCompare(y));
        return asc ? c : -c;
      });
      rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
    });
  });
});
"""


def render(r: Report) -> str:
    """The whole page as one HTML string (plotly.js inline: it works with no network)."""
    o = r.tables["overview"].iloc[0]
    figs = [("protocols", fig_protocols(r)), ("matchups", fig_matchups(r)),
            ("compile-curves", fig_compile_curves(r)), ("game-length", fig_game_length(r)),
            ("compiles-by-protocol", fig_compiles_by_protocol(r)), ("strategies", fig_strategies(r))]
    charts = "".join(f'<section>{_fig_html(f, "chart-" + name)}</section>' for name, f in figs if f is not None)
    warnings = "".join(f'<p class="warn">warning: {html.escape(w)}</p>' for w in r.meta["warnings"])
    title = ", ".join(r.meta["run_ids"])
    summary = (f"{int(o['games']):,} games, {int(o['decided']):,} decided, {int(o['draws']):,} draws; "
               f"first player wins {_pct(o['first_player_win_rate'])} (95% CI "
               f"{_pct(o['first_player_win_rate_low'])}-{_pct(o['first_player_win_rate_high'])}); "
               f"turns mean {o['mean_turns']:.1f}, median {o['median_turns']:.0f}")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>protolab: {html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head><body>
<header><h1>protolab balance dashboard: {html.escape(title)}</h1><p>{html.escape(summary)}</p>
{as_html(r.meta.get("provenance") or [])}</header>
<main>{warnings}
<section><h2>Balance flags</h2>{flags_html(r)}</section>
{charts}
<section><h2>Card impact (click a header to sort)</h2>
<p class="muted">Per card, over the seat-games whose deck holds it, decided games only (win rate when drawn is
left out: nearly every card of a held protocol is drawn, so it is the protocol's win rate again).
Face-up minus never: win rate when played face-up minus win rate when never played (the 17lands IWD
idea), in percentage points with a 95% Newcombe interval.</p>
<div class="scroll">{cards_table(r)}</div></section>
{trios_html(r)}
{metagame_html(r)}
{card_value_html(r)}
</main>
<script>{SORT_JS}</script>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if not self._host_is_local():
            self.send_error(421, "expected Host 127.0.0.1 or localhost")   # DNS rebinding: another site's name
            return
        if self.path not in ("/", "/index.html"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def _host_is_local(self) -> bool:
        """The request names this server as 127.0.0.1 or localhost (with its port): a page of another
        site whose name was rebound to 127.0.0.1 sends its own name, and is refused."""
        port = self.server.server_address[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in {f"{name}:{port}" for name in ("127.0.0.1", "localhost")} | {"127.0.0.1", "localhost"}

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def make_server(page: str, port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server for the page, bound to 127.0.0.1 only (port 0: any free port)."""
    handler = type("DashboardHandler", (_Handler,), {"page": page.encode()})
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def write_page(path: str | Path, page: str) -> None:
    """Write the page whole or not at all (a temporary file in the same folder, then a rename):
    a full disk or Ctrl-C never leaves a truncated dashboard, and an older one stays as it was."""

    write_atomic(path, page.encode("utf-8"))
