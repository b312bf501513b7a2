"""Every box a run cannot play, reported at once and as written (docs/cards.md, "Printed text" and
"Variants"): `cards check FILE...` lists them all, a load refuses them all, a refused box never
loads as blank, and a variant's new text is what plays."""

import json
from pathlib import Path

import pytest

from protolab.cli import main
from sim.cards.loader import CardDataError, load_file
from sim.pool import load_pool

ECHO = Path(__file__).parents[2] / "fixtures_text" / "echo.toml"
READINGS = Path(__file__).parents[3] / "datasets" / "readings"

# Three boxes of the text-only Echo protocol reworded as a designer might (capitals, plurals), so
# that the reader refuses them: an unknown word, words it cannot read on from, a sentence cut short.
REWORDED = {
    "Delete 1 face-down card.": "Delete 1 PURPLE card.",
    "Return 1 of your opponent's cards.": "Return 1 of your opponent's Cards face-up Cards.",
    "End: If your hand is empty, draw 1 card.": "End: If your hand is empty, draw 1 card. Then Flip.",
}


@pytest.fixture
def broken(tmp_path) -> Path:
    text = ECHO.read_text()
    for old, new in REWORDED.items():
        assert old in text
        text = text.replace(old, new)
    f = tmp_path / "broken.toml"
    f.write_text(text)
    return f


def test_cards_check_lists_every_refused_box_as_written(broken, capsys):
    assert main(["cards", "check", str(broken)]) == 1
    out = capsys.readouterr().out
    refused = [line for line in out.splitlines() if line.startswith("  refused: ")]
    assert [line.split(": key ")[0] for line in refused] == [
        f"  refused: {broken}: Echo 1",
        f"  refused: {broken}: Echo 2",
        f"  refused: {broken}: Echo 2",
    ]
    assert f"{broken}: Echo 1: key 'middle.text' \"Delete 1 PURPLE card.\": unknown word 'PURPLE'" in refused[0]
    # the words it could not read are quoted as written ("Cards", capital, plural), not as normalised
    assert refused[1].endswith(
        "key 'middle.text' \"Return 1 of your opponent's Cards face-up Cards.\": "
        "could not read 'face-up Cards' (after 'Return 1 of your opponent's Cards')"
    )
    assert "key 'bottom.text' \"End: If your hand is empty, draw 1 card. Then Flip.\"" in refused[2]
    assert refused[2].endswith("could not read 'Flip' (after 'Then')")
    assert out.splitlines()[-1] == "8 of 11 boxes encoded; 3 refused"


def test_cards_check_json_carries_the_same_list(broken, capsys):
    assert main(["cards", "check", "--format", "json", str(broken)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["boxes"], report["encoded"]) == (11, 8)
    assert [(r["card"], r["key"]) for r in report["refused"]] == [
        ("Echo 1", "middle.text"),
        ("Echo 2", "middle.text"),
        ("Echo 2", "bottom.text"),
    ]
    first = report["refused"][0]
    assert first["file"] == str(broken) and first["text"] == "Delete 1 PURPLE card." and first["unread"] == ["PURPLE"]
    assert report["refused"][1]["unread"] == ["face-up Cards"]


def test_a_run_refuses_naming_every_refused_box_in_one_line(broken, capsys):
    assert main(["simulate", "--games", "2", "--cards", str(broken)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("protolab: error: 3 boxes cannot be played")
    for card, key in (("Echo 1", "middle.text"), ("Echo 2", "middle.text"), ("Echo 2", "bottom.text")):
        assert f"{broken}: {card}: key '{key}'" in err
    with pytest.raises(CardDataError, match="3 boxes cannot be played"):
        load_pool(cards=[broken])


def test_a_refused_box_never_loads_as_blank(broken, capsys):
    """Shown, not played: the box keeps its text, has no steps, and the card is not encoded."""
    spec = load_file(broken)
    echo1 = next(c for c in spec.cards if c.name == "Echo 1")
    box = echo1.boxes["middle"]
    assert box.refused == "unknown word 'PURPLE'" and box.unread == ("PURPLE",) and not box.encoded
    assert not echo1.encoded and box.do == [] and not box.read
    assert main(["cards", "list", "--format", "json", "--cards", str(broken)]) == 0
    listed = {c["name"]: c["encoded"] for c in json.loads(capsys.readouterr().out) if c["protocol"] == "Echo"}
    assert listed == {"Echo 0": True, "Echo 1": False, "Echo 2": False, "Echo 3": True, "Echo 4": True, "Echo 5": True}


@pytest.mark.parametrize("blank", ['middle.text = ""\nmiddle.do = []', 'middle.text = ""'])
def test_a_box_is_blank_only_when_left_empty(tmp_path, blank):
    """A box plays nothing only with no text: a variant's empty text (its steps named empty or
    read from nothing); steps named empty under a text are refused (tests/test_careful.py)."""
    f = tmp_path / "v.toml"
    f.write_text(f'variant = "blank"\n[[cards]]\nreplaces = "Fire 1"\n{blank}\n')
    pool = load_pool(cards=[f])
    box = pool.specs[pool.card("Fire 1").id].boxes["middle"]
    assert box.encoded and box.do == [] and box.passive == [] and not box.text
    f.write_text('variant = "blank"\n[[cards]]\nreplaces = "Fire 1"\nmiddle.do = []\n')
    with pytest.raises(CardDataError, match="key 'middle' .*would play it as blank"):
        load_pool(cards=[f])


def _variant(tmp_path, body: str, name: str = "v.toml") -> Path:
    f = tmp_path / name
    f.write_text('variant = "test"\n' + body)
    return f


def _steps(pool, card: str) -> list:
    """The compiled step records the engine plays for this card."""
    rec = pool.card_records[pool.card(card).id]
    return [pool.step_records[rec["step_start"][b] + i] for b in range(3) for i in range(rec["step_len"][b])]


def test_a_variant_text_alone_plays_the_new_text(pool, tmp_path):
    """Fire 1's middle reworded plays what the new words say, exactly as if its steps were written."""
    read = load_pool(cards=[_variant(tmp_path, '[[cards]]\nreplaces = "Fire 1"\nmiddle.text = "Draw 4 cards."\n')])
    written = load_pool(
        cards=[
            _variant(
                tmp_path,
                '[[cards]]\nreplaces = "Fire 1"\nmiddle.text = "Draw 4 cards."\nmiddle.do = [{ draw = 4 }]\n',
                "w.toml",
            )
        ]
    )
    box = read.specs[read.card("Fire 1").id].boxes["middle"]
    assert box.read and box.do == [{"draw": 4}]
    assert _steps(read, "Fire 1") == _steps(written, "Fire 1") != _steps(pool, "Fire 1")
    assert read.hash == written.hash != pool.hash


def test_a_variant_text_alone_replaces_the_trigger_keys_too(pool, tmp_path):
    """Ice 1's bottom (after your opponent plays in this line) reworded to a Start box keeps no
    `by` or `where` of the old trigger."""
    before = pool.specs[pool.card("Ice 1").id].boxes["bottom"]
    assert (before.when, before.by, before.where) == ("after_play", "opponent", "this_line")
    f = _variant(tmp_path, '[[cards]]\nreplaces = "Ice 1"\nbottom.text = "Start: Draw 1 card."\n')
    after = load_pool(cards=[f]).specs[pool.card("Ice 1").id].boxes["bottom"]
    assert after.as_data() == {"text": "Start: Draw 1 card.", "when": "start", "do": [{"draw": 1}]}


def test_a_variant_naming_text_and_steps_keeps_its_steps_and_warns_when_they_differ(tmp_path, capsys):
    body = '[[cards]]\nreplaces = "Hate 0"\nmiddle.text = "Delete 1 card."\nmiddle.do = [{ draw = 2 }]\n'
    f = _variant(tmp_path, body)
    pool = load_pool(cards=[f])
    assert pool.specs[pool.card("Hate 0").id].boxes["middle"].do == [{"draw": 2}]
    assert main(["cards", "check", str(f)]) == 0  # a warning, not a refusal
    warnings = [line for line in capsys.readouterr().out.splitlines() if "warning" in line]
    assert warnings == [
        '  warning: Hate 0: middle: the text reads to other steps than its do/passive: reads as {"do": [{"delete": 1}]}'
        ', written as {"do": [{"draw": 2}]}'
    ]
    agree = _variant(tmp_path, body.replace("draw = 2", "delete = 1"), "agree.toml")
    assert main(["cards", "check", str(agree)]) == 0
    assert "warning" not in capsys.readouterr().out


def test_a_protocol_file_whose_text_and_steps_differ_is_warned(tmp_path, capsys):
    text = ECHO.read_text().replace(
        'middle.text = "Delete 1 face-down card."',
        'middle.text = "Delete 1 face-down card."\nmiddle.do = [{ delete = 1, face = "up" }]',
    )
    f = tmp_path / "echo.toml"
    f.write_text(text)
    assert main(["cards", "check", "--format", "json", str(f)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(w["card"], w["box"]) for w in report["warnings"]] == [("Echo 1", "middle")]
    assert report["refused"] == [] and report["encoded"] == report["boxes"] == 11


def test_a_variant_text_that_does_not_read_is_refused_with_the_others(tmp_path, capsys):
    f = _variant(
        tmp_path,
        '[[cards]]\nreplaces = "Fire 1"\nmiddle.text = "Zap 1 card."\n'
        '[[cards]]\nreplaces = "Hate 0"\nvalue = 4\n'
        '[[cards]]\nreplaces = "Fire 2"\nmiddle.text = "Draw 1 card. Zorp."\n',
    )
    assert main(["cards", "check", str(f)]) == 1
    out = capsys.readouterr().out
    assert f"{f}: Fire 1: key 'middle.text' \"Zap 1 card.\": unknown word 'Zap'" in out
    assert f"{f}: Fire 2: key 'middle.text' \"Draw 1 card. Zorp.\": unknown word 'Zorp'" in out
    assert out.splitlines()[-1].endswith("boxes encoded; 2 refused")
    with pytest.raises(CardDataError, match="2 boxes cannot be played"):
        load_pool(cards=[f])


def test_the_alternate_readings_check_clean(capsys):
    """Each datasets/readings file gives text and steps that agree: no refusal, no warning."""
    files = sorted(str(p) for p in READINGS.glob("*.toml"))
    assert len(files) == 5
    for f in files:
        assert main(["cards", "check", f]) == 0
        out = capsys.readouterr().out
        assert "warning" not in out and "refused:" not in out and out.splitlines()[-1].endswith("; 0 refused")
