"""The decisions of a played game (`protolab play`), kept beside the run's tables.

A run folder of played games is an ordinary run whose strategy `human` names a person. What the
engine cannot rebuild from the seed (the person's answers) is kept here, one JSON file per game
in `played/`: every decision of the human seats in the order the engine asked them (option
indices), who played, and whether the game ended. The file is rewritten after each decision, so a
closed page, a stopped server or Ctrl-C loses nothing; an unfinished game has no row in `games`
(it stays out of win rates) but replays from this file."""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from analysis.runs.runfolder import RunDirError, open_location, write_atomic

PLAYED = "played"  # the folder, beside games/ and the other tables


@dataclass
class PlayedGame:
    """One played game: `answers` are the human seats' option indices, in the engine's order."""

    game_index: int
    seed: int
    human_seats: list[int]
    answers: list[int] = field(default_factory=list)
    finished: bool = False
    names: dict[str, str] = field(default_factory=dict)  # seat ("A", "B") -> the person's name, if given
    opponent: str = ""  # the opponent's strategy spec ("" in a hot-seat game)
    model_hash: str = ""  # the opponent's learned model, if it plays one

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=1).encode()


def path_of(run_dir: Any, game_index: int) -> Any:
    return open_location(run_dir) / PLAYED / f"game-{game_index:05d}.json"


def write_played(run_dir: Any, game: PlayedGame) -> None:
    """Write the game's file whole (a temporary file, then a rename)."""
    (open_location(run_dir) / PLAYED).mkdir()
    write_atomic(path_of(run_dir, game.game_index), game.to_json())


# The JSON type of each key of a played file (PlayedGame's fields); those without a default are required.
_KEY_TYPES: dict[str, type] = {
    "game_index": int,
    "seed": int,
    "human_seats": list,
    "answers": list,
    "finished": bool,
    "names": dict,
    "opponent": str,
    "model_hash": str,
}
_REQUIRED = [f.name for f in fields(PlayedGame) if f.default is MISSING and f.default_factory is MISSING]


def _checked(raw: Any, where: str) -> PlayedGame:
    if not isinstance(raw, dict):
        raise RunDirError(f"{where}: expected a JSON object; was it edited?")
    for key in raw:
        if key not in _KEY_TYPES:
            raise RunDirError(f"{where}: unknown key {key!r}; expected {', '.join(_KEY_TYPES)}")
    for key, kind in _KEY_TYPES.items():
        _check_type(raw, key, kind, where)
    if not all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in raw.get("answers", [])):
        raise RunDirError(f"{where}: key 'answers': expected option indices (whole numbers >= 0)")
    if not raw["human_seats"] or not set(raw["human_seats"]) <= {0, 1}:
        raise RunDirError(f"{where}: key 'human_seats': expected [0], [1] or [0, 1]")
    return PlayedGame(**raw)


def _check_type(raw: dict[str, Any], key: str, kind: type, where: str) -> None:
    """One key: present if required, and of its JSON type (a bool is not a whole number)."""
    if key not in raw:
        if key in _REQUIRED:
            raise RunDirError(f"{where}: key {key!r} is missing")
        return
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RunDirError(f"{where}: key {key!r}: expected {kind.__name__}, got {value!r:.40}")


def read_played(run_dir: Any, game_index: int) -> PlayedGame | None:
    """The game's file, or None when the run has none for it (a game not played by a person)."""
    path = path_of(run_dir, game_index)
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path}: cannot be read ({e})") from None
    return _checked(raw, str(path))


def played_indices(run_dir: Any) -> list[int]:
    """The game indices that have a played file, in order."""
    d = Path(str(open_location(run_dir) / PLAYED))
    if not d.is_dir():
        return []
    return sorted(int(p.stem.removeprefix("game-")) for p in d.glob("game-*.json") if p.stem[5:].isdigit())
