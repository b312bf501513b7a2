"""The players' numbers, declared once: the learned player's feature list with the scale of each
feature, the network's room, and every built-in player's parameter defaults and limits.

The C players read these through a generated include (strategies/declared_gen.py writes
strategies/_declared.pxd on every build, as sim/engine/vocab_gen.py does for the card vocabulary),
and the spec parser (strategies/spec.py) and the model reader (strategies/model.py) read them here,
so the Python checks and the C buffers cannot disagree. Pure Python with no import of the
compiled modules: setup.py reads it before they exist."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# -- the learned player's features (strategies/_features.pyx writes them in this order) -----------


@dataclass(frozen=True)
class Scale:
    """How a feature reads a count: clip(x, lo, hi) / by (no clip when lo is None), so that each
    entry is roughly 0..1. In C: FS_<NAME> (by), FS_<NAME>_LO and FS_<NAME>_HI."""

    name: str
    by: float
    lo: int | None = None
    hi: int | None = None
    doc: str = ""


SCALES: tuple[Scale, ...] = (
    Scale("LINE_VALUE", 10.0, 0, 15, "a line's value, capped at 15 (a line compiles at 10)"),
    Scale("LINE_LEAD", 10.0, -10, 10, "a line's lead over the other side's"),
    Scale("STACK", 6.0, 0, 8, "cards in a stack"),
    Scale("FACEDOWN", 4.0, 0, 6, "face-down cards in a stack"),
    Scale("COMPILED", 3.0, None, None, "compiled lines of a side"),
    Scale("HAND", 6.0, 0, 10, "cards in a hand"),
    Scale("PILE", 18.0, None, None, "cards in a deck or a trash"),
    Scale("TURN", 50.0, 0, 100, "the turn number"),
    Scale("VERBS", 4.0, None, None, "steps of a verb family on the cards of a place"),
    Scale("HAND_VALUE", 6.0, None, None, "a value of the cards in one's hand"),
    Scale("PLAYABLE", 6.0, None, None, "cards in one's hand that may be played face-up"),
    Scale("MAY", 4.0, None, None, "optional steps on the cards in one's hand"),
)
SCALE = {s.name: s for s in SCALES}

FEATURE_VERSION = 1
SIDES = ("mine", "theirs")
# (term, its scale's name; None: a 0/1 flag)
LINE_TERMS = (
    ("value", "LINE_VALUE"),
    ("compiled", None),
    ("lead", "LINE_LEAD"),
    ("ready", None),
    ("stack", "STACK"),
    ("facedown", "FACEDOWN"),
)
SIDE_TERMS = (("compiled", "COMPILED"), ("hand", "HAND"), ("deck", "PILE"), ("trash", "PILE"))
GAME_TERMS = (
    ("control_mine", None),
    ("control_theirs", None),
    ("control_neutral", None),
    ("turn", "TURN"),
    ("active_is_me", None),
)
VERB_FAMILIES = ("draw", "discard", "flip", "delete", "return", "shift", "play", "other")
VERB_PLACES = ("hand", "mine_up", "theirs_up")  # my hand; each side's uncovered face-up cards
HAND_TERMS = (
    ("hand_value_mean", "HAND_VALUE"),
    ("hand_value_max", "HAND_VALUE"),
    ("hand_value_min", "HAND_VALUE"),
    ("hand_playable_up", "PLAYABLE"),
    ("hand_may_steps", "MAY"),
)

# every feature with its scale, in the vector's order
FEATURE_SCALES: tuple[tuple[str, str | None], ...] = (
    *((f"{s}_line{line}_{t}", scale) for s in SIDES for line in range(3) for t, scale in LINE_TERMS),
    *((f"{s}_{t}", scale) for s in SIDES for t, scale in SIDE_TERMS),
    *GAME_TERMS,
    *((f"{where}_verbs_{v}", "VERBS") for where in VERB_PLACES for v in VERB_FAMILIES),
    *HAND_TERMS,
)
FEATURES: tuple[str, ...] = tuple(name for name, _ in FEATURE_SCALES)
FEATURE_DIGEST = hashlib.sha256(f"{FEATURE_VERSION}:{','.join(FEATURES)}".encode()).hexdigest()[:16]

# -- the action-value player's action features (strategies/_qlearned.pyx writes them in this order) --
# One candidate action from the card data: the played card (its face, value and, face-up, its text's
# verb families), the line it lands in, before and after, for both sides, and the card it would cover.
# Read only from what the deciding seat sees (its own hand; the field's public faces and values).
ACTION_VERSION = 1
ACTION_TERMS: tuple[tuple[str, str | None], ...] = (
    ("refresh", None),
    ("face_up", None),
    ("opp_side", None),
    ("card_value", "HAND_VALUE"),
    ("added_value", "HAND_VALUE"),
    *((f"card_verbs_{v}", "VERBS") for v in VERB_FAMILIES),
    ("card_may_steps", "MAY"),
    ("protocol_match", None),
    *((f"line{line}", None) for line in range(3)),
    ("line_value_before", "LINE_VALUE"),
    ("line_value_after", "LINE_VALUE"),
    ("other_value", "LINE_VALUE"),
    ("lead_after", "LINE_LEAD"),
    ("stack_before", "STACK"),
    ("line_compiled", None),
    ("ready_before", None),
    ("ready_after", None),
    ("covers_card", None),
    ("covers_face_up", None),
    ("covered_value", "HAND_VALUE"),
    *((f"covered_verbs_{v}", "VERBS") for v in VERB_FAMILIES),
)
ACTION_FEATURES: tuple[str, ...] = tuple(f"action_{name}" for name, _ in ACTION_TERMS)
ACTION_DIGEST = hashlib.sha256(
    f"{FEATURE_VERSION}:{ACTION_VERSION}:{','.join(FEATURES)};{','.join(ACTION_FEATURES)}".encode()
).hexdigest()[:16]

# -- the model's network (strategies/model.py reads files into it; _learned.pxd holds it in C) ----
MAX_LAYERS = 4
MAX_UNITS = 64
# the last layer's outputs, in order: the value (the logit of "the viewing seat wins") and, in a model
# trained with a policy target, the policy logit of the line that ends there (softmax within a decision)
MODEL_OUTPUTS = ("value", "policy")


def max_inputs() -> int:
    """A layer's input buffer: the wider of the features and a hidden layer, rounded up to 16 floats."""
    return -(-max(len(FEATURES), MAX_UNITS) // 16) * 16


def q_max_inputs() -> int:
    """The action-value network's input buffer: a position's features and an action's, rounded up to 16."""
    return -(-max(len(FEATURES) + len(ACTION_FEATURES), MAX_UNITS) // 16) * 16


# -- the players' parameters -----------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A numeric parameter of a player's spec (`name:key=value`): its default and its limits."""

    key: str
    default: float
    lo: float
    hi: float
    whole: bool = True
    doc: str = ""


LEARNED: tuple[Param, ...] = (
    Param("sims", 1, 1, 1000, doc="determinizations per decision"),
    Param("depth", 0, 0, 20, doc="turns played after the decision's turn (default policy)"),
    Param("inner", 3, 0, 12, doc="decision points inside the turn the planner branches at (MAXPLAN)"),
    Param("branch", 4, 0, 64, doc="alternatives tried per candidate action (budget)"),
    Param("top", 2, 0, 4, doc="candidate actions whose inner choices are branched (MAXTOP)"),
    Param("reply", 2, 0, 64, doc="best candidates scored again after the opponent's reply (0: none)"),
    Param("explore", 0.0, 0.0, 1.0, whole=False, doc="probability of a uniform action (examples)"),
    Param("prune", 0, 0, 32, doc="candidates the action-value model (qmodel=) keeps to play out (0: all)"),
)
SEARCH: tuple[Param, ...] = (
    Param("sims", 50, 1, 100000, doc="simulations per decision"),
    Param("depth", 2, 0, 20, doc="turns simulated after the decision"),
)
QLEARNED: tuple[Param, ...] = (
    Param("explore", 0.0, 0.0, 1.0, whole=False, doc="probability of a uniform action (examples)"),
)
ISMCTS: tuple[Param, ...] = (
    Param("iters", 3000, 1, 30000, doc="iterations per decision (a tree of iters + 1 nodes)"),
    Param("c", 0.7, 0, 100, whole=False, doc="exploration constant with leaf=rollout"),
)
# leaf=model's exploration constant: a model's win probability is a far less noisy leaf value than one
# rollout's 0 or 1, so the means need less exploration to be trusted (measured against the default
# ismcts: 164 of 400 games at 0.7, 190 at 0.3, 197 at 0.2, 200 at 0.1; docs/strategies.md)
ISMCTS_MODEL_C = 0.2


def by_key(table: tuple[Param, ...]) -> dict[str, Param]:
    """A player's parameters by key."""
    return {p.key: p for p in table}


def c_integers() -> dict[str, int]:
    """The whole-number constants the C players use (cdef enum in _declared.pxd)."""
    learned = by_key(LEARNED)
    out = {
        "NFEAT": len(FEATURES),
        "NFAMILY": len(VERB_FAMILIES),
        "MAXL": MAX_LAYERS,
        "MAXU": MAX_UNITS,
        "MAXOUT": len(MODEL_OUTPUTS),
        "MAXIN": max_inputs(),
        "NACT": len(ACTION_FEATURES),
        "QMAXIN": q_max_inputs(),
        "MAXPLAN": int(learned["inner"].hi),
        "MAXTOP": int(learned["top"].hi),
    }
    for s in SCALES:
        if s.lo is not None:
            assert s.hi is not None, f"{s.name}: a clipped scale has both bounds"
            out[f"FS_{s.name}_LO"] = s.lo
            out[f"FS_{s.name}_HI"] = s.hi
    return out


def c_reals() -> dict[str, float]:
    """The real constants the C players use (C macros in _declared.pxd, so they fold as literals do)."""
    return {f"FS_{s.name}": s.by for s in SCALES}
