"""Engine-level properties: determinism, the step API, hidden information, invariants."""

import numpy as np

from sim.batch import records
from sim.record import record_bytes
from sim.state import State
from strategies.seats import play_games


def test_same_seed_same_record_bytes(pool):
    a = records(pool, play_games(pool, range(100, 400)))
    b = records(pool, play_games(pool, range(100, 400)))
    assert [record_bytes(r) for r in a] == [record_bytes(r) for r in b]


def test_record_independent_of_batch_split_and_order(pool):
    whole = records(pool, play_games(pool, range(0, 300)))
    parts = records(pool, play_games(pool, range(200, 300))) + records(pool, play_games(pool, range(0, 200)))
    by_seed = {r["seed"]: record_bytes(r) for r in parts}
    assert [record_bytes(r) for r in whole] == [by_seed[s] for s in range(300)]


def test_step_api_matches_batch(pool):
    recs = records(pool, play_games(pool, range(50)))
    for seed in (0, 7, 23, 49):
        g = State(pool, seed=seed, auto=(0, 1))
        assert g.is_over
        assert record_bytes(g.record(("random", "random"))) == record_bytes(recs[seed])


def test_known_record_for_seed(pool):
    """A fixed seed gives a fixed game on every machine (counter-based RNG, integer-only)."""
    r = records(pool, play_games(pool, [12345]))[0]
    again = State(pool, seed=12345, auto=(0, 1)).record(("random", "random"))
    assert r == again
    assert r["winner"] in (0, 1, -1) and r["turns"] >= 1


def test_different_seeds_differ(pool):
    cols = play_games(pool, range(200))
    assert len({tuple(x) for x in cols["protocols"]}) > 100


def test_step_by_step_answers(pool):
    g = State(pool, seed=3, protocols=[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]], first_player=0)
    d = g.pending()
    assert d.player == 0 and d.kind == "action"
    assert "refresh" not in d.options  # 5 cards in hand: refresh would draw nothing
    n = 0
    while not g.is_over and n < 5000:
        g.answer(n % len(g.pending().options))
        n += 1
    assert g.is_over
    rec = g.record()
    assert rec["protocols_0"] == ["Fire", "Water", "Death"]
    assert rec["first_player"] == 0


def test_answer_by_name_and_bad_answer(pool):
    g = State(pool, seed=3, protocols=[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]], first_player=0)
    opt = g.pending().options[0]
    g.answer(opt.upper())
    assert len(g.answers) == 1
    import pytest

    with pytest.raises(ValueError, match="not an option"):
        g.answer("Nonsense 9 up left")


def test_observation_hides_opponent_secrets(pool):
    g = State(pool, seed=11, protocols=[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]], first_player=0)
    for _ in range(12):  # play a few turns face-down where possible
        d = g.pending()
        down = [i for i, o in enumerate(d.options) if " down " in o]
        g.answer(down[0] if down else 0)
    obs = g.observation(1)
    full = g.state()
    assert len(obs["hand"]) == len(full["B"]["hand"])
    assert "hand" not in obs["sides"]["A"] and "deck" not in obs["sides"]["A"]
    assert obs["sides"]["A"]["hand_count"] == len(full["A"]["hand"])
    facedown_a = [c for st in obs["sides"]["A"]["stacks"] for c in st if not c["face_up"]]
    assert facedown_a, "expected face-down cards on A's side"
    assert all(c["card"] is None and c["value"] == 2 for c in facedown_a)
    own_down = [c for st in g.observation(0)["sides"]["A"]["stacks"] for c in st if not c["face_up"]]
    assert all(c["card"] is not None for c in own_down)


def test_invariants_hold_over_20000_random_games(pool):
    cols = play_games(pool, range(1_000_000, 1_020_000), check_invariants=True)
    bad = np.nonzero(cols["violation"])[0]
    assert len(bad) == 0, f"invariant {cols['violation'][bad[0]]} violated at seed {cols['seed'][bad[0]]}"
    reasons = set(np.unique(cols["end_reason"]).tolist())
    assert reasons <= {1, 2}, reasons  # compiled or turn cap, never a loop guard or nothing
    assert (cols["turns"] <= 200).all()


def test_invariants_hold_with_every_protocol_and_the_bots(pool):
    """All 30 protocols drafted, and the bots (which reach effect choices random play rarely
    does) over the whole pool: no invariant broken."""
    assert len(pool.protocols) == 30
    cols = play_games(pool, range(2_000_000, 2_002_000), check_invariants=True, strategies=("greedy", "disrupt"))
    bad = np.nonzero(cols["violation"])[0]
    assert len(bad) == 0, f"invariant {cols['violation'][bad[0]]} violated at seed {cols['seed'][bad[0]]}"
    drafted = {pool.protocols[p] for p in np.unique(cols["protocols"]).tolist()}
    assert drafted == set(pool.protocols)
    assert (cols["end_reason"] == 3).mean() <= 0.001  # endless loops (loop guard) stay rare


def test_invariant_checker_detects_a_broken_position(pool):
    from sim.engine._core import CoreState

    core = CoreState(pool.core, 1, 200)
    pos = {
        "active": 0,
        "phase": 4,
        "control": -1,
        "no_compile_turn": [-1, -1],
        "protocols": [[0, 1, 2], [3, 4, 5]],
        "compiled": [[0] * 3, [0] * 3],
        "cdef": {c: (c // 6) * 6 % 90 for c in range(36)},
        "owner": {},
        "deck": [list(range(0, 18)), list(range(18, 36))],
        "hand": [[5], []],
        "trash": [[], []],
        "stacks": [[[], [], []], [[], [], []]],
    }
    core.place(pos)
    core.run([])
    assert core.check() != 0  # card 5 is both in A's deck and hand


def test_turn_cap_is_a_draw(pool):
    cols = play_games(pool, range(300), turn_cap=6)
    assert (cols["winner"] == 2).all() and (cols["end_reason"] == 2).all()
    assert (cols["turns"] == 6).all()
