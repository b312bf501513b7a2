"""The engine's enums and their card-language words: the selectors, destinations, sources,
conditions, triggers, passives and restrictions of card files, and the engine's own (zones, phases,
end reasons, decision kinds, restriction flags, event kinds). Codes are stored in compiled records
and in the pool hash: append a member, never reorder."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Member:
    """One member of an engine enum. In C it is the enum's prefix + `name` (W_ + ANY), on the
    Python side (sim/enums.py) `Enum.name` (Whose.ANY). `word` is how card files, `constants()` and
    the docs spell it; None: the engine's own (TR_MIDDLE, D_NONE)."""

    name: str
    word: str | bool | None = None
    meaning: str = ""
    example: str = ""  # a card that uses it (docs)
    printed: str = ""  # how card text says it (sim/cards/writer.py prints it; `to`: after a shift)
    played: str = ""  # `to` only: how card text says it after a play


@dataclass(frozen=True)
class EngineEnum:
    """An engine enum and its words. Codes follow the order of `members` from `first` (flags: bit
    0, 1, 2, ...). Codes are stored in compiled records and in the pool hash: append a member,
    never reorder."""

    name: str  # the C enum and the Python enum (sim/enums.py)
    prefix: str  # of every member's C name
    key: str  # the `constants()` key; for a card-language enum, the key it is written with
    members: tuple[Member, ...]
    doc: str = ""
    first: int = 0
    flags: bool = False
    card: bool = False  # part of the card language (docs/cards.md); else the engine's (docs/engine.md)

    def codes(self) -> tuple[tuple[Member, int], ...]:
        """Each member with its code."""
        return tuple((m, 1 << i if self.flags else self.first + i) for i, m in enumerate(self.members))

    def cname(self, m: Member) -> str:
        return self.prefix + m.name

    def words(self) -> dict[str | bool, int]:
        """Word -> code, for the members that have a word."""
        return {m.word: code for m, code in self.codes() if m.word is not None}


M = Member
ENUMS: tuple[EngineEnum, ...] = (
    # selectors of field verbs (targets.pxi)
    EngineEnum(
        "Whose",
        "W_",
        "whose",
        (M("ANY", "any", "either side"), M("YOU", "you", "your side"), M("OPP", "opponent", "your opponent's side")),
        "side of the field the card stands on",
        card=True,
    ),
    EngineEnum(
        "Covered",
        "C_",
        "covered",
        (
            M("UNCOVERED", False, "uncovered cards only"),
            M("COVERED", True, "covered cards only"),
            M("ANY", "any", "covered and uncovered"),
        ),
        "whether the card may be covered",
        card=True,
    ),
    EngineEnum(
        "Face",
        "F_",
        "face",
        (M("ANY", "any", "either face"), M("UP", "up", "face-up cards"), M("DOWN", "down", "face-down cards")),
        "the card's face",
        card=True,
    ),
    EngineEnum(
        "LineSel",
        "L_",
        "line",
        (
            M("ANY", "any", "every line"),
            M("THIS", "this", "this card's line", printed="in this line"),
            M("OTHER", "other", "not this line"),
            M("CHOSEN", "chosen", "the decider picks 1 line in which something matches", printed="in 1 line"),
            M("CHOSEN_OTHER", "chosen_other", "the same, not this line", printed="in 1 other line"),
            M("THIS_STACK", "this_stack", "this card's line on this card's side", printed="in this stack"),
            M("THAT", "that", 'the line of "that card"', "Mirror 3", printed="in the same line"),
            M(
                "OPP_AHEAD",
                "opponent_ahead",
                "lines where the opponent's total is higher",
                "Courage 1",
                printed="in a line where they have a higher total value than you do",
            ),
            M(
                "PROTOCOL",
                "protocol",
                "the line of the controller's protocol of this text's protocol",
                "Unity 1",
                printed="in that line",
            ),
        ),
        "the lines the cards may stand in",
        card=True,
    ),
    EngineEnum(
        "Pick",
        "P_",
        "pick",
        (
            M("NONE"),
            M("HIGHEST", "highest", "highest value among the matches (ties: the decider chooses)"),
            M("LOWEST", "lowest", "lowest value among the matches"),
        ),
        "only the extreme values",
        card=True,
    ),
    EngineEnum(
        "Each",
        "E_",
        "each",
        (
            M("NONE"),
            M("OTHER_LINE", "other_line", "every line but this one", printed="in each other line"),
            M(
                "LINE_WITH_YOUR_CARD",
                "line_with_your_card",
                "every line holding one of your cards",
                printed="in each line where you have a card",
            ),
            M("EVERY_LINE", "line", "every line", printed="in each line"),
            M(
                "LINE_WITH_FACEDOWN",
                "line_with_facedown",
                "every line holding a face-down card, either side",
                "Smoke 0",
                printed="in each line with a face-down card",
            ),
        ),
        "run the step once per noted line, in the decider's order",
        card=True,
    ),
    # what a quantity counts (`per = { of = ... }`, docs/cards.md "Quantities")
    EngineEnum(
        "Counted",
        "Q_",
        "of",
        (
            M("CARDS", "cards", "field cards matching the quantity's selectors (covered ones too unless it says)"),
            M("HAND", "hand", "cards in a hand (`whose`: **yours**, your opponent's or both)"),
            M("TRASH", "trash", "cards in a trash"),
            M("DECK", "deck", "cards in a deck"),
            M("LINES", "lines", "lines (`line`: every line or the other lines)"),
            M("PROTOCOLS", "protocols", "protocols (`whose`: **both sides**, yours or your opponent's)"),
            M("COMPILED", "compiled_protocols", "compiled protocols"),
        ),
        "what a quantity counts",
        card=True,
    ),
    # destinations and sources of shift and play
    EngineEnum(
        "Dest",
        "T_",
        "to",
        (
            M("ANY", "any", "any line allowed by the rules (shift: any other line of the card's side)"),
            M("THIS_LINE", "this_line", "this card's line", printed="to this line", played="in this line"),
            M(
                "OTHER_LINE",
                "other_line",
                "a line other than this card's line",
                printed="to another line",
                played="in another line",
            ),
            M(
                "TO_OR_FROM",
                "to_or_from_this_line",
                "a card in this line goes to another line; any other card comes to this line",
                printed="either to or from this line",
            ),
            M(
                "OPP_HIGHEST",
                "opponent_highest",
                "a line where the opponent has their highest total (ties: the decider chooses)",
                "Courage 3",
                printed="to the line where your opponent has their highest total value",
            ),
            M(
                "LINE_WITH_FACEDOWN",
                "line_with_facedown",
                "a line holding a face-down card on either side",
                "Smoke 3",
                played="in a line with a face-down card",
            ),
            M(
                "THIS_STACK",
                "this_stack",
                "(play from a deck) onto this card's stack",
                "Assimilation 2",
                played="in this stack",
            ),
        ),
        "where `shift` and `play` put the card",
        card=True,
    ),
    EngineEnum(
        "Source",
        "S_",
        "from",
        (
            M("HAND", "hand"),
            M("DECK_TOP", "deck_top"),
            M("OPP_DECK", "opponent_deck"),
            M("DECK", "deck"),
            M("TRASH", "trash"),
            M("FIELD", "field"),
            M("DRAWN", "drawn"),
        ),
        "where a verb takes its cards (meanings: the verbs' `sources`)",
    ),
    # conditions
    EngineEnum(
        "Cond",
        "COND_",
        "if",
        (
            M("NONE"),
            M("DID", "did", 'only if the previous step actually happened ("If you do")'),
            M("THIS_COVERED", "this_covered", "only if this card is covered"),
            M("THIS_COVERING", "this_covering", "only if this card is covering a card"),
            M("CMP", None, "a comparison `AMOUNT OP AMOUNT-or-N`"),
            M("THAT_STATED", "that_matches_stated", '"that card" is of the stated protocol', "Luck 3"),
            M(
                "SAME",
                "same",
                "the same condition as the previous conditional step: one sentence split into steps",
                "Unity 1",
            ),
        ),
        "a step's condition",
        card=True,
    ),
    EngineEnum(
        "CmpOp",
        "OP_",
        "ops",
        (M("EQ", "=="), M("NE", "!="), M("LT", "<"), M("LE", "<="), M("GT", ">"), M("GE", ">=")),
        "the comparisons of `if` and `value_gt`/`value_lt`",
    ),
    # triggers (a box's `when`)
    EngineEnum(
        "Trigger",
        "TR_",
        "when",
        (
            M("NONE"),
            M("MIDDLE"),
            M("START", "start", "Start phase of the owner's turn (3.1)", "Light 1"),
            M("END", "end", "End phase of the owner's turn (3.6)", "Light 1"),
            M("COVERED", "covered", '"When this card would be covered: First, ..." (5.3)', "Fire 0"),
            M(
                "COVERED_OR_FLIPPED",
                "covered_or_flipped",
                "also before the card would be flipped: the flip follows unless the card has left (Metal 6)",
                "Metal 6",
            ),
            M(
                "COMPILE_DELETE",
                "compile_delete",
                '"When this card would be deleted by compiling: ..." (replaces that delete)',
                "Speed 2",
            ),
            M("AFTER_DISCARD", "after_discard", '"After you/your opponent discard ...:" (7.3), with `by`', "Plague 1"),
            M("AFTER_DRAW", "after_draw", '"After ... draw ...:", with `by`', "Spirit 3"),
            M("AFTER_DELETE", "after_delete", '"After ... delete ...:", with `by`', "Hate 3"),
            M("AFTER_CLEAR_CACHE", "after_clear_cache", '"After ... clear cache:", with `by`', "Speed 1"),
            M("PASSIVE"),
            M("AFTER_PLAY", "after_play", '"After ... plays a card"', "Ice 1"),
            M("AFTER_REFRESH", "after_refresh", '"After ... refreshes"', "War 0"),
            M("AFTER_COMPILE", "after_compile", '"After ... compiles"', "War 2"),
            M("AFTER_SHUFFLE", "after_shuffle", '"After ... shuffles their deck"', "Time 2"),
        ),
        "when a box's steps run",
        card=True,
    ),
    # passive flags (bits of CardDef.passive[box]); their card syntax: loader.py and docs/cards.md
    EngineEnum(
        "Passive",
        "PA_",
        "passive",
        (
            M("FACEDOWN_VALUE", "facedown_value"),
            M("LINE_VALUE", "line_value"),
            M("PER_FACEDOWN", "line_value_per_facedown"),
            M("DENY_FACEDOWN_LINE", "deny_facedown_line"),
            M("DENY_ANY_LINE", "deny_any_line"),
            M("DENY_FACEUP", "deny_faceup"),
            M("FACEUP_ANYWHERE", "play_faceup_anywhere"),
            M("IGNORE_MIDDLE", "ignore_middle"),
            M("SKIP_CACHE", "skip_check_cache"),
            M("PER_HAND", "line_value_per_hand_card", "+n per card in your hand (Clarity 0)"),
            M("PER_OPP_CARD", "line_value_per_opponent_card", "+n per opponent's card in this line (Mirror 0)"),
            M("RETURN_TO_DECK", "return_to_deck_top", "cards returned to your opponent's hand go to their deck top"),
            M("UNFLIPPABLE", "unflippable", "this card cannot be flipped (Ice 4)"),
            M("NO_DRAW_WITH_HAND", "no_draw_with_hand", "you cannot draw while you hold cards (Ice 6)"),
            M(
                "NO_OPP_MIDDLE",
                "no_opponent_middle_on_your_turn",
                "during your turn the opponent's cards have no middle text",
            ),
            M("PROTO_FACEUP_HERE", "protocol_faceup_here", "cards of this protocol may be played face-up in this line"),
            M("DENY", "deny", "the box holds a restriction (CardDef.deny[box], docs/cards.md)"),
        ),
        "passive modifiers (bits of CardDef.passive[box])",
        flags=True,
    ),
    # restrictions (a passive `{ deny = ... }`: CardDef.deny[box]); matched by denied() in zones.pxi
    EngineEnum(
        "Deny",
        "DN_",
        "deny",
        (
            M("NONE"),
            M("PLAY", "play", "play a card (either face)"),
            M("PLAY_UP", "play_faceup", "play a card face-up"),
            M("PLAY_DOWN", "play_facedown", "play a card face-down"),
            M("FLIP", "flip", "flip a card (either way)"),
            M("FLIP_UP", "flip_up", "flip a face-down card face-up"),
            M("FLIP_DOWN", "flip_down", "flip a face-up card face-down"),
            M("SHIFT", "shift", "shift a card from or to the line"),
            M("SHIFT_FROM", "shift_from", "shift a card out of the line"),
            M("SHIFT_TO", "shift_to", "shift a card into the line"),
            M("DELETE", "delete", "delete a card by a text (a compile still deletes it, 4.1)"),
            M("RETURN", "return", "return a card to its owner's hand"),
            M("REARRANGE", "rearrange", "rearrange or swap protocols (4.4), by control or by a text"),
            M("COMPILE", "compile", "compile a line (3.3; a forced compile that is refused is skipped)"),
            M("DRAW", "draw", "draw cards (a refresh draws too)"),
            M("REFRESH", "refresh", "refresh as the action (3.4)"),
            M("DISCARD", "discard", "discard cards by a text (clearing cache, 3.5, still discards)"),
        ),
        "the action a restriction forbids",
        card=True,
    ),
    EngineEnum(
        "SelfPlay",
        "SP_",
        "self_play",
        (
            M("ANYWHERE", "anywhere", "may be played face-up without matching protocols"),
            M("EITHER_SIDE", "either_side", "may be played face-up on either player's side"),
            M("EITHER_SIDE_DOWN", "either_side_down", "... and face-down too (an alternate reading of Corruption 0)"),
        ),
        "card-level play permissions (CardDef.self_play), read while the card is in hand",
        flags=True,
    ),
    # the engine's own
    EngineEnum(
        "Event",
        "EV_",
        "event",
        (
            M("DISCARD", "discard"),
            M("DRAW", "draw"),
            M("DELETE", "delete"),
            M("CLEAR_CACHE", "clear_cache"),
            M("PLAY", "play"),
            M("REFRESH", "refresh"),
            M("COMPILE", "compile"),
            M("SHUFFLE", "shuffle"),
        ),
        'events that open "after" windows (bits of State.ev[player])',
        flags=True,
    ),
    EngineEnum(
        "Zone",
        "Z_",
        "zone",
        (
            M("OUT", "out", "not in the game"),
            M("DECK", "deck"),
            M("HAND", "hand"),
            M("FIELD", "field"),
            M("TRASH", "trash"),
            M("TRANSIT", "transit", "being played (between hand and field)"),
        ),
        "where a card instance is (State.zone)",
    ),
    EngineEnum(
        "Phase",
        "PH_",
        "phase",
        (
            M("DRAFT", "draft"),
            M("START", "start"),
            M("CONTROL", "control"),
            M("COMPILE", "compile"),
            M("ACTION", "action"),
            M("CACHE", "cache"),
            M("END", "end"),
            M("OVER", "over", "the game has ended"),
        ),
        "the phase of the turn (State.phase; rule 3)",
    ),
    EngineEnum(
        "EndReason",
        "ER_",
        "end_reason",
        (
            M("NONE", "none"),
            M("COMPILED", "compiled", "three protocols Compiled"),
            M("TURN_CAP", "turn_cap", "the turn cap was reached: a draw"),
            M("LOOP_GUARD", "loop_guard", "texts triggered each other too long: a draw"),
        ),
        "why the game ended (State.end_reason; the records' `end_reason`)",
    ),
    EngineEnum(
        "DecisionKind",
        "D_",
        "decision",
        (
            M("NONE"),
            M("DRAFT", "draft", "pick a protocol"),
            M("ACTION", "action", "play a card or refresh"),
            M("COMPILE_LINE", "compile_line", "which line to compile"),
            M("ORDER", "order", "which simultaneous text resolves next"),
            M("MAY", "may", "do an optional step"),
            M("EITHER", "either", "which of two alternatives"),
            M("TARGET", "target", "a field card"),
            M("LINE", "line", "a line"),
            M("DISCARD", "discard", "a card to discard"),
            M("DISCARD_MORE", "discard_more", "another card to discard, or done"),
            M("HAND", "hand", "a card of the hand"),
            M("CONTROL_REARRANGE", "control_rearrange", "rearrange with control, or skip"),
            M("REARRANGE", "rearrange", "a new order of protocols"),
            M("PLAY", "play", "a play asked by a text"),
            M("EACH_LINE", "each_line", "the next noted line"),
            M("EACH_CARD", "each_card", "the next noted card"),
            M("STATE_NUMBER", "state_number", "a number to state"),
            M("STATE_PROTOCOL", "state_protocol", "a protocol to state"),
            M("DECK", "deck", "a card of the (revealed) deck"),
            M("TRASH", "trash", "a card of the trash"),
        ),
        "what a decision asks (State.dkind); its options: sim/engine/options.pxd",
    ),
    EngineEnum(
        "Restrict",
        "R_",
        "restrict",
        (
            M("NO_FACEDOWN", "nodown", "never play a card face-down (when another action exists)"),
            M("NO_REFRESH_WITH_CONTROL", "norefresh", "never refresh while holding the control component"),
            M("NO_FACEUP", "noup", "never play a card face-up"),
        ),
        "restrictions any strategy can be wrapped in (bits of a seat's `restrict`; the spec suffixes "
        "`+nodown`, `+norefresh`, `+noup`)",
        flags=True,
    ),
    EngineEnum(
        "EventKind",
        "EK_",
        "event_kind",
        (
            M("DRAW", "draw"),
            M("PLAY_UP", "play_face_up"),
            M("PLAY_DOWN", "play_face_down"),
            M("DELETE", "delete"),
            M("COMPILE", "compile"),
            M("RECOMPILE", "recompile"),
            M("CONTROL", "control"),
        ),
        "the per-game events of the dataset (EventRec.kind; the events table's `kind`)",
        first=1,
    ),
)
del M

# Restrictions: the Deny actions on a field card (`face` selects it), on a card at all (`whose`:
# the side it stands on or is played to; the line is the card's, a shift's destination or a
# play's line) and those a `scope = "this_line"` may narrow.
DENY_ON_FIELD = (
    "flip",
    "flip_up",
    "flip_down",
    "shift",
    "shift_from",
    "shift_to",
    "delete",
    "return",
)
DENY_ON_CARDS = ("play", "play_faceup", "play_facedown", *DENY_ON_FIELD)
DENY_IN_LINE = (*DENY_ON_CARDS, "compile")


def enum(name: str) -> EngineEnum:
    """The engine enum called `name` (C and Python), or by its `constants()` key."""
    return next(e for e in ENUMS if name in (e.name, e.key))


# every key a field verb's selection may carry (the loader accepts these on a step); those with words
# of their own (an enum: whose, covered, face, line, pick, each) get a table in docs/cards.md
SELECTOR_KEYS = (
    "whose",
    "covered",
    "face",
    "other",
    "line",
    "value",
    "value_gt",
    "value_lt",
    "min_cards",
    "pick",
    "each",
    "protocol",
)
WORD_SELECTOR_KEYS = tuple(k for k in SELECTOR_KEYS if any(e.key == k and e.card for e in ENUMS))


def printed(key: str, played: bool = False) -> dict[str | bool, str]:
    """Word -> how card text says it, for the enum written with `key` (the writer's phrases;
    `played`: a play's destination, where `to` reads "in ..." rather than "to ...")."""
    return {
        m.word: m.played if played else m.printed
        for m in enum(key).members
        if m.word is not None and (m.played if played else m.printed)
    }
