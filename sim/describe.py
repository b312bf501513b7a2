"""Readable names for options and log entries. The same texts are used by the step API, the
scenario runner (which answers decisions by these names) and `protolab replay`."""

from __future__ import annotations

from typing import Any

from sim.cards.vocabulary import log_texts
from sim.engine._core import constants, unpack_noted, unpack_play, unpack_rearrange

K = constants()
LINES = ("left", "middle", "right")
SEAT_NAMES = ("A", "B")
DK = {v: k for k, v in K["decision"].items()}
LG = {v: k for k, v in K["log"].items()}
PHASES = {v: k for k, v in K["phase"].items()}
PERMS = K["perms"]
OPT_REFRESH, OPT_DONE, OPT_SKIP = K["opt_refresh"], K["opt_done"], K["opt_skip"]
BOX_NAMES = ("top", "middle", "bottom")
VERB_LOG_TEXTS = log_texts()        # the texts of verbs' own log kinds, declared with the verbs


class Namer:
    """Turns card instance ids into names, hiding what a viewer may not see."""

    def __init__(self, pool, state: dict[str, Any], viewer: int | None = None):
        self.pool = pool
        self.state = state
        self.viewer = viewer

    def card(self, c: int) -> str:
        name = self.pool.cards[self.state["cdef"][c]].name
        if self.viewer is None:
            return name
        zone, face_up, owner = self.state["zone"][c], self.state["face_up"][c], self.state["owner"][c]
        hidden = (zone == 3 and not face_up and owner != self.viewer) or (zone in (1, 2) and owner != self.viewer)
        return "a face-down card" if hidden else name

    def protocols_after(self, player: int, perm: int) -> str:
        protos = self.state["protocols"][player]
        return " ".join(self.pool.protocols[protos[i]] for i in PERMS[perm])

    def option(self, kind: int, opt: int) -> str:
        k = DK.get(kind, "?")
        if k == "draft":
            return self.pool.protocols[opt]
        if k in ("action", "play"):
            if opt == OPT_REFRESH:
                return "refresh"
            c, line, up, other_side = unpack_play(opt)
            return f"{self.card(c)} {'up' if up else 'down'} {LINES[line]}" + (" opponent" if other_side else "")
        if k in ("compile_line", "line", "each_line"):
            return LINES[opt]
        if k == "order":
            return self.card(unpack_noted(opt)[0])
        if k == "may":
            return "yes" if opt == 1 else "no"
        if k == "either":
            return str(opt + 1)
        if k == "discard_more" and opt == OPT_DONE:
            return "done"
        if k in ("target", "each_card", "hand", "discard", "discard_more", "deck", "trash"):
            return self.card(opt)
        if k == "state_number":
            return str(opt)
        if k == "state_protocol":
            return self.pool.protocols[opt]
        if k == "control_rearrange":
            if opt == OPT_SKIP:
                return "skip"
            side, perm = unpack_rearrange(opt)
            return f"{SEAT_NAMES[side]}: {self.protocols_after(side, perm)}"
        if k == "rearrange":
            return self.protocols_after(*unpack_rearrange(opt))
        return str(opt)


def format_log(pool, state: dict[str, Any], entries: list[tuple]) -> list[str]:
    """One readable, indented line per log entry (omniscient: for replays and tests)."""
    nm = Namer(pool, state)
    out = []
    for kind, depth, player, card, target, a, b in entries:
        k = LG.get(kind, "?")
        who = SEAT_NAMES[player] if player in (0, 1) else "-"
        src = nm.card(card) if card >= 0 else who
        tgt = nm.card(target) if target >= 0 else ""
        pad = "  " * (depth + (0 if k == "turn" else 1))
        if k in VERB_LOG_TEXTS:
            line = VERB_LOG_TEXTS[k].format(**_log_fields(who, src, tgt, player, a, b))
        elif k == "turn":
            line = f"Turn {b}: {who}"
        elif k == "draft":
            line = f"{who} drafts {pool.protocols[b]}"
        elif k == "decision":
            line = f"{who} chooses {DK.get(a, '?')}: {_decision_text(nm, a, b)}"
        elif k == "play":
            face = "face-up" if b & 1 else "face-down"
            side = (b >> 1) & 1
            where = LINES[a] + ("" if side == player else f" on {SEAT_NAMES[side]}'s side")
            extra = " (under the playing card)" if b & 4 else ""
            by = f" ({src})" if card >= 0 else ""
            line = f"{who} plays {tgt} {face} in {where}{extra}{by}"
        elif k == "draw":
            line = f"{who} draws {a}" + (" from their revealed deck" if b == 1 else "")
        elif k == "discard":
            line = f"{who} discards {tgt}" + {1: " from the top of their deck",
                                              2: f" from the top of {SEAT_NAMES[1 - player]}'s deck",
                                              3: " at random",
                                              4: f" into {SEAT_NAMES[1 - player]}'s trash"}.get(a, "")
        elif k == "flip":
            line = f"{src} flips {tgt} face-{'up' if a else 'down'}"
        elif k == "delete":
            line = f"{'compile' if a == 1 and card < 0 else src} deletes {tgt}"
        elif k == "return":
            line = (f"{tgt} goes on top of {SEAT_NAMES[1 - player]}'s deck instead" if a == 1
                    else f"{src} returns {tgt}")
        elif k == "shift":
            line = f"{src} shifts {tgt} from {LINES[b]} to {LINES[a]}"
        elif k == "compile":
            line = (f"{src} flips {who}'s {LINES[a]} protocol to Compiled" if b == 2
                    else f"{who} {'recompiles' if b else 'compiles'} {LINES[a]}")
        elif k == "control":
            line = f"{who} takes the control component" if a else f"{who} returns control to neutral"
        elif k == "refresh":
            line = f"{who} refreshes"
        elif k == "rearrange":
            line = f"{who} rearranges {SEAT_NAMES[a]}'s protocols ({'-'.join(LINES[i] for i in PERMS[b])})"
        elif k == "trigger":
            line = f"{src} {BOX_NAMES[a]} resolves" + (f" (copy of {pool.cards[b - 1].name})" if b else "")
        elif k == "win":
            line = f"{who} wins"
        elif k == "reveal":
            line = (f"{who} reveals their hand ({b} cards)" if a == 1 else
                    f"{who} reveals {tgt} from hand" if a == 2 else
                    f"{who} reveals {tgt} from the top of their deck" if a == 3 else
                    f"{who} reveals their deck ({b} cards)" if a == 4 else
                    f"{who} reveals {tgt}" if a == 5 else f"{src} reveals {tgt}")
        elif k == "take":
            line = f"{who} takes {tgt} from {SEAT_NAMES[1 - player]}" + {0: " (at random)", 1: " (top of deck)",
                                                                   2: " (from the field)"}.get(a, "")
        elif k == "cancel":
            line = f"{src}: text interrupted"
        elif k == "shuffle":
            line = f"{who} shuffles their deck" if a == 1 else f"{who} shuffles their trash into their deck"
        elif k == "state":
            line = f"{who} states {pool.protocols[b] if a else b}"
        elif k == "skip":
            line = f"{who} has no legal action" if a == 1 else f"{src}: middle text ignored"
        else:
            line = f"{k} {player} {card} {target} {a} {b}"
        out.append(pad + line)
    return out


def _log_fields(who: str, src: str, tgt: str, player: int, a: int, b: int) -> dict[str, Any]:
    """The names a verb's log text may use (sim/cards/vocabulary.py, Verb.log_text)."""
    return {"who": who, "src": src, "tgt": tgt, "a": a, "b": b,
            "opponent": SEAT_NAMES[1 - player] if player in (0, 1) else "-",
            "line_a": LINES[a] if 0 <= a < 3 else str(a), "line_b": LINES[b] if 0 <= b < 3 else str(b)}


def _decision_text(nm: Namer, kind: int, opt: int) -> str:
    if DK.get(kind) in ("rearrange", "control_rearrange") and opt != OPT_SKIP:
        side, perm = unpack_rearrange(opt)
        return f"{SEAT_NAMES[side]}'s protocols to {'-'.join(LINES[i] for i in PERMS[perm])} order"
    try:
        return nm.option(kind, opt)
    except (IndexError, KeyError):
        return str(opt)
