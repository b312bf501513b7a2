"""Replay any game of a run exactly: `protolab replay RUN --game N` (and `RUN#arm --game N`).

Everything is rebuilt from the run folder, never from the caller's flags: the spec and card files
from run.json and inputs/ (as `--resume` does), the arm's pool (checked against the run's pool
hash), the game's seed from (master seed, matchup, game in matchup) as the runner derives it, its
trios, first player and strategies as the shard played them. A seat-swapped game (2k+1) takes the
trios and first player of its partner 2k, so the partner's draft is played up to its first turn.

The replayed game is then turned into a `games` row by the runner's own code (`games_table`) and
compared with the stored row, column by column (all but `run_id`): any difference is an error,
so a replay that is printed is the game the run folder describes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from sim.engine._core import constants

from analysis.pages import board
from analysis.runs import runfolder
from analysis.runs.manifest import Manifest, ShardEntry
from analysis.runs.open import split_arm
from analysis.runs.played import PlayedGame, path_of, read_played
from analysis.runs.storage import Location
from protolab.experiment.run.plan import ShardPlan, make_plan
from protolab.experiment.run.shardloop import dictionaries, make_task
from protolab.experiment.run.shards import games_table
from protolab.experiment.seeds import game_seeds
from protolab.experiment.spec import SpecError, parse_spec
from sim.batch import COMPILE_COLUMNS, MAX_COMPILES, SEAT_COLUMNS, empty_columns
from sim.cards.loader import CardDataError
from sim.describe import LINES, SEAT_NAMES, format_log
from sim.pool import ENGINE_VERSION, Pool
from sim.record import ending
from sim.state import State
from strategies.human import HUMAN
from strategies.seats import make_seats

ST_SCRIPT = constants()["strategy"]["script"]
LOG_TURN = constants()["log"]["turn"]
FINAL_TURN = -1  # turn_states key of the state after the last turn


class ReplayError(ValueError):
    """Bad input (no such run, arm or game; a shard not played yet): one line, exit status 2."""


class ReplayMismatch(RuntimeError):
    """The replayed game differs from the stored row: one line, exit status 1."""


@dataclass(frozen=True)
class RunGame:
    """One game of a run, located and set up exactly as its shard played it."""

    run_dir: Path | Location  # a pathlib.Path when local (Location.public)
    run_id: str
    arm: str
    arm_index: int
    game_index: int  # the row's game_index (global over arms)
    arm_game: int  # its index within the arm: matchup * games + game_in_matchup
    matchup: int
    game_in_matchup: int
    seed: int
    swapped: bool
    strategies: tuple[str, str]
    protocols: tuple[tuple[str, ...], tuple[str, ...]] | None
    first_player: int | None
    turn_cap: int
    pool: Pool
    plan: Any  # protolab.experiment.run.plan.Plan
    shards: tuple[ShardEntry, ...] = ()  # the manifest's shard entries
    draft: tuple[str, str] = ("random", "random")  # each seat's draft strategy (draft mode "draft")
    draft_files: tuple[tuple[str, str], ...] = ()  # (path, contents) of the tables it names


# -- locating the game -----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenRun:
    """A run folder's manifest and the plan rebuilt from it (open once, locate many games)."""

    run_dir: Path
    manifest: Manifest
    plan: Any  # protolab.experiment.run.plan.Plan


def open_run(run_dir: str | Path | Location, allow_code: bool = False) -> OpenRun:
    run_dir = Path(run_dir)
    return OpenRun(run_dir, *_open_run(run_dir, allow_code))


def _open_run(run_dir: Path, allow_code: bool = False) -> tuple[Manifest, Any]:
    """The manifest and the plan rebuilt from it (spec, card texts, pools); `allow_code`: its spec
    may name Python user strategies (--allow-code)."""

    try:
        manifest = runfolder.read_manifest(run_dir)
        source = str(run_dir / runfolder.MANIFEST)
        spec = parse_spec(
            manifest.spec.stored, source, run_dir, card_texts=runfolder.load_inputs(run_dir), within="spec"
        )
        plan = make_plan(spec, allow_code=allow_code)
    except (runfolder.RunDirError, SpecError, CardDataError) as e:
        raise ReplayError(str(e)) from None
    if manifest.engine_version != ENGINE_VERSION:
        raise ReplayError(
            f"{run_dir}: made by engine {manifest.engine_version}, this is {ENGINE_VERSION}; "
            "its games cannot be replayed exactly here"
        )
    for arm, pool in zip(spec.arms, plan.pools, strict=True):
        want = (manifest.pool_hashes or {}).get(arm.name, manifest.pool_hash)
        if pool.hash != want:
            raise ReplayError(
                f"{run_dir}: arm {arm.name!r} builds pool {pool.hash} today but the run used {want}; "
                "its games cannot be replayed exactly here"
            )
    return manifest, plan


def _global_index(run_arg: str, run_dir: Path | Location, arm: str | None, game: int, plan: Any) -> int:
    """The row's game_index: `game` itself for a whole run, the arm's first game + `game` for RUN#arm."""
    names = [a.name for a in plan.spec.arms]
    if arm is None:
        if not 0 <= game < plan.total_games:
            raise ReplayError(f"{run_arg}: --game {game} is out of range; the run has games 0..{plan.total_games - 1}")
        return game
    if arm not in names:
        raise ReplayError(f"{run_dir}: no arm {arm!r} in this run; its arms: {', '.join(names)}")
    per_arm = plan.arm_size(names.index(arm))
    if not 0 <= game < per_arm:
        raise ReplayError(f"{run_arg}: --game {game} is out of range; arm {arm!r} has games 0..{per_arm - 1}")
    return int(plan.arm_first[names.index(arm)] + game)


def locate(run_arg: str, game: int, opened: OpenRun | None = None, allow_code: bool = False) -> RunGame:
    """Set up game `game` of RUN (its game_index) or of RUN#arm (its index within the arm);
    `opened` is RUN already opened (open_run), to replay many of its games."""

    run_dir, arm_name = split_arm(run_arg)
    if opened is None:
        opened = open_run(run_dir, allow_code)
    manifest, plan = opened.manifest, opened.plan
    spec = plan.spec
    gi = _global_index(run_arg, run_dir, arm_name, game, plan)
    arm_index, arm_game = plan.arm_of(gi)
    matchup, gim = plan.matchup_of(arm_index, arm_game)
    seed = int(game_seeds(spec.seed, np.array([matchup]), np.array([gim]), spec.swap)[0])
    arm = spec.arms[arm_index]
    pool = plan.pools[arm_index]
    base = RunGame(
        run_dir,
        manifest.run_id,
        arm.name,
        arm_index,
        gi,
        arm_game,
        matchup,
        gim,
        seed,
        False,
        tuple(arm.strategies),
        plan.matchups[matchup] if plan.matchups else None,
        None,
        spec.turn_cap,
        pool,
        plan,
        tuple(manifest.shards),
        tuple(spec.draft.policy) if spec.draft.mode == "draft" else ("random", "random"),
        tuple((t.path, t.text) for t in spec.draft.tables),
    )
    if not (spec.swap and gim % 2 == 1):
        return base
    # the partner (2k) as drafted or listed, with the seeded coin; this game exchanges its sides
    partner = dataclasses.replace(base, game_index=gi - 1, arm_game=arm_game - 1, game_in_matchup=gim - 1)
    start = _core_after_turn(partner, 1)
    names = pool.protocols
    dealt = [tuple(names[i] for i in side) for side in start["dealt"]]
    return dataclasses.replace(
        base,
        swapped=True,
        strategies=(arm.strategies[1], arm.strategies[0]),
        protocols=(dealt[1], dealt[0]),
        first_player=int(start["first_player"]),
    )


# -- playing it ------------------------------------------------------------------------------------


def new_game(
    pool: Pool,
    seed: int,
    strategies: tuple[str, str],
    protocols: Any = None,
    first_player: int | None = None,
    turn_cap: int = 200,
    until_turn: int = -1,
    draft: tuple[str, str] = ("random", "random"),
    draft_files: tuple[tuple[str, str], ...] = (),
    answers: list[int] | None = None,
) -> State:
    """A State played by these strategy specs and draft strategies (the engine's seats, built as in
    the batch path) to its end, or with `until_turn` to the end of that turn. A `human` seat
    answers from `answers` (a played game's recorded decisions, analysis/runs/played.py) and the
    game halts where they run out."""

    # scripted seats first: the constructor stops at the first decision instead of playing a game
    game = State(pool, seed=seed, protocols=protocols, first_player=first_player, turn_cap=turn_cap)
    built = make_seats(pool, strategies, draft, dict(draft_files).__getitem__).configs
    seats = tuple(ST_SCRIPT if s == HUMAN else c for s, c in zip(strategies, built, strict=True))
    game.strategies = seats
    game.answers = list(answers or [])
    game._status = game.core.run(game.answers, seats, until_turn=until_turn)  # State has no setter for seats
    return game


def played_game(g: RunGame) -> PlayedGame | None:
    """A game a person played (`protolab play`): its recorded decisions; None for any other game."""
    if HUMAN not in g.strategies:
        return None
    try:
        rec = read_played(g.run_dir, g.game_index)
    except runfolder.RunDirError as e:
        raise ReplayError(str(e)) from None
    if rec is None:
        raise ReplayError(f"{g.run_dir}: game {g.game_index} has a human seat but no played/ file of its decisions")
    return rec


def play(g: RunGame, until_turn: int = -1) -> State:
    rec = played_game(g)
    game = new_game(
        g.pool,
        g.seed,
        g.strategies,
        g.protocols,
        g.first_player,
        g.turn_cap,
        until_turn,
        g.draft,
        g.draft_files,
        None if rec is None else rec.answers,
    )
    if rec is not None and game._status == "bad":  # an answer out of range: a hand-edited file
        raise ReplayError(
            f"{path_of(g.run_dir, g.game_index)}: its recorded decisions do not fit game {g.game_index} "
            "(was it edited?)"
        )
    return game


def _core_after_turn(g: RunGame, turn: int) -> dict[str, Any]:
    """The raw engine state when `turn` ends (or at the game's end, if sooner)."""
    state: dict[str, Any] = play(g, until_turn=turn).core.state()
    return state


# -- checking it against the stored row --------------------------------------------------------------


def stored_row(g: RunGame) -> dict[str, Any]:
    """The row of `games` with this game_index, read from the one shard file that holds it."""

    for entry in g.shards:
        first, n = entry.first_game or 0, entry.games
        if first <= g.game_index < first + n:
            path = g.run_dir / (entry.games_file or f"games/{runfolder.shard_name(entry.index)}.parquet")
            try:
                rows = pq.read_table(path, filters=[("game_index", "=", g.game_index)]).to_pylist()
            except Exception as e:  # pyarrow raises several types for a missing or damaged file
                raise ReplayError(f"{path}: cannot be read ({' '.join(str(e).split())})") from None
            if len(rows) != 1:
                raise ReplayError(f"{path}: expected one row with game_index {g.game_index}, found {len(rows)}")
            row: dict[str, Any] = rows[0]
            return row
    raise ReplayError(
        f"{g.run_dir}: game {g.game_index} is in a shard that has not been played yet; finish the run "
        f"with `protolab run --resume {g.run_dir}`"
    )


def _columns(state: dict[str, Any], drafted: bool) -> dict[str, np.ndarray]:
    """One game's engine state as the batch columns `games_table` reads (sim/batch.py); `drafted`:
    the game drafted its trios (else its picks are -1, as the batch records listed trios)."""
    comp = state["compiles"][:MAX_COMPILES]
    cols = empty_columns(1)
    cols["picks"][0] = state["picks"] if drafted else -1
    for name in ("winner", "first_player", "end_reason", "loop_card"):
        cols[name][0] = state[name]
    cols["turns"][0] = min(state["turn"], state["turn_cap"])
    cols["protocols"][0] = [*state["dealt"][0], *state["dealt"][1]]
    cols["n_compiles"][0] = len(state["compiles"])
    for name in SEAT_COLUMNS:
        cols[name][0] = state[name]
    for k, name in enumerate(COMPILE_COLUMNS):
        cols[name][0, : len(comp)] = [c[k] for c in comp]
    return cols


def replayed_row(g: RunGame, game: State) -> dict[str, Any]:
    """The `games` row the runner would write for this replayed game (its own code, `games_table`)."""

    dicts = dictionaries(g.plan)
    task = make_task(g.plan, ShardPlan(0, g.arm_index, g.game_index, 1), g.run_id, g.run_dir, "", dicts)
    cols = _columns(game.core.state(), g.protocols is None)
    cols["seed"] = np.array([g.seed], np.uint64)
    strat = np.array([[dicts.strategies.index(s) for s in g.strategies]], np.int8)
    facts = {"matchup": np.array([g.matchup]), "game": np.array([g.game_in_matchup]), "strategies": strat}
    first: dict[str, Any] = games_table(task, g.pool, cols, facts).to_pylist()[0]
    return first


def differences(replayed: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    """Every column (but run_id) whose value differs, as 'column: replayed X, stored Y'."""
    out = []
    for col in sorted(set(replayed) | set(stored)):
        if col == "run_id":
            continue
        a, b = replayed.get(col, "<missing>"), stored.get(col, "<missing>")
        if a != b:
            out.append(f"{col}: replayed {a!r}, stored {b!r}")
    return out


def check(g: RunGame, game: State) -> int:
    """Raise ReplayMismatch unless the replay gives the stored row; returns the columns compared."""
    stored = stored_row(g)
    diff = differences(replayed_row(g, game), stored)
    if diff:
        raise ReplayMismatch(
            f"{g.run_dir}: game {g.game_index} replays differently from its stored row "
            f"({len(diff)} column(s)): {'; '.join(diff)}"
        )
    return len(stored) - 1


# -- printing --------------------------------------------------------------------------------------


def turn_states(game: State) -> dict[int, dict[str, Any]]:
    """State.state() at the end of every turn (key: the turn) and after the game (key FINAL_TURN).

    Each is replayed from the start and stopped as that turn ends (CoreState.run's until_turn),
    so every state is the exact position, not one rebuilt from the log."""
    states: dict[int, dict[str, Any]] = {}
    last = game.record()["turns"]
    for t in range(1, last + 1):
        if game.core.run(game.answers, game.strategies, until_turn=t) != "turn_end":
            break
        states[t] = game.state()
    game.core.run(game.answers, game.strategies)
    states[FINAL_TURN] = game.state()
    return states


def format_state(state: dict[str, Any], title: str) -> list[str]:
    """A position as the log names cards: per seat hand, deck and trash sizes, then each line's
    protocol, value and stack (bottom to top, face-down cards marked as in the log)."""
    out = [
        f"  == {title}: control {state['control']}; compiled A: "
        f"{', '.join(state['A']['compiled']) or 'none'}; B: {', '.join(state['B']['compiled']) or 'none'} =="
    ]
    width = max(len(x) for seat in SEAT_NAMES for x in state[seat]["protocols"]) + len(" (compiled)")
    for seat in SEAT_NAMES:
        p = state[seat]
        out.append(f"     {seat}  hand {len(p['hand'])}, deck {len(p['deck'])}, trash {len(p['trash'])}")
        for line, proto, value, stack in zip(LINES, p["protocols"], p["values"], p["stacks"], strict=True):
            name = proto + (" (compiled)" if proto in p["compiled"] else "")
            cards = ", ".join(c[5:] + " (face-down)" if c.startswith("down:") else c for c in stack) or "-"
            out.append(f"        {line:<6}  {name:<{width}}  {value:>2}   {cards}")
    return out


def log_lines(game: State, states: bool = False) -> list[str]:
    """The readable log; with `states`, the position at every turn boundary and at the end."""
    game.core.run(game.answers, game.strategies, True)
    entries = game.core.log_entries()
    lines = format_log(game.pool, game.core.state(), entries)
    game.core.run(game.answers, game.strategies)
    if not any(e[0] == LOG_TURN and e[6] == 1 for e in entries):
        # fixed trios are dealt when the game is set up, before the log starts: name turn 1 too
        first = (LOG_TURN, 0, game.core.state()["first_player"], -1, -1, 0, 1)
        entries, lines = [first, *entries], [f"Turn 1: {SEAT_NAMES[first[2]]}", *lines]
    if not states:
        return lines
    at = turn_states(game)
    out = []
    for entry, line in zip(entries, lines, strict=True):
        turn = entry[6]
        if entry[0] == LOG_TURN and turn - 1 in at:
            out += format_state(at[turn - 1], f"after turn {turn - 1}, bottom to top")
        out.append(line)
    out += format_state(at[FINAL_TURN], "at the end, bottom to top")
    return out


def result_line(rec: dict[str, Any]) -> str:
    return (
        f"Result: {ending(rec)}; "
        f"A = {', '.join(rec['protocols_0'])}; B = {', '.join(rec['protocols_1'])}; "
        f"first player {'AB'[rec['first_player']]}"
    )


def header(g: RunGame) -> str:
    how = (
        "seats swapped: seat 0 has its partner's seat-1 trio and strategy"
        if g.swapped
        else "as drafted"
        if g.protocols is None
        else "as listed"
    )
    return (
        f"run {g.run_id}  game {g.game_index} (arm {g.arm!r} game {g.arm_game}: matchup {g.matchup}, "
        f"game {g.game_in_matchup} in matchup; {how})\n"
        f"seed {g.seed}  pool {g.pool.hash}  engine {ENGINE_VERSION}  A = {g.strategies[0]}, "
        f"B = {g.strategies[1]}  turn cap {g.turn_cap}"
    )


def replay_run(run_arg: str, game: int, states: bool = False, allow_code: bool = False) -> list[str]:
    """The printed replay of one game of a run, checked against its stored row first."""
    g = locate(run_arg, game, allow_code=allow_code)
    played = play(g)
    rec_played = played_game(g)
    if rec_played is not None and not rec_played.finished:  # stopped mid-game: no row to check against
        return [
            header(g),
            *log_lines(played),
            f"Unfinished: the game stopped after {len(rec_played.answers)} recorded decisions of the person "
            "(it has no row in games, so no win rate counts it).",
        ]
    compared = check(g, played)
    rec = played.record(g.strategies)
    return [
        header(g),
        *log_lines(played, states),
        result_line(rec),
        f"Checked: the replay matches the stored row ({compared} columns, all but run_id).",
    ]


# -- the board page and the notebook view (analysis/pages/board.py) ----------------------------------------


def board_data(
    run_arg: str,
    game: int,
    rollouts: int = 0,
    rollout_seed: int = 1,
    allow_code: bool = False,
    opened: OpenRun | None = None,
) -> dict[str, Any]:
    """The board page's data for one game of a run, replayed and checked against its row first
    (the same checks as `protolab replay RUN --game N`, --allow-code included); `opened`: the run
    already opened (open_run), for the pages of many of its games."""
    g = locate(run_arg, game, opened, allow_code=allow_code)
    rec_played = played_game(g)
    if rec_played is not None and not rec_played.finished:
        raise ReplayError(
            f"{g.run_dir}: game {g.game_index} is unfinished; its board page comes when it ends "
            f"(`protolab replay {run_arg} --game {game}` prints it so far)"
        )
    played = play(g)
    check(g, played)
    meta = {
        "line": header(g).replace("\n", "; "),
        "strategy_0": g.strategies[0],
        "strategy_1": g.strategies[1],
        "run_id": g.run_id,
        "game_index": g.game_index,
        "seed": g.seed,
    }
    return board.game_data(played, f"run {g.run_id}, game {g.game_index}", rollouts, rollout_seed, meta)


def board_frame(run_arg: str, game: int, rollouts: int = 0) -> pd.DataFrame:
    """One row per turn end of one game of a run, for notebooks (analysis.pages.board.frame)."""
    return board.frame(board_data(run_arg, game, rollouts))
