"""The stored spec (Spec.to_dict, run.json's `spec`) is what the spec parser reads: --resume parses
it as it stands, so it must read back to the same spec and hash, and a hand edit is refused naming
the file and the key."""

import json
from pathlib import Path

import pytest

from protolab.experiment.spec import SpecError, examples_dir, load_spec, parse_spec

CARD = 'variant = "x"\n[[cards]]\nreplaces = "Fire 1"\nvalue = 3\n'
CARD_SHA = "bb50f4aa79e9ce7fedc0ae31f6aefbfda4e7c436a19366c4d0e936bf82169910"
# a tier study's spec as the previous protolab wrote it into run.json, and the spec_hash it recorded
OLD_TIERS = json.loads(
    '{"tiers": ["greedy", "mixed"], "format": 1, "name": "t", "description": "", "seed": 1, "games": 10, '
    '"turn_cap": 200, "shard_games": 10000, "events": true, "output": "runs", "seats": {"strategies": '
    '["greedy", "greedy"], "swap": false}, "draft": {"mode": "random"}, "arms": [{"name": "greedy", "sets": '
    '["Main 1", "Aux 1", "Main 2", "Aux 2"], "strategies": ["greedy", "greedy"], "cards": [{"path": "v.toml", '
    f'"sha256": "{CARD_SHA}"}}]}}, {{"name": "mixed", "sets": ["Main 1", "Aux 1", "Main 2", "Aux 2"], '
    f'"strategies": ["greedy", "search"], "cards": [{{"path": "v.toml", "sha256": "{CARD_SHA}"}}]}}], '
    '"source": "s.toml", "overrides": {}}'
)
OLD_TIERS_HASH = "5252fe7de829ef05"


def resume(stored, texts=None):
    return parse_spec(stored, "runs/x/run.json", Path("."), card_texts=texts or {}, within="spec")


# every shipped run spec; the training specs are another form, read back in tests/protolab/experiment/train/
RUN_SPECS = sorted(p for p in examples_dir().glob("*.toml") if not p.stem.startswith("train"))


@pytest.mark.parametrize("path", RUN_SPECS, ids=lambda p: p.stem)
def test_every_shipped_spec_reads_back_from_its_stored_form(path):
    spec = load_spec(path)
    stored = json.loads(json.dumps(spec.to_dict()))  # as run.json holds it
    again = parse_spec(stored, "run.json", path.parent)
    assert again == spec and again.hash == spec.hash and again.to_dict() == stored
    texts = {c.path: c.text for a in spec.arms for c in a.cards} | {t.path: t.text for t in spec.draft.tables}
    assert resume(stored, texts) == spec  # from the run's inputs/, as --resume does


def test_a_run_json_of_the_previous_version_resumes_with_its_hash():
    spec = resume(OLD_TIERS, {"v.toml": CARD})
    assert spec.hash == OLD_TIERS_HASH and spec.to_dict() == OLD_TIERS
    assert [(a.name, a.strategies, a.tier) for a in spec.arms] == [
        ("greedy", ("greedy", "greedy"), True),
        ("mixed", ("greedy", "search"), True),
    ]
    assert spec.source == "s.toml"


def test_games_override_is_kept(tmp_path):
    (tmp_path / "s.toml").write_text('name = "t"\nseed = 1\ngames = 10\n')
    spec = load_spec(tmp_path / "s.toml", games=4)
    again = resume(json.loads(json.dumps(spec.to_dict())))
    assert again.overrides == {"games": 4} and again.games == 4 and again.hash == spec.hash


def edited(path: str, value):
    d = json.loads(json.dumps(OLD_TIERS))
    *parents, last = path.split(".")
    node = d
    for k in parents:
        node = node[int(k)] if isinstance(node, list) else node[k]
    if value is KeyError:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return d


@pytest.mark.parametrize(
    "path, value, key, words",
    [
        ("arms.0.cards.0.sha256", "0" * 64, "spec.arms[0].cards[0].sha256", "not the file recorded"),
        ("arms.1.cards.0.sha256", "0" * 64, "spec.arms[1].cards[0].sha256", "not the file recorded"),
        ("tiers.1", "other", "spec.tiers", "names of the 2 or more arms"),
        ("seats.strategies", ["search", "search"], "spec.seats.strategies[0]", "was it edited"),
        ("description", KeyError, "spec.description", "missing"),
        ("format", KeyError, "spec.format", "missing"),
        ("format", 2, "spec.format", "format"),
        ("events", "all", "spec.events", "was it edited"),
        ("overrides", {"turns": 3}, "spec.overrides.turns", "unknown key"),
        ("source", 5, "spec.source", "path of the spec file"),
        ("arms.1.sets", ["Main 1"], "spec.arms", "one pool"),
        ("arms.0.cards.0", {"path": "v.toml"}, "spec.arms[0].cards[0].sha256", "missing"),
        ("arms.0.cards.0", {"path": "w.toml", "sha256": CARD_SHA}, "spec.arms[0].cards[0].path", "inputs/"),
        ("seed", "1", "spec.seed", "master seed"),
    ],
)
def test_a_hand_edited_stored_spec_is_refused_naming_file_and_key(path, value, key, words):
    with pytest.raises(SpecError) as e:
        resume(edited(path, value), {"v.toml": CARD})
    msg = str(e.value)
    assert msg.startswith("runs/x/run.json: ") and f"key '{key}'" in msg and words in msg, msg


def test_a_changed_copy_in_inputs_is_refused():
    with pytest.raises(SpecError, match=r"spec\.arms\[0\]\.cards\[0\]\.sha256'.*not the file recorded"):
        resume(OLD_TIERS, {"v.toml": CARD + "# changed\n"})


def test_a_spec_file_may_pin_a_card_file_by_checksum(tmp_path):
    (tmp_path / "v.toml").write_text(CARD)
    body = 'name = "t"\nseed = 1\ngames = 10\n[pool]\ncards = [{path = "v.toml", sha256 = "%s"}]\n'
    (tmp_path / "s.toml").write_text(body % CARD_SHA)
    assert load_spec(tmp_path / "s.toml").arms[0].cards[0].sha256 == CARD_SHA
    (tmp_path / "s.toml").write_text(body % ("0" * 64))
    with pytest.raises(SpecError, match=r"s\.toml: key 'pool\.cards\[0\]\.sha256'"):
        load_spec(tmp_path / "s.toml")


def test_the_stored_keys_are_refused_in_a_spec_file_without_format(tmp_path):
    (tmp_path / "s.toml").write_text('name = "t"\nseed = 1\ngames = 10\nsource = "x"\n')
    with pytest.raises(SpecError, match="key 'source': unknown key"):
        load_spec(tmp_path / "s.toml")
