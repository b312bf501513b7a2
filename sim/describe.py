"""Readable names for options and log entries. The same texts are used by the step API, the
scenario runner (which answers decisions by these names) and `protolab replay`. How each log kind
reads is declared with the vocabulary (sim/cards/vocabulary/log_forms.py, LOG_FORMS and the verbs' log
texts); the fields its texts name are worked out here (FIELDS)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sim.cards.vocabulary import LogForm, log_forms
from sim.engine._core import constants, unpack_noted, unpack_play, unpack_rearrange
from sim.enums import LOG_NOTES, LogKind, Zone, names
from sim.pool import Pool

K = constants()
LINES = ("left", "middle", "right")
SEAT_NAMES = ("A", "B")
DK: dict[int, str] = {code: str(word) for code, word in names("decision").items()}  # words, no flags
LG = {k.value: k.name.lower() for k in LogKind}
PHASES = names("phase")
PERMS = K["perms"]
OPT_REFRESH, OPT_DONE, OPT_SKIP = K["opt_refresh"], K["opt_done"], K["opt_skip"]
BOX_NAMES = ("top", "middle", "bottom")
LOG_FORMS = log_forms()  # log kind -> how it reads


class Namer:
    """Turns card instance ids into names, hiding what a viewer may not see."""

    def __init__(self, pool: Pool, state: dict[str, Any], viewer: int | None = None):
        self.pool = pool
        self.state = state
        self.viewer = viewer

    def card(self, c: int) -> str:
        name = self.pool.cards[self.state["cdef"][c]].name
        if self.viewer is None:
            return name
        zone, face_up, owner = self.state["zone"][c], self.state["face_up"][c], self.state["owner"][c]
        hidden = (zone == Zone.FIELD and not face_up and owner != self.viewer) or (
            zone in (Zone.DECK, Zone.HAND) and owner != self.viewer
        )
        return "a face-down card" if hidden else name

    def protocols_after(self, player: int, perm: int) -> str:
        protos = self.state["protocols"][player]
        return " ".join(self.pool.protocols[protos[i]] for i in PERMS[perm])

    def option(self, kind: int, opt: int) -> str:
        """How an option of a decision of this kind reads (OPTION_READERS)."""
        reader = OPTION_READERS.get(DK.get(kind, "?"))
        return str(opt) if reader is None else reader(self, opt)


def _play(nm: Namer, opt: int) -> str:
    if opt == OPT_REFRESH:
        return "refresh"
    c, line, up, other_side = unpack_play(opt)
    return f"{nm.card(c)} {'up' if up else 'down'} {LINES[line]}" + (" opponent" if other_side else "")


def _control_rearrange(nm: Namer, opt: int) -> str:
    if opt == OPT_SKIP:
        return "skip"
    side, perm = unpack_rearrange(opt)
    return f"{SEAT_NAMES[side]}: {nm.protocols_after(side, perm)}"


def _protocol(nm: Namer, opt: int) -> str:
    return nm.pool.protocols[opt]


def _line_name(nm: Namer, opt: int) -> str:
    return LINES[opt]


def _card(nm: Namer, opt: int) -> str:
    return nm.card(opt)


# decision kind (sim/cards/vocabulary/engine_enums.py, DecisionKind) -> how its options read
OPTION_READERS: dict[str, Callable[[Namer, int], str]] = {
    "draft": _protocol,
    "action": _play,
    "play": _play,
    "compile_line": _line_name,
    "line": _line_name,
    "each_line": _line_name,
    "order": lambda nm, opt: nm.card(unpack_noted(opt)[0]),
    "may": lambda nm, opt: "yes" if opt == 1 else "no",
    "either": lambda nm, opt: str(opt + 1),
    "discard_more": lambda nm, opt: "done" if opt == OPT_DONE else nm.card(opt),
    "target": _card,
    "each_card": _card,
    "hand": _card,
    "discard": _card,
    "deck": _card,
    "trash": _card,
    "state_number": lambda nm, opt: str(opt),
    "state_protocol": _protocol,
    "control_rearrange": _control_rearrange,
    "rearrange": lambda nm, opt: nm.protocols_after(*unpack_rearrange(opt)),
}


@dataclass(frozen=True)
class LogLine:
    """One log entry with what its texts need to name cards and protocols."""

    pool: Any
    nm: Namer
    kind: int
    depth: int
    player: int
    card: int
    target: int
    a: int
    b: int


def _seat(player: int) -> str:
    return SEAT_NAMES[player] if player in (0, 1) else "-"


def _line(x: int) -> str:
    return LINES[x] if 0 <= x < 3 else str(x)


def _where(e: LogLine) -> str:
    """The line a card was played into, and the side when it is not the player's own."""
    side = 1 if e.b & LOG_NOTES["PLAY_SIDE_B"] else 0
    return LINES[e.a] + ("" if side == e.player else f" on {SEAT_NAMES[side]}'s side")


# The names a log text may use (sim/cards/vocabulary/: LogForm.text, LogNote.text, Verb.log_text)
FIELDS: dict[str, Callable[[LogLine], Any]] = {
    "who": lambda e: _seat(e.player),
    "src": lambda e: e.nm.card(e.card) if e.card >= 0 else _seat(e.player),
    "tgt": lambda e: e.nm.card(e.target) if e.target >= 0 else "",
    "opponent": lambda e: _seat(1 - e.player) if e.player in (0, 1) else "-",
    "a": lambda e: e.a,
    "b": lambda e: e.b,
    "line_a": lambda e: _line(e.a),
    "line_b": lambda e: _line(e.b),
    "seat_a": lambda e: SEAT_NAMES[e.a],
    "order_b": lambda e: "-".join(LINES[i] for i in PERMS[e.b]),
    "box_a": lambda e: BOX_NAMES[e.a],
    "protocol_b": lambda e: e.pool.protocols[e.b],
    "copy_of_b": lambda e: f" (copy of {e.pool.cards[e.b - 1].name})" if e.b else "",
    "decision_a": lambda e: DK.get(e.a, "?"),
    "choice": lambda e: _decision_text(e.nm, e.a, e.b),
    "face_b": lambda e: "face-up" if e.b & LOG_NOTES["PLAY_FACE_UP"] else "face-down",
    "where": _where,
    "under_b": lambda e: " (under the playing card)" if e.b & LOG_NOTES["PLAY_UNDER"] else "",
    "by_src": lambda e: f" ({e.nm.card(e.card)})" if e.card >= 0 else "",
}


class _Fields(dict):
    """A text's fields, each worked out only when the text names it."""

    def __init__(self, entry: LogLine):
        super().__init__()
        self.entry = entry

    def __missing__(self, key: str) -> Any:
        return FIELDS[key](self.entry)


def _template(form: LogForm, e: LogLine) -> str:
    """The form's text, or the text of the note its entry carries."""
    if form.note:
        code = e.a if form.note == "a" else e.b
        for note in form.notes:
            if note.code == code:
                return note.text
    return form.text


def log_line(e: LogLine) -> str:
    """One entry as an indented line."""
    form = LOG_FORMS.get(LG.get(e.kind, "?"))
    if form is None:
        return "  " * (e.depth + 1) + f"? {e.player} {e.card} {e.target} {e.a} {e.b}"
    pad = "  " * (e.depth + (0 if form.top_level else 1))
    return pad + _template(form, e).format_map(_Fields(e))


def format_log(pool: Pool, state: dict[str, Any], entries: list[tuple]) -> list[str]:
    """One readable, indented line per log entry (omniscient: for replays and tests)."""
    nm = Namer(pool, state)
    return [log_line(LogLine(pool, nm, *entry)) for entry in entries]


def _decision_text(nm: Namer, kind: int, opt: int) -> str:
    if DK.get(kind) in ("rearrange", "control_rearrange") and opt != OPT_SKIP:
        side, perm = unpack_rearrange(opt)
        return f"{SEAT_NAMES[side]}'s protocols to {'-'.join(LINES[i] for i in PERMS[perm])} order"
    try:
        return nm.option(kind, opt)
    except (IndexError, KeyError):
        return str(opt)
