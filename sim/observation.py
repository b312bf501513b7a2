"""What one player may know (rule 8.1), built from an engine state: own hand and own face-down
cards, the public field, trashes and counts; never the opponent's hand, face-down identities or
any deck order. Used by the step API and by user strategies."""

from __future__ import annotations

from typing import Any

from sim.describe import PHASES, SEAT_NAMES, Namer
from sim.pool import Pool


def observation_from_state(pool: Pool, s: dict[str, Any], player: int) -> dict[str, Any]:
    nm = Namer(pool, s, viewer=player)
    names = pool.protocols

    def card_view(c: int) -> dict[str, Any]:
        up = bool(s["face_up"][c])
        visible = up or s["owner"][c] == player
        return {
            "card": nm.card(c) if visible else None,
            "face_up": up,
            "value": s["card_values"][c] if up else (2 if not visible else s["card_values"][c]),
        }

    obs: dict[str, Any] = {
        "player": SEAT_NAMES[player],
        "turn": s["turn"],
        "active": SEAT_NAMES[s["active"]],
        "phase": PHASES[s["phase"]],
        "control": "none" if s["control"] < 0 else SEAT_NAMES[s["control"]],
        "hand": [nm.card(c) for c in s["hand"][player]],
        "sides": {},
    }
    for p in (0, 1):
        obs["sides"][SEAT_NAMES[p]] = {
            "protocols": [names[i] for i in s["protocols"][p]],
            "compiled": list(map(bool, s["compiled"][p])),
            "stacks": [[card_view(c) for c in s["stacks"][p][line]] for line in range(3)],
            "values": s["values"][p],
            "hand_count": len(s["hand"][p]),
            "deck_count": len(s["deck"][p]),
            "trash": [nm.card(c) for c in s["trash"][p]],
        }
    return obs
