"""Kinds of player live in strategies/, not in the engine: the engine keeps a decision function and
an opaque context per seat (docs/architecture.md, "Adding a kind of player"). One test keeps
strategy names out of sim/engine; another builds a new kind of player from outside sim/, compiles
it against the engine's declarations as they are, registers it and plays it."""

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from Cython.Build import cythonize
from setuptools import Distribution, Extension
from strategies._bots import WEIGHT_NAMES

from analysis.pages import board_why
from protolab.experiment.run import replay
from sim.state import State
from strategies import spec
from strategies.choices import UNKNOWN
from strategies.seats import play_games

ROOT = Path(__file__).resolve().parents[2]
ENGINE_SOURCES = [p for ext in ("pyx", "pxd", "pxi", "py") for p in (ROOT / "sim" / "engine").glob(f"*.{ext}")]

# What only a strategy knows: the built-in players' names (not the engine's own random player nor
# the game's control component), their weights and budgets, and the names the engine used to hold
# them by before bots owned their settings.
GAME_WORDS = {"random", "control"}
STRATEGY_NAMES = sorted(
    {*spec.PLAYERS} - GAME_WORDS
    | {*WEIGHT_NAMES}
    | {
        "BotKind",
        "BOT_NONE",
        "BOT_GREEDY",
        "BOT_SEARCH",
        "BOT_ISMCTS",
        "StratParams",
        "NWEIGHTS",
        "sims",
        "iters",
        "weights",
        "draft_score",
        "draft_table",
        "draft_model",
        "bot_owner",
        "rollout",
    }
)


def strategy_names_in(text: str) -> set[str]:
    """The strategy-specific names that occur as whole words in text."""
    return {n for n in STRATEGY_NAMES if re.search(rf"\b{re.escape(n)}\b", text)}


def test_engine_names_no_strategy():
    assert len(ENGINE_SOURCES) >= 10
    found = {p.name: sorted(strategy_names_in(p.read_text())) for p in ENGINE_SOURCES}
    assert not {k: v for k, v in found.items() if v}


def test_the_name_check_can_fail():
    """The check above would see a bot kind, a weight or a budget coming back."""
    assert strategy_names_in("    int16_t sims\n") == {"sims"}
    assert strategy_names_in("cdef enum BotKind:\n    BOT_GREEDY = 1") == {"BotKind", "BOT_GREEDY"}
    assert strategy_names_in("float w_control  # greedy's weight") == {"w_control", "greedy"}
    assert strategy_names_in("draw_searched(g) and the control phase") == set()


# A new kind of player, written as a user of the engine would: prefers plays of one face (its
# setting, `up`), otherwise the first option. It touches nothing under sim/.
FIRST_FACE = """
# cython: language_level=3
from sim.engine._core cimport State, SeatConfig, D_ACTION
from sim.engine.options cimport OPT_REFRESH, play_face_up

cdef struct Settings:
    int face_up                   # 1: face-up plays first; 0: face-down plays first

cdef int first_face(const void* ctx, State* g, int player, int kind) noexcept nogil:
    cdef const Settings* s = <const Settings*>ctx
    cdef int i
    if kind == D_ACTION:
        for i in range(g.nopts):
            if g.opts[i] != OPT_REFRESH and play_face_up(g.opts[i]) == s.face_up:
                return g.opts[i]
    return g.opts[0]

cdef class FirstFace:
    cdef Settings settings

    def __cinit__(self, int face_up):
        self.settings.face_up = face_up

    def install(self, SeatConfig seat):
        seat.set_decider(first_face, &self.settings, self)

# optional: why each move (replays only), registered beside the decision function
from strategies._explain cimport Explanation, register_explainer, M_EVALUATION

cdef int first_face_explain(const void* ctx, State* g, int player, Explanation* out) noexcept nogil:
    cdef int i
    out.chosen = first_face(ctx, g, player, D_ACTION)
    out.measure = M_EVALUATION
    out.n = g.nopts
    for i in range(g.nopts):
        out.alt[i].option = g.opts[i]
        out.alt[i].score = g.opts[i] == out.chosen       # 1 for its choice, 0 for the others
        out.alt[i].count = 1
        out.alt[i].allowed = 1
    return out.chosen

register_explainer(first_face, first_face_explain)
"""


@pytest.fixture(scope="module")
def first_face_module(tmp_path_factory):
    """The new player's extension, compiled against the engine's .pxd files as they are."""
    build = tmp_path_factory.mktemp("first_face")
    (build / "first_face.pyx").write_text(textwrap.dedent(FIRST_FACE))
    ext = Extension(
        "first_face", [str(build / "first_face.pyx")], include_dirs=[str(ROOT)], extra_compile_args=["-O1", "-g0"]
    )
    dist = Distribution({"ext_modules": cythonize([ext], include_path=[str(ROOT)], quiet=True)})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(build)
    cmd.build_temp = str(build / "tmp")
    cmd.ensure_finalized()
    cmd.run()
    sys.path.insert(0, str(build))
    try:
        import first_face
    finally:
        sys.path.remove(str(build))
    yield first_face
    sys.modules.pop("first_face", None)


def test_a_new_player_needs_no_engine_edit(pool, first_face_module, monkeypatch):
    """Registered in strategies/spec.py's PLAYERS, the new kind plays through specs and seats."""

    def configure(seat, params):
        first_face_module.FirstFace(int(params.get("up", 1))).install(seat)

    monkeypatch.setitem(spec.PLAYERS, "firstface", spec.Player(("up",), configure, UNKNOWN))
    down = play_games(pool, np.arange(1, 41), strategies=("firstface:up=0", "random"))
    up = play_games(pool, np.arange(1, 41), strategies=("firstface:up=1", "random"))
    assert down["plays_down"][:, 0].sum() > 3 * down["plays_up"][:, 0].sum()
    assert up["plays_up"][:, 0].sum() > 3 * up["plays_down"][:, 0].sum()
    assert set(np.unique(up["winner"])) <= {0, 1, 2}
    g = State(pool, seed=3)
    while g.pending() is not None and g.pending().kind == "draft":
        g.answer(0)
    seat = spec.make_seat("firstface:up=0", pool)
    assert g.core.decide_with(seat) in g.core.pending()[2]
    said = board_why.decisions(replay.new_game(pool, 5, ("firstface:up=1", "random")))
    assert len(said) > 5 and all(d["chosen"] == d["played"] and d["player"] == 0 for d in said)
