"""How a player takes the choices inside effects ("may", targets, discards, either/or, order, stated
numbers): the words each built-in player declares beside itself (`Player.choices`,
strategies/spec.py), and what the shared fixed rule answers to each kind of decision
(`heuristic` in strategies/_bots.pyx; docs/strategies.md, "Choices inside effects").

A balance figure on a variant that changes such a choice is measured on that rule when the players
take it by the rule: the reports say so beside their verdict (analysis/studies/balance/rule_note.py)."""

from __future__ import annotations

RULE = "fixed rule"  # every choice inside an effect by the shared rule below
MODEL = "model"  # every choice asked of it in a real game planned with its model (strategies/_learned.pyx)
RANDOM = "random"  # uniform over the options of every decision
UNKNOWN = "unknown"  # a user's Python strategy: protolab cannot tell
HOWS = (RULE, MODEL, RANDOM, UNKNOWN)

# What the fixed rule answers, by decision kind (the DecisionKind words of sim/cards/vocabulary/engine_enums.py;
# the kinds `heuristic` does not name are answered at random). A field card (`target`, `each_card`)
# is picked by its verb's `bot_target` (one of the vocabulary's BOT_TARGETS): TARGET_RULE.
RULE_ANSWERS: dict[str, str] = {
    "may": "always yes",
    "either": "always the first",
    "order": "the first listed",
    "each_line": "the first listed",
    "discard": "the lowest-value card",
    "discard_more": "the lowest-value cards, stopping before one worth more than 1",
    "hand": "the lowest-value card",
    "compile_line": "the line where the opponent has the most",
    "play": "the highest-value card face-up",
    "state_number": "the value most common among its undrawn cards",
    "state_protocol": "the opponent's protocol with the fewest cards in view",
    "rearrange": "by its rearrangement rule",
    "line": "at random",
    "deck": "at random",
    "trash": "at random",
}
TARGET_RULE: dict[str, str] = {
    "first": "the first listed",
    "remove": "the opponent's highest-value card, else its own lowest",
    "flip": "the opponent's high face-up cards, its own strong face-down ones",
    "random": "at random",
}


def rule_answer(decision: str, bot_target: str = "first") -> str:
    """What the fixed rule answers to a decision of this kind (a field card: by the verb's bot target)."""
    if decision in ("target", "each_card"):
        return TARGET_RULE[bot_target]
    return RULE_ANSWERS.get(decision, "at random")
