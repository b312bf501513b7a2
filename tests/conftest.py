"""Shared fixtures: the official pool is compiled once per test session."""

import os
import signal

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# Tables are as wide as piped output gets (protolab/commands/common.py) whatever terminal started the
# suite: a COLUMNS inherited from it (pytest-xdist's workers are given one) would narrow them.
os.environ.pop("COLUMNS", None)

# A suite started in the background (`pytest &`, nohup, a CI runner) inherits SIGINT ignored, and so
# would every `protolab` it starts: the tests that press Ctrl-C on one would wait for a stop that an
# ignored signal never brings. Children inherit an ignored signal but not a handler: one here gives
# them the default, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def pool():
    from sim.pool import load_pool

    return load_pool()


# A real two-arm A/B run on a local Ray (greedy vs random, seats swapped, 30 sampled matchups x 100
# games, a turn cap low enough for draws): shared by the cards and compiles table tests.
AB_SPEC = """
name = "ab"
seed = 31
games = 100
shard_games = 1000
turn_cap = 36
[seats]
strategies = ["greedy", "random"]
swap = true
[draft]
mode = "sampled"
samples = 30
[[arms]]
name = "official"
[[arms]]
name = "fire1-worth-3"
cards = ["fire1_worth_3.toml"]
"""
AB_SHARDS, AB_GAMES = 6, 6000


@pytest.fixture(scope="session")
def ab_run(tmp_path_factory):
    import shutil
    from pathlib import Path

    from protolab.experiment.run.runner import RunOptions, run

    root = Path(__file__).resolve().parents[1]
    d = tmp_path_factory.mktemp("spec")
    shutil.copy(root / "datasets/experiments/variants/fire1_worth_3.toml", d / "fire1_worth_3.toml")
    (d / "ab.toml").write_text(AB_SPEC)
    out = tmp_path_factory.mktemp("runs")
    res = run(str(d / "ab.toml"), RunOptions(workers=2, out=str(out), show_progress=False))
    assert res.status == "complete" and res.games == AB_GAMES
    return res.run_dir


@pytest.fixture(scope="session")
def draft_run(tmp_path_factory):
    """The shipped fitted-draft example, small: every game drafts by the fitted table (replay,
    pick metrics in `meta`)."""
    from protolab.experiment.run.runner import RunOptions, run

    res = run(
        "draft_fitted", RunOptions(workers=1, out=str(tmp_path_factory.mktemp("draft")), games=40, show_progress=False)
    )
    assert res.status == "complete" and res.games == 40
    return res.run_dir


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The wheel of this checkout installed into a fresh virtualenv (tests/fixtures_wheel): what
    `pip install .` gives a cluster node. Built once per session, shared by all pytest workers."""
    from fixtures_wheel import installed

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # .../popen-gw0: the run's folder is its parent
        shared = shared.parent
    return installed(shared / "wheel")
