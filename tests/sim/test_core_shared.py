"""The engine's shared C declarations seen from Python: the one splitmix64 (sim/engine/rng.pxd)
behind the experiments' seeds, the one option encoding (options.pxd), and allocation failures that
surface as MemoryError instead of a crash."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sim.engine._core import constants, mix64_array, splitmix64_array, unpack_noted, unpack_play, unpack_rearrange

import sim
from protolab.experiment.seeds import game_seeds, master_key, mix64, sample_order
from sim.state import State

K = constants()


def test_seed_derivation_is_unchanged():
    """Values computed by the pure-numpy derivation before seeds.py moved onto the engine's splitmix64."""
    assert [int(master_key(m)) for m in (0, 12345, 2**63 + 7)] == [
        16294208416658607535,
        2454886589211414944,
        7195639206139662248,
    ]
    assert game_seeds(7, np.array([0, 0, 3]), np.array([0, 5, 9]), False).tolist() == [
        13230016791271475269,
        1355172272495804998,
        9123606912852420215,
    ]
    assert game_seeds(7, np.array([0, 0, 3]), np.array([0, 5, 9]), True).tolist() == [
        13230016791271475269,
        14492422637119744992,
        3617713676234607999,
    ]
    assert sample_order(11, 8).tolist() == [7, 3, 4, 5, 2, 1, 6, 0]
    assert mix64(np.array([0, 1, 2**64 - 1], dtype=np.uint64)).tolist() == [
        0,
        6238072747940578789,
        13029008266876403067,
    ]


def test_vectorised_splitmix_keeps_shape_and_input():
    x = np.arange(6, dtype=np.uint64).reshape(2, 3)
    y = mix64_array(x)
    assert y.shape == (2, 3) and y.dtype == np.uint64
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]  # the input is not written
    assert y.ravel().tolist() == mix64_array(x.ravel()).tolist()
    assert splitmix64_array(np.uint64(0)).shape == ()
    assert int(splitmix64_array(np.array([12345], np.uint64))[0]) == int(master_key(12345))


def _pending(seed: int, kind: str) -> tuple[State, int, list[int]]:
    """A game played by first options until a decision of this kind is pending."""
    g = State(seed=seed)
    for _ in range(400):
        player, k, opts = g.core.pending()
        if K["decision"][kind] == k and len(opts) > 1:
            return g, player, opts
        g.answers.append(0)
        assert g.core.run(g.answers) == "pending"
    raise AssertionError(f"no {kind} decision")


def test_action_options_unpack_to_the_hand_and_lines():
    """What the engine packs (play_option) unpacks to the deciding player's hand cards and lines."""
    for seed in range(5):
        g, player, opts = _pending(seed, "action")
        state = g.core.state()
        plays = [unpack_play(o) for o in opts if o != K["opt_refresh"]]
        assert plays and {c for c, *_ in plays} <= set(state["hand"][player])
        assert all(0 <= line <= 2 and up in (0, 1) and side in (0, 1) for _, line, up, side in plays)
        assert len(set(plays)) == len(plays)


def test_rearrange_and_order_options_unpack():
    assert unpack_rearrange(1 * 8 + 5) == (1, 5)
    assert unpack_noted(17 * 4 + 2) == (17, 2)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
def test_a_failed_allocation_is_a_memory_error(tmp_path):
    """An answer list too big for the memory left: the engine raises MemoryError (it used to write
    through a NULL pointer)."""
    code = textwrap.dedent("""
        import resource
        from sim.state import State
        g = State(seed=1)
        answers = [0] * 20_000_000                      # the engine copies them: 80 MB of int32
        vm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + (32 << 20), resource.RLIM_INFINITY))
        try:
            g.core.run(answers)
        except MemoryError as e:
            print("MemoryError:", e)
    """)
    # from another folder, with the sim these tests import (an uncompiled checkout must not shadow it)
    env = {**os.environ, "PYTHONPATH": str(Path(sim.__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "MemoryError: cannot allocate 20000000 answers" in r.stdout
