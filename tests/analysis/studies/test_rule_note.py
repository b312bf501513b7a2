"""Issue 23, item 3: a verdict on a variant whose change touches a choice its judging player takes by
the fixed rule says so beside it. The choices a card change touches (analysis/studies/balance/choice_changes.py,
from the vocabulary's marks), how each player takes them (strategies/spec.py, `Player.choices`),
the note's words (analysis/studies/balance/rule_note.py), and the note in `protolab compare` (terminal, JSON, CSV),
`protolab report` of a variant arm and the A/B page, on one tiny real A/B run."""

import json
import shutil
from pathlib import Path

import pytest

from analysis.studies.balance.choice_changes import changed_choices
from analysis.studies.balance.rule_note import block_notes, note_text
from protolab.cli import main
from sim.cards.vocabulary import BOT_TARGETS, CHOICE_FIELDS, PICKS, VERBS, enum
from sim.pool import load_pool
from strategies.choices import HOWS, MODEL, RANDOM, RULE, RULE_ANSWERS, TARGET_RULE, UNKNOWN
from strategies.spec import PLAYERS, how_chooses

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[3]
VARIANTS = ROOT / "datasets/experiments/variants"
DECISIONS = set(enum("decision").words())


def variant(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "variant.toml"
    f.write_text('variant = "test"\n' + body)
    return f


def changes(pool, *files):
    return {c.card: {(t.decision, t.verb) for t in c.touched} for c in changed_choices(pool, load_pool(cards=files))}


# -- the declarations ------------------------------------------------------------------------------


def test_the_choice_marks_name_decisions_the_engine_asks():
    """Every mark on a Step field, every verb's pick and every answer of the rule is a decision kind
    of the vocabulary; every bot target has the rule's words."""
    assert set(CHOICE_FIELDS.values()) - {PICKS} <= DECISIONS
    assert {"may", "either"} <= set(CHOICE_FIELDS.values())
    assert {v.picks for v in VERBS if v.picks} <= DECISIONS
    assert all(v.picks == "target" for v in VERBS if v.on_field and not v.asks)
    assert set(RULE_ANSWERS) <= DECISIONS and set(TARGET_RULE) == set(BOT_TARGETS)


@pytest.mark.parametrize(
    "spec, how",
    [
        ("greedy", RULE),
        ("search", RULE),
        ("ismcts:iters=300", RULE),
        ("ismcts:iters=300,leaf=model", MODEL),
        ("ismcts:iters=300,leaf=model,choices=rules", RULE),
        ("greedy+avoid:Fire 1", RULE),
        ("rush+nodown", RULE),
        ("learned", MODEL),
        ("learned:sims=2", MODEL),
        ("random", RANDOM),
        ("mypkg.bots:MyBot", UNKNOWN),
    ],
)
def test_how_a_strategy_takes_the_choices_inside_effects(spec, how):
    assert how_chooses(spec) == how
    assert all(p.choices in HOWS or callable(p.choices) for p in PLAYERS.values())


# -- which choices a change touches ---------------------------------------------------------------


def test_a_change_of_value_or_of_a_count_nobody_chooses_touches_no_choice(pool, tmp_path):
    assert changes(pool, VARIANTS / "fire1_worth_3.toml") == {"Fire 1": set()}
    draw3 = variant(
        tmp_path,
        '[[cards]]\nreplaces = "Fire 0"\nmiddle.do = [{ flip = 1, other = true }, '
        '{ draw = 3 }]\n[[cards]]\nreplaces = "Fire 3"\nbottom.when = "start"\n',
    )
    assert changes(pool, draw3) == {"Fire 0": set(), "Fire 3": set()}


def test_an_optional_step_made_costlier_touches_its_may_and_its_pick(pool):
    assert changes(pool, VARIANTS / "fire3_discard_2.toml") == {"Fire 3": {("may", "discard"), ("discard", "discard")}}


@pytest.mark.parametrize(
    "body, touched",
    [
        # "may" taken away: the step is no longer optional
        (
            'replaces = "Death 1"\n'
            'top.do = [{ draw = 1 }, { delete = 1, other = true, if = "did" }, { delete = "this" }]',
            {("may", "draw")},
        ),
        # the reward of an optional step ("If you do") grows: the yes weighs it
        (
            'replaces = "Death 1"\ntop.do = [{ draw = 1, may = true }, { delete = 2, other = true, if = "did" }, '
            '{ delete = "this" }]',
            {("may", "draw"), ("target", "delete")},
        ),
        # a count the player chooses: "1 or more"
        ('replaces = "Fire 1"\nmiddle.do = [{ discard = "1+" }, { delete = 1, if = "did" }]', {("discard", "discard")}),
        # an either/or's alternative changes
        (
            'replaces = "Corruption 6"\ntop.do = [{ either = [[{ discard = 2 }], [{ delete = "this" }]] }]',
            {("either", "either"), ("discard", "discard")},
        ),
        # a new optional step
        (
            'replaces = "Fire 0"\nmiddle.do = [{ flip = 1, other = true }, { draw = 2 }, { draw = 1, may = true }]',
            {("may", "draw")},
        ),
    ],
)
def test_choices_a_change_touches(pool, tmp_path, body, touched):
    card = body.split('"')[1]
    assert changes(pool, variant(tmp_path, "[[cards]]\n" + body + "\n")) == {card: touched}


# -- the words --------------------------------------------------------------------------------------


def test_the_note_under_each_kind_of_player(pool):
    (fire3,) = changed_choices(pool, load_pool(cards=[VARIANTS / "fire3_discard_2.toml"]))
    greedy = note_text(fire3, ["greedy", "greedy"])
    assert greedy.startswith('note: Fire 3\'s change touches an optional step ("may": discard)')
    assert "greedy takes by a fixed rule" in greedy and '"may": always yes' in greedy
    assert greedy.endswith("judge it with learned to see it played")
    # the model players plan every choice asked of them (issue 35): no note of their own
    assert note_text(fire3, ["learned", "learned"]) is None
    assert note_text(fire3, ["learned", "ismcts:iters=300,leaf=model"]) is None
    mixed = note_text(fire3, ["greedy", "learned"])
    assert "greedy takes by a fixed rule" in mixed and mixed.endswith("learned plans them with its model")
    assert "random takes at random" in note_text(fire3, ["greedy", "random"])
    assert note_text(fire3, ["mypkg.bots:MyBot"]) is None
    (fire1,) = changed_choices(pool, load_pool(cards=[VARIANTS / "fire1_worth_3.toml"]))
    assert note_text(fire1, ["greedy", "greedy"]) is None


def test_a_run_whose_pool_cannot_be_rebuilt_says_the_question_is_open(tmp_path):
    block = {
        "path": str(tmp_path),
        "sets": ["Main 1", "Aux 1"],
        "strategies": {"base": ["greedy", "greedy"]},
        "card_files": [{"path": "gone.toml", "sha256": None}],
    }
    (note,) = block_notes(block)
    assert note["card"] is None and "unknown" in note["note"] and "no copy of card file gone.toml" in note["note"]
    assert block_notes({**block, "card_files": []}) == []


def test_simulate_with_a_variant_says_it(capsys):
    argv = ["simulate", "--games", "6", "--cards", VARIANTS / "fire3_discard_2.toml", "--format", "json"]
    (note,) = json.loads(cli(capsys, *argv, "--strategies", "greedy", "greedy"))["rule_notes"]
    assert note["note"].startswith(GREEDY_NOTE) and "greedy takes by a fixed rule" in note["note"]
    assert json.loads(cli(capsys, *argv, "--strategies", "learned", "learned"))["rule_notes"] == []
    assert "rule_notes" not in json.loads(cli(capsys, "simulate", "--games", "6", "--format", "json"))


# -- beside the verdicts of a real A/B run ----------------------------------------------------------

SPEC = """
name = "rule-note"
seed = 3
games = 4
turn_cap = 60
[seats]
strategies = ["greedy", "greedy"]
swap = true
[draft]
mode = "fixed"
matchups = [[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]]
[[arms]]
name = "official"
[[arms]]
name = "fire3"
cards = ["fire3_discard_2.toml"]
[[arms]]
name = "fire1-worth-3"
cards = ["fire1_worth_3.toml"]
[[arms]]
name = "fire3-learned"
cards = ["fire3_discard_2.toml"]
strategies = ["learned", "learned"]
"""
GREEDY_NOTE = 'note: Fire 3\'s change touches an optional step ("may": discard)'


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from protolab.experiment.run.runner import RunOptions, run

    d = tmp_path_factory.mktemp("rule-note-spec")
    for f in ("fire3_discard_2.toml", "fire1_worth_3.toml"):
        shutil.copy(VARIANTS / f, d / f)
    (d / "spec.toml").write_text(SPEC)
    res = run(
        str(d / "spec.toml"), RunOptions(workers=1, out=str(tmp_path_factory.mktemp("rule-note")), show_progress=False)
    )
    assert res.status == "complete"
    return res.run_dir


def cli(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def test_compare_says_it_in_the_terminal_json_and_csv(capsys, run_dir):
    out = cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire3")
    assert out.count(GREEDY_NOTE) == 1 and "greedy takes by a fixed rule" in out
    data = json.loads(cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire3", "--format", "json"))
    (note,) = data["meta"]["rule_notes"]
    assert note["card"] == "Fire 3" and note["players"] == {"greedy": RULE} and "may: discard" in note["choices"]
    assert note["note"].startswith(GREEDY_NOTE)
    csv = cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire3", "--format", "csv")
    assert "# " + GREEDY_NOTE in csv
    # a value-only change: the run has card files, and no note
    data = json.loads(cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire1-worth-3", "--format", "json"))
    assert data["meta"]["rule_notes"] == []
    assert "note: Fire" not in cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire1-worth-3")
    # judged by learned, which plans every choice with its model (issue 35): no note
    out = cli(capsys, "compare", f"{run_dir}#official", f"{run_dir}#fire3-learned")
    assert "note: Fire" not in out and "judge it with learned" not in out


def test_report_of_a_variant_arm_says_it_and_an_official_arm_is_unchanged(capsys, run_dir):
    assert GREEDY_NOTE in cli(capsys, "report", f"{run_dir}#fire3")
    data = json.loads(cli(capsys, "report", f"{run_dir}#fire3", "--format", "json", "--table", "overview"))
    assert [n["card"] for n in data["meta"]["rule_notes"]] == ["Fire 3"]
    official = json.loads(cli(capsys, "report", f"{run_dir}#official", "--format", "json", "--table", "overview"))
    assert "rule_notes" not in official["meta"]
    assert "note: " not in cli(capsys, "report", f"{run_dir}#official")


def test_the_ab_page_says_it_beside_each_arm(capsys, run_dir, tmp_path):
    out = tmp_path / "ab.html"
    cli(capsys, "dashboard", run_dir, "--out", out)
    page = out.read_text(encoding="utf-8")
    sections = {s.split('"', 1)[0]: s for s in page.split('<section id="')[1:]}
    note = GREEDY_NOTE.replace("'", "&#x27;").replace('"', "&quot;")
    assert note in sections["ab-0"] and "greedy takes by a fixed rule" in sections["ab-0"]  # fire3
    assert 'class="warn rule-note"' not in sections["ab-1"]  # fire1-worth-3
    assert 'class="warn rule-note"' not in sections["ab-2"]  # fire3-learned: its model plans the choice
    assert f"arm fire3: {note}" in sections["ranking"] and "arm fire1-worth-3" not in sections["ranking"]
