"""What the play page asks: each kind of decision's question, and inside an effect the card and box
whose text asks it, so a person never answers "Choose a card" without knowing which text wants it.
An either's two options are the two alternatives as printed (the writer's words for each branch)."""

from __future__ import annotations

from typing import Any

from sim.engine._core import unpack_noted

from sim.cards.writer import WriteError, write_box
from sim.describe import BOX_NAMES, Namer
from sim.pool import Pool

# what each kind of decision asks (sim/cards/vocabulary/engine_enums.py, DecisionKind)
PROMPTS = {
    "draft": "Draft a protocol",
    "action": "Your action: play a card (face-up or face-down into a line) or refresh",
    "play": "Play a card",
    "compile_line": "Compile which line?",
    "line": "Choose a line",
    "each_line": "Choose a line",
    "order": "Which text resolves first?",
    "may": "Use this optional effect?",
    "either": "Choose one of the two",
    "discard_more": "Discard another card, or done",
    "target": "Choose a card",
    "each_card": "Choose a card",
    "hand": "Choose a card from your hand",
    "discard": "Discard a card",
    "deck": "Choose a card from the deck",
    "trash": "Choose a card from the trash",
    "state_number": "State a number",
    "state_protocol": "State a protocol",
    "control_rearrange": "You have control: rearrange protocols, or skip",
    "rearrange": "Rearrange protocols",
}


def asker(pool: Pool, nm: Namer, asking: tuple[int, int]) -> str:
    """The card and box whose text asks ("Speed 3, middle: Shift 2 of your other cards."), or ""
    for a turn's own decisions; a card the viewer may not see is named as they see it, without text."""
    card, box = asking
    if card < 0:
        return ""
    info = pool.cards[nm.state["cdef"][card]]
    seen = nm.card(card)
    if seen != info.name:
        return seen
    text = getattr(info, BOX_NAMES[box])
    return f"{info.name}, {BOX_NAMES[box]}: {text}" if text else f"{info.name}, {BOX_NAMES[box]}"


def asking_box(pool: Pool, nm: Namer, asking: tuple[int, int]) -> dict[str, str] | None:
    """The card and box whose text asks, for the page to draw that card with the box marked;
    None for a turn's own decisions or a card the viewer may not see."""
    card, box = asking
    if card < 0:
        return None
    name = pool.cards[nm.state["cdef"][card]].name
    return {"card": name, "box": BOX_NAMES[box]} if nm.card(card) == name else None


def prompt(pool: Pool, nm: Namer, word: str, asking: tuple[int, int]) -> str:
    """The decision's question, after the text that asks it."""
    question = PROMPTS.get(word, word)
    who = asker(pool, nm, asking)
    return f"{who} — {question}" if who else question


def either_labels(pool: Pool, nm: Namer, asking: tuple[int, int]) -> list[str] | None:
    """The two alternatives of the asking box's either, as printed; None where the box has not
    exactly one either (the plain labels then stand)."""
    card, box = asking
    if card < 0:
        return None
    spec = pool.specs[nm.state["cdef"][card]]
    steps = (spec.as_data().get(BOX_NAMES[box]) or {}).get("do", [])
    eithers = [s["either"] for s in steps if "either" in s]
    if len(eithers) != 1:
        return None
    try:
        return [write_box({"do": branch}, spec.protocol) for branch in eithers[0]]
    except WriteError:
        return None


def option_labels(pool: Pool, nm: Namer, kind: int, word: str, values: list[int], asking: tuple[int, int]) -> list[str]:
    """Each option's label: an either's alternatives as printed, a trigger order's texts, else the Namer's."""
    if word == "either":
        labels = either_labels(pool, nm, asking)
        if labels is not None and len(labels) == len(values):
            return [labels[v] for v in values]
    if word == "order":
        return [_noted(pool, nm, kind, v) for v in values]
    return [nm.option(kind, v) for v in values]


def _noted(pool: Pool, nm: Namer, kind: int, value: Any) -> str:
    card, box = unpack_noted(value)
    return asker(pool, nm, (card, box)) or nm.option(kind, value)
