"""From a dashboard finding to games: example games per protocol, flag and the run (longest, turn-cap
draws) are the ones the rule names (typical games, never shared between protocols); the offline
dashboard carries a bounded number of board pages that open in Chromium and show the engine's
positions; `--serve` renders any game on demand, with the replay's checks, for Host 127.0.0.1 or
localhost only."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from fixtures_analysis.chromium import launched

from analysis.pages import board_links
from analysis.pages.shell import make_server
from analysis.runs.open import open_runs
from analysis.studies.balance.dashboard import render
from analysis.studies.balance.report import build_report
from protolab.cli import main
from protolab.commands.game_links import MAX_EMBEDDED, example_section
from protolab.experiment.run import replay
from protolab.experiment.run.runner import RunOptions, run

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    res = run("demo", RunOptions(workers=1, out=str(tmp_path_factory.mktemp("runs")), games=400, show_progress=False))
    assert res.status == "complete"
    return res.run_dir


@pytest.fixture(scope="module")
def games(demo_run) -> pd.DataFrame:
    return pd.concat([pq.read_table(f).to_pandas() for f in sorted((demo_run / "games").glob("*.parquet"))])


browser = pytest.fixture(scope="module")(launched)


def lowest_seeds(df: pd.DataFrame, k: int, by: list[str] | None = None, ascending: bool | list[bool] = True) -> list:
    """The rule, in pandas: one game per seed (its lowest game_index), then the first k by `by`."""
    one = df.sort_values("game_index").drop_duplicates("seed")
    return one.sort_values(by or ["seed", "game_index"], ascending=ascending)["game_index"].head(k).tolist()


@pytest.mark.slow
def test_examples_are_the_games_the_rule_names(demo_run, games):
    """A protocol flagged weak links games it lost, any other games it won; each ended the way most
    of its qualifying games ended and no free game of that way is nearer their median length; no
    game (or its seat-swapped pair) is shown for two protocols or cards."""
    runs = open_runs(demo_run)
    report = build_report(runs)
    protos = report.tables["protocols"]
    flags = report.tables["balance_flags"].copy()
    weakest = protos.sort_values("win_rate")["protocol"].iloc[0]  # flagged weak here, to see its lost games
    row = (flags["kind"] == "protocol") & (flags["name"] == weakest)
    flags.loc[row, ["flagged", "direction"]] = [True, "below"]
    ex = board_links.examples(runs, flags, list(protos["protocol"]))
    cols = [[f"seat{s}_protocol_{p}" for p in ("left", "middle", "right")] for s in (0, 1)]
    compiled = [sum(games[f"seat{s}_compile{k}_turn"].notna().astype(int) for k in (1, 2, 3)) for s in (0, 1)]
    games = games.reset_index(drop=True)
    compiled = [c.reset_index(drop=True) for c in compiled]
    games = games.assign(way=compiled[1].where(games["winner"] == 0, compiled[0]))
    shown = ex[ex["group"] != "run"]
    by_seed = games.set_index("game_index")["seed"]
    owners = shown.assign(seed=shown["game_index"].map(by_seed)).groupby("seed")["name"].nunique()
    assert (owners == 1).all()  # never one game (or pair) for two names
    free = games[~games["seed"].isin(set(shown["game_index"].map(by_seed)))]
    checked = 0
    for name, g in ex[ex["group"] == "protocol"].groupby("name"):
        lost = name == weakest
        wins_for = [1, 0] if lost else [0, 1]
        holds = [games[c].eq(name).any(axis=1) for c in cols]
        ok = ((games["winner"] == wins_for[0]) & holds[0]) | ((games["winner"] == wins_for[1]) & holds[1])
        qualifying = games[ok]
        picked = qualifying[qualifying["game_index"].isin(g["game_index"])]
        assert len(picked) == len(g) == min(board_links.PER_ROW, len(picked)) > 0, name
        counts = qualifying["way"].value_counts()
        way = min(w for w, n in counts.items() if n == counts.max())
        assert (picked["way"] == way).all(), name
        median = qualifying[qualifying["way"] == way]["turns"].median()
        rest = free[ok.reindex(free.index, fill_value=False) & (free["way"] == way)]
        rest = rest.sort_values("game_index").drop_duplicates("seed")  # a pair offers its first game
        assert rest.empty or (picked["turns"] - median).abs().max() <= (rest["turns"] - median).abs().min(), name
        assert ("lost by" if lost else "won by") in g["why"].iloc[0] and "most common way" in g["why"].iloc[0]
        checked += 1
    assert checked == len(protos) and checked > 20
    flagged = ex[(ex["group"] == "flag") & (ex["name"] == weakest)]["game_index"].tolist()
    assert flagged == ex[(ex["group"] == "protocol") & (ex["name"] == weakest)]["game_index"].tolist()
    longest = ex[ex["name"] == "longest games"]["game_index"].tolist()
    assert longest == lowest_seeds(games, 2, ["turns", "seed", "game_index"], [False, True, True])
    draws = ex[ex["name"] == "turn-cap draws"]["game_index"].tolist()
    assert draws == lowest_seeds(games[games["end_reason"] == "turn_cap"], 2)


@pytest.mark.slow
def test_offline_dashboard_carries_board_pages_that_open(demo_run, browser, tmp_path, capsys):
    out = tmp_path / "dash.html"
    assert main(["dashboard", str(demo_run), "--out", str(out)]) == 0
    capsys.readouterr()
    browser.open(out.resolve().as_uri())
    links = browser.evaluate(
        "Array.from(document.querySelectorAll('#example-games a.open-board')).map(a => +a.dataset.game)"
    )
    carried = browser.evaluate("document.querySelectorAll('script.board-game').length")
    named = browser.evaluate("document.querySelectorAll('#example-games code').length")
    assert carried == MAX_EMBEDDED and len(set(links)) == MAX_EMBEDDED and named > 0
    n = links[0]
    browser.evaluate("window.open = u => { window.__opened = u; }")
    browser.evaluate(f"document.querySelector('a.open-board[data-game=\"{n}\"]').click()")
    browser.evaluate(
        "fetch(window.__opened).then(r => r.text()).then(t => { document.open(); document.write(t); "
        "document.close(); })"
    )
    browser.evaluate("new Promise(r => setTimeout(r, 300))")
    assert browser.evaluate("board.steps") > 0
    played = replay.play(replay.locate(str(demo_run), n))
    at = replay.turn_states(played)
    browser.evaluate("board.show(0)")
    shown = browser.evaluate(
        "Array.from(document.querySelectorAll('.side[data-seat=\"A\"] .line .value')).map(v => +v.dataset.value)"
    )
    first = at[1] if 1 in at else at[replay.FINAL_TURN]
    assert shown == first["A"]["values"]
    assert browser.errors() == []
    assert [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:", "blob:"))] == []


def test_examples_flag_bounds_the_pages_carried(demo_run, tmp_path, capsys):
    out = tmp_path / "dash.html"
    assert main(["dashboard", str(demo_run), "--out", str(out), "--examples", "2"]) == 0
    page = out.read_text()
    assert page.count('class="board-game"') == 2 and page.count('class="open-board"') >= 2
    assert main(["dashboard", str(demo_run), "--out", str(out), "--examples", "0"]) == 0
    page = out.read_text()
    assert 'id="example-games"' in page and "board-game" not in page and 'id="board-template"' not in page
    assert main(["dashboard", str(demo_run), "--out", str(out), "--examples", "-1"]) == 2
    assert "--examples: expected 0" in capsys.readouterr().err


def _get(port: int, path: str, host: str) -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path, headers={"Host": host})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def test_served_dashboard_renders_any_game_on_demand(demo_run, games):
    runs = open_runs(demo_run)
    report = build_report(runs)
    section, game_page = example_section(str(demo_run), runs, report, serve=True)
    assert 'href="/game/' in section and "board-game" not in section
    server = make_server(render(report, section), port=0, game_page=game_page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        n = int(games["game_index"].max())  # any game, not only the examples
        status, body = _get(port, f"/game/{n}", f"127.0.0.1:{port}")
        assert status == 200
        data = json.loads(body.decode().split('type="application/json">')[1].split("</script>")[0])
        played = replay.play(replay.locate(str(demo_run), n))
        assert data["result"]["turns"] == played.record()["turns"] and data["meta"]["game_index"] == n
        assert _get(port, "/", f"localhost:{port}")[0] == 200
        status, body = _get(port, f"/game/{n + 1}", f"localhost:{port}")
        assert status == 404 and b"out of range" in body and len(body.splitlines()) == 1
        assert _get(port, f"/game/{n}", "evil.example:80")[0] == 421
        assert _get(port, "/", f"attacker.test:{port}")[0] == 421
        assert _get(port, "/game/x", f"127.0.0.1:{port}")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
