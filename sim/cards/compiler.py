"""Compile checked cards (sim/cards/loader.py) to the engine's records: a card's record (CardDef) and
its steps' records (Step), laid out as the step record declares them (sim/cards/vocabulary/)."""

from __future__ import annotations

from typing import Any

from sim.cards import vocabulary as vocab
from sim.cards.loader import (
    AMOUNT_PASSIVES,
    BOXES,
    DENY_PASSIVES,
    FLAG_PASSIVES,
    KEYWORDS,
    CardSpec,
    K,
    parse_condition,
)

# A selection's `protocol` (a field verb's, a quantity's, a restriction's): 0 is any card.
PROTOCOL_FILTERS: dict[Any, int] = {"same": 1, "other": 2}
# The record's flags that one option of a step sets: field -> (option key, the value that sets it).
OPTION_FLAGS = {
    "under_this": ("under", "this"),
    "who_opp": ("who", "opponent"),
    "may": ("may", True),
    "side_opp": ("side", "opponent"),
    "random": ("random", True),
    "no_middle": ("ignore_middle", True),
    "into_opp": ("into", "opponent_trash"),
    "up_to": ("up_to", True),
}
# `value_gt` / `value_lt`: the comparison of a dynamic value selector
VALUE_COMPARISONS = (("value_gt", ">"), ("value_lt", "<"))


def _count_fields(count: Any) -> dict[str, int]:
    """The verb's count: a number (CK_N), a count word, or neither (a verb with literal values)."""
    if isinstance(count, int) and not isinstance(count, bool):
        return {"count_kind": K["count"]["n"], "n": count}
    if isinstance(count, str) and count in K["count"]:
        return {"count_kind": K["count"][count], "n": 1}
    return {"n": 1}


def _selection_fields(sel: dict[str, Any], whose: str, covered: Any) -> dict[str, int]:
    """The selectors a field verb's step and a quantity share (`whose` and `covered` defaults differ)."""
    return {
        "whose": K["whose"][sel.get("whose", whose)],
        "covered": K["covered"][sel.get("covered", covered)],
        "face": K["face"][sel.get("face", "any")],
        "other": int(sel.get("other", False)),
        "line": K["line"][sel.get("line", "any")],
        "proto_filter": PROTOCOL_FILTERS.get(sel.get("protocol"), 0),
    }


def _value_fields(step: dict[str, Any]) -> dict[str, int]:
    """`value = [...]` as a mask of values; `"that"`, `"stated"`, `value_gt`, `value_lt` as a
    comparison against an amount (value_gt/value_lt win)."""
    value = step.get("value", [])
    out: dict[str, int] = {}
    if isinstance(value, list):
        out["value_mask"] = sum(1 << v for v in value)
    else:
        amount = "value_of_that" if value == "that" else "stated"
        out["value_op"], out["value_expr"] = K["ops"]["=="], K["count"][amount]
    for key, op in VALUE_COMPARISONS:
        if key in step:
            out["value_op"], out["value_expr"] = K["ops"][op], K["count"][step[key]]
    return out


def _condition_fields(cond: Any) -> dict[str, int]:
    """`if`: a named condition, or a comparison of an amount with an amount or a number."""
    if cond in K["if"]:
        return {"cond": K["if"][cond]}
    if cond is None:
        return {}
    parsed = parse_condition(cond)
    assert parsed is not None, cond  # checked when the file was read (_check_step)
    a, op, b = parsed
    out = {"cond": K["cond_cmp"], "cond_a": K["count"][a], "cond_op": K["ops"][op]}
    if isinstance(b, int):
        out["cond_b"], out["cond_n"] = K["count"]["n"], b
    else:
        out["cond_b"] = K["count"][b]
    return out


def _option_fields(step: dict[str, Any], verb: str) -> dict[str, int]:
    """The step's options outside its selection: how many, where to, from where, and its flags."""
    from_deck = step.get("from") in ("deck_top", "opponent_deck")
    return {
        "min_cards": step.get("min_cards", 0),
        "pick": K["pick"].get(step.get("pick"), 0),
        "each": K["each"].get(step.get("each"), 0),
        "to": K["to"][step.get("to", "any")],
        "source": K["from"][step.get("from", "hand")],
        "face_down": int(verb == "play" and (step.get("face") == "down" or from_deck)),
        **{name: int(step.get(key) == value) for name, (key, value) in OPTION_FLAGS.items()},
    }


def _step_record(step: dict[str, Any], out: list[dict[str, int]]) -> dict[str, int]:
    """The engine record for one step; its quantities and an `either`'s alternatives are compiled
    onto `out`."""
    verb = next(k for k in step if k in KEYWORDS)
    row = vocab.engine_verb(verb, step.get("from"))
    rec = vocab.new_step_record()
    rec["verb"] = row.code
    if row.modes:
        rec["mode"] = list(row.modes).index(step["mode"])
    rec.update(_count_fields(step[verb]))
    rec.update(_selection_fields(step, "any", False))
    rec.update(_value_fields(step))
    rec.update(_option_fields(step, verb))
    rec.update(_condition_fields(step.get("if")))
    for key in ("per", "count"):
        if key in step:
            rec[key] = len(out)
            out.append(_quantity_record(step[key]))
    if row.value == vocab.STEPS:
        for key, branch in zip(("alt_a", "alt_b"), step[verb], strict=True):
            rec[key] = _compile_steps(branch, out)
            rec[key + "_len"] = len(branch)
    return rec


def _quantity_record(per: dict[str, Any]) -> dict[str, int]:
    """A quantity as a record of its own, read by the engine's quantity(): `of` and the same
    selector fields (and codes) as a field verb's step, so the verbs' matcher counts it."""
    rec = vocab.new_step_record()
    of = per.get("of", "cards")
    rec["of"] = K["of"][of]
    rec.update(_selection_fields(per, "any" if of in ("cards", "protocols", "compiled_protocols") else "you", "any"))
    return rec


def _compile_steps(steps: list[dict[str, Any]], out: list[dict[str, int]]) -> int:
    """Compile steps into contiguous records (alternatives of an `either` go after them)."""
    start = len(out)
    out.extend({} for _ in steps)
    for i, step in enumerate(steps):
        out[start + i] = _step_record(step, out)
    return start


DENY_FIELDS = (
    *("deny", "deny_whose", "deny_face", "deny_by", "deny_line"),
    *("deny_values", "deny_protocol", "deny_covered"),
)
# CardDef.deny_covered (0: any card, the default a record leaves out)
DENY_COVERED_CODES = {True: 1, False: 2}
# the fields of a card record that are one per box, and those of the whole card with their defaults
PER_BOX_FIELDS = ("trig", "by_opp", "during", "here", "cover_same", "step_start", "step_len", "passive")
CARD_FIELDS = {
    "facedown_value": 2,
    "line_value": 0,
    "line_value_opp": 0,
    "line_value_cond": 0,
    "per_facedown": 0,
    "per_hand": 0,
    "per_opp_card": 0,
    "self_play": 0,
}
BY_CODES = {"you": 0, "opponent": 1, "any": 2}
DURING_CODES = {None: 0, "your_turn": 1, "opponent_turn": 2}


def compile_card(card: CardSpec, protocol_id: int, steps: list[dict[str, int]]) -> dict[str, Any]:
    """The card's record; its boxes' steps are compiled onto `steps`."""
    rec: dict[str, Any] = {
        "protocol": protocol_id,
        "value": card.value,
        **{key: [0, 0, 0] for key in PER_BOX_FIELDS},
        **CARD_FIELDS,
        **{key: [0, 0, 0] for key in DENY_FIELDS},
    }
    for b, box_name in enumerate(BOXES):
        box = card.boxes.get(box_name)
        if box is None:
            continue
        if box.when:
            rec["trig"][b] = K["when"][box.when]
            rec["by_opp"][b] = BY_CODES[box.by]
            rec["during"][b] = DURING_CODES[box.during]
            rec["here"][b] = int(box.where == "this_line")
            rec["cover_same"][b] = int(box.covered_by == "same_protocol")
        if box.do:
            rec["step_start"][b] = _compile_steps(box.do, steps)
            rec["step_len"][b] = len(box.do)
        for m in box.passive:
            _compile_modifier(rec, b, m)
    return rec


def _compile_modifier(rec: dict[str, Any], b: int, m: dict[str, Any]) -> None:
    """One passive modifier of box `b`: its passive bits, amounts, restriction and play permissions."""
    P = K["passive"]
    for key, field_name in AMOUNT_PASSIVES.items():
        if key in m:
            rec["passive"][b] |= P[key]
            rec[field_name] = m[key]
    if "line_value" in m:
        rec["line_value_opp"] = int(m.get("whose", "you") == "opponent")
        rec["line_value_cond"] = int(m.get("if") == "other_protocol_faceup_in_stack")
    if "deny" in m:
        _compile_restriction(rec, b, m)
    if "deny_play" in m:
        rec["passive"][b] |= P[DENY_PASSIVES[m["deny_play"]]]
    for flag in FLAG_PASSIVES:
        if m.get(flag):
            rec["passive"][b] |= P[flag]
    if m.get("play_anywhere"):
        rec["self_play"] |= K["self_play"]["anywhere"]
    if m.get("play_either_side"):
        rec["self_play"] |= K["self_play"]["either_side" if m["play_either_side"] is True else "either_side_down"]


def _compile_restriction(rec: dict[str, Any], b: int, m: dict[str, Any]) -> None:
    """A `{ deny = ... }` modifier into the box's restriction fields (BoxTable allows one a box)."""
    rec["passive"][b] |= K["passive"]["deny"]
    rec["deny"][b] = K["deny"][m["deny"]]
    rec["deny_whose"][b] = K["whose"][m.get("whose", "any")]
    rec["deny_face"][b] = K["face"][m.get("face", "any")]
    rec["deny_by"][b] = K["whose"][m.get("by", "any")]
    rec["deny_line"][b] = int(m.get("scope") == "this_line")
    rec["deny_values"][b] = sum(1 << v for v in set(m.get("value", ())))
    rec["deny_protocol"][b] = PROTOCOL_FILTERS.get(m.get("protocol", "any"), 0)
    covered = m.get("covered", "any")
    rec["deny_covered"][b] = DENY_COVERED_CODES[covered] if isinstance(covered, bool) else 0
