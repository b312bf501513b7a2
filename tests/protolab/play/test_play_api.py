"""`protolab play` through its JSON API (docs/play-api.md): a script plays whole games against the
learned player with random legal options, every game ends and replays exactly from its run folder,
an illegal or stale option is refused with 409 and changes nothing, and a game stopped midway is
kept as unfinished: out of the games table, replayable, continued when the folder is opened again.
(The 50-game version is benchmarks/play_api.py.)"""

from __future__ import annotations

import json
import random
import re
import threading
import urllib.error
import urllib.request

import pytest

from analysis.runs.played import read_played
from protolab.cli import main
from protolab.experiment.run.replay import check, locate, open_run, play, replay_run
from protolab.play.playtest import create, reopen, spec_of
from protolab.play.server import Table, make_server

TRIOS = [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]


class Client:
    def __init__(self, table: Table):
        self.server = make_server(table, 0)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def get(self, path: str = "/api/state", host: str | None = None) -> tuple[int, dict | str]:
        req = urllib.request.Request(self.base + path, headers={"Host": host} if host else {})
        return self._send(req)

    def post(self, path: str, body: dict, kind: str = "application/json") -> tuple[int, dict | str]:
        req = urllib.request.Request(self.base + path, json.dumps(body).encode(), {"Content-Type": kind})
        return self._send(req)

    def _send(self, req: urllib.request.Request) -> tuple[int, dict | str]:
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                body = r.read()
                return r.status, json.loads(body) if r.headers["Content-Type"].startswith("application/json") else body
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_script_plays_games_against_learned_and_each_replays_exactly(tmp_path):
    games = 5
    out = tmp_path / "pt"
    client = Client(Table(create(str(out), spec_of("learned", 11, games, None, [], None)), {"A": "script"}))
    rng = random.Random(7)
    try:
        for g in range(games):
            status, s = client.get()
            assert status == 200 and s["game"] == g and not s["over"]
            while not s["over"]:
                assert s["options"] and all(o["label"] for o in s["options"])
                status, s = client.post("/api/decide", {"option": rng.randrange(len(s["options"]))})
                assert status == 200, s
            assert s["result"]["winner"] in ("A", "B", None)
            if g < games - 1:
                status, s = client.post("/api/next", {})
                assert status == 200 and s["game"] == g + 1
        status, text = client.post("/api/next", {})
        assert status == 409 and text.count("\n") == 1
    finally:
        client.close()
    opened = open_run(out)  # once: reading a run's spec and pool takes a second
    for g in range(games):
        located = locate(str(out), g, opened)
        assert check(located, play(located)) > 30  # the replay gives the stored row, column by column
        rec = read_played(out, g)
        assert rec is not None and rec.finished and rec.names == {"A": "script"} and rec.model_hash
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["complete"] and manifest["spec"]["seats"]["strategies"] == ["human", "learned"]


def test_illegal_stale_and_foreign_requests_change_nothing(tmp_path):
    client = Client(Table(create(str(tmp_path / "pt"), spec_of("greedy", 3, 1, TRIOS, [], None)), {}))
    try:
        _, before = client.get()
        n = len(before["options"])
        for body in ({"option": n}, {"option": -1}, {"option": "0"}, {"option": True}, {}):
            status, text = client.post("/api/decide", body)
            assert status == 409 and text.count("\n") == 1, (body, text)
            assert client.get()[1] == before
        status, after = client.post("/api/decide", {"option": 0, "decision": before["decision"]})
        assert status == 200 and after["decision"] == before["decision"] + 1
        status, text = client.post("/api/decide", {"option": 0, "decision": before["decision"]})  # a second tab
        assert status == 409 and text.startswith("stale")
        assert client.get()[1] == after
        assert client.get(host="evil.example:80")[0] == 421  # DNS rebinding
        assert client.post("/api/decide", {"option": 0}, kind="text/plain")[0] == 415  # a cross-site form
        assert client.get()[1] == after
    finally:
        client.close()


def test_a_stopped_game_is_unfinished_replayable_and_continues(tmp_path, capsys):
    out = tmp_path / "pt"
    table = Table(create(str(out), spec_of("greedy", 5, 2, TRIOS, [], None)), {})
    rng = random.Random(1)
    while not (s := table.state())["over"]:
        table.decide({"option": rng.randrange(len(s["options"]))})
    # stopped between the ended game's files and run.json: opened again, the game is written then
    manifest = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**manifest, "shards": []}))
    table = Table(reopen(str(out)), {})
    assert table.state()["over"] and table.state()["game"] == 0
    assert json.loads((out / "run.json").read_text())["shards"] == manifest["shards"]
    table.next()
    for _ in range(6):
        table.decide({"option": 0})
    seen = table.state()
    # the server is gone (Ctrl-C, a closed terminal): the folder alone holds the game
    assert main(["replay", str(out), "--game", "1"]) == 0
    printed = capsys.readouterr().out
    assert "Unfinished: the game stopped after 6 recorded decisions" in printed
    assert main(["report", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tables"]["overview"][0]["games"] == 1  # the unfinished game is out of win rates
    assert report["meta"]["played"].startswith("A playtest: these 1 games were played by a person")
    assert not any(r["flagged"] for r in report["tables"]["balance_flags"])
    again = Table(reopen(str(out)), {})
    assert again.state() == seen
    with pytest.raises(ValueError, match="not over"):
        again.next()


def test_the_state_never_names_a_card_its_seat_cannot_see(tmp_path):
    """Every state of a game holds no name of a card in the opponent's hand or deck, or face-down on
    the opponent's side (names are unique in a game: each deck has its own protocols)."""
    out = tmp_path / "pt"
    table = Table(create(str(out), spec_of("greedy", 8, 1, TRIOS, [], None)), {})
    rng, checked = random.Random(4), 0
    while not (s := table.state())["over"]:
        full = table.live.game.state()
        opp = full["B"]
        hidden = set(opp["hand"]) | set(opp["deck"])
        hidden |= {c.removeprefix("down:") for st in opp["stacks"] for c in st if c.startswith("down:")}
        shown = json.dumps({k: v for k, v in s.items() if k != "cards"})  # `cards`: the public card list
        assert not [n for n in hidden if re.search(rf"\b{re.escape(n)}(?!\d)", shown)], s["decision"]
        checked += len(hidden)
        table.decide({"option": rng.randrange(len(s["options"]))})
    assert checked > 100
    assert main(["replay", str(out), "--game", "0", "--html", str(tmp_path / "g.html"), "--rollouts", "0"]) == 0


def test_hot_seat_each_person_decides_in_their_own_view(tmp_path):
    out = tmp_path / "pt"
    table = Table(create(str(out), spec_of(None, 2, 1, TRIOS, [], None)), {})
    rng, seats = random.Random(5), set()
    while not (s := table.state())["over"]:
        assert s["view"]["player"] == s["seat"]
        seats.add(s["seat"])
        table.decide({"option": rng.randrange(len(s["options"]))})
    assert seats == {"A", "B"}
    assert replay_run(str(out), 0)[-1].startswith("Checked: the replay matches the stored row")
    assert json.loads((out / "run.json").read_text())["spec"]["seats"]["strategies"] == ["human", "human"]


def test_no_response_names_a_card_the_person_cannot_see(tmp_path):
    """Every answer the server gives in the person's view (the page, each state, each decision's
    answer, a refused option, the replay of the unfinished game) holds no name of a card in the
    opponent's hand or deck or face-down on their side; `cards`, the public list of the six
    protocols' cards, is left out of the search."""
    table = Table(create(str(tmp_path / "pt"), spec_of("greedy", 9, 1, TRIOS, [], None)), {})
    client, rng, checked, hidden_options = Client(table), random.Random(9), 0, 0

    def bodies(s: dict) -> list[str]:
        out = [client.get("/")[1].decode(), client.get("/replay/0")[1]]
        status, text = client.post("/api/decide", {"option": len(s["options"])})
        assert status == 409
        return [*out, text, json.dumps({k: v for k, v in s.items() if k != "cards"})]

    try:
        status, s = client.get()
        while not s["over"]:
            opp = table.live.game.state()["B"]
            hidden = set(opp["hand"]) | set(opp["deck"])
            hidden |= {c.removeprefix("down:") for st in opp["stacks"] for c in st if c.startswith("down:")}
            for text in bodies(s):
                assert not [n for n in hidden if re.search(rf"\b{re.escape(n)}(?!\d)", text)], (s["decision"], text)
            checked += len(hidden)
            assert s["seed"] is None  # with the engine, the seed would tell every deck's order
            hidden_options += sum(o["hidden_card"] for o in s["options"])
            pick = {"option": rng.randrange(len(s["options"])), "decision": s["decision"]}
            status, s = client.post("/api/decide", pick)
            assert status == 200
            answered = json.dumps({k: v for k, v in s.items() if k != "cards"})
            if not s["over"]:
                opp = table.live.game.state()["B"]
                now = set(opp["hand"]) | set(opp["deck"])
                assert not [n for n in now if re.search(rf"\b{re.escape(n)}(?!\d)", answered)], s["decision"]
        assert s["seed"] == table.live.rec.seed  # the game over, its seed is told
    finally:
        client.close()
    assert checked > 100 and hidden_options  # options that target B's face-down cards were offered
