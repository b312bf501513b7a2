"""The playtest's HTTP server on 127.0.0.1: the live page and the JSON API it uses
(docs/play-api.md). The page holds no rules: it draws GET /api/state and sends the option the
person clicks to POST /api/decide. Requests that do not name this server as 127.0.0.1 or
localhost are refused (the dashboard's Host check: no DNS rebinding), and a POST must be JSON
(a page of another site cannot send that without asking first). Malformed requests get a 4xx
(analysis/pages/local_http.py); a decision the disk cannot keep gets 507 and is not taken."""

from __future__ import annotations

import json
import threading
from importlib import resources
from typing import Any

from analysis.pages import board_page
from analysis.pages.local_http import BadRequest, LocalHandler, LocalServer, ascii_number
from protolab.experiment.run.replay import ReplayError, ReplayMismatch, board_data
from protolab.play.game import LiveGame, NotSaved, Refused
from protolab.play.playtest import Playtest

MAX_BODY = 4096  # a decision is a few bytes


class Table:
    """The playtest and the game it is at, shared by every request (two tabs see one game)."""

    def __init__(self, playtest: Playtest, names: dict[str, str]):
        self.playtest = playtest
        self.names = names
        self.lock = threading.RLock()
        self.live: LiveGame | None = None
        self.start(self.playtest.next_game())

    def start(self, game: int | None) -> None:
        if game is not None:
            self.live = LiveGame(self.playtest, self.playtest.record(game, self.names))

    def state(self) -> dict[str, Any]:
        with self.lock:
            if self.live is None:
                return {"over": True, "options": [], "done": True, "games": self.playtest.games}
            return self.live.state()

    def decide(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if self.live is None:
                raise Refused("every game of this playtest is played")
            self.live.decide(body.get("option"), body.get("decision"))
            return self.live.state()

    def next(self) -> dict[str, Any]:
        with self.lock:
            if self.live is not None and not self.live.over:
                raise Refused("the game is not over yet")
            nxt = self.playtest.next_game()
            if nxt is None:
                raise Refused(f"all {self.playtest.games} games of this playtest are played")
            self.start(nxt)
            return self.state()

    def replay_page(self, game: int) -> tuple[int, str]:
        """The board page of a finished game (replayed from the run folder and checked)."""
        with self.lock:
            if game not in self.playtest.done():
                return 409, f"game {game} is not finished"
        try:
            return 200, board_page.render(board_data(str(self.playtest.run_dir), game, 0))
        except (ReplayError, ReplayMismatch) as e:
            return 409, str(e)


def page() -> bytes:
    return resources.files("protolab.play").joinpath("page.html").read_bytes()


class Handler(LocalHandler):
    table: Table
    served = ("GET", "HEAD", "POST")

    def _json(self, data: dict[str, Any]) -> None:
        self.send(200, json.dumps(data, ensure_ascii=False).encode(), "application/json")

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if not self.host_is_local():
            self.line(421, "expected Host 127.0.0.1 or localhost")
            return
        path = self.path.split("?", 1)[0]
        game = ascii_number(path.removeprefix("/replay/")) if path.startswith("/replay/") else None
        if path in ("/", "/index.html"):
            self.send(200, page(), "text/html")
        elif path == "/api/state":
            self._json(self.table.state())
        elif path == "/favicon.ico":  # the board page asks for one: nothing, not an error
            self.send(204, b"", "image/x-icon")
        elif game is not None:
            status, text = self.table.replay_page(game)
            self.send(status, text.encode(), "text/html" if status == 200 else "text/plain")
        else:
            self.line(404, "not found: expected /, /api/state or /replay/N")

    do_HEAD = do_GET  # noqa: N815

    def do_POST(self) -> None:  # noqa: N802
        if not self.host_is_local():
            self.refuse(BadRequest(421, "expected Host 127.0.0.1 or localhost"))
            return
        if self.path not in ("/api/decide", "/api/next"):
            self.refuse(BadRequest(404, "not found: expected POST /api/decide or /api/next"))
            return
        if (self.headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/json":
            self.refuse(BadRequest(415, "expected Content-Type: application/json"))
            return
        try:
            body = self.read_json_object(MAX_BODY, '{"option": 0}')
        except BadRequest as e:
            self.refuse(e)
            return
        try:
            self._json(self.table.decide(body) if self.path == "/api/decide" else self.table.next())
        except Refused as e:
            self.line(409, str(e))
        except NotSaved as e:
            self.line(507, str(e))


def make_server(table: Table, port: int) -> LocalServer:
    """The server for `table`, bound to 127.0.0.1 only (port 0: any free port)."""
    handler = type("PlayHandler", (Handler,), {"table": table})
    return LocalServer(("127.0.0.1", port), handler)
