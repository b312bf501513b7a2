"""The policy target (issue 35): the guided search's visit shares recorded at its root decisions, a
model with a second output, and the learned player ordering its candidates by it.

Recorded rows: each decision's shares sum to 1 and are the very visits ismcts_explain tells; recording
them changes no game. Model files: two outputs round-trip to the same hash, a one-output file is
today's, a wrong number of outputs is one clear line. The C player: a policy that ranks the candidates
the other way round from the value picks another candidate to re-score after the reply; a one-output
model plays the games it always played (a hash of learned games taken before the policy output)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from strategies._features import Recorder

from analysis.pages import board_why
from protolab.experiment.run import replay
from strategies.learned import examples, play_columns_for
from strategies.model import Model, ModelError, load_model
from strategies.seats import make_seats, play_games

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from play_hash import columns_hash  # noqa: E402

GUIDED = "ismcts:iters=30,leaf=model"  # its choices planned by the model (the training's improver)
PLANLESS = "ismcts:iters=30,leaf=model,choices=rules"  # its choices by the rule, no plan of its own


def decisions_of(policy: dict[str, np.ndarray]) -> dict[tuple[int, int, int], dict[int, tuple[int, float]]]:
    """{(seed, turn, player): {action: (visits, share)}} of a game's policy rows."""
    out: dict[tuple[int, int, int], dict[int, tuple[int, float]]] = {}
    for s, t, p, a, v, sh in zip(
        *(policy[k].tolist() for k in ("seed", "turn", "player", "action", "visits", "share")), strict=True
    ):
        out.setdefault((s, t, p), {})[a] = (v, sh)
    return out


def test_visit_shares_sum_to_one_and_are_the_visits_the_search_tells(pool):
    seeds = [3, 4]
    rows = examples(pool, seeds, (PLANLESS, PLANLESS), policy=True)
    recorded = decisions_of(rows["policy"])
    for (_, _, _), actions in recorded.items():
        assert len(actions) >= 2 and abs(sum(sh for _, sh in actions.values()) - 1) < 1e-5
    told = {}
    for seed in seeds:
        for d in board_why.decisions(replay.new_game(pool, seed, (PLANLESS, PLANLESS))):
            if len(d["alternatives"]) >= 2:
                told[(seed, d["turn"], d["player"])] = {a[0]: a[2] for a in d["alternatives"]}
    assert len(told) >= 40 and set(told) == set(recorded)
    for key, visits in told.items():
        assert {a: v for a, (v, _) in recorded[key].items()} == visits, key
        total = sum(visits.values())
        assert all(abs(sh - visits[a] / total) < 1e-6 for a, (_, sh) in recorded[key].items())


def test_recording_the_policy_changes_no_game(pool):
    seeds = np.arange(11, 15, dtype=np.uint64)
    plain = examples(pool, seeds, (GUIDED, GUIDED))
    with_policy = examples(pool, seeds, (GUIDED, GUIDED), policy=True)
    for k in ("seed", "turn", "player", "outcome", "features"):
        assert np.array_equal(plain[k], with_policy[k]), k
    assert len(with_policy["policy"]["seed"]) > 10 * len(seeds)
    # the whole games are the same with the recorder as without it, a planner's and a search without plans
    assert len(examples(pool, seeds, (PLANLESS, PLANLESS), policy=True)["policy"]["seed"]) > 0
    for spec in (GUIDED, PLANLESS):
        alone = play_games(pool, seeds, (spec, spec))
        assert columns_hash(alone) == columns_hash(recorded_games(pool, seeds, spec)), spec


def recorded_games(pool, seeds, spec):
    """The games of two `spec` seats with the policy recorder installed."""
    seats = make_seats(pool, (spec, spec))
    recorder = Recorder(0.0, True)
    recorder.install(*seats.configs)
    cols = play_columns_for(pool, seeds, seats, 200)
    assert len(recorder.policy_rows()["seed"]) > 0
    return cols


def test_policy_rows_are_only_a_searchs(pool):
    with pytest.raises(ValueError, match="root visits of ismcts"):
        examples(pool, [1], ("learned", "learned"), policy=True)


def two_outputs(policy_sign: float) -> Model:
    """The shipped model with a policy output: policy_sign times its own value logit."""
    shipped = load_model("learned")
    *hidden, last = shipped.layers
    arrays = [(lay.weights, lay.bias, lay.activation) for lay in hidden]
    w = np.vstack([last.weights, policy_sign * last.weights])
    arrays.append((w, np.concatenate([last.bias, policy_sign * last.bias]), last.activation))
    return Model.from_arrays(arrays, {"note": "test"}, ("value", "policy"))


def test_a_two_output_model_round_trips_and_a_one_output_model_is_todays(tmp_path):
    model = two_outputs(-1.0)
    model.save(tmp_path / "two.json")
    again = Model.load(tmp_path / "two.json")
    assert again.outputs == ("value", "policy") and again.hash == model.hash and again.to_bytes() == model.to_bytes()
    x = np.random.default_rng(1).random((5, again.layers[0].weights.shape[1]), np.float32)
    shipped = load_model("learned")
    assert np.allclose(again.predict(x), shipped.predict(x)) and np.allclose(
        again.policy_logits(x), -np.log(shipped.predict(x) / (1 - shipped.predict(x))), atol=1e-4
    )
    assert (
        shipped.hash == "ceb06ee8de48"
        and shipped.outputs == ("value",)
        and '"outputs"' not in shipped.to_bytes().decode()
    )


@pytest.mark.parametrize(
    "change, key, words",
    [
        (lambda raw: raw.pop("outputs"), "layers[1].weights", "1 row (the last layer gives one logit"),
        (lambda raw: raw.__setitem__("outputs", ["value", "policy", "other"]), "outputs", "['value', 'policy']"),
        (lambda raw: raw.__setitem__("outputs", ["value"]), "outputs", "['value', 'policy']"),
        (lambda raw: raw["layers"][-1]["weights"].pop(), "layers[1].weights", "2 rows (one per output"),
    ],
)
def test_a_wrong_number_of_outputs_is_one_line_naming_file_and_key(tmp_path, change, key, words):
    raw = json.loads(two_outputs(1.0).to_bytes())
    change(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ModelError) as e:
        Model.load(path)
    text = str(e.value)
    assert "\n" not in text and str(path) in text and f"key '{key}'" in text and words in text, text


def reply_picks(pool, model: str, seeds=(2, 5)) -> list[tuple[float, float, float]]:
    """At each decision with two or more candidates (none ending the game): (the value of the one
    re-scored after the reply, the lowest value, the highest); the player plans nothing (inner=0)."""
    out = []
    spec = f"learned:model={model},reply=1,inner=0"
    for seed in seeds:
        for d in board_why.decisions(replay.new_game(pool, seed, (spec, "greedy"), turn_cap=30)):
            allowed = [a for a in d["alternatives"] if a[3]]
            if d["player"] != 0 or len(allowed) < 2 or any(a[4] in (0.0, 1.0) for a in allowed):
                continue
            rescored = [a[4] for a in allowed if a[1] >= 0]
            assert len(rescored) == 1, d
            out.append((rescored[0], min(a[4] for a in allowed), max(a[4] for a in allowed)))
    return out


def test_the_player_re_scores_the_candidate_its_policy_ranks_first(pool, tmp_path):
    """A policy that is minus the value picks the lowest-valued candidate for the reply; the shipped
    model (one output) and a policy equal to the value pick the highest."""
    for sign, name in ((-1.0, "minus"), (1.0, "same")):
        two_outputs(sign).save(tmp_path / f"{name}.json")
    minus = reply_picks(pool, str(tmp_path / "minus.json"))
    assert len(minus) >= 10 and all(r == lo for r, lo, _ in minus)
    assert any(lo < hi for _, lo, hi in minus)
    for model in ("learned", str(tmp_path / "same.json")):
        assert all(r == hi for r, _, hi in reply_picks(pool, model))


def test_a_one_output_model_plays_the_games_it_always_played(pool):
    """Hashes of the whole columns of learned games taken before the policy output was built (the
    shipped model ceb06ee8de48, this pool; benchmarks/play_hash.py's columns_hash)."""
    cols = play_games(pool, np.arange(1, 41, dtype=np.uint64), ("learned", "greedy"))
    assert columns_hash(cols) == LEARNED_40


# columns_hash of learned (the shipped model) against greedy, seeds 1-40, all four sets: taken with the
# build before the policy output (main at 78c6bf4); the same on this build
LEARNED_40 = "8c62acd7ed8df54c383de474e11f90c35533fceb0dc1135963f76661d23b40b2"
