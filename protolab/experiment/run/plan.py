"""Expand a spec into arms x matchups x games and cut it into shards, before any game is played.

Loading the pools here is the last validation step: unknown protocols and card files that do not
parse are reported with the spec file and key. The layout is a pure function of the spec:

    game_index = arm_first[arm] + (matchup - arm_matchup_first[arm]) * games + game_in_matchup

where every arm holds its matchups x games games (`arm_first` their running sum: arm * games_per_arm
when every arm plays the spec's games; a [strength] duel plays its own). An arm plays every matchup
unless it `holds` one protocol of draft mode holding: then only that protocol's block, under the
same matchup numbers (so the same seeds) as the arms that play them all. Shards are
consecutive game ranges of `shard_games` games that never cross an arm, so the
same spec always gives the same shards, whatever the number of workers. A shard is one Ray task,
and a worker's memory grows with it (docs/experiments.md, "Memory"), so the spec's `shard_games`
is capped at SHARD_CAP (with events) or SHARD_CAP_NO_EVENTS: a worker stays under WORKER_BOUND_MB
whatever the size of the run."""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass

import numpy as np

from protolab.experiment.pools import written
from protolab.experiment.seeds import sample_order
from protolab.experiment.spec import (
    Arm,
    CardFile,
    Spec,
    SpecError,
    check_matchups,
    check_size,
    refuse_code,
    seat_key,
)
from sim.cards.loader import CardDataError
from sim.pool import Pool, check_sets, load_pool
from strategies.errors import StrategyError
from strategies.spec import make_seat, parse_draft

WORKER_BOUND_MB = 500  # a worker's peak resident memory stays under this (measured, see above)
SHARD_CAP = 10_000  # games per shard with events (the events table dominates a worker's memory)
SHARD_CAP_NO_EVENTS = 50_000  # without events: the games table only

Trio = tuple[str, str, str]
Matchup = tuple[Trio, Trio]


@dataclass(frozen=True)
class ShardPlan:
    """Games [first_game, first_game + games) of the run, all in one arm."""

    index: int
    arm: int
    first_game: int
    games: int

    @property
    def name(self) -> str:
        return f"shard-{self.index:05d}"


@dataclass
class Plan:
    spec: Spec
    pools: list[Pool]
    matchups: list[Matchup]  # empty for random drafts (one implicit matchup)
    games_per_arm: int  # games of the first arm (of every arm but [strength]'s duels)
    total_games: int
    shards: list[ShardPlan]
    shard_games: int = 0  # games per shard (the last one of an arm may have fewer)
    arm_first: tuple[int, ...] = ()  # each arm's first game_index
    arm_blocks: tuple[tuple[int, int], ...] = ()  # each arm's matchups [first, end) (arm_blocks); () all

    @property
    def n_matchups(self) -> int:
        return max(1, len(self.matchups))

    def arm_matchups(self, arm: int) -> tuple[int, int]:
        """The matchup numbers [first, end) arm number `arm` plays."""
        return self.arm_blocks[arm] if self.arm_blocks else (0, self.n_matchups)

    def arm_size(self, arm: int) -> int:
        """The games of arm number `arm`."""
        first, end = self.arm_matchups(arm)
        return (end - first) * self.spec.arm_games(self.spec.arms[arm])

    def matchup_of(self, arm: int, arm_game: int) -> tuple[int, int]:
        """(matchup number, game in matchup) of game `arm_game` of arm number `arm`."""
        matchup, game = divmod(arm_game, self.spec.arm_games(self.spec.arms[arm]))
        return self.arm_matchups(arm)[0] + matchup, game

    def arm_of(self, game_index: int) -> tuple[int, int]:
        """(arm number, game within the arm) of a game_index."""
        arm = next(a for a in reversed(range(len(self.arm_first))) if self.arm_first[a] <= game_index)
        return arm, game_index - self.arm_first[arm]


def load_arm_pool(arm: Arm, source: str = "", key: str = "") -> Pool:
    """The pool of an arm, built from the card files' contents (not their paths), so a worker on
    another machine builds exactly the pool the driver checked. A bad set name is blamed on the
    `sets` key beside `key` (the cards key: `pool.cards`, `arms[i].cards`)."""
    try:
        check_sets(arm.sets)
    except CardDataError as e:
        sets_key = key.removesuffix(".cards") + ".sets" if key.endswith(".cards") else key
        raise SpecError(f"{source}: key '{sets_key}': {e}") from None
    with written([(cf.path, cf.text) for cf in arm.cards], "protolab-cards-") as paths:
        try:
            return load_pool(sets=arm.sets, cards=paths)
        except CardDataError as e:
            msg = str(e)
            for p, cf in zip(paths, arm.cards, strict=True):
                msg = msg.replace(str(p), cf.path)
            raise SpecError(f"{source}: key '{key}': {msg}") from None


def _canon(pool: Pool, name: str, source: str, key: str, arm: str) -> str:
    try:
        return pool.protocols[pool.protocol(name)]
    except KeyError:
        raise SpecError(
            f"{source}: key '{key}': unknown protocol {name!r}; expected one of "
            f"{', '.join(pool.protocols)} (the pool of arm {arm!r})"
        ) from None


class DisjointPairs:
    """Every unordered pair of disjoint trios (a, b), a listed before b, in a fixed order (by a, then
    b), indexable without listing them: all trios of 30 protocols make 8.2 million pairs, of which a
    sampled draft takes a few hundred. Each trio is a bit mask of its protocols; row i holds the
    trios after trio i that share none of its protocols."""

    def __init__(self, trios: list[Trio]):
        self.trios = trios
        bit = {name: 1 << k for k, name in enumerate(sorted({n for t in trios for n in t}))}
        masks = np.array([sum(bit[n] for n in t) for t in trios], dtype=np.int64)
        n = len(trios)
        self.disjoint = np.zeros((n, n), dtype=bool)
        for lo in range(0, n, 256):  # in blocks of rows: a few MB of masks at a time
            block = masks[lo : lo + 256, None] & masks[None, :]
            self.disjoint[lo : lo + 256] = (block == 0) & (
                np.arange(n)[None, :] > np.arange(lo, lo + len(block))[:, None]
            )
        self.ends = np.cumsum(self.disjoint.sum(axis=1))  # pairs up to and including row i

    def __len__(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    def take(self, indices: np.ndarray) -> list[Matchup]:
        """The pairs at these positions of the full list."""
        rows = np.searchsorted(self.ends, indices, side="right")
        out = []
        for k, i in zip(indices.tolist(), rows.tolist(), strict=True):
            before = int(self.ends[i - 1]) if i else 0
            j = int(np.flatnonzero(self.disjoint[i])[k - before])
            out.append((self.trios[i], self.trios[j]))
        return out

    def all(self) -> list[Matchup]:
        rows, cols = np.nonzero(self.disjoint)  # row-major: by a, then b
        return [(self.trios[i], self.trios[j]) for i, j in zip(rows.tolist(), cols.tolist(), strict=True)]


def expand_matchups(spec: Spec, pools: list[Pool]) -> list[Matchup]:
    """The matchups of the spec's draft mode, protocol names checked against every arm's pool."""
    d = spec.draft
    if d.mode == "random":
        return []
    if d.mode == "fixed":
        return [
            (_trio(spec, pools, a, f"draft.matchups[{i}][0]"), _trio(spec, pools, b, f"draft.matchups[{i}][1]"))
            for i, (a, b) in enumerate(d.matchups)
        ]
    if d.mode == "holding":
        holders = [_trio(spec, pools, (n,), f"draft.protocols[{i}]")[0] for i, n in enumerate(d.protocols)]
        names = _common_protocols(pools)
        if len(names) < 6:
            raise SpecError(f"{spec.source}: key 'pool.sets': expected a pool of at least six protocols, got {names}")
        return holding_matchups(spec.seed, holders, names, d.samples)
    trios = _drafted_trios(spec, pools)
    check_matchups(spec, len(trios) * (len(trios) - 1) // 2)
    pairs = DisjointPairs(trios)
    if not len(pairs):
        raise SpecError(
            f"{spec.source}: key 'draft.{'trios' if d.trios else 'protocols'}': expected at least one pair of "
            "trios without a common protocol"
        )
    if d.mode == "round_robin":
        return pairs.all()
    if d.samples > len(pairs):
        raise SpecError(
            f"{spec.source}: key 'draft.samples': expected at most {len(pairs):,} (the number of possible "
            f"matchups), got {d.samples:,}"
        )
    return pairs.take(sample_order(spec.seed, len(pairs), first=d.samples))


def _trio(spec: Spec, pools: list[Pool], names: tuple[str, ...], key: str) -> Trio:
    """The protocols `names` as the first arm's pool spells them, each checked against every arm's pool."""
    out = []
    for j, n in enumerate(names):
        canon = [_canon(p, n, spec.source, f"{key}[{j}]", a.name) for p, a in zip(pools, spec.arms, strict=True)]
        out.append(canon[0])
    return tuple(out)  # type: ignore[return-value]


def _common_protocols(pools: list[Pool]) -> list[str]:
    """The protocols every arm's pool has, sorted."""
    return sorted(set.intersection(*(set(p.protocols) for p in pools)))


def _drafted_trios(spec: Spec, pools: list[Pool]) -> list[Trio]:
    """The trios a round robin or sampled draft pairs: those listed (each once), else every trio of
    the protocols listed, or of the protocols every pool has."""
    d = spec.draft
    if d.trios:
        trios = [_trio(spec, pools, t, f"draft.trios[{i}]") for i, t in enumerate(d.trios)]
        if len(set(map(frozenset, trios))) != len(trios):
            raise SpecError(f"{spec.source}: key 'draft.trios': expected different trios, some are listed twice")
        return trios
    if d.protocols:
        names = sorted({_trio(spec, pools, (n,), f"draft.protocols[{i}]")[0] for i, n in enumerate(d.protocols)})
    else:
        names = _common_protocols(pools)
    return list(itertools.combinations(names, 3))


def holding_matchups(seed: int, holders: list[str], names: list[str], samples: int) -> list[Matchup]:
    """Draft mode `holding`: for each protocol P of `holders`, `samples` matchups in which seat 0's
    trio is P and two other protocols and seat 1's trio three more, all drawn uniformly from `names`
    (P at a uniformly random line). Each P has its own stream, seeded by (master seed, P's name), read
    in order, so a larger `samples` extends a smaller one and P's matchups do not depend on the others."""
    out: list[Matchup] = []
    for p in holders:
        others = [n for n in names if n != p]
        rng = np.random.default_rng([seed, zlib.crc32(p.lower().encode())])
        for start in range(0, samples, 10_000):  # chunks: the same stream, bounded memory
            u = rng.random((min(10_000, samples - start), len(others) + 1))
            picks = np.argsort(u[:, :-1], axis=1, kind="stable")[:, :5].tolist()
            lines = (u[:, -1] * 3).astype(int).tolist()
            for pick, line in zip(picks, lines, strict=True):
                mine = [others[pick[0]], others[pick[1]]]
                mine.insert(line, p)
                out.append((tuple(mine), tuple(others[j] for j in pick[2:])))
    return out


def check_seats(arm: Arm, pool: Pool, source: str, key: str, allow_code: bool = False) -> None:
    """Build each seat's strategy against the arm's pool: unknown cards in restrictions and user
    strategies that do not import fail here, before any game. Code is refused first unless
    `allow_code` (spec.refuse_code: the one rule of every command that reads a spec)."""

    for j, text in enumerate(arm.strategies):
        try:
            refuse_code(text, allow_code)
            make_seat(text, pool)
        except StrategyError as e:
            raise SpecError(f"{source}: key '{key}[{j}]': {e}") from None


def check_draft(spec: Spec, pools: list[Pool]) -> None:
    """Build each seat's draft strategy (mode "draft") against every arm's pool: a fitted table
    naming a protocol the pool lacks, or holding a bad value, fails here with its file and key."""

    files = {t.path: t.text for t in spec.draft.tables}
    for j, text in enumerate(spec.draft.policy):
        for pool in pools:
            try:
                parse_draft(text, pool, files.__getitem__)
            except StrategyError as e:
                raise SpecError(f"{spec.source}: key 'draft.policy[{j}]': {e}") from None


def shard_size(spec: Spec) -> int:
    """Games per shard: the spec's `shard_games`, capped so that a worker's memory stays bounded."""
    return min(spec.shard_games, SHARD_CAP if spec.events else SHARD_CAP_NO_EVENTS)


def make_plan(spec: Spec, shard_games: int | None = None, allow_code: bool = False) -> Plan:
    """Load every arm's pool, check the spec against it, and lay out games and shards.
    `shard_games` keeps the layout a run was started with (`--resume`); by default `shard_size`.
    `allow_code`: the spec may name Python user strategies (check_seats)."""
    pools = []
    for i, arm in enumerate(spec.arms):
        own = (len(spec.arms) > 1 or spec.arms[0].name != "base") and not (arm.tier or arm.duel)  # share [pool]
        key = f"arms[{i}].cards" if own else "pool.cards"
        pools.append(load_arm_pool(arm, spec.source, key))
        check_seats(arm, pools[-1], spec.source, seat_key(spec, i), allow_code)
    check_draft(spec, pools)
    matchups = expand_matchups(spec, pools)
    blocks = arm_blocks(spec, pools[0], len(matchups))
    sizes = [(end - lo) * spec.arm_games(a) for a, (lo, end) in zip(spec.arms, blocks, strict=True)]
    first = [sum(sizes[:a]) for a in range(len(sizes))]
    size = shard_games or shard_size(spec)
    check_size(spec, len(matchups), size, [end - lo for lo, end in blocks])
    if spec.stop:
        check_stop(spec, pools, size)
    # arm by arm; a run that stops when settled (spec.stop) batch by batch, every arm's shards of a
    # batch together, so that the shards played up to any look are a prefix of the indices
    batch = spec.stop.batch if spec.stop else max(sizes)
    spans = sorted((off // batch, a, off) for a in range(len(spec.arms)) for off in range(0, sizes[a], size))
    shards = [ShardPlan(i, a, first[a] + off, min(size, sizes[a] - off)) for i, (_, a, off) in enumerate(spans)]
    return Plan(spec, pools, matchups, sizes[0], sum(sizes), shards, size, tuple(first), tuple(blocks))


def arm_blocks(spec: Spec, pool: Pool, n_matchups: int) -> list[tuple[int, int]]:
    """Each arm's matchup numbers [first, end): all of them, or for an arm that `holds` protocol P
    (draft mode holding) P's block, the `samples` matchups holding_matchups lays out for P."""
    everything = (0, max(1, n_matchups))
    if spec.draft.mode != "holding":
        return [everything] * len(spec.arms)
    holders = [_canon(pool, n, spec.source, f"draft.protocols[{i}]", "") for i, n in enumerate(spec.draft.protocols)]
    out = []
    for i, arm in enumerate(spec.arms):
        if not arm.holds:
            out.append(everything)
            continue
        block = holders.index(_canon(pool, arm.holds, spec.source, f"arms[{i}].holds", arm.name))
        out.append((block * spec.draft.samples, (block + 1) * spec.draft.samples))
    return out


def check_stop(spec: Spec, pools: list[Pool], shard_games: int) -> None:
    """`[stop]` against the pools and the shard size: watched protocols every arm has, and batches
    made of whole shards (a look reads whole shards)."""
    assert spec.stop is not None
    for i, name in enumerate(spec.stop.protocols):
        for pool, arm in zip(pools, spec.arms, strict=True):
            _canon(pool, name, spec.source, f"stop.protocols[{i}]", arm.name)
    if spec.stop.batch % shard_games:
        raise SpecError(
            f"{spec.source}: key 'stop.batch': expected a multiple of the shard size ({shard_games:,} "
            f"games: shard_games, capped at {SHARD_CAP:,} with events), got {spec.stop.batch:,}"
        )


def card_files(spec: Spec) -> list[CardFile]:
    """Every distinct card file of the spec (saved with the run so --resume needs nothing else)."""
    seen: dict[str, CardFile] = {}
    for arm in spec.arms:
        for cf in arm.cards:
            seen.setdefault(cf.path, cf)
    for table in spec.draft.tables:  # fitted draft tables (draft mode "draft")
        seen.setdefault(table.path, table)
    return list(seen.values())
