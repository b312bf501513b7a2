"""The play page's questions inside an effect name the card and box that ask (protolab/play/prompts.py),
an either offers its two alternatives as printed (Peace 1: which hand is discarded first), and a turn's
own decisions (the action, the cache discard) name no card."""

from __future__ import annotations

from protolab.play.game import LiveGame
from protolab.play.playtest import create, spec_of

TRIOS = [["Unity", "Peace", "Speed"], ["Fire", "Light", "Life"]]


def asked(tmp_path) -> list[dict]:
    """Every decision of one seeded game (the person always takes the first option): the state's
    kind, prompt, asked_by and option labels."""
    playtest = create(str(tmp_path / "pt"), spec_of("random", 4, 1, TRIOS, [], None))
    live = LiveGame(playtest, playtest.record(0, {}))
    out = []
    while not live.over:
        s = live.state()
        out.append({k: s[k] for k in ("kind", "prompt", "asked_by")} | {"labels": [o["label"] for o in s["options"]]})
        live.decide(0)
    return out


def test_effect_prompts_name_their_card_and_box_and_an_either_its_alternatives(tmp_path):
    decisions = asked(tmp_path)
    by_kind = {}
    for d in decisions:
        by_kind.setdefault(d["kind"], d)
    assert by_kind["may"]["asked_by"].startswith("Unity 3, middle: If there is another Unity card")
    assert by_kind["may"]["prompt"].endswith("Use this optional effect?")
    either = by_kind["either"]
    assert either["asked_by"] == "Peace 1, middle: Both players discard their hand."
    assert either["labels"] == [
        "Discard your hand. Your opponent discards their hand.",
        "Your opponent discards their hand. Discard your hand.",
    ]
    assert by_kind["play"]["asked_by"] == "Speed 0, middle: Play 1 card."
    assert all(d["asked_by"] is None for d in decisions if d["kind"] == "action")
    effects = [d for d in decisions if d["asked_by"]]
    assert all(d["prompt"].startswith(d["asked_by"]) for d in effects) and len(effects) >= 5
