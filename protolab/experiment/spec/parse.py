"""Read and validate an experiment spec (TOML, docs/experiments.md) before any work starts: the top
level here, each table by its own module (draft, arms, meta, tune, stop, strength). Checks that need
the card pool (protocol names, variant files that parse) happen in `protolab.experiment.run.plan`,
still before any game is played."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from protolab.experiment.spec.arms import Arm, card_reader, parse_arms
from protolab.experiment.spec.checker import Checker, SpecError
from protolab.experiment.spec.draft import Draft, parse_draft
from protolab.experiment.spec.files import read_spec_file
from protolab.experiment.spec.limits import DEFAULT_SHARD_GAMES, MAX_GAMES, MAX_SHARD_GAMES, SPEC_FORMAT
from protolab.experiment.spec.meta import Meta, parse_meta
from protolab.experiment.spec.model import Spec
from protolab.experiment.spec.stop import DEFAULT_BATCH, Stop, parse_stop
from protolab.experiment.spec.strategy import RunName, StrategyPair, seat_pair
from protolab.experiment.spec.strength import parse_strength
from protolab.experiment.spec.tune import parse_tune
from sim.pool import DEFAULT_SETS
from sim.schema import Checked, check, fail, integer, texts
from sim.schema import text as nonblank


class PoolTable(Checked):
    sets: Annotated[
        texts("set names"), AfterValidator(lambda v: v or fail('expected at least one set, e.g. ["Main 1", "Aux 1"]'))
    ] = list(DEFAULT_SETS)
    cards: Any = []  # card files: read by arms.card_reader


class SeatsTable(Checked):
    strategies: StrategyPair = ["random", "random"]
    swap: Annotated[bool, Field(description="true or false")] = False


class RunFile(Checked):
    """A run spec's top level: the keys every spec has, with their values; the tables below it are
    checked by their own models or parsers (draft, arms, tiers, meta, tune, stop, strength)."""

    name: Annotated[RunName, Field(description='a short run name, e.g. name = "demo"')]
    description: check(lambda v: isinstance(v, str), "a string") = ""
    seed: Annotated[
        integer(0, 2**63 - 1, "the master seed"), Field(description="the master seed, a whole number, e.g. seed = 1")
    ]
    games: Annotated[
        integer(1, MAX_GAMES, "the number of games per matchup"),
        Field(description="the number of games per matchup, e.g. games = 10000"),
    ]
    turn_cap: integer(1, 10_000, "the turn cap") = 200
    output: nonblank("an output folder") = "runs"
    shard_games: Any = None  # its default depends on [stop]: parse_spec
    events: Any = True  # parse_events
    pool: PoolTable = PoolTable()
    seats: SeatsTable = SeatsTable()
    draft: Any = None
    arms: Any = None
    tiers: Any = None
    meta: Any = None
    tune: Any = None
    stop: Any = None
    strength: Any = None


class Overrides(Checked):
    games: integer(1, MAX_GAMES, "the --games given") | None = None


class StoredRunFile(RunFile):
    """The form protolab stores (Spec.to_dict, run.json's spec): where the spec came from and what the
    command line changed, kept so that a resumed run says so."""

    format: integer(SPEC_FORMAT, SPEC_FORMAT, "the stored spec's format")
    source: check(lambda v: isinstance(v, str), "the path of the spec file") = ""
    overrides: Overrides = Overrides()


def load_spec(arg: str | Path, games: int | None = None) -> Spec:
    """Read, validate and normalise a spec file; `games` overrides its `games` (`--games`)."""
    raw, source, base = read_spec_file(arg)
    return parse_spec(raw, source, base, games=games)


def _stored(f: RunFile, raw: dict[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    """(source, overrides) of the stored form: where the spec came from and what the command line
    changed, kept so that a resumed run says so; a spec file's own name and no overrides otherwise."""
    if not isinstance(f, StoredRunFile):
        return source, {}
    overrides = {"games": f.overrides.games} if f.overrides.games is not None else {}
    return (f.source if "source" in raw else source), overrides


def _games(games: int | None, n_games: int, overrides: dict[str, Any]) -> int:
    """The games per matchup: the spec's, or `games` (--games), then recorded in `overrides`."""
    if games is None:
        return n_games
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES:
        raise SpecError(
            f"--games: expected a whole number of games per matchup, at least 1 and at most "
            f"{MAX_GAMES:,}; got {games!r}"
        )
    overrides["games"] = games
    return games


def _check_swap(c: Checker, swap: bool, n_games: int, shard_games: int, overrides: dict[str, Any]) -> None:
    if swap and n_games % 2:
        msg = f"expected an even number when seats.swap = true (the two games of a pair share a seed), got {n_games}"
        raise SpecError(f"--games: {msg}") if "games" in overrides else c.error("games", msg)
    if swap and shard_games % 2:
        raise c.error("shard_games", f"expected an even number when seats.swap = true, got {shard_games}")


def parse_spec(
    raw: dict[str, Any],
    source: str,
    base: Path,
    games: int | None = None,
    card_texts: dict[str, str] | None = None,
    within: str = "",
) -> Spec:
    """Validate the TOML tables of a spec, or its stored form (Spec.to_dict, marked by `format`),
    which must read back as it is. `card_texts` (path -> contents) replaces reading the card files
    from disk: `--resume` parses run.json's spec (`within` "spec") with the run's inputs/."""
    c = Checker(source, within)
    for key in ("train", "qtrain"):
        if key in raw:
            raise c.error(key, "a training spec (docs/training.md): run it with protolab train, not as an experiment")
    if card_texts is not None and "format" not in raw:
        raise c.error("format", f"missing; expected the spec as protolab stores it (format = {SPEC_FORMAT})")
    f = c.model(raw, "", StoredRunFile if "format" in raw else RunFile)
    origin, overrides = _stored(f, raw, source)
    n_games = _games(games, f.games, overrides)
    shard_games = c.integer(
        raw.get("shard_games", _default_shard_games(raw)),
        "shard_games",
        2,
        MAX_SHARD_GAMES,
        "the number of games per shard",
    )
    events = parse_events(c, raw.get("events", True))
    _check_swap(c, f.seats.swap, n_games, shard_games, overrides)
    draft = parse_draft(c, raw.get("draft", {"mode": "random"}), base, card_texts, "format" in raw)
    arms = _arms(c, raw, f, base, card_texts)
    strength = None
    if "strength" in raw:  # adjacent tiers head to head: one more arm per pair
        strength, duels = parse_strength(c, raw["strength"], arms, draft.mode, f.seats.swap, MAX_GAMES)
        arms += duels
    meta, tune = _loop(c, raw, draft, arms)
    stop = _parse_stop(c, raw, draft.mode, arms, n_games, f.seats.swap)
    _check_holds(c, arms, draft, stop)
    spec = Spec(
        name=f.name,
        seed=f.seed,
        games=n_games,
        turn_cap=f.turn_cap,
        shard_games=shard_games,
        events=events,
        swap=f.seats.swap,
        draft=draft,
        arms=arms,
        description=f.description.strip(),
        output=f.output,
        source=origin,
        overrides=overrides,
        meta=meta,
        tune=tune,
        stop=stop,
        strength=strength,
    )
    if "format" in raw:
        _check_reads_back(c, spec.to_dict(), raw)
    return spec


def _arms(
    c: Checker, raw: dict[str, Any], f: RunFile, base: Path, card_texts: dict[str, str] | None
) -> tuple[Arm, ...]:
    """The spec's arms, each with its card files read (from disk, or from the run's copies)."""
    cards = card_reader(c, base, card_texts)
    base_cards = cards(f.pool.cards, "pool.cards")
    strategies = seat_pair(f.seats.strategies)
    return parse_arms(c, raw, raw.get("seats", {}), tuple(f.pool.sets), base_cards, strategies, cards)


def _loop(
    c: Checker, raw: dict[str, Any], draft: Draft, arms: tuple[Arm, ...]
) -> tuple[Meta | None, dict[str, Any] | None]:
    """[meta] (a metagame loop) or [tune] (a balance search): at most one of them."""
    meta = parse_meta(c, raw["meta"], draft, len(arms)) if "meta" in raw else None
    tune = parse_tune(c, raw["tune"], draft.mode, len(arms)) if "tune" in raw else None
    if meta is not None and tune is not None:
        raise c.error("tune", "expected either [meta] (a metagame loop) or [tune] (a balance search), not both")
    return meta, tune


def _check_holds(c: Checker, arms: tuple[Arm, ...], draft: Draft, stop: Stop | None) -> None:
    """An arm's `holds` names one block of draft mode holding (Arm.holds); a run that stops when
    settled compares arms batch by batch, so its arms play every block."""
    held = {p.lower() for p in draft.protocols}
    for i, arm in enumerate(arms):
        if not arm.holds:
            continue
        if draft.mode != "holding":
            raise c.error(f"arms[{i}].holds", f"expected only with draft mode 'holding', got mode {draft.mode!r}")
        if arm.holds.lower() not in held:
            raise c.error(
                f"arms[{i}].holds", f"expected one of draft.protocols ({', '.join(draft.protocols)}), got {arm.holds!r}"
            )
        if stop is not None:
            raise c.error(f"arms[{i}].holds", "expected no [stop] with arms that play one block (remove one of them)")


def _check_reads_back(c: Checker, mine: Any, theirs: Any, key: str = "") -> None:
    """The stored form must be exactly what it parses to (Spec.to_dict): a key that parses but was
    written otherwise (a tier renamed, a checksum changed, a key dropped) was edited."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k in [*mine, *(k for k in theirs if k not in mine)]:
            sub = f"{key}.{k}" if key else k
            if k not in theirs:
                raise c.error(sub, "missing; expected the stored spec as protolab writes it (was it edited?)")
            _check_reads_back(c, mine.get(k), theirs[k], sub)
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            _check_reads_back(c, a, b, f"{key}[{i}]")
    elif mine != theirs:
        raise c.error(key, f"reads as {mine!r}, but {theirs!r} is stored (was it edited?)")


def _default_shard_games(raw: dict[str, Any]) -> int:
    """A run that stops when settled looks after every `stop.batch` games: its shards default to one batch."""
    stop = raw.get("stop")
    batch = stop.get("batch", DEFAULT_BATCH) if isinstance(stop, dict) else None
    if isinstance(batch, int) and not isinstance(batch, bool) and 2 <= batch <= MAX_SHARD_GAMES and batch % 2 == 0:
        return batch
    return DEFAULT_SHARD_GAMES


def _parse_stop(
    c: Checker, raw: dict[str, Any], mode: str, arms: tuple[Arm, ...], games: int, swap: bool
) -> Stop | None:
    if "stop" not in raw:
        return None
    if "meta" in raw or "tune" in raw:
        raise c.error("stop", "expected [stop] on an A/B run, not with [meta] or [tune] (they stop by their own rules)")
    return parse_stop(c, raw["stop"], mode, len(arms), any(a.tier for a in arms), games, swap)


def parse_events(c: Checker, raw: Any) -> bool | str | float:
    """`events`: true or "all" (every game's events), a fraction between 0 and 1 (the events of that
    share of the games, chosen from each game's seed), "none" (no events, but the per-shard summaries
    `cards` and `compiles`, from every game), or false (the games table only). Normalised so that
    "all" and 1 hash as true, and 0 as "none"."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("all", "none"):
        return True if raw.strip().lower() == "all" else "none"
    if isinstance(raw, int | float) and 0 <= raw <= 1:
        return True if raw == 1 else "none" if raw == 0 else float(raw)
    raise c.error(
        "events", f'expected true, false, "all", "none" or a fraction between 0 and 1 (e.g. 0.1), got {raw!r}'
    )
