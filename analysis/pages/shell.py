"""The one HTML page shell of every protolab page (the run dashboard, the A/B page, the tier page,
the metagame page): its style, the sortable-table script, plotly.js inline so a page works offline,
and the figure and table helpers the pages share. `write_page` writes a page whole or not at all;
`make_server` serves one on 127.0.0.1 only (analysis/pages/local_http.py)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from analysis.pages.local_http import LocalHandler, LocalServer, ascii_number
from analysis.runs.runfolder import Where, write_atomic

FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


def layout(fig: go.Figure, title: str, height: int = 420, **kw: Any) -> go.Figure:
    """The house style of every chart: title at the left, legend below, plain white."""
    fig.update_layout(
        title={"text": title, "x": 0.01},
        height=height,
        margin={"l": 70, "r": 20, "t": 50, "b": 50},
        font={"family": FONT, "size": 12},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.15},
        **kw,
    )
    return fig


def interval_bars(value: Any, low: Any, high: Any, **style: Any) -> dict[str, Any]:
    """A trace's error bars (error_x or error_y) from each value to its interval's two ends: an
    interval need not be symmetric about its value."""
    return {"type": "data", "symmetric": False, **style, "array": high - value, "arrayminus": value - low}


def filter_attrs(protocols: str, names: str | None = None) -> str:
    """The attributes the page's filters read on a row (FILTER_JS): the protocols it concerns
    ("|"-separated) and the names whose flags it shows (default: the protocols)."""
    shown = f' data-p="{html.escape(protocols)}"'
    return shown + (f' data-f="{html.escape(names)}"' if names is not None else "")


def table_html(
    df: pd.DataFrame,
    cols: list[tuple[str, str, str]],
    table_id: str,
    keys: tuple[str, str | None] | None = None,
    links: dict[str, str] | None = None,
    ids: str | None = None,
) -> str:
    """A sortable table: cols are (header, column, format) with format pct|int|text|diff|p.
    `keys`: (column of protocols, column of flag names or None) that the filters read per row;
    `links`: a text cell's value -> the href its text links to (a card's page); `ids`: the column
    holding each row's id (a link's target, `#protocol-Fire`)."""
    head = "".join(f'<th data-col="{i}">{html.escape(h)}</th>' for i, (h, _, _) in enumerate(cols))
    body = []
    # plain dicts, not iterrows' Series: a trio table has thousands of rows and a Series per row
    # costs more than the whole row's formatting
    for row in df.to_dict("records"):
        attrs = filter_attrs(str(row[keys[0]]), None if keys[1] is None else str(row[keys[1]])) if keys else ""
        if ids is not None:
            attrs = f' id="{html.escape(str(row[ids]))}"' + attrs
        cells = (_text_cell(row[c], links) if fmt == "text" else _number_cell(row, c, fmt) for _, c, fmt in cols)
        body.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    return (
        f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _text_cell(v: Any, links: dict[str, str] | None) -> str:
    """A text cell, linked when `links` names a page for its value."""
    shown = html.escape(str(v))
    if links and str(v) in links:
        shown = f'<a href="{html.escape(links[str(v)])}">{shown}</a>'
    return f'<td data-v="{html.escape(str(v))}">{shown}</td>'


def _diff(row: dict[str, Any], c: str) -> str:
    """A difference in points with its interval (columns `c_low` and `c_high`)."""
    return f"{row[c] * 100:+.1f} ({row[c + '_low'] * 100:+.1f} to {row[c + '_high'] * 100:+.1f})"


# How each number format of table_html shows a cell of column c; any other format is a difference.
_SHOWN: dict[str, Callable[[dict[str, Any], str], str]] = {
    "pct": lambda row, c: f"{row[c]:.1%}",
    "int": lambda row, c: f"{int(row[c]):,}",
    "p": lambda row, c: f"{row[c]:.2g}",
}


def _number_cell(row: dict[str, Any], c: str, fmt: str) -> str:
    """A number cell: sorted by its value (data-v), empty when the value is missing."""
    v = row[c]
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return '<td class="n" data-v=""></td>'
    return f'<td class="n" data-v="{float(v):.6g}">{_SHOWN.get(fmt, _diff)(row, c)}</td>'


def plain_table(df: pd.DataFrame, table_id: str) -> str:
    """A sortable table of already formatted cells, one per column of `df`, headed by the column names."""
    head = "".join(f'<th data-col="{i}">{html.escape(str(c))}</th>' for i, c in enumerate(df.columns))
    body = "".join(
        "<tr>" + "".join(f'<td data-v="{html.escape(str(v))}">{html.escape(str(v))}</td>' for v in r) + "</tr>"
        for r in df.itertuples(index=False)
    )
    return f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def warnings_html(warnings: list[str]) -> str:
    """Each warning as one line, in front of the figures it concerns."""
    return "".join(f'<p class="warn">warning: {html.escape(w)}</p>' for w in warnings)


def filter_bar(sets: dict[str, str], flags: dict[str, str] | None, links: Sequence[tuple[str, str]] = ()) -> str:
    """The page's filter bar (FILTER_JS acts on every row with filter_attrs): by set, protocol and
    flag. `sets`: protocol -> its set; `flags`: flagged name (protocol or card) -> above|below (None:
    a page without flags, no flag filter); `links`: (anchor, label) of the page's sections, a table
    of contents beside the filters."""

    def options(values: list[str], everything: str) -> str:
        return f'<option value="">{everything}</option>' + "".join(
            f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
        )

    data = json.dumps({"sets": sets, "flags": flags or {}}, ensure_ascii=False).replace("<", "\\u003c")
    toc = "".join(f'<a href="#{html.escape(a)}">{html.escape(label)}</a>' for a, label in links)
    named_sets = {v for v in sets.values() if v}
    return (
        f'<nav id="filters"><span class="toc">{toc}</span><span class="pick">'
        f'<label>set <select name="set">{options(sorted(named_sets), "all sets")}</select></label>'
        f'<label>protocol <select name="protocol">{options(sorted(sets), "all protocols")}</select></label>'
        + (FLAG_SELECT if flags is not None else "")
        + '<button type="button" name="reset">clear</button><span class="count"></span></span>'
        f'<script type="application/json" id="filter-data">{data}</script></nav>'
    )


FLAG_SELECT = (
    '<label>flag <select name="flag"><option value="">any row</option><option value="any">flagged</option>'
    '<option value="above">above the band</option><option value="below">below the band</option></select>'
    "</label>"
)


def render_page(
    kind: str, heading: str, title: str, header: str, body: str, css: str = "", nav: str = "", script: str = ""
) -> str:
    """A whole page: `<title>protolab{kind}: title</title>`, a header `heading: title` followed by
    `header` (HTML: a summary line, provenance), then `body` (HTML sections) in <main>. Escapes `title`.
    `nav` (filter_bar): the filter bar, kept at the top of the window with the heading; `script`:
    the page's own script, run after the body (analysis/pages/views.py's)."""
    t = html.escape(title)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>protolab{kind}: {t}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}{css}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head><body>
<header{' class="tool"' if nav else ""}><h1>{heading}: {t}</h1>{header}{nav}</header>
<main>{body}
</main>
<script>{SORT_JS}{FILTER_JS if nav else ""}{script}</script>
</body></html>
"""


def fig_html(fig: go.Figure, div_id: str) -> str:
    """A chart as a <div> (plotly.js comes once, in the page head)."""
    return pio.to_html(
        fig, include_plotlyjs=False, full_html=False, div_id=div_id, config={"displaylogo": False, "responsive": True}
    )


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
header.tool{position:sticky;top:0;z-index:20;padding:10px 24px 8px;box-shadow:0 1px 4px rgba(0,0,0,.25)}
#filters{display:flex;flex-wrap:wrap;justify-content:space-between;gap:6px 18px;margin-top:8px;font-size:13px}
#filters .toc a{color:#cfe3f7;margin-right:12px;text-decoration:none}#filters .toc a:hover{text-decoration:underline}
#filters label{margin-right:10px;color:#ccc}#filters select{margin-left:4px;font-size:13px;max-width:150px}
#filters button{font-size:12px;margin-right:10px}#filters .count{color:#ffd479}
main [id]{scroll-margin-top:96px}
.verdicts{display:grid;grid-template-columns:repeat(auto-fill,minmax(270px,1fr));gap:8px;margin:8px 0}
.verdict{border:1px solid #e3e3e3;border-left:5px solid #999;border-radius:4px;padding:5px 10px;font-size:12px;
 line-height:1.35}
.verdict.above{border-left-color:#c0392b}.verdict.below{border-left-color:#2c6fbb}
.verdict b{font-size:14px}.verdict .rate{font-size:17px;font-weight:600;font-variant-numeric:tabular-nums}
.verdict .tag{color:#888;font-size:11px}.verdict.above .tag{color:#c0392b}.verdict.below .tag{color:#2c6fbb}
.verdict .ci{color:#444}.verdict .why{color:#777;font-size:11px}.verdict a{color:inherit}
.about{display:grid;grid-template-columns:minmax(260px,1fr) 2fr;gap:12px;border-top:1px solid #eee;padding-top:6px}
.facts div{margin:2px 0}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:12px;margin:8px 0 0}
dl.prov dt{color:#777}dl.prov dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
.facts{font-size:13px;margin:4px 0 8px}.facts b{font-size:16px}
.deck{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:2px 14px;font-size:12px}
.deck div a{margin-right:5px}.card-page{display:none}
.card-page:target{display:block;position:fixed;top:96px;right:18px;width:min(600px,92vw);max-height:calc(100vh - 120px);
 overflow:auto;background:#fff;border:1px solid #bbb;border-top:4px solid #222;border-radius:6px;padding:4px 16px 12px;
 box-shadow:0 6px 28px rgba(0,0,0,.3);z-index:30}
.card-page h3{font-size:14px;margin:12px 0 6px}.card-page h3:first-of-type{font-size:18px}
.card-page .close{float:right;font-size:22px;text-decoration:none;color:#666;margin-top:4px}
.flagline.above{color:#a01818}.flagline.below{color:#1a4fa0}
.texts{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:10px}
.texts .face{border:1px solid #ccc;border-radius:8px;padding:8px 10px;background:#fcfcf7}
.texts .face.changed{background:#fff6e5;border-color:#e0a040}
.texts .face p{margin:4px 0;font-size:13px}.texts .face .box{color:#999;font-size:11px;text-transform:uppercase}
dl.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:4px 14px;font-size:13px}
dl.stats dt{color:#777;font-size:11px}dl.stats dd{margin:0 0 4px;font-variant-numeric:tabular-nums}
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


FILTER_JS = """
(function () {
  var bar = document.getElementById('filters');
  if (!bar) return;
  var data = JSON.parse(document.getElementById('filter-data').textContent);
  var pick = function (n) { return bar.querySelector('[name=' + n + ']'); };
  function pass(tr, s, p, f) {
    var ps = (tr.dataset.p || '').split('|').filter(Boolean);
    var fs = tr.dataset.f !== undefined ? tr.dataset.f.split('|') : ps;
    if (s && !ps.some(function (x) { return data.sets[x] === s; })) return false;
    if (p && ps.indexOf(p) < 0) return false;
    if (f) {
      var d = fs.map(function (x) { return data.flags[x]; }).filter(Boolean);
      if (!d.length || (f !== 'any' && d.indexOf(f) < 0)) return false;
    }
    return true;
  }
  function apply() {
    var s = pick('set').value, p = pick('protocol').value, f = pick('flag') ? pick('flag').value : '';
    var hidden = 0, rows = 0;
    document.querySelectorAll('main [data-p]').forEach(function (el) {
      var ok = pass(el, s, p, f);
      el.hidden = !ok; rows++; if (!ok) hidden++;
    });
    bar.querySelector('.count').textContent = hidden ? (rows - hidden) + ' of ' + rows + ' rows shown' : '';
    document.body.classList.toggle('filtered', hidden > 0);
  }
  bar.addEventListener('change', apply);
  pick('reset').addEventListener('click', function () {
    ['set', 'protocol', 'flag'].forEach(function (n) { if (pick(n)) pick(n).value = ''; });
    apply();
  });
  document.addEventListener('click', function (e) {
    var a = e.target.closest('[data-pick-protocol]');
    if (!a) return;
    e.preventDefault();
    pick('protocol').value = a.dataset.pickProtocol;
    apply();
  });
})();
"""


GamePage = Callable[[int], tuple[int, str]]  # game_index -> (HTTP status, page or one-line error)


class _Handler(LocalHandler):
    page = b""
    game_page: GamePage | None = None
    served = ("GET", "HEAD")

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if not self.host_is_local():
            self.line(421, "expected Host 127.0.0.1 or localhost")  # DNS rebinding: another site's name
            return
        path = self.path.split("?", 1)[0]
        game_page = type(self).game_page  # the class's function, not bound to the handler
        if path.startswith("/game/") and game_page is not None:
            n = ascii_number(path.removeprefix("/game/"))
            if n is None:
                self.line(404, "expected /game/N, N a game number")
                return
            status, text = game_page(n)
            self.send(status, text.encode(), f"text/{'html' if status == 200 else 'plain'}")
        elif path in ("/", "/index.html"):
            self.send(200, self.page, "text/html")
        else:
            self.line(404, "not found: expected / or /game/N")

    do_HEAD = do_GET  # noqa: N815


def make_server(page: str, port: int = 8000, game_page: GamePage | None = None) -> LocalServer:
    """An HTTP server for the page, bound to 127.0.0.1 only (port 0: any free port); with
    `game_page`, /game/N is the board page of game N, made on demand."""
    games = staticmethod(game_page) if game_page is not None else None
    handler = type("DashboardHandler", (_Handler,), {"page": page.encode(), "game_page": games})
    return LocalServer(("127.0.0.1", port), handler)


def write_page(path: Where, page: str) -> None:
    """Write the page whole or not at all (a temporary file in the same folder, then a rename):
    a full disk or Ctrl-C never leaves a truncated dashboard, and an older one stays as it was."""

    write_atomic(path, page.encode("utf-8"))
