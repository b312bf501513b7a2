"""A spec's arms: one card pool and pair of strategies each. The pool and seats alone make one arm;
`[[arms]]` an A/B study of pools that differ; `tiers` a tier study of strategies that differ, on one
pool (docs/experiments.md). Checked with the spec's own checker, so every error names the file and key."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from protolab.experiment.spec.checker import Checker
from protolab.experiment.spec.files import CardFile, read_card_file
from protolab.experiment.spec.limits import DEFAULT_ARM, MAX_ARMS
from protolab.experiment.spec.strategy import NOT_NAME, Strategy, StrategyPair, check_strategy, run_name, seat_pair
from sim.schema import Strict, fail, texts
from sim.schema import text as nonblank


@dataclass(frozen=True)
class Arm:
    """One card pool and pair of strategies; an A/B study has several, sharing every seed. A tier of a
    tier study (`tier`) is an arm that differs from the others only by its strategies; a duel (`games`
    set, from [strength]) plays one tier's strategy against the tier's below it."""

    name: str
    sets: tuple[str, ...]
    cards: tuple[CardFile, ...]
    strategies: tuple[str, str]
    tier: bool = False
    games: int = 0  # games per matchup of a duel ([strength]); 0: the spec's games
    holds: str = ""  # draft mode holding: the protocol whose block of matchups alone this arm plays; "": all

    @property
    def duel(self) -> bool:
        return self.games > 0

    def to_dict(self) -> dict[str, Any]:
        """As stored in run.json and hashed: the card files by path and checksum."""
        return {
            "name": self.name,
            "sets": list(self.sets),
            "strategies": list(self.strategies),
            "cards": [{"path": c.path, "sha256": c.sha256} for c in self.cards],
            **({"holds": self.holds} if self.holds else {}),
        }


CardsFn = Callable[[Any, str], tuple[CardFile, ...]]
_AS_STORED = "a card file as {path, sha256}"


class CardRef(Strict):
    """A card file as the stored form names it: its path and checksum (checked against the file read)."""

    path: Annotated[Any, Field(description=_AS_STORED)]
    sha256: Annotated[nonblank("a SHA-256 checksum"), Field(description=_AS_STORED)]


class ArmTable(Strict):
    """One [[arms]] table: a name, and the pool and strategies where it differs from the spec's."""

    name: Annotated[run_name("an arm name"), Field(description='a short arm name, e.g. name = "official"')]
    sets: texts("set names") | None = None
    cards: Any = []  # card files: read by card_reader
    strategies: StrategyPair | None = None
    holds: str | None = Field(
        None,
        description="draft mode holding: play only the matchups in which seat 0 holds this protocol (one of "
        "draft.protocols), on the same seeds as the arms that play them all",
    )


class TierTable(Strict):
    """One [[tiers]] table: a strategy for both seats or one per seat, and a name (by default the strategy's)."""

    name: run_name("a tier name") | None = None
    strategy: Strategy | None = None
    strategies: StrategyPair | None = None

    @model_validator(mode="after")
    def _one_of_them(self) -> TierTable:
        if (self.strategy is None) == (self.strategies is None):
            fail('expected exactly one of strategy = "greedy" (both seats) or strategies = [seat 0, seat 1]')
        return self


def card_reader(c: Checker, base: Path, card_texts: dict[str, str] | None) -> CardsFn:
    """(list, key) -> the card files a list names, each a path or a {path, sha256} table (the stored
    form, checked against the file read): read from disk, or from the run's copies (inputs/)."""

    def one(x: Any, key: str) -> CardFile:
        want = None
        if isinstance(x, dict):
            t = c.model(x, key, CardRef)
            x, key, want = t.path, f"{key}.path", t.sha256
        if card_texts is None:
            found = read_card_file(c, base, x, key)
        elif isinstance(x, str) and x in card_texts:
            found = CardFile.of_text(x, card_texts[x])
        else:
            raise c.error(key, f"the run's copy of {x!r} is missing (expected it in inputs/)")
        if want is not None and want != found.sha256:
            raise c.error(
                key.removesuffix(".path") + ".sha256",
                f"{found.path!r} has checksum {found.sha256}, not {want}: not the file recorded",
            )
        return found

    def cards(lst: Any, key: str) -> tuple[CardFile, ...]:
        if not isinstance(lst, list):
            raise c.error(key, f"expected a list of protocol or variant files, got {lst!r}")
        return tuple(one(x, f"{key}[{i}]") for i, x in enumerate(lst))

    return cards


def _parse_arm_list(
    c: Checker,
    arms_raw: Any,
    sets: tuple[str, ...],
    base_cards: tuple[CardFile, ...],
    strategies: tuple[str, str],
    cards: CardsFn,
) -> tuple[Arm, ...]:
    if not isinstance(arms_raw, list) or not arms_raw:
        raise c.error("arms", "expected one or more [[arms]] tables")
    if len(arms_raw) > MAX_ARMS:
        raise c.error("arms", f"expected at most {MAX_ARMS} [[arms]] tables, got {len(arms_raw)}")
    arms: list[Arm] = []
    for i, a in enumerate(arms_raw):
        key = f"arms[{i}]"
        t = c.model(a, key, ArmTable)
        if any(x.name == t.name for x in arms):
            raise c.error(f"{key}.name", f"expected a name not used by another arm, got {t.name!r} twice")
        arms.append(
            Arm(
                t.name,
                sets if t.sets is None else tuple(t.sets),
                base_cards + cards(t.cards, f"{key}.cards"),
                strategies if t.strategies is None else seat_pair(t.strategies),
                holds=t.holds or "",
            )
        )
    return tuple(arms)


def parse_arms(
    c: Checker,
    raw: dict[str, Any],
    seats: dict[str, Any],
    sets: tuple[str, ...],
    base_cards: tuple[CardFile, ...],
    strategies: tuple[str, str],
    cards: CardsFn,
) -> tuple[Arm, ...]:
    """The spec's arms: its tiers, its [[arms]], or one arm of the pool and seats."""
    arms_raw = raw.get("arms")
    if "tiers" in raw and "format" in raw:
        if "strength" in raw and isinstance(arms_raw, list) and isinstance(raw["tiers"], list):
            arms_raw = arms_raw[: len(raw["tiers"])]  # the duels after them are made again from the tiers
        return _stored_tiers(c, raw["tiers"], _parse_arm_list(c, arms_raw, sets, base_cards, strategies, cards))
    if "tiers" in raw:
        if arms_raw is not None:
            raise c.error(
                "tiers", "expected either [[arms]] (pools that differ) or tiers (strategies that differ), not both"
            )
        if "strategies" in seats:
            raise c.error("seats.strategies", "not used with tiers: each tier names its strategies; remove it")
        return _parse_tiers(c, raw["tiers"], sets, base_cards)
    if arms_raw is None:
        return (Arm(DEFAULT_ARM, sets, base_cards, strategies),)
    return _parse_arm_list(c, arms_raw, sets, base_cards, strategies, cards)


def _stored_tiers(c: Checker, raw: Any, arms: tuple[Arm, ...]) -> tuple[Arm, ...]:
    """A tier study as stored: `tiers` names the arms, which carry the tiers' strategies and share one
    pool ([strength]'s duels, listed after them, are left out by the caller: they are made again from
    the tiers, and so checked when the whole spec is read back)."""
    names = c.strings(raw, "tiers", "tier names")
    if names != [a.name for a in arms] or len(arms) < 2:
        raise c.error("tiers", f"expected the names of the 2 or more arms, {[a.name for a in arms]}, got {names!r}")
    if any((a.sets, a.cards) != (arms[0].sets, arms[0].cards) for a in arms):
        raise c.error("arms", "expected one pool (sets and cards) shared by every tier")
    return tuple(dataclasses.replace(a, tier=True) for a in arms)


def tier_name(strategy: str) -> str:
    """A tier's default name: its strategy spec made safe for a run name (`ismcts:iters=300` ->
    `ismcts-iters-300`)."""
    return NOT_NAME.sub("-", strategy).strip("-._")[:64] or "tier"


def _parse_tier(c: Checker, raw: Any, key: str) -> tuple[str, tuple[str, str]]:
    """One tier: a strategy spec (both seats play it) or a table {name, strategy | strategies}."""
    if isinstance(raw, str):
        try:
            s = check_strategy(raw)
        except ValueError as e:
            raise c.error(key, str(e)) from None
        return tier_name(s), (s, s)
    t = c.model(raw, key, TierTable)
    if t.strategy is not None:
        pair = (t.strategy, t.strategy)
    else:
        assert t.strategies is not None  # one of the two (TierTable._one_of_them)
        pair = seat_pair(t.strategies)
    return t.name or tier_name(pair[0]), pair


def _parse_tiers(c: Checker, raw: Any, sets: tuple[str, ...], cards: tuple[CardFile, ...]) -> tuple[Arm, ...]:
    """`tiers`: the same pool, seeds and drafts played by each tier's strategies (one arm per tier)."""
    if not isinstance(raw, list) or not 2 <= len(raw) <= MAX_ARMS:
        raise c.error(
            "tiers",
            f'expected a list of 2 to {MAX_ARMS} tiers, e.g. tiers = ["greedy", "search"] or '
            f"[[tiers]] tables, got {raw!r}",
        )
    out: list[Arm] = []
    for i, item in enumerate(raw):
        name, pair = _parse_tier(c, item, f"tiers[{i}]")
        if any(a.name == name for a in out):
            raise c.error(
                f"tiers[{i}]",
                f"expected a tier name not used by another tier, got {name!r} twice "
                "(give it a name: [[tiers]] name = ...)",
            )
        out.append(Arm(name, sets, cards, pair, tier=True))
    return tuple(out)
