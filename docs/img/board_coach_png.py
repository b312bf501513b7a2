"""Makes docs/img/board_coach.png: the board page of a game whose seat A was played from outside
(recorded answers, here seeded random ones standing in for a person's) against the learned player,
coached by the learned player (strategies/coach.py), screenshotted in headless Chromium (the
tests' DevTools driver). Run from the repository root:

    python docs/img/board_coach_png.py
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

from analysis.pages import board, board_page
from sim.pool import load_pool
from sim.state import State
from strategies.spec import make_seat

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT / "tests"))  # after the packages: tests/analysis must not shadow analysis

from fixtures_analysis.chromium import Chromium, find_chromium  # noqa: E402

SEED = 21
STEP = 27  # turn 28: the recorded discard inside an effect is not the one the coach planned


def recorded_game() -> State:
    """Seat A answered by seeded random choices (recorded in game.answers), seat B the learned player."""
    pool = load_pool()
    game = State(pool, seed=SEED)
    game.strategies = (game.strategies[0], make_seat("learned", pool))
    game._status = game.core.run(game.answers, game.strategies)  # State has no setter for seats
    rng = random.Random(SEED)
    while (d := game.pending()) is not None:
        game.answer(rng.randrange(len(d.options)))
    return game


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("board_coach_png: Chromium is not installed (apt-get install -y chromium)")
    meta = {"strategy_0": "human", "strategy_1": "learned", "line": f"seed {SEED}; A = human (recorded), B = learned"}
    data = board.game_data(recorded_game(), f"seed {SEED}: seat A coached", meta=meta)
    with tempfile.TemporaryDirectory() as d:
        page = Path(d) / "coach.html"
        board_page.write(data, page)
        b = Chromium(binary, width=1280, height=900)
        try:
            b.open(page.as_uri())
            b.evaluate(f"board.show({STEP})")
            out = b.screenshot(ROOT / "docs" / "img" / "board_coach.png")
        finally:
            b.close()
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
