"""What `cards check` can tell from a card's data alone about loops: a box whose own steps can set it off
again. Two shapes are found: a middle text that can cover this card and uncover it again (its middle
runs once more each time it is uncovered: a loop a player may choose, ended as a draw by the engine's
loop bound), and an "After ..." trigger whose own step is the action it waits for. A warning, not a
refusal: many such cards stop by themselves (an empty hand, a choice), and the engine ends the rest."""

from __future__ import annotations

from typing import Any

from sim.cards import vocabulary as vocab
from sim.cards.loader import CardSpec

WORDS = {v.word for v in vocab.VERBS}  # the verb keys a step is written with

# destinations of a shift or play that can land on this card's line (the card's own side included)
COVERING_TO = {None, "any", "this_line", "to_or_from_this_line"}
# lines a field verb may take a card from that include this card's line
THIS_LINE = {None, "any", "this", "this_stack", "chosen", "that"}
MANY = {"each", "all", "1+", "0+"}  # counts that may act on two cards or more


def _verb(step: dict[str, Any]) -> str:
    return next((k for k in step if k in WORDS), "")


def _mine(step: dict[str, Any]) -> bool:
    """The step may act on one of this card's owner's field cards."""
    return step.get("whose", "any") in ("any", "you")


def _covers(step: dict[str, Any]) -> bool:
    verb = _verb(step)
    if verb == "shift":
        return _mine(step) and step.get("to") in COVERING_TO and step[verb] != "this"
    if verb == "play":
        return step.get("side") != "opponent" and step.get("under") is None and step.get("to") in COVERING_TO
    return False


def _uncovers(step: dict[str, Any]) -> bool:
    verb = _verb(step)
    if verb not in ("shift", "return", "delete") or step[verb] == "this":
        return False
    return step.get("covered", False) in (False, "any") and step.get("line") in THIS_LINE and _mine(step)


def _many(step: dict[str, Any]) -> bool:
    count = step[_verb(step)]
    return count in MANY or (isinstance(count, int) and count >= 2)


def _middle_loop(steps: list[dict[str, Any]]) -> str:
    for i, step in enumerate(steps):
        if not _covers(step):
            continue
        if _uncovers(step) and _many(step):
            return f"its {_verb(step)} of {step[_verb(step)]} can move a card onto this card and off again"
        later = next((s for s in steps[i + 1 :] if _uncovers(s)), None)
        if later is not None:
            return f"its {_verb(step)} can cover this card and its {_verb(later)} uncover it"
    return ""


def _trigger_loop(when: str | None, by: str, steps: list[dict[str, Any]]) -> str:
    if not when or not when.startswith("after_"):
        return ""
    action = when.removeprefix("after_")
    for step in steps:
        if _verb(step) != action:
            continue
        who = "opponent" if step.get("who") == "opponent" else "you"
        if by in ("any", who):
            return f"its own {action} is an action it triggers after"
    return ""


def self_loops(card: CardSpec) -> list[str]:
    """One line per box of `card` whose own steps can set it off again (empty when none can be told)."""
    out = []
    for name, box in card.boxes.items():
        why = _middle_loop(box.do) if name == "middle" else _trigger_loop(box.when, box.by, box.do)
        if why:
            out.append(
                f"{card.name}: {name}: {why}, so it can run again and again (the engine ends such a game as "
                "a loop_guard draw; report --table loop_draws counts them)"
            )
    return out
