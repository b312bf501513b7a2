"""The readable log: the engine's log kinds, their entries' notes and the texts they read as
(sim/describe.py)."""

from __future__ import annotations

from dataclasses import dataclass

from sim.cards.vocabulary.verbs import VERBS

# Log kinds of the engine that no verb owns (order kept from the first release; the numbers are
# not stored anywhere). Verbs add their own after these, in code order.
BASE_LOG_KINDS = (
    "turn",
    "decision",
    "play",
    "draw",
    "discard",
    "flip",
    "delete",
    "return",
    "shift",
    "compile",
    "control",
    "refresh",
    "rearrange",
    "trigger",
    "win",
    "reveal",
    "take",
    "cancel",
    "draft",
    "phase",
    "shuffle",
    "skip",
)
# declared but never written by the engine (kept so that the kinds after it keep their numbers)
UNWRITTEN_LOG_KINDS = ("phase",)


def log_kinds() -> tuple[str, ...]:
    """Every log kind, in engine order (LG_<KIND> = 1, 2, ...)."""
    return BASE_LOG_KINDS + tuple(v.log for v in VERBS if v.log)


def log_texts() -> dict[str, str]:
    """Log kind -> text template, for the verbs that give one."""
    return {v.log: v.log_text for v in VERBS if v.log and v.log_text}


@dataclass(frozen=True)
class LogNote:
    """One meaning of a log entry's note number: LN_<KIND>_<NAME> = code in the engine."""

    name: str
    code: int
    text: str


@dataclass(frozen=True)
class LogForm:
    """How an engine log kind reads (sim/describe.py). A log entry has a player, a card, a target
    and two numbers a and b; `note` says which of them ("a" or "b") picks one of `notes`, whose text
    then replaces `text`. Texts are str.format templates over the fields of sim/describe.py
    (`who`, `src`, `tgt`, `line_a`, ...)."""

    kind: str
    text: str
    note: str = ""
    notes: tuple[LogNote, ...] = ()
    zero: str = ""  # the name of note 0 when `text` is its reading (LN_<KIND>_<ZERO> = 0)
    bits: tuple[str, ...] = ()  # instead of notes: the note number's flags (LN_<KIND>_<BIT> = 1, 2, 4, ...)
    top_level: bool = False  # printed one indentation step less (turn headers)

    def constants(self) -> tuple[tuple[str, int], ...]:
        """The engine's names for this kind's note numbers (LN_<KIND>_<NAME>)."""
        named = [(self.zero, 0)] if self.zero else []
        named += [(n.name, n.code) for n in self.notes] + [(b, 1 << i) for i, b in enumerate(self.bits)]
        return tuple((f"LN_{self.kind.upper()}_{name}", code) for name, code in named)


N = LogNote
LOG_FORMS: tuple[LogForm, ...] = (
    LogForm("turn", "Turn {b}: {who}", top_level=True),
    LogForm("decision", "{who} chooses {decision_a}: {choice}"),
    LogForm("play", "{who} plays {tgt} {face_b} in {where}{under_b}{by_src}", "b", bits=("FACE_UP", "SIDE_B", "UNDER")),
    LogForm(
        "draw", "{who} draws {a}", "b", (N("REVEALED", 1, "{who} draws {a} from their revealed deck"),), zero="DECK"
    ),
    LogForm(
        "discard",
        "{who} discards {tgt}",
        "a",
        zero="HAND",
        notes=(
            N("DECK_TOP", 1, "{who} discards {tgt} from the top of their deck"),
            N("OPP_DECK", 2, "{who} discards {tgt} from the top of {opponent}'s deck"),
            N("RANDOM", 3, "{who} discards {tgt} at random"),
            N("INTO_OPP", 4, "{who} discards {tgt} into {opponent}'s trash"),
        ),
    ),
    LogForm("flip", "{src} flips {tgt} face-down", "a", (N("UP", 1, "{src} flips {tgt} face-up"),), "DOWN"),
    LogForm("delete", "{src} deletes {tgt}", "a", (N("BY_COMPILE", 1, "compile deletes {tgt}"),), "BY_TEXT"),
    LogForm(
        "return",
        "{src} returns {tgt}",
        "a",
        (N("TO_DECK", 1, "{tgt} goes on top of {opponent}'s deck instead"),),
        "TO_HAND",
    ),
    LogForm("shift", "{src} shifts {tgt} from {line_b} to {line_a}"),
    LogForm(
        "compile",
        "{who} compiles {line_a}",
        "b",
        (
            N("RECOMPILE", 1, "{who} recompiles {line_a}"),
            N("BY_TEXT", 2, "{src} flips {who}'s {line_a} protocol to Compiled"),
        ),
        "FIRST",
    ),
    LogForm(
        "control",
        "{who} returns control to neutral",
        "a",
        (N("TAKEN", 1, "{who} takes the control component"),),
        "NEUTRAL",
    ),
    LogForm("refresh", "{who} refreshes"),
    LogForm("rearrange", "{who} rearranges {seat_a}'s protocols ({order_b})"),
    LogForm("trigger", "{src} {box_a} resolves{copy_of_b}"),
    LogForm("win", "{who} wins"),
    LogForm(
        "reveal",
        "{src} reveals {tgt}",
        "a",
        (
            N("HAND", 1, "{who} reveals their hand ({b} cards)"),
            N("FROM_HAND", 2, "{who} reveals {tgt} from hand"),
            N("DECK_TOP", 3, "{who} reveals {tgt} from the top of their deck"),
            N("DECK", 4, "{who} reveals their deck ({b} cards)"),
            N("TRASH_OR_DRAWN", 5, "{who} reveals {tgt}"),
        ),
        "FIELD",
    ),
    LogForm(
        "take",
        "{who} takes {tgt} from {opponent}",
        "a",
        (
            N("RANDOM", 0, "{who} takes {tgt} from {opponent} (at random)"),
            N("DECK_TOP", 1, "{who} takes {tgt} from {opponent} (top of deck)"),
            N("FIELD", 2, "{who} takes {tgt} from {opponent} (from the field)"),
            N("TRASH", 3, "{who} takes {tgt} from their trash into their hand"),
        ),
    ),
    LogForm("cancel", "{src}: text interrupted"),
    LogForm("draft", "{who} drafts {protocol_b}"),
    LogForm(
        "shuffle",
        "{who} shuffles their trash into their deck",
        "a",
        (N("DECK", 1, "{who} shuffles their deck"),),
        "TRASH_INTO_DECK",
    ),
    LogForm(
        "skip", "{src}: middle text ignored", "a", (N("NO_ACTION", 1, "{who} has no legal action"),), "MIDDLE_IGNORED"
    ),
    # a verb's own kind without a fixed text: its notes are the verb's modes (st.mode)
    LogForm("state", "{who} states {b}", "a", (N("PROTOCOL", 1, "{who} states {protocol_b}"),), "NUMBER"),
)
del N


def log_forms() -> dict[str, LogForm]:
    """Every log kind -> how it reads: the forms above, and the verbs' fixed texts."""
    forms = {f.kind: f for f in LOG_FORMS}
    forms.update({k: LogForm(k, text) for k, text in log_texts().items()})
    return forms
