"""Makes docs/img/board.png: the board page of one game, screenshotted in headless Chromium (the
tests' DevTools driver, tests/fixtures_analysis/chromium.py). Run from the repository root:

    python docs/img/board_png.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures_analysis.chromium import Chromium, find_chromium  # noqa: E402

COMMAND = [
    "protolab",
    "replay",
    "--seed",
    "1",
    "--strategies",
    "greedy",
    "greedy",
    "--protocols",
    "Corruption,Mirror,Fire",
    "Water,Death,Light",
    "--rollouts",
    "32",
]
STEP = 9  # a turn with stacks on both sides and a compile behind it


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("board_png: Chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as d:
        page = Path(d) / "board.html"
        subprocess.run([*COMMAND, "--html", str(page)], check=True)
        b = Chromium(binary, width=1280, height=760)
        try:
            b.open(page.as_uri())
            b.evaluate(f"board.show({STEP})")
            out = b.screenshot(ROOT / "docs" / "img" / "board.png")
        finally:
            b.close()
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
