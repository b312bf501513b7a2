"""From a finding to games: for each protocol and each flagged row of the dashboard, a few games of
the run behind it, chosen to be typical and reproducibly, and the dashboard section that links them
to board pages.

A protocol flagged weak links games it lost, any other protocol games it won; a flagged card row,
games won by the seat that played the card face up (the flag's metric); the run as a whole, its
longest games and its turn-cap draws. Typical: of the qualifying games, those that ended the most
common way (how many protocols the losing seat had compiled by then), nearest their median length,
then the lowest seeds; one game per seed (a seat-swapped pair shares its seed), and never a game
(or its pair) another protocol's or card's row shows. Embedded pages (offline) open from the
dashboard file itself; the others link to `protolab dashboard RUN --serve` (/game/N) or name the
replay command."""

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
SEAT_HOLDS = {s: ", ".join(c for c in PROTOCOL_COLUMNS if c.startswith(f"seat{s}")) for s in (0, 1)}
WON_BY = f"(winner = 0 and ? in ({SEAT_HOLDS[0]})) or (winner = 1 and ? in ({SEAT_HOLDS[1]}))"
LOST_BY = f"(winner = 1 and ? in ({SEAT_HOLDS[0]})) or (winner = 0 and ? in ({SEAT_HOLDS[1]}))"
# how a decided game ended: the protocols the losing seat had compiled by then (0, 1 or 2)
LOSER_COMPILED = "(case when winner = 0 then {s1} else {s0} end)".format(
    **{f"s{s}": " + ".join(f"(seat{s}_compile{k}_turn is not null)::int" for k in (1, 2, 3)) for s in (0, 1)}
)
WAY = {0: "the loser compiled none of its protocols", 1: "the loser had compiled one", 2: "the loser had compiled two"}


def _pick(
    runs: Runs, where: str, params: list[Any], k: int, order: str = "seed, game_index", used: set[int] | None = None
) -> list[int]:
    """game_index of the first k games of the first run that match, in a reproducible order, one
    game per seed (a seat-swapped pair shares its seed: the pair's first game that matches), none of
    a seed in `used` (which gets the seeds picked)."""
    seeds = sorted(used or ())
    skip = f" and seed not in ({', '.join('?' * len(seeds))})" if seeds else ""
    sql = (
        f"select game_index, seed from (select *, row_number() over (partition by seed order by game_index) as nth "
        f"from games where run_id = ? and ({where}){skip}) where nth = 1 order by {order} limit {int(k)}"
    )
    rows = runs.con.execute(sql, [runs.run_ids[0], *params, *seeds]).fetchall()
    if used is not None:
        used.update(int(r[1]) for r in rows)
    return [int(r[0]) for r in rows]


def _typical(runs: Runs, where: str, params: list[Any], k: int, used: set[int]) -> tuple[list[int], str]:
    """k games matching `where` that ended the most common way (LOSER_COMPILED) nearest their median
    length, one per seed, none of a used seed; and the sentence that says so."""
    row = runs.con.execute(
        f"select {LOSER_COMPILED} as way, count(*) as n, median(turns) as turns, sum(count(*)) over () as total "
        f"from games where run_id = ? and ({where}) group by way order by n desc, way limit 1",
        [runs.run_ids[0], *params],
    ).fetchone()
    if row is None:
        return [], ""
    way, n, median, total = int(row[0]), int(row[1]), float(row[2]), int(row[3])
    games = _pick(runs, f"({where}) and {LOSER_COMPILED} = {way}", params, k, f"abs(turns - {median}), seed", used)
    return games, f"the most common way ({n / total:.0%} of {total:,}): {WAY.get(way, way)}; about {median:.0f} turns"


def examples(runs: Runs, flags: pd.DataFrame, protocols: list[str], k: int = PER_ROW) -> pd.DataFrame:
    """Rows (group, name, why, game_index, protocol: the one the row concerns): per protocol (games
    it lost if it is flagged below, else games it won), per flagged row (a protocol's are its
    protocol row's games), and the whole run's longest games and turn-cap draws. Flagged rows pick
    first, strongest evidence first, so a finding gets its typical games; no game is shown for two
    protocols or cards."""
    rows: list[tuple[str, str, str, int, str]] = []
    used: set[int] = set()
    flagged = flags[flags["flagged"]] if "flagged" in flags else flags.iloc[0:0]
    weak = set(flagged[(flagged["kind"] == "protocol") & (flagged["direction"] == "below")]["name"])
    chosen: dict[str, tuple[str, list[int]]] = {}

    def protocol_games(p: str) -> tuple[str, list[int]]:
        if p not in chosen:
            lost = p in weak
            games, way = _typical(runs, LOST_BY if lost else WON_BY, [p, p], k, used)
            chosen[p] = (f"{'lost' if lost else 'won'} by a seat holding {p}; {way}", games)
        return chosen[p]

    def add(group: str, name: str, why: str, games: list[int], protocol: str = "") -> None:
        rows.extend((group, name, why, g, protocol or name) for g in games)

    for _, f in flagged.iterrows():
        name = str(f["name"])
        if f["kind"] == "protocol":
            add("flag", name, *protocol_games(name))
        elif f["kind"] == "card" and runs.has_events:
            where = (
                "game_index in (select e.game_index from events e where e.run_id = games.run_id and "
                "e.card = ? and e.kind = 'play_face_up' and e.seat = games.winner)"
            )
            why = f"won by the seat that played {name} face up"
            add("flag", name, why, _pick(runs, where, [name], k, used=used), str(f.get("protocol") or ""))
    for p in protocols:
        add("protocol", p, *protocol_games(p))
    add("run", "longest games", "the most turns", _pick(runs, "true", [], k, "turns desc, seed, game_index"))
    add("run", "turn-cap draws", "drawn at the turn cap", _pick(runs, "end_reason = 'turn_cap'", [], k))
    out = pd.DataFrame(rows, columns=["group", "name", "why", "game_index", "protocol"])
    order = {"protocol": 0, "flag": 1, "run": 2}  # the dashboard lists protocols first, as before
    return out.sort_values("group", key=lambda g: g.map(order), kind="stable").reset_index(drop=True)


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
        f'<section id="example-games"><h2>Example games</h2><p class="muted">Per row, typical games behind '
        f"it: a protocol flagged weak, games it lost; any other, games it won; each ended the most common "
        f"way, near the median length; no game shown for two protocols. A link opens the game's board page "
        f"(every turn end, its log, the win-probability graph); a game not carried in this file names the "
        f"command that draws it.</p>"
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
