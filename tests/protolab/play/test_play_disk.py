"""`protolab play` on a full disk, with no mock: the server runs as its own process and the kernel
refuses its writes (RLIMIT_FSIZE set on it, so every write to a file answers EFBIG, as a full
disk answers ENOSPC). A decision the run folder cannot keep is refused with 507 and is not taken;
the page says the game is not being saved; once writes succeed again play goes on; Ctrl-C's
"kept" count is what the played/ file holds, and a restart continues from exactly there: no
decision it accepted is lost. A playtest started on a full disk leaves no half-made folder."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fixtures_analysis.chromium import launched

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs prlimit (Linux)")

PLAY = [sys.executable, "-m", "protolab", "play", "--port", "0"]
NEW = ["--opponent", "greedy", "--seed", "4", "--protocols", "Fire,Water,Death", "Hate,Light,Life"]
browser = pytest.fixture(scope="module")(launched)


def call(url: str, body: dict | None = None) -> tuple[int, dict | str]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Served:
    """`protolab play --out OUT` as its own process, its address read from what it prints."""

    def __init__(self, out: Path, new: bool = True, **popen):
        argv = [*PLAY, *(NEW if new else []), "--out", str(out)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=out.parent, **popen)  # fmt: skip
        self.url = ""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "play on " in line:
                self.url = line.split("play on ", 1)[1].split()[0]
                break
        assert self.url, self.proc.stderr.read() if self.proc.stderr else ""

    def disk(self, limit: int) -> None:
        """Every later write of a file past `limit` bytes fails in the server's process (EFBIG)."""
        hard = resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, (limit, hard))

    def stop(self) -> tuple[str, str]:
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return out, err


def answers(out: Path) -> list[int]:
    return json.loads((out / "played/game-00000.json").read_text())["answers"]


def test_a_full_disk_mid_game_loses_no_decision_it_accepted(tmp_path, browser):
    out = tmp_path / "pt"
    server = Served(out)
    try:
        status, s = call(server.url + "api/state")
        for _ in range(3):
            status, s = call(server.url + "api/decide", {"option": 0, "decision": s["decision"]})
            assert status == 200
        assert answers(out) == [0, 0, 0] and s["not_saved"] is None
        server.disk(16)  # the disk is full: no file can be written whole
        for _ in range(3):
            status, text = call(server.url + "api/decide", {"option": 0, "decision": 3})
            assert status == 507 and text.count("\n") == 1, text
            assert text.startswith("not saved, so not taken:") and "File too large" in text
            assert "the game stays at decision 3" in text
        status, s = call(server.url + "api/state")
        assert s["decision"] == 3 and s["not_saved"].startswith("not saved, so not taken") and answers(out) == [0] * 3
        browser.open(server.url)  # the page says so
        browser.evaluate("new Promise(r => { const t = setInterval(() => { if (document.body.dataset.decision)"
                         " { clearInterval(t); r(); } }, 10); })")  # fmt: skip
        banner = browser.evaluate("document.getElementById('unsaved').textContent")
        assert banner.startswith("This game is not being saved: not saved, so not taken")
        assert browser.evaluate("getComputedStyle(document.getElementById('unsaved')).display") == "block"
        server.disk(resource.RLIM_INFINITY)  # space freed: the same decision is taken and kept
        status, s = call(server.url + "api/decide", {"option": 1, "decision": 3})
        assert status == 200 and s["decision"] == 4 and s["not_saved"] is None and answers(out) == [0, 0, 0, 1]
        server.disk(16)
        assert call(server.url + "api/decide", {"option": 0, "decision": 4})[0] == 507
    finally:
        printed, err = server.stop()
    assert "Traceback" not in err, err
    assert "game 0 unfinished: its 4 decisions are kept" in printed, printed
    assert len(answers(out)) == 4
    again = Served(out, new=False)  # a restart continues from what the file holds
    try:
        assert call(again.url + "api/state")[1]["decision"] == 4
    finally:
        again.stop()


def test_a_playtest_started_on_a_full_disk_leaves_no_folder(tmp_path):
    out = tmp_path / "pt"

    def full_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    done = subprocess.run([*PLAY, *NEW, "--out", str(out)], capture_output=True, text=True, cwd=tmp_path,
                          preexec_fn=full_disk, timeout=120)  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot write the playtest" in done.stderr and "File too large" in done.stderr
    assert not out.exists()
    server = Served(out)  # the disk freed: the same --out starts a playtest
    server.stop()
