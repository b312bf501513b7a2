"""From a finding to games: for each protocol and each flagged row of the dashboard, a few games of
the run behind it, chosen reproducibly (the lowest game seeds among the games that qualify), and
the dashboard section that links them to board pages.

A protocol row links games won by a seat holding it (one game per seed); a flagged card row, games won by the seat
that played the card face up (the flag's metric); and the run as a whole, its longest games and
its turn-cap draws. Embedded pages (offline) open from the dashboard file itself; the others link
to `protolab dashboard RUN --serve` (/game/N) or name the replay command."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from analysis.pages.board_page import template
from analysis.pages.shell import filter_attrs
from analysis.runs.open import Runs
from analysis.runs.schema import PROTOCOL_COLUMNS

PER_ROW = 2  # example games per row
WON_BY = "(winner = 0 and ? in ({seat0})) or (winner = 1 and ? in ({seat1}))".format(
    seat0=", ".join(c for c in PROTOCOL_COLUMNS if c.startswith("seat0")),
    seat1=", ".join(c for c in PROTOCOL_COLUMNS if c.startswith("seat1")),
)


def _pick(runs: Runs, where: str, params: list[Any], k: int, order: str = "seed, game_index") -> list[int]:
    """game_index of the first k games of the first run that match, in a reproducible order, one
    game per seed (a seat-swapped pair shares its seed: the pair's first game that matches)."""
    sql = (
        f"select game_index from (select *, row_number() over (partition by seed order by game_index) as nth "
        f"from games where run_id = ? and ({where})) where nth = 1 order by {order} limit {int(k)}"
    )
    return [int(r[0]) for r in runs.con.execute(sql, [runs.run_ids[0], *params]).fetchall()]


def examples(runs: Runs, flags: pd.DataFrame, protocols: list[str], k: int = PER_ROW) -> pd.DataFrame:
    """Rows (group, name, why, game_index, protocol: the one the row concerns): per protocol, per
    flagged row, and the whole run's longest games and turn-cap draws."""
    rows: list[tuple[str, str, str, int, str]] = []

    def add(group: str, name: str, why: str, games: list[int], protocol: str = "") -> None:
        rows.extend((group, name, why, g, protocol or name) for g in games)

    for p in protocols:
        add("protocol", p, f"won by a seat holding {p}", _pick(runs, WON_BY, [p, p], k))
    for _, f in flags[flags["flagged"]].iterrows():
        name = str(f["name"])
        if f["kind"] == "protocol":
            add("flag", name, f"won by a seat holding {name}", _pick(runs, WON_BY, [name, name], k))
        elif f["kind"] == "card" and runs.has_events:
            where = (
                "game_index in (select e.game_index from events e where e.run_id = games.run_id and "
                "e.card = ? and e.kind = 'play_face_up' and e.seat = games.winner)"
            )
            add(
                "flag",
                name,
                f"won by the seat that played {name} face up",
                _pick(runs, where, [name], k),
                str(f.get("protocol") or ""),
            )
    add("run", "longest games", "the most turns", _pick(runs, "true", [], k, "turns desc, seed, game_index"))
    add("run", "turn-cap draws", "drawn at the turn cap", _pick(runs, "end_reason = 'turn_cap'", [], k))
    return pd.DataFrame(rows, columns=["group", "name", "why", "game_index", "protocol"])


def section_html(ex: pd.DataFrame, run_arg: str, href: Callable[[int], str | None], embedded: dict[int, str]) -> str:
    """The dashboard's "Example games" section. `href(n)`: a served page's address or None;
    `embedded`: game_index -> the board page data (JSON text) carried in the dashboard itself."""
    if ex.empty:
        return ""
    items = []
    for (group, name), g in ex.groupby(["group", "name"], sort=False):
        links = " ".join(_link(int(n), run_arg, href, embedded) for n in g["game_index"])
        keys = f' data-name="{html.escape(name)}"' + (
            filter_attrs(str(g["protocol"].iloc[0]), name) if group != "run" else ""
        )
        items.append(
            f'<tr data-group="{group}"{keys}><td>{html.escape(group)}</td><td>{html.escape(name)}</td>'
            f"<td>{html.escape(str(g['why'].iloc[0]))}</td><td>{links}</td></tr>"
        )
    data = "".join(
        f'<script type="application/json" class="board-game" data-game="{n}">{text}</script>'
        for n, text in embedded.items()
    )
    return (
        f'<section id="example-games"><h2>Example games</h2><p class="muted">Per row, the games behind '
        f"it with the lowest seeds. A link opens the game's board page (every turn end, its log, the "
        f"win-probability graph); a game not carried in this file names the command that draws it.</p>"
        f'<div class="scroll"><table class="examples" style="font-size:12px"><thead><tr><th>row</th>'
        f"<th>name</th><th>games</th><th>open</th></tr></thead><tbody>{''.join(items)}</tbody></table></div>{data}"
        f"{_template_script(embedded)}</section>"
    )


def _link(n: int, run_arg: str, href: Callable[[int], str | None], embedded: dict[int, str]) -> str:
    served = href(n)
    if served is not None:
        return f'<a href="{html.escape(served)}" target="_blank" data-game="{n}">game {n}</a>'
    if n in embedded:
        return f'<a href="#" class="open-board" data-game="{n}">game {n}</a>'
    cmd = f"protolab replay {run_arg} --game {n} --html game-{n}.html"
    return f'<code title="not carried in this file: run this command" data-game="{n}">{html.escape(cmd)}</code>'


def _template_script(embedded: dict[int, str]) -> str:
    """The board page template (once) and the script that opens an embedded game as a page."""
    if not embedded:
        return ""
    tpl = json.dumps(template(), ensure_ascii=False).replace("<", "\\u003c")
    return f"""<script type="application/json" id="board-template">{tpl}</script>
<script>
document.addEventListener('click', function (e) {{
  var a = e.target.closest('a.open-board');
  if (!a) return;
  e.preventDefault();
  var n = a.dataset.game, tpl = JSON.parse(document.getElementById('board-template').textContent);
  var data = document.querySelector('script.board-game[data-game="' + n + '"]').textContent;
  var page = tpl.split('__TITLE__').join('game ' + n).split('__DATA__').join(data);
  window.open(URL.createObjectURL(new Blob([page], {{type: 'text/html'}})), '_blank');
}});
</script>"""
