"""Makes docs/img/play.png: a live game of `protolab play` (a person against greedy, with the Fire 3
variant of datasets/experiments/variants/), a few decisions in, screenshotted in headless Chromium
(the tests' DevTools driver, tests/fixtures_analysis/chromium.py). Run from the repository root:

    python docs/img/play_png.py
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures_analysis.chromium import Chromium, find_chromium  # noqa: E402

VARIANT = ROOT / "datasets/experiments/variants/fire3_discard_2.toml"
COMMAND = ["protolab", "play", "--opponent", "greedy", "--seed", "4", "--cards", str(VARIANT), "--name", "Ana"]
COMMAND += ["--protocols", "Fire,Water,Death", "Hate,Light,Life", "--port", "0"]
DECISIONS = 10  # a few turns in: cards on both sides, some covered


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("play_png: Chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as d:
        server = subprocess.Popen([*COMMAND, "--out", f"{d}/pt"], stdout=subprocess.PIPE, text=True, cwd=d)
        assert server.stdout is not None
        url = next(m.group(1) for line in server.stdout if (m := re.search(r"(http://127\.0\.0\.1:\d+/)", line)))
        try:
            rng = random.Random(2)
            with urllib.request.urlopen(url + "api/state") as r:
                s = json.loads(r.read())
            for k in range(100):  # DECISIONS in, then on to the person's next action: options grouped by card
                if k >= DECISIONS and s["kind"] == "action":
                    break
                s = post(url + "api/decide", {"option": rng.randrange(len(s["options"]))})
            b = Chromium(binary, width=1280, height=760)
            try:
                b.open(url)
                b.evaluate("new Promise(r => setTimeout(r, 500))")
                b.evaluate(
                    "(Array.from(document.querySelectorAll('.card')).find(c => c.textContent.startsWith('Fire 3'))"
                    " || document.querySelector('#my-hand .card')).dispatchEvent(new Event('mouseenter'))"
                )
                out = b.screenshot(ROOT / "docs" / "img" / "play.png")
            finally:
                b.close()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
