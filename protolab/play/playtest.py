"""A playtest's run folder: an ordinary run (run.json, games/, events/, cards/, compiles/,
tallies/, inputs/) whose spec names the strategy `human`, plus played/ with the person's decisions
(analysis/runs/played.py). Every game is one shard of one game, written by the runner's own table
code when the game ends, so `report`, `dashboard` and `replay` read it as they read any run.

The spec is built from the command's flags: seat A is the person, seat B the opponent (or another
person: hot seat); game i plays seed game_seeds(seed, matchup 0, game i), as a run derives it, with
the trios given (`draft.mode = "fixed"`) or drafted by the players (`"random"`: the person picks
their own protocols)."""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from analysis.runs import runfolder
from analysis.runs.played import PlayedGame, read_played, write_played
from analysis.runs.storage import Location
from analysis.runs.tallies import shard_tallies
from protolab.experiment.run.ledger import new_manifest, now
from protolab.experiment.run.plan import Plan, card_files, make_plan
from protolab.experiment.run.replay import open_run
from protolab.experiment.run.shardloop import dictionaries, make_task
from protolab.experiment.run.shards import cards_table, compiles_table, events_table, games_table, shard_entry
from protolab.experiment.seeds import game_seeds
from protolab.experiment.spec import Spec, parse_spec
from sim.batch import RECORDED_COLUMNS, play_columns, records
from sim.pool import DEFAULT_SETS, load_pool
from strategies.human import HUMAN, Playback
from strategies.model import load_model
from strategies.seats import make_seats
from strategies.spec import parse

SPEC_NAME = "play"
# what a played game's batch replay must give as the person saw it (sim/record.py's keys)
RESULT_KEYS = ("winner", "end_reason", "turns", "loop_card")


class PlaytestError(ValueError):
    """Bad flags or a folder that is not a playtest: one line, exit status 2."""


def spec_of(
    opponent: str | None,
    seed: int,
    games: int,
    protocols: list[list[str]] | None,
    cards: list[str],
    sets: list[str] | None,
    turn_cap: int = 200,
) -> Spec:
    """The run spec of a new playtest (`opponent` None: hot seat, a person in each seat)."""
    strategies = [HUMAN, HUMAN if opponent is None else opponent]
    raw: dict[str, Any] = {
        "name": SPEC_NAME,
        "description": f"Played in the browser: A = {strategies[0]}, B = {strategies[1]} (protolab play).",
        "seed": seed,
        "games": games,
        "turn_cap": turn_cap,
        "pool": {"sets": list(sets or DEFAULT_SETS), "cards": list(cards)},
        "seats": {"strategies": strategies, "swap": False},
        "draft": {"mode": "fixed", "matchups": [protocols]} if protocols else {"mode": "random"},
    }
    return parse_spec(raw, "protolab play", Path.cwd())


@dataclass
class Playtest:
    """An open playtest folder: its manifest, plan and which games are done."""

    run_dir: Location
    run_id: str
    plan: Plan
    manifest: Any  # analysis.runs.manifest.Manifest
    _changed: set[str] | None = None

    @property
    def spec(self) -> Spec:
        return self.plan.spec

    @property
    def games(self) -> int:
        return self.plan.total_games

    @property
    def strategies(self) -> tuple[str, str]:
        return tuple(self.spec.arms[0].strategies)  # type: ignore[return-value]

    @property
    def human_seats(self) -> list[int]:
        return [p for p, s in enumerate(self.strategies) if s == HUMAN]

    @property
    def pool(self) -> Any:
        return self.plan.pools[0]

    @property
    def protocols(self) -> Any:
        return self.plan.matchups[0] if self.plan.matchups else None

    def changed_cards(self) -> set[str]:
        """The cards whose value or text differs from the official card of that name (or that no
        official box has): the ones the designer's files changed."""
        if self._changed is None:
            official = {c.name: c for c in load_pool(sets=self.spec.arms[0].sets, require_encoded=False).cards}

            def printed(c: Any) -> tuple:
                return (c.value, c.top, c.middle, c.bottom)

            self._changed = {
                c.name for c in self.pool.cards if c.name not in official or printed(c) != printed(official[c.name])
            }
        return self._changed

    def seed_of(self, game: int) -> int:
        return int(game_seeds(self.spec.seed, np.array([0]), np.array([game]), False)[0])

    def done(self) -> set[int]:
        return {int(e.first_game or 0) for e in self.manifest.shards}

    def next_game(self) -> int | None:
        """The first game without a row (an unfinished one continues), or None when all are played."""
        done = self.done()
        return next((i for i in range(self.games) if i not in done), None)

    def record(self, game: int, names: dict[str, str]) -> PlayedGame:
        """The played file of `game`: as kept (an unfinished game continues), else a new one."""
        rec = read_played(self.run_dir, game)
        if rec is not None:
            return rec
        opponent = "" if len(self.human_seats) == 2 else self.strategies[1]
        return PlayedGame(game, self.seed_of(game), self.human_seats, [], False, names, opponent, model_hash(opponent))

    def save(self, rec: PlayedGame) -> None:
        write_played(self.run_dir, rec)

    def finish(self, rec: PlayedGame, result: dict[str, Any]) -> None:
        """Write the ended game as its shard (games, tallies, events, cards, compiles), list it in
        run.json, and mark its played file finished. The shard is played again in a C batch with
        the recorded decisions (the runner's path: events come from it); its result (`result`, the
        live game's record) must be the one the person saw, however the game ended: three compiles,
        the turn cap (a draw) or the loop bound (a draw naming its card)."""
        rec.finished = True
        index = rec.game_index
        pool = self.pool
        built = make_seats(pool, self.strategies).configs
        playback = Playback(rec.answers)  # one for both seats in a hot-seat game: the engine's order
        for p in self.human_seats:
            built[p].set_python(playback)
        cols = play_columns(
            pool,
            [rec.seed],
            built,
            turn_cap=self.spec.turn_cap,
            protocols=[self.protocols] if self.protocols else None,
            events=True,
        )
        replayed = records(pool, cols)[0]
        if playback.used != len(rec.answers) or any(replayed.get(k) != result.get(k) for k in RESULT_KEYS):
            raise RuntimeError(
                f"game {index}: the batch replay of the recorded decisions differs from the game played "
                f"(used {playback.used} of {len(rec.answers)} decisions)"
            )
        shard = self.plan.shards[index]
        dicts = dictionaries(self.plan)
        task = make_task(self.plan, shard, self.run_id, self.run_dir, "", dicts)
        strat = np.array([[dicts.strategies.index(s) for s in self.strategies]], np.int8)
        facts = {"matchup": np.zeros(1, np.int64), "game": np.array([index]), "strategies": strat}
        kept = {f: cols[f] for f in RECORDED_COLUMNS}
        ev = dict(cols["events"])
        ev["game"] = ev["game"].astype(np.int64)
        ev["seq"] = np.arange(len(ev["game"]), dtype=np.int32)
        games = games_table(task, pool, kept, facts)
        tables = {
            "games": games,
            "tallies": shard_tallies(games),
            "cards": cards_table(task, pool, kept, ev),
            "compiles": compiles_table(task, pool, kept, ev),
            "events": events_table(task, pool, ev),
        }
        paths = runfolder.shard_paths(self.run_dir, shard.name)
        data = {kind: runfolder.parquet_bytes(table, kind) for kind, table in tables.items()}
        for kind, blob in data.items():
            paths[kind].write_atomic(blob)
        rows = {kind: table.num_rows for kind, table in tables.items()}
        entry = shard_entry(shard.index, task.arm_name, index, 1, [0, 0], shard.name, data, rows)
        self.save(rec)
        self.manifest.shards = [e for e in self.manifest.shards if e.index != shard.index] + [entry]
        self.manifest.shards.sort(key=lambda e: e.index)
        if len(self.manifest.shards) == self.games:
            self.manifest.complete, self.manifest.finished = True, now()
        runfolder.write_manifest(self.run_dir, self.manifest)


def model_hash(strategy: str) -> str:
    """The hash of the learned model a strategy plays ("" if none)."""
    if not strategy:
        return ""
    spec = parse(strategy)
    if spec.base != "learned" and "model" not in spec.params:
        return ""
    return load_model(str(spec.params.get("model", "learned"))).hash


def create(out: str | None, spec: Spec) -> Playtest:
    """A new playtest folder: `out` itself (new or empty), else runs/play-<date>-<time>/."""
    plan = make_plan(spec, shard_games=1)
    made: Path | None  # the folder this call makes (removed again if the disk is full)
    if out is None:
        run_dir, run_id = runfolder.create_run_dir("runs", SPEC_NAME, datetime.now().strftime("%Y%m%d-%H%M%S"))
        made = Path(str(run_dir))
    else:
        run_dir = runfolder.open_location(out)
        if Path(out).exists() and any(Path(out).iterdir()):
            raise PlaytestError(
                f"--out {out}: the folder holds files but no playtest (run.json); expected a new folder"
            )
        made = None if Path(out).exists() else Path(out)
        run_id = Path(out).resolve().name
    manifest = new_manifest(plan, run_id)
    try:
        run_dir.mkdir()
        runfolder.make_table_dirs(run_dir)
        runfolder.save_inputs(run_dir, {cf.path: cf.text for cf in card_files(spec)})
        runfolder.write_manifest(run_dir, manifest)
    except OSError:
        unmake(made or Path(str(run_dir)), keep_folder=made is None)
        raise
    return Playtest(run_dir, run_id, plan, manifest)


def unmake(folder: Path, keep_folder: bool) -> None:
    """Undo a playtest folder a full disk cut short (no run.json yet), so the next `play --out` can
    start it again: its contents, and the folder itself unless it existed (empty) before."""
    for child in folder.iterdir() if folder.is_dir() else ():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    if not keep_folder:
        with contextlib.suppress(OSError):
            folder.rmdir()


def reopen(out: str) -> Playtest:
    """An existing playtest folder, to play its next game (or continue its unfinished one)."""
    try:
        opened = open_run(out)
    except ValueError as e:
        raise PlaytestError(str(e)) from None
    spec = opened.plan.spec
    if HUMAN not in spec.arms[0].strategies or len(spec.arms) != 1:
        raise PlaytestError(f"--out {out}: a run folder, but not a playtest (no `human` seat); expected a new folder")
    plan = make_plan(spec, shard_games=1)
    return Playtest(runfolder.open_location(out), opened.manifest.run_id, plan, opened.manifest)
