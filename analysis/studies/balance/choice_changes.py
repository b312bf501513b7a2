"""Which choices a card change touches: each card a pool defines differently from the official pool,
and the choices a player makes inside its effects that the change reaches. Read from the compiled
step records, field by field, with the fields' `chosen` marks of the vocabulary
(sim/cards/vocabulary/step_record.py, STEP_RECORD) and each verb's pick (`Verb.picks`): no list of verbs here.

A step's choice is touched when a field marked with it differs (a `may`, an either/or's
alternatives, the order of noted lines, a destination line, or what the verb's decider picks: its
count, selectors, source, who decides); when any part of an optional step changes, or of a step
that runs only if an optional step was taken ("If you do"), since the yes or no weighs the changed
step; and when a step carrying a choice is added or removed. A value, a trigger or a draw's count
changes no choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.cards.vocabulary import CHOICE_FIELDS, PICKS, STEP_FIELDS, VERBS, enum
from sim.pool import Pool

_VERB = {v.code: v for v in VERBS}
_ALT = ("alt_a", "alt_b")  # where an either's alternatives start: an index, differing by pool
_QUANTITY = ("per", "count")  # a quantity's record (an index, differing by pool): its content is compared
_COMPARED = tuple(f for f in STEP_FIELDS if f not in _ALT and f not in _QUANTITY)
_DID = enum("if").words()["did"]
_BOXES = ("top", "middle", "bottom")

Step = dict[str, Any]  # a step record, its alternatives under "alts"


@dataclass(frozen=True)
class Touched:
    """One choice a change reaches: the decision kind (a DecisionKind word), the verb of the step
    it is asked in (its card-language word) and that verb's default target (what the rule picks)."""

    decision: str
    verb: str
    bot_target: str = "first"


@dataclass(frozen=True)
class CardChange:
    """A card defined differently from the official card of its name, and the choices that reaches
    (none: a change of value, trigger or a count no player chooses)."""

    card: str
    touched: tuple[Touched, ...]


def _tree(steps: list[dict[str, int]], start: int, length: int) -> list[Step]:
    """The steps of a box with each either's alternatives nested (their indices differ by pool)."""
    out = []
    for rec in steps[start : start + length]:
        alts = tuple(tuple(_tree(steps, rec[a], rec[a + "_len"])) for a in _ALT)
        quantities = {q: _quantity(steps, rec[q]) for q in _QUANTITY}
        out.append({**{k: rec[k] for k in _COMPARED}, **quantities, "alts": alts})
    return out


def _quantity(steps: list[dict[str, int]], index: int) -> dict[str, int] | None:
    """What a step's quantity record counts (None: the step has none), whatever its index."""
    return None if index < 0 else {k: steps[index][k] for k in _COMPARED}


def _boxes(pool: Pool, card_id: int) -> list[list[Step]]:
    rec = pool.card_records[card_id]
    return [
        _tree(pool.step_records, rec["step_start"][b], rec["step_len"][b]) if rec["step_len"][b] else []
        for b in range(len(_BOXES))
    ]


def _touch(decision: str, step: Step) -> Touched:
    verb = _VERB[step["verb"]]
    return Touched(decision, verb.word, verb.bot_target)


def _alone(step: Step) -> set[Touched]:
    """The choices a step carries: what an added or removed step adds or takes away."""
    out = {_touch("may", step)} if step["may"] else set()
    if _VERB[step["verb"]].picks:
        out.add(_touch(_VERB[step["verb"]].picks, step))
    for alt in step["alts"]:
        for s in alt:
            out |= _alone(s)
    return out


def _steps(old: list[Step], new: list[Step]) -> set[Touched]:
    """The choices touched between two step lists, step by step in order."""
    out: set[Touched] = set()
    for i in range(max(len(old), len(new))):
        if i >= len(old) or i >= len(new):
            out |= _alone(new[i] if i >= len(old) else old[i])
            continue
        o, n = old[i], new[i]
        if o == n:
            continue
        out |= _step(o, n)
        prev = new[i - 1] if i else None
        if prev is not None and prev["may"] and n["cond"] == _DID:
            out.add(_touch("may", prev))  # the reward of an optional step changed
    return out


def _step(o: Step, n: Step) -> set[Touched]:
    """The choices touched by one changed step (the same position in the official and changed box)."""
    out: set[Touched] = set()
    picks = [_VERB[s["verb"]].picks for s in (o, n)]
    for name, choice in CHOICE_FIELDS.items():
        if name in _ALT or o[name] == n[name]:
            continue
        if choice == PICKS:
            out |= {_touch(p, s) for p, s in zip(picks, (o, n), strict=True) if p}
        else:
            out.add(_touch(choice, n))
    if o["alts"] != n["alts"]:
        out.add(_touch("either", n))
        for a, b in zip(o["alts"], n["alts"], strict=True):
            out |= _steps(list(a), list(b))
    if o["may"] or n["may"]:
        out.add(_touch("may", n if n["may"] else o))
    return out


def changed_choices(official: Pool, pool: Pool) -> list[CardChange]:
    """Each card of `pool` whose definition differs from the official card of the same name (in
    pool order; cards the official pool does not have are new, not changed, and left out), with the
    choices the change touches, in a stable order."""
    known = {c.name.lower(): c.id for c in official.cards}
    out = []
    for c in pool.cards:
        oid = known.get(c.name.lower())
        if oid is None:
            continue
        before, after = _boxes(official, oid), _boxes(pool, c.id)
        card_before = {k: v for k, v in official.card_records[oid].items() if k not in ("protocol", "step_start")}
        card_after = {k: v for k, v in pool.card_records[c.id].items() if k not in ("protocol", "step_start")}
        if before == after and card_before == card_after:
            continue
        touched: set[Touched] = set()
        for old, new in zip(before, after, strict=True):
            touched |= _steps(old, new)
        order = {"may": 0}
        out.append(
            CardChange(c.name, tuple(sorted(touched, key=lambda t: (order.get(t.decision, 1), t.decision, t.verb))))
        )
    return out
