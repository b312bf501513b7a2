"""Shared fixtures: the official pool is compiled once per test session."""

import os
import signal
from collections import Counter
from pathlib import Path

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files holding the most `slow` tests first, the rest after in their own order: the pytest
    workers take files one at a time as they become free (`--dist loadfile --no-loadscope-reorder`),
    so a long file started last would leave one worker playing it alone while the other idles."""
    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])  # stable: a file's tests keep their order


@pytest.fixture(scope="session")
def _ray_left_running():
    """Ends the local Ray the `kept_ray` tests leave running, when the session ends."""
    yield
    from protolab.experiment.session import stop_ray

    stop_ray()


@pytest.fixture
def kept_ray(_ray_left_running):
    """The runs of the test share the local Ray the previous `kept_ray` test left running (Ray's
    start-up, seconds, paid once per test process). Only for tests whose runs need nothing of a fresh
    Ray: no environment set for the workers, no count of Ray's processes; a test without it ends a
    kept Ray before it starts its own."""
    from protolab.experiment.session import keep_local_ray

    with keep_local_ray(2, end=False):
        yield


@pytest.fixture(scope="module", autouse=True)
def _kept_for_module(request, _ray_left_running):
    """In a module whose tests share the kept local Ray (`pytestmark = pytest.mark.usefixtures("kept_ray")`),
    the runs of its module fixtures (a reference run, say) share it too: made before any test's
    `kept_ray`, they would otherwise end the kept Ray and start one of their own."""
    if not any("kept_ray" in mark.args for mark in request.node.iter_markers("usefixtures")):
        yield
        return
    from protolab.experiment.session import keep_local_ray

    with keep_local_ray(2, end=False):
        yield


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


def _shared(tmp_path_factory, name: str) -> Path:
    """A folder of the whole test run, the same for every pytest worker (pytest-xdist): the base
    temporary folder's parent under a worker (.../popen-gw0), the base folder itself otherwise."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    return shared / name


def _once(folder: Path, make) -> Path:
    """`make(folder)`'s result, made by the first worker that asks; the others wait for it and read
    its path, so that a session fixture's run is played once, not once per worker."""
    from filelock import FileLock

    folder.mkdir(parents=True, exist_ok=True)
    done = folder / "made"
    with FileLock(str(folder / "lock")):
        if not done.exists():
            done.write_text(str(make(folder)))
    return Path(done.read_text())


@pytest.fixture(scope="session")
def ab_run(tmp_path_factory, _ray_left_running):
    def make(d: Path) -> Path:
        import shutil

        from protolab.experiment.run.runner import RunOptions, run
        from protolab.experiment.session import keep_local_ray

        root = Path(__file__).resolve().parents[1]
        shutil.copy(root / "datasets/experiments/variants/fire1_worth_3.toml", d / "fire1_worth_3.toml")
        (d / "ab.toml").write_text(AB_SPEC)
        with keep_local_ray(2, end=False):
            res = run(str(d / "ab.toml"), RunOptions(workers=2, out=str(d / "runs"), show_progress=False))
        assert res.status == "complete" and res.games == AB_GAMES
        return res.run_dir

    return _once(_shared(tmp_path_factory, "ab_run"), make)


@pytest.fixture(scope="session")
def draft_run(tmp_path_factory, _ray_left_running):
    """The shipped fitted-draft example, small: every game drafts by the fitted table (replay,
    pick metrics in `meta`)."""

    def make(d: Path) -> Path:
        from protolab.experiment.run.runner import RunOptions, run
        from protolab.experiment.session import keep_local_ray

        with keep_local_ray(2, end=False):
            res = run("draft_fitted", RunOptions(workers=1, out=str(d / "runs"), games=40, show_progress=False))
        assert res.status == "complete" and res.games == 40
        return res.run_dir

    return _once(_shared(tmp_path_factory, "draft_run"), make)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The wheel of this checkout installed into a fresh virtualenv (tests/fixtures_wheel): what
    `pip install .` gives a cluster node. Built once per session, shared by all pytest workers."""
    from fixtures_wheel import installed

    return installed(_shared(tmp_path_factory, "wheel"))


# -- the card tests' small protocol files and one-line refusals (tests/sim/cards/) ---------------------


def six_cards(box: str) -> str:
    """A protocol file's text: protocol X of set S, its six cards (values 0 to 5) each given the same
    `box` lines."""
    return 'protocol = "X"\nset = "S"\n' + "".join(f"[[cards]]\nvalue = {v}\n{box}" for v in range(6))


def load_refused(path: Path) -> str:
    """The message of the CardDataError that loading `path` raises (it must raise one)."""
    from sim.cards.loader import CardDataError, load_file

    with pytest.raises(CardDataError) as e:
        load_file(path)
    return str(e.value)


def read_refused(text: str, protocol: str) -> str:
    """The message of the ReadError that reading `text` as a box of `protocol` raises (it must raise
    one); the message is one line."""
    from sim.cards.reader import ReadError, read_box

    with pytest.raises(ReadError) as e:
        read_box(text, protocol)
    message = str(e.value)
    assert "\n" not in message, message
    return message
