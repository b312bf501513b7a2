"""The scenario runner is strict (docs/scenarios.md): a malformed scenario is refused with one line
naming the file and the key, instead of passing while checking nothing."""

from pathlib import Path

import pytest

from protolab.cli import main
from sim.scenario import allowed_keys_markdown, run_file

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"

# A small valid scenario (Fire 1 discards, then deletes); each bad case below changes one thing in it.
BASE = """\
name = "Fire 1: discard, then delete"
rule = "Fire 1"

[setup]
active = "A"
phase = "action"

[setup.A]
protocols = ["Fire", "Death", "Light"]
hand = ["Fire 1", "Light 5"]
stacks = [[], [], []]

[setup.B]
protocols = ["Plague", "Life", "Metal"]
hand = ["Plague 5"]
stacks = [["Plague 3"], ["Life 1"], []]

[play]
decisions = ["Fire 1 up left", "Life 1"]

[expect]
A.hand = []
B.trash = ["Life 1"]
pending = "B"
"""


def write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "case.toml"
    f.write_text(text)
    return f


def changed(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


def test_base_scenario_passes(tmp_path):
    """The unchanged base passes, so each refusal below is due to its one change."""
    r = run_file(write(tmp_path, BASE))
    assert r.ok and not r.invalid, r.report()


BAD = {
    # misspelt or unknown sections and keys, at every level
    "section [expct]": (changed("[expect]", "[expct]"), "expct", "unknown section"),
    "top-level key": (changed('rule = "Fire 1"', 'rule = "Fire 1"\nrules = "1.2"'), "rules", "unknown key"),
    "setup key": (changed('active = "A"', 'activ = "A"'), "setup.activ", "unknown key"),
    "setup side key": (changed('hand = ["Plague 5"]', 'hnad = ["Plague 5"]'), "setup.B.hnad", "unknown key"),
    "setup seat C": (BASE + "[setup.C]\nhand = []\n", "setup.C", "unknown section"),
    "play key": (changed("decisions = [", "decisons = ["), "play.decisons", "unknown key"),
    "expect key": (changed('pending = "B"', 'pendng = "B"'), "expect.pendng", "unknown key"),
    "expect side key": (changed("A.hand = []", "A.hnad = []"), "expect.A.hnad", "unknown key"),
    "expect seat C": (changed("A.hand = []", "C.hand = []"), "expect.C", "unknown section"),
    # names in expectations must exist and be in play
    "unknown card": (changed("A.hand = []", 'A.hand = ["Fire 9"]'), "expect.A.hand[0]", "unknown card 'Fire 9'"),
    "card not in play": (changed("A.hand = []", 'A.hand = ["Water 1"]'), "expect.A.hand[0]", "not in play"),
    "unknown card in stacks": (
        changed("A.hand = []", 'A.stacks = [["down:Fire 9"], [], []]'),
        "expect.A.stacks[0][0]",
        "unknown card 'Fire 9'",
    ),
    "down: outside stacks": (
        changed('B.trash = ["Life 1"]', 'B.trash = ["down:Life 1"]'),
        "expect.B.trash[0]",
        "stacks only",
    ),
    "unknown protocol": (
        changed("A.hand = []", 'A.compiled = ["Fier"]'),
        "expect.A.compiled[0]",
        "unknown protocol 'Fier'",
    ),
    "protocol not in play": (
        changed("A.hand = []", 'A.protocols = ["Fire", "Death", "Water"]'),
        "expect.A.protocols[2]",
        "not one of the six",
    ),
    "misspelt card in no_log": (
        changed('pending = "B"', 'no_log = ["Fier 1 deletes"]'),
        "expect.no_log[0]",
        "unknown card 'Fier 1'",
    ),
    "not-in-play card in log": (
        changed('pending = "B"', 'log = ["Water 1 middle resolves"]'),
        "expect.log[0]",
        "not in play",
    ),
    "unknown card in options": (
        changed('pending = "B"', 'options = ["Plague 9 up left"]'),
        "expect.options[0]",
        "unknown card 'Plague 9'",
    ),
    # impossible values
    "pending C": (changed('pending = "B"', 'pending = "C"'), "expect.pending", 'expected "none", "A" or "B"'),
    "unknown phase": (changed('pending = "B"', 'phase = "lunch"'), "expect.phase", '"action"'),
    "draft phase": (changed('pending = "B"', 'phase = "draft"'), "expect.phase", "got 'draft'"),
    "winner nobody": (changed('pending = "B"', 'winner = "nobody"'), "expect.winner", '"draw"'),
    "two stacks": (changed("A.hand = []", "A.stacks = [[], []]"), "expect.A.stacks", "three arrays"),
    "stack not an array": (changed("A.hand = []", 'A.stacks = [[], [], "Fire 1"]'), "expect.A.stacks", "three arrays"),
    "negative count": (changed("A.hand = []", "A.deck_count = -1"), "expect.A.deck_count", "from 0"),
    "count not a number": (changed("A.hand = []", 'A.hand_count = "0"'), "expect.A.hand_count", "from 0"),
    "count true": (changed("A.hand = []", "A.hand_count = true"), "expect.A.hand_count", "from 0"),
    "options not an array": (changed('pending = "B"', 'options = "Life 1"'), "expect.options", "array of strings"),
    "log not strings": (changed('pending = "B"', "log = [1]"), "expect.log", "array of strings"),
    "values not three": (changed("A.hand = []", "A.values = [0, 0]"), "expect.A.values", "three whole numbers"),
    "hand not an array": (changed("A.hand = []", 'A.hand = "Fire 1"'), "expect.A.hand", "array of card names"),
    "setup phase over": (changed('phase = "action"', 'phase = "over"'), "setup.phase", '"start"'),
    "setup turn 0": (changed('phase = "action"', 'phase = "action"\nturn = 0'), "setup.turn", "from 1"),
    "decision not a string": (
        changed('"Fire 1 up left", "Life 1"]', '"Fire 1 up left", 1]'),
        "play.decisions",
        "array of strings",
    ),
    "expect not a table": ('expect = "nothing"\n' + BASE.split("[expect]")[0], "expect", "expected a table"),
    # required keys, and a scenario must check something
    "no rule": (changed('rule = "Fire 1"\n', ""), "rule", "missing"),
    "empty rule": (changed('rule = "Fire 1"', 'rule = " "'), "rule", "non-empty"),
    "misspelt rule": (changed('rule = "Fire 1"', 'rule = "Fire1"'), "rule", "neither a card"),
    "rule not a number": (changed('rule = "Fire 1"', 'rule = "rule 1.2"'), "rule", "neither a card"),
    "no setup.B": (
        changed(
            '[setup.B]\nprotocols = ["Plague", "Life", "Metal"]\nhand = ["Plague 5"]\n'
            'stacks = [["Plague 3"], ["Life 1"], []]\n',
            "",
        ),
        "setup.B",
        "missing",
    ),
    "no [expect]": (BASE.split("[expect]")[0], "expect", "missing"),
    "empty [expect]": (BASE.split("[expect]")[0] + "[expect]\n", "expect", "no expectation"),
    "only empty side tables": (BASE.split("[expect]")[0] + "[expect.A]\n[expect.B]\n", "expect", "no expectation"),
    "error with other checks": (
        changed('pending = "B"', 'error = "appears twice"'),
        "expect.error",
        "cannot be combined",
    ),
    "unknown cards file": (
        changed('rule = "Fire 1"', 'rule = "Fire 1"\ncards = ["no_such_variant.toml"]'),
        "cards",
        "not found",
    ),
    "setup error not expected": (
        changed('hand = ["Plague 5"]', 'hand = ["Plague 5", "Fire 1"]'),
        "setup.B.hand[1]",
        "appears twice",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_malformed_scenario_is_refused_naming_file_and_key(tmp_path, case):
    text, key, phrase = BAD[case]
    f = write(tmp_path, text)
    r = run_file(f)
    assert not r.ok and r.invalid, f"{case}: not refused: {r.report()}"
    assert "\n" not in r.invalid and r.report() == r.invalid
    assert r.invalid.startswith(f"{f}: key '{key}': "), r.invalid
    assert phrase in r.invalid, r.invalid


def test_expected_setup_error_still_passes(tmp_path):
    """`error` absorbs an impossible position (rule 1.2 scenarios), and only when its text matches."""
    bad_setup = changed('hand = ["Plague 5"]', 'hand = ["Plague 5", "Fire 1"]')
    no_checks = bad_setup.split("[play]")[0] + "[expect]\n"
    assert run_file(write(tmp_path, no_checks + 'error = "appears twice"\n')).ok
    r = run_file(write(tmp_path, no_checks + 'error = "unknown card"\n'))
    assert not r.ok and not r.invalid and "lacks 'unknown card'" in r.problems[0]


def test_cli_prints_one_line_and_exits_2(tmp_path, capsys):
    f = write(tmp_path, changed("[expect]", "[expct]"))
    assert main(["scenario", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"protolab: error: {f}: key 'expct': unknown section; expected one of name, rule, cards, setup, play, expect"
    ]


def test_cli_mixed_run_reports_every_file(tmp_path, capsys):
    """A malformed file does not stop the others; the exit status is 2 while any file is malformed."""
    good = tmp_path / "good.toml"
    good.write_text(BASE)
    bad = write(tmp_path, changed('pending = "B"', 'pending = "C"'))
    assert main(["scenario", str(bad), str(good)]) == 2
    out = capsys.readouterr()
    assert f"PASS {good}" in out.out and "1 passed, 0 failed, 1 invalid" in out.out
    assert f"{bad}: key 'expect.pending'" in out.err


def test_doc_lists_exactly_the_allowed_keys():
    """docs/scenarios.md carries the table generated from the runner's SCHEMA, so they cannot drift.
    To refresh it: python -c "from sim.scenario import allowed_keys_markdown as t; print(t())"."""
    assert allowed_keys_markdown() in DOC.read_text()
