"""The note beside a verdict on a variant whose change touches a choice its players take by the fixed
rule (issue 23): a variant that makes Fire 3's optional discard cost 2 cards, judged by greedy, is
measured on greedy's rule (always yes), not on a player weighing it.

For each run (or arm) made with card files: the cards its pool defines differently from the
official pool and the choices each change touches (analysis/studies/balance/choice_changes.py), and how each of its
strategies takes those choices (`how_chooses`, declared beside each player in strategies/spec.py).
A note is written when a player takes them by the fixed rule or at random; the model players
(learned, guided ismcts) plan every choice asked of them with their model since issue 35, so a run
played by them alone gets none. A user's Python
strategy is not described (protolab cannot tell). Runs on the official pool get no notes and no
`rule_notes` key: their reports are unchanged."""

from __future__ import annotations

import html
from typing import Any

from analysis.runs.run_pool import run_pool
from analysis.studies.balance.choice_changes import CardChange, Touched, changed_choices
from sim.cards.vocabulary import enum
from sim.pool import Pool
from strategies.choices import MODEL, RANDOM, RULE, UNKNOWN, rule_answer
from strategies.errors import StrategyError
from strategies.spec import how_chooses

_MEANING = {m.word: m.meaning for m, _ in enum("decision").codes() if m.word is not None}


def _what(t: Touched) -> str:
    if t.decision == "may":
        return f'an optional step ("may": {t.verb})'
    return f"the choice of {_MEANING.get(t.decision, t.decision)} ({t.verb})"


def _answers(touched: tuple[Touched, ...]) -> str:
    said = [rule_answer(t.decision, t.bot_target) for t in touched]
    if len(touched) == 1:
        return said[0]
    return "; ".join(f"{_label(t)}: {a}" for t, a in zip(touched, said, strict=True))


def _label(t: Touched) -> str:
    return '"may"' if t.decision == "may" else t.verb


def _clause(specs: list[str], verb: str, rest: str) -> str:
    """`specs verb rest`, the verb agreeing with one player or several."""
    return f"{' and '.join(specs)} {verb}{'s' if len(specs) == 1 else ''} {rest}"


def _how(spec: str) -> str:
    try:
        return how_chooses(spec)
    except StrategyError:
        return UNKNOWN


def _by_how(strategies: list[str]) -> dict[str, list[str]]:
    """The strategies (each once, in order) that take choices by the rule, at random and by a model."""
    return {how: [s for s in dict.fromkeys(strategies) if _how(s) == how] for how in (RULE, RANDOM, MODEL)}


def note_text(change: CardChange, strategies: list[str]) -> str | None:
    """The one-line note for a changed card played by these strategies, or None when the change
    touches no choice or no strategy takes its choices by the rule or at random."""
    t = change.touched
    if not t:
        return None
    by = _by_how(strategies)
    if not (by[RULE] or by[RANDOM]):
        return None  # every player plans the choice with its model: nothing to note
    clauses = [_clause(by[RULE], "take", f"by a fixed rule ({_answers(t)})")] if by[RULE] else []
    clauses += [_clause(by[RANDOM], "take", "at random")] if by[RANDOM] else []
    if by[MODEL]:  # last: beside the rule's players, for contrast
        their = "its" if len(by[MODEL]) == 1 else "their"
        clauses.append(_clause(by[MODEL], "plan", f"{'it' if len(t) == 1 else 'them'} with {their} model"))
    tail = "" if by[MODEL] else "; judge it with learned to see it played"
    return (
        f"note: {change.card}'s change touches {' and '.join(_what(x) for x in t)} "
        f"{'that' if len(t) == 1 else 'which'} {' and '.join(clauses)}{tail}"
    )


def _strategies(block: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(str(s) for seats in (block.get("strategies") or {}).values() for s in seats))


def block_notes(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The notes of one run or arm (its provenance block): one per changed card whose change
    touches a choice its players take by a rule, JSON-ready ({card, choices, players, note});
    [] for a run made without card files."""
    if not block.get("card_files"):
        return []
    rebuilt, why = run_pool(block)
    if rebuilt is None or rebuilt.official is None:
        return [
            {
                "card": None,
                "choices": [],
                "players": {},
                "note": f"note: whether the card files change a choice the players take by a fixed rule is "
                f"unknown ({why or 'no official pool'})",
            }
        ]
    return pool_notes(rebuilt.official, rebuilt.pool, _strategies(block))


def pool_notes(official: Pool, pool: Pool, strategies: list[str]) -> list[dict[str, Any]]:
    """The notes for games of `pool` played by `strategies`: one per card changed from `official`
    whose change touches a choice they take by a rule, JSON-ready ({card, choices, players, note})."""
    out = []
    for change in changed_choices(official, pool):
        text = note_text(change, strategies)
        if text is not None:
            out.append(
                {
                    "card": change.card,
                    "choices": [f"{t.decision}: {t.verb}" for t in change.touched],
                    "players": {s: _how(s) for s in dict.fromkeys(strategies)},
                    "note": text,
                }
            )
    return out


def rule_notes(blocks: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The notes of every run or arm shown (provenance blocks), each once; None when none of them
    was made with card files (so an official run's outputs carry no `rule_notes` at all)."""
    if not any(b.get("card_files") for b in blocks):
        return None
    out: list[dict[str, Any]] = []
    for b in blocks:
        out += [n for n in block_notes(b) if n not in out]
    return out


def note_lines(notes: list[dict[str, Any]] | None) -> list[str]:
    """The notes' one-line texts."""
    return [n["note"] for n in notes or []]


def csv_lines(notes: list[dict[str, Any]] | None) -> str:
    """The notes as comment lines (`# note: ...`) for the top of a CSV table, after its provenance."""
    return "".join(f"# {line}\n" for line in note_lines(notes))


def notes_html(notes: list[dict[str, Any]] | None, label: str = "") -> str:
    """The notes as paragraphs beside a verdict on a page ("" without notes)."""
    prefix = f"{html.escape(label)}: " if label else ""
    return "".join(f'<p class="warn rule-note">{prefix}{html.escape(line)}</p>' for line in note_lines(notes))
