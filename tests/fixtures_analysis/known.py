"""Small run folders whose answers are known by construction (worked out by hand in the tests)."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures_analysis.synth import write_run

T1 = ("Fire", "Water", "Death")  # sorted: "Death, Fire, Water"
T2 = ("Hate", "Light", "Life")  # sorted: "Hate, Life, Light"

# (seat-0 trio, seat-1 trio, first player, winner, turns, matchup)
GAMES = [
    (T1, T2, 0, 0, 10, 0),  # g0: T1 wins, first player wins
    (T1, T2, 0, 0, 12, 0),  # g1: T1 wins, first player wins
    (T1, T2, 1, 0, 14, 0),  # g2: T1 wins, second player wins
    (T1, T2, 1, 1, 20, 0),  # g3: T2 wins, first player wins
    (T2, T1, 0, 0, 11, 1),  # g4: T2 wins, first player wins
    (T2, T1, 1, 1, 13, 1),  # g5: T1 wins, first player wins
    (T2, T1, 1, 1, 15, 1),  # g6: T1 wins, first player wins
    (T1, T2, 0, -1, 200, 0),  # g7: draw at the turn cap
]


def game_rows() -> list[dict]:
    rows = []
    for i, (a, b, fp, w, turns, m) in enumerate(GAMES):
        row = {
            "game_index": i,
            "first_player": fp,
            "winner": w,
            "turns": turns,
            "matchup": m,
            "end_reason": "turn_cap" if w < 0 else "compiled",
        }
        row.update({f"seat0_protocol_{p}": x for p, x in zip(("left", "middle", "right"), a, strict=True)})
        row.update({f"seat1_protocol_{p}": x for p, x in zip(("left", "middle", "right"), b, strict=True)})
        rows.append(row)
    # Compiles: g0 seat 0 at turns 2, 5, 10 (and one recompile), g0 seat 1 at 4; g1 seat 0 at 3, 6, 12.
    rows[0].update(
        seat0_compile1_turn=2, seat0_compile2_turn=5, seat0_compile3_turn=10, seat0_recompiles=1, seat1_compile1_turn=4
    )
    rows[1].update(seat0_compile1_turn=3, seat0_compile2_turn=6, seat0_compile3_turn=12)
    return rows


def _ev(
    g: int,
    turn: int,
    seat: int,
    kind: str,
    card: str | None = None,
    protocol: str | None = None,
    line: int | None = None,
) -> dict:
    if card and not protocol:
        protocol = card.split()[0]
    return {"game_index": g, "turn": turn, "seat": seat, "kind": kind, "card": card, "protocol": protocol, "line": line}


def event_rows() -> list[dict]:
    return [
        # g0 (T1 at seat 0 wins)
        _ev(0, 0, 0, "draw", "Fire 1"),
        _ev(0, 0, 0, "draw", "Water 2"),
        _ev(0, 0, 1, "draw", "Hate 0"),
        _ev(0, 2, 0, "play_face_up", "Fire 1", line=0),
        _ev(0, 2, 0, "compile", None, "Fire", 0),
        _ev(0, 3, 0, "play_face_down", "Water 2", line=1),
        _ev(0, 4, 0, "play_face_up", "Water 2", line=1),
        _ev(0, 4, 1, "compile", None, "Hate", 0),
        _ev(0, 5, 0, "draw", "Fire 1"),
        _ev(0, 5, 0, "compile", None, "Water", 1),
        _ev(0, 6, 1, "delete", "Fire 1", line=0),
        _ev(0, 7, 1, "control"),
        _ev(0, 8, 0, "recompile", None, "Fire", 0),
        _ev(0, 10, 0, "compile", None, "Death", 2),
        # g1 (T1 at seat 0 wins): Fire 1 drawn, never played
        _ev(1, 0, 0, "draw", "Fire 1"),
        _ev(1, 3, 0, "compile", None, "Water", 1),
        _ev(1, 6, 0, "compile", None, "Fire", 0),
        _ev(1, 12, 0, "compile", None, "Death", 2),
        # g2: seat 1 (T2) plays Fire 1 from the opponent's deck: not counted for Fire 1
        _ev(2, 3, 1, "play_face_up", "Fire 1", line=0),
        # g3 (T1 at seat 0 loses): drawn and played face-up
        _ev(3, 0, 0, "draw", "Fire 1"),
        _ev(3, 1, 0, "play_face_up", "Fire 1", line=2),
        # g4 (T1 at seat 1 loses): played face-down
        _ev(4, 2, 1, "play_face_down", "Fire 1", line=0),
        # g7 (draw): not decided, not counted
        _ev(7, 2, 0, "play_face_up", "Fire 1", line=0),
    ]


def known_run(path: Path, run_id: str = "known", events: bool = True, cards: bool = False) -> Path:
    """The known run: two shards; no cards files unless `cards` (then aggregated from the events)."""
    return write_run(path, game_rows(), event_rows() if events else None, run_id=run_id, shard_games=5, cards=cards)


def planted_run(path: Path, games: int, t1_wins: int, run_id: str, card: bool = False) -> Path:
    """`games` games of T1 (seat 0) vs T2, T1 winning the first `t1_wins`, first player alternating.
    With `card`, seat 0 plays Fire 1 face-up in every game (so its face-up win rate is T1's)."""
    rows, events = [], []
    for i in range(games):
        w = 0 if i < t1_wins else 1
        rows.append({"game_index": i, "first_player": i % 2, "winner": w})
        if card:
            events.append(_ev(i, 1, 0, "play_face_up", "Fire 1", line=0))
    return write_run(path, rows, events if card else None, run_id=run_id, shard_games=max(games, 1))


def person_run(path: Path, seats: list[str], games: int = 40, winner: int = 0) -> Path:
    """T1 (seat 0) wins every game against T2: a protocol at 100% and one at 0%, flagged by any band
    (`winner`: -1, every game a draw)."""
    rows = []
    for g in range(games):
        row = {"game_index": g, "seed": g, "first_player": g % 2, "winner": winner}
        row.update({f"seat0_protocol_{p}": x for p, x in zip(("left", "middle", "right"), T1, strict=True)})
        row.update({f"seat1_protocol_{p}": x for p, x in zip(("left", "middle", "right"), T2, strict=True)})
        rows.append(row)
    write_run(path, rows, run_id=path.name, shard_games=games)
    m = json.loads((path / "run.json").read_text())
    m["spec"] = {"name": "play", "seed": 5, "arms": [{"name": None, "sets": ["Main 1"], "strategies": seats}]}
    (path / "run.json").write_text(json.dumps(m))
    return path
