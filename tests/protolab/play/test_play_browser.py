"""`protolab play` in a real headless Chromium: a person (the test, clicking) plays one whole game
against greedy with a variant file, the page showing the variant's text; the run folder it leaves
is read by `protolab report` and replayed exactly, and the page of the finished game is the board
page of its replay."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fixtures_analysis.chromium import launched

from protolab.cli import main
from protolab.play.playtest import create, spec_of
from protolab.play.server import Table, make_server

ROOT = Path(__file__).resolve().parents[3]
VARIANT = ROOT / "datasets/experiments/variants/fire3_discard_2.toml"
browser = pytest.fixture(scope="module")(launched)

LOADED = (  # the page has drawn its first state
    "new Promise(r => { const t = setInterval(() => { if (document.body.dataset.decision) "
    "{ clearInterval(t); r(); } }, 10); })"
)
CLICK = """(async () => {
  const before = document.body.dataset.decision;
  let buttons = [];
  for (let k = 0; k < 200 && !buttons.length; k++) {
    buttons = document.querySelectorAll('#options button[data-option]');
    if (!buttons.length) await new Promise(r => setTimeout(r, 5));
  }
  if (!buttons.length) return 'no options';
  buttons[%d %% buttons.length].click();
  for (let k = 0; k < 1000; k++) {
    await new Promise(r => setTimeout(r, 5));
    if (document.body.dataset.decision !== before) return document.body.dataset.over;
  }
  return 'timeout';
})()"""


def test_a_person_plays_a_whole_game_by_clicking(browser, tmp_path, capsys):
    out = tmp_path / "pt"
    cmd = [sys.executable, "-m", "protolab", "play", "--opponent", "greedy", "--seed", "4", "--cards", str(VARIANT)]
    cmd += ["--protocols", "Fire,Water,Death", "Hate,Light,Life", "--out", str(out), "--port", "0", "--name", "Ana"]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        url = None
        for line in server.stdout:
            if m := re.search(r"play on (http://127\.0\.0\.1:\d+/)", line):
                url = m.group(1)
                break
        assert url, server.stderr.read()
        browser.open(url)
        browser.evaluate(LOADED)
        # the card text shown is the variant's
        browser.evaluate("document.querySelector('#my-hand .card').dispatchEvent(new Event('mouseenter'))")
        shown = browser.evaluate("document.getElementById('card-detail').textContent")
        state = json.loads(browser.evaluate("fetch('/api/state').then(r => r.text())"))
        first = state["view"]["hand"][0]
        assert shown.startswith(first) and all(
            state["cards"][first][box] in shown for box in ("top", "middle", "bottom")
        )
        assert "discard 2 cards" in state["cards"]["Fire 3"]["bottom"] and state["cards"]["Fire 3"]["variant"]
        t0 = time.perf_counter()
        rng, clicks, over = random.Random(3), 0, "false"
        while over != "true":
            over = browser.evaluate(CLICK % rng.randrange(1000))
            assert over in ("true", "false"), over
            clicks += 1
        print(f"{clicks} clicks in {time.perf_counter() - t0:.1f} s")
        assert browser.evaluate("document.getElementById('prompt').textContent").startswith("Game over")
        assert browser.errors() == []
        # the whole game, open as a replay: the board page of the run folder's game
        link = browser.evaluate("document.getElementById('replay-link').href")
        assert link == url + "replay/0"
        browser.open(link)
        assert browser.evaluate("document.querySelectorAll('#board .side').length") == 2
        assert browser.evaluate("document.getElementById('view').value") == "0"  # opens in the person's view
        # the coach's view: the person's seat weighed by the learned player, the graph from its model
        page = json.loads(browser.evaluate("document.getElementById('game-data').textContent"))
        assert page["win_source"] == "model" and page["meta"]["coach_0"] == "learned"
        assert any(w.get("coach") == "learned" for st in page["steps"] for w in st.get("why") or [])
        assert browser.errors() == []
        assert not [u for u in browser.requests() if not u.startswith(url) and not u.startswith("data:")]
    finally:
        server.send_signal(signal.SIGINT)
        rest, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "1 of 1 game(s) finished" in rest
    played = json.loads((out / "played/game-00000.json").read_text())
    assert played["finished"] and played["names"] == {"A": "Ana"} and len(played["answers"]) >= clicks
    assert main(["report", str(out)]) == 0
    assert "Protocol win rate" in capsys.readouterr().out
    assert main(["replay", str(out), "--game", "0"]) == 0
    assert "Checked: the replay matches the stored row" in capsys.readouterr().out


def test_hot_seat_blanks_the_screen_between_the_two_people(browser, tmp_path):
    table = Table(
        create(
            str(tmp_path / "pt"), spec_of(None, 2, 1, [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]], [], None)
        ),
        {},
    )
    server = make_server(table, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.open(f"http://127.0.0.1:{server.server_address[1]}/")
        browser.evaluate(LOADED)
        seen = []
        for _ in range(40):
            browser.evaluate("new Promise(r => setTimeout(r, 50))")
            if browser.evaluate("!!document.getElementById('show-view')"):
                seat = table.state()["seat"]
                # covered: no hand, no option of the person to come
                assert (
                    browser.evaluate("document.querySelectorAll('#my-hand, #options button[data-option]').length") == 0
                )
                browser.evaluate("document.getElementById('show-view').click()")
                assert browser.evaluate("document.getElementById('prompt').textContent").startswith(seat)
                seen.append(seat)
                if len(set(seen)) == 2:
                    break
            if not browser.evaluate("!!document.getElementById('show-view')"):
                assert browser.evaluate(CLICK % 0) == "false"
        assert set(seen) == {"A", "B"} and browser.errors() == []
    finally:
        server.shutdown()
        server.server_close()
