"""Defaults that do not mislead: random play ranks protocols almost the reverse of competent play,
so nothing a user runs without choosing plays random seats (docs/strategies.md)."""

import json
import tomllib

from protolab.cli import build_parser, main
from protolab.experiment.spec import examples_dir, load_spec
from protolab.experiment.train.trainspec import load_train_spec


def _base(spec: str) -> str:
    return spec.split("+")[0].split(":")[0]


def test_shipped_example_specs_play_competent_seats():
    specs = sorted(examples_dir().glob("*.toml"))
    assert specs
    for path in specs:
        raw = tomllib.loads(path.read_text())
        if "qtrain" in raw:  # an action-value training spec: its teacher and ladder
            seats = [raw["qtrain"]["teacher"], *raw["qtrain"]["opponents"]]
        elif "train" in raw:  # a training spec: its expert and ladder
            t = load_train_spec(path)
            seats = [t.data.expert, *t.ladder.opponents]
        else:
            spec = load_spec(path)
            seats = [s for arm in spec.arms for s in arm.strategies]
        assert seats and "random" not in {_base(s) for s in seats}, f"{path.name} plays random seats: {seats}"


def test_simulate_defaults_to_learned_and_states_it(capsys):
    assert tuple(build_parser().parse_args(["simulate"]).strategies) == ("learned", "learned")
    assert main(["simulate", "--games", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strategies"] == ["learned", "learned"] and out["games"] == 50
    assert out["sets"] == ["Main 1", "Aux 1", "Main 2", "Aux 2"] and out["first_seed"] == 1


def test_the_shipped_verdicts_are_judged_by_the_learned_player():
    """Issue 35: README command 1 and the shipped examples that give a balance verdict judge with learned."""
    verdicts = ("demo", "protocol_balance", "fire1_ab", "fire1_ab_settled", "readings_ab")
    searches = ("tune_fire", "tune_metal_lift", "tune_chaos_lift")
    for name in (*verdicts, *searches):
        spec = load_spec(name)
        assert {_base(s) for arm in spec.arms for s in arm.strategies} == {"learned"}, name
