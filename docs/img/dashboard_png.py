"""Makes docs/img/dashboard-VIEW.png: the first screen of each view of the dashboard (verdict,
protocols, cards with a card page open, matchups, games) of a small real run, screenshotted in
headless Chromium (the tests' DevTools driver, tests/fixtures_analysis/chromium.py). Run from the
repository root (about two minutes on two cores; a run folder given is drawn instead of a new run):

    python docs/img/dashboard_png.py [RUN_DIR]
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures_analysis.chromium import Chromium, find_chromium  # noqa: E402

SPEC = """name = "dashboard-views"
seed = 7
games = 400
shard_games = 400
[pool]
sets = ["Main 1"]
[seats]
strategies = ["greedy", "greedy"]
swap = true
"""
SHOTS = {  # file name -> the address's fragment
    "verdict": "verdict",
    "protocols": "protocols",
    "cards": "card-Fire-1",
    "matchups": "matchups",
    "games": "games",
}
WIDTH, HEIGHT = 1120, 700  # one screen, so that each image stays under 200 kB


def shot(b: Chromium, url: str, out: Path) -> Path:
    """The window's first screen at `url` (not the whole page: a view's first screen is its point)."""
    b.open(url)  # each address has a query of its own: a load, not a move within one document
    b.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)
    b.evaluate("new Promise(r => setTimeout(r, 800))")
    data = b.send("Page.captureScreenshot", format="png")["data"]
    out.write_bytes(base64.b64decode(data))
    return out


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("dashboard_png: Chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as d:
        if len(sys.argv) > 1:
            run = Path(sys.argv[1]).resolve()
        else:
            (Path(d) / "spec.toml").write_text(SPEC)
            subprocess.run(["protolab", "run", "spec.toml", "--out", "runs", "--workers", "1"], check=True, cwd=d)
            run = next((Path(d) / "runs").iterdir())
        page = Path(d) / "dashboard.html"
        subprocess.run(  # from the run's folder: the page names the run as `protolab replay NAME` would
            ["protolab", "dashboard", run.name, "--out", str(page), "--examples", "4"], check=True, cwd=run.parent
        )
        b = Chromium(binary, width=WIDTH, height=HEIGHT)
        try:
            for name, fragment in SHOTS.items():
                out = shot(b, f"{page.as_uri()}?{name}#{fragment}", ROOT / "docs" / "img" / f"dashboard-{name}.png")
                print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size / 1e3:.0f} kB)")
        finally:
            b.close()


if __name__ == "__main__":
    main()
