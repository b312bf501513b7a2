"""Card value by restricted play (docs/strategies.md, "Card value"): the statistics and the table.

A card-value run (`protolab cardvalue`, protolab/experiment/run/cardvalue.py) is an A/B run of a fixed shape:
draft mode `holding` (seat 0's trio holds protocol P, in one block of `samples` matchups per P,
seats swapped on paired seeds), a `baseline` arm where both seats play S, and one arm per tested card
and restriction where the side holding P plays `S+avoid:CARD` or `S+noup:CARD` against S. Every arm
plays the same seeds and trios, so game (matchup, game) of a restricted arm and of the baseline differ
only by the restriction. A card's value is the mean over its protocol's matchups of the holder's
score (1 win, 1/2 draw, 0 loss) in the baseline minus in the restricted arm; the matchup (one
seat-swapped pair of games) is the unit, so the interval respects the pairing.

The run is found from run.json alone (`design_of`); this module never imports protolab.experiment."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.runs.manifest import Manifest, SpecArm
from analysis.runs.open import Runs, open_runs, peek_manifest
from analysis.runs.schema import PROTOCOL_COLUMNS, SEATS
from analysis.stats.proportions import Z95, adjust, norm_sf

BASELINE = "baseline"
RESTRICTIONS = {"avoid": "never played", "noup": "never face-up"}
COLUMNS = [
    "card",
    "protocol",
    "restriction",
    "value",
    "value_low",
    "value_high",
    "p_value",
    "p_adjusted",
    "games",
    "pairs",
    "win_rate_unrestricted",
    "win_rate_restricted",
    "baseline_up_plays",
    "baseline_down_plays",
    "restricted_up_plays",
    "restricted_down_action_plays",
    "restricted_down_effect_plays",
    "restriction_held",
]
CHECK_COLUMNS = COLUMNS[COLUMNS.index("baseline_up_plays") :]  # from events: what the restricted seat played


@dataclass(frozen=True)
class Tested:
    """One restricted arm: the side holding the card's protocol plays `strategy` (S+avoid:CARD or S+noup:CARD)."""

    arm: str
    card: str
    restriction: str
    strategy: str


@dataclass(frozen=True)
class Design:
    """What a card-value run tested, read from its run.json."""

    strategy: str
    baseline: str
    tested: tuple[Tested, ...]
    holders: tuple[str, ...]  # protocol of each block of matchups, in order
    samples: int  # matchups per block


def design_of(manifest: Manifest | None) -> Design | None:
    """The card-value design of a run, or None when the run does not have that shape."""
    spec = manifest.spec if manifest is not None else None
    if spec is None or spec.draft is None or spec.draft.mode != "holding" or len(spec.arms) < 2 or not spec.swap:
        return None
    base = spec.arms[0]
    strategy = _on_both_seats(base)
    if strategy is None or base.name is None:
        return None
    tested = [_tested(arm, base, strategy) for arm in spec.arms[1:]]
    if any(t is None for t in tested):
        return None
    return Design(
        strategy, base.name, tuple(t for t in tested if t is not None), spec.draft.protocols, spec.draft.samples
    )


def _on_both_seats(arm: SpecArm) -> str | None:
    """The strategy an arm plays on both seats, or None when its seats differ."""
    strategy = arm.strategies[0] if arm.strategies else None
    return strategy if arm.strategies == (strategy, strategy) else None


def _tested(arm: SpecArm, base: SpecArm, strategy: str) -> Tested | None:
    """What an arm after the baseline tests: the baseline's strategy with one card restricted on
    seat 0 (`STRATEGY+KIND:CARD`), on the baseline's pool; None when the arm is not of that shape."""
    restricted, other = (arm.strategies + ("", ""))[:2]
    kind, _, card = restricted[len(strategy) + 1 :].partition(":")
    shaped = restricted.startswith(strategy + "+") and kind in RESTRICTIONS and card.strip() and "+" not in card
    same_pool = arm.sets == base.sets and arm.cards == base.cards
    if other != strategy or not shaped or not same_pool or arm.name is None:
        return None
    return Tested(arm.name, card.strip(), kind, restricted)


# -- the statistic ----------------------------------------------------------------------------------


def paired_difference(units: np.ndarray, z: float = Z95) -> dict[str, float]:
    """Mean of per-unit paired differences, its 95% normal interval (standard error from the spread
    of the units) and the two-sided p-value that the mean is 0. With every unit equal the interval
    is that value and p is 1 for 0, else 0."""
    u = np.asarray(units, dtype=float)
    m = len(u)
    if m == 0:
        return {"value": math.nan, "value_low": math.nan, "value_high": math.nan, "p_value": math.nan}
    mean = float(u.mean())
    se = float(u.std(ddof=1) / math.sqrt(m)) if m > 1 else math.nan
    if m > 1 and se == 0:
        return {"value": mean, "value_low": mean, "value_high": mean, "p_value": 1.0 if mean == 0 else 0.0}
    p = float(2 * norm_sf(abs(mean) / se)) if m > 1 else math.nan
    return {"value": mean, "value_low": mean - z * se, "value_high": mean + z * se, "p_value": min(1.0, p)}


def summarise(
    per_matchup: pd.DataFrame, design: Design, protocol_of: dict[str, str], method: str = "holm"
) -> pd.DataFrame:
    """One row per tested (card, restriction) from per-(arm, protocol, matchup) sums: `n` paired
    games, `base` and `restricted` the holder's score summed over them. Units are the matchups of
    the card's protocol's block; p-values are adjusted across all rows (`method`, Holm by default)."""
    rows = []
    for t in design.tested:
        proto = protocol_of.get(t.card.lower(), "")
        d = per_matchup[(per_matchup["arm"] == t.arm) & (per_matchup["protocol"] == proto)]
        n = float(d["n"].sum())
        units = ((d["base"] - d["restricted"]) / d["n"]).to_numpy(dtype=float)
        rows.append(
            {
                "card": t.card,
                "protocol": proto,
                "restriction": t.restriction,
                **paired_difference(units),
                "games": int(n),
                "pairs": len(d),
                "win_rate_unrestricted": float(d["base"].sum()) / n if n else math.nan,
                "win_rate_restricted": float(d["restricted"].sum()) / n if n else math.nan,
            }
        )
    out = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in CHECK_COLUMNS and c != "p_adjusted"])
    p = out["p_value"].to_numpy(dtype=float) if len(out) else np.array([])
    tested = ~np.isnan(p)
    adjusted = np.full(len(p), np.nan)
    adjusted[tested] = adjust(p[tested], method)
    out["p_adjusted"] = adjusted
    out.attrs["correction"] = method
    return out


# -- the queries ------------------------------------------------------------------------------------


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _holder_values(design: Design) -> str:
    return ", ".join(f"({i}, {_quote(p)})" for i, p in enumerate(design.holders))


def per_matchup(runs: Runs, design: Design) -> pd.DataFrame:
    """Per (restricted arm, holder protocol, matchup): paired games and the holder's summed score
    in the baseline and in the restricted arm, joined game by game on (matchup, game_in_matchup)."""
    seats = {s: ", ".join(f"{c}::varchar" for c in PROTOCOL_COLUMNS[3 * s : 3 * s + 3]) for s in SEATS}
    return runs.sql(f"""
        with holder(block, protocol) as (values {_holder_values(design)}),
        g as (
            select arm::varchar as arm, h.protocol, matchup, game_in_matchup, winner,
                   case when h.protocol in ({seats[0]}) then 0 when h.protocol in ({seats[1]}) then 1 end as side
            from games join holder h on h.block = games.matchup // {max(1, design.samples)}),
        s as (select *, case when winner = side then 1.0 when winner < 0 then 0.5 else 0.0 end as score from g)
        select r.arm, r.protocol, r.matchup, count(*) as n, sum(b.score) as base, sum(r.score) as restricted
        from s r join s b on b.arm = {_quote(design.baseline)} and b.matchup = r.matchup
                          and b.game_in_matchup = r.game_in_matchup
        where r.arm <> {_quote(design.baseline)}
        group by all order by r.arm, r.matchup""")


def card_protocols(runs: Runs, design: Design) -> dict[str, str]:
    """Lower-case card name -> its protocol, from the run's own card rows (or, without events,
    from a name of the form "PROTOCOL N" with PROTOCOL a tested protocol)."""
    names = sorted({t.card.lower() for t in design.tested})
    found: dict[str, str] = {}
    if runs.has_events:
        table = "cards" if runs.has_cards else "events"
        rows = runs.sql(f"""select lower(card::varchar) as card, any_value(protocol::varchar) as protocol
                            from {table} where lower(card::varchar) in ({", ".join(map(_quote, names))})
                            group by 1""")
        found = dict(zip(rows["card"], rows["protocol"], strict=True))
    for name in names:
        if name not in found:
            prefix = [p for p in design.holders if name.startswith(p.lower() + " ")]
            if prefix:
                found[name] = prefix[0]
    return found


def play_counts(runs: Runs, design: Design) -> pd.DataFrame:
    """Plays of the tested cards per (arm, card, face, by effect, strategy of the player, block)."""
    names = ", ".join(_quote(c) for c in sorted({t.card.lower() for t in design.tested}))
    return runs.sql(f"""
        select g.arm::varchar as arm, lower(e.card::varchar) as card, e.kind::varchar = 'play_face_up' as up,
               e.by_effect, (case when e.seat = 0 then g.strategy_0 else g.strategy_1 end)::varchar as strategy,
               g.matchup // {max(1, design.samples)} as block, count(*) as n
        from events e join games g on e.game_index = g.game_index
        where e.kind in ('play_face_up', 'play_face_down') and lower(e.card::varchar) in ({names})
        group by all""")


def restriction_counts(plays: pd.DataFrame, design: Design, protocol_of: dict[str, str]) -> pd.DataFrame:
    """Per tested row: plays by the restricted seat (face-up; face-down by action; face-down by a
    card's effect), whether the restriction held, and the baseline's plays in the card's block."""
    rows = []
    for t in design.tested:
        card = t.card.lower()
        mine = plays[(plays["arm"] == t.arm) & (plays["card"] == card) & (plays["strategy"] == t.strategy)]
        up = int(mine.loc[mine["up"], "n"].sum())
        down_action = int(mine.loc[~mine["up"] & ~mine["by_effect"], "n"].sum())
        block = design.holders.index(protocol_of[card]) if protocol_of.get(card) in design.holders else -1
        base = plays[(plays["arm"] == design.baseline) & (plays["card"] == card) & (plays["block"] == block)]
        rows.append(
            {
                "baseline_up_plays": int(base.loc[base["up"], "n"].sum()),
                "baseline_down_plays": int(base.loc[~base["up"], "n"].sum()),
                "restricted_up_plays": up,
                "restricted_down_action_plays": down_action,
                "restricted_down_effect_plays": int(mine.loc[~mine["up"] & mine["by_effect"], "n"].sum()),
                "restriction_held": up == 0 and (t.restriction == "noup" or down_action == 0),
            }
        )
    return pd.DataFrame(rows)


def empty_table() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})


def is_card_value_run(path: str | Path) -> bool:
    """Is `path` (a run folder, or RUN#arm) a card-value run? False for anything unreadable."""
    return design_of(peek_manifest(path)) is not None


def card_value(runs: Runs, method: str = "holm", whole: bool = False) -> pd.DataFrame:
    """The card-value table of a card-value run (one row per card and restriction; COLUMNS), or an
    empty table for any other run. Opened as one arm (RUN#baseline, how `report` shows such a run),
    the table still comes from every arm: the run folder is opened whole for it. Without events the
    restriction columns are empty (unchecked)."""
    design = design_of(runs.manifests[0]) if runs.single else None
    if design is None:
        return empty_table()
    played = runs.sql("select arm::varchar as arm, count(*) as n from games group by all")
    present = set(played["arm"])
    if not whole and not {design.baseline, *(t.arm for t in design.tested)} <= present:
        full = open_runs([runs.paths[0]])
        try:
            return card_value(full, method, whole=True)
        finally:
            full.close()
    if design.baseline not in present:
        return empty_table()
    design = replace(design, tested=tuple(t for t in design.tested if t.arm in present))
    protocol_of = card_protocols(runs, design)
    out = summarise(per_matchup(runs, design), design, protocol_of, method)
    if runs.has_events:
        out = pd.concat([out, restriction_counts(play_counts(runs, design), design, protocol_of)], axis=1)
    out = out.reindex(columns=COLUMNS)
    games = {str(a): int(n) for a, n in zip(played["arm"], played["n"], strict=True)}
    out.attrs.update(
        {
            "correction": method,
            "strategy": design.strategy,
            "games": sum(games.values()),  # every arm's: the baseline's blocks, each card's arms' own block
            "games_baseline": games.get(design.baseline, 0),
        }
    )
    return out


def restriction_problems(table: pd.DataFrame) -> list[str]:
    """One line per row whose restriction did not hold (the restricted seat played the card, or played
    it face-up); empty when every restriction held or the run has no events to check."""
    problems = []
    for r in table.itertuples():
        if _held(r.restriction_held) is False:
            what = "played it face-up" if r.restricted_up_plays else "played it face-down by an action"
            problems.append(
                f"{r.card} ({r.restriction}): the restricted seat {what} "
                f"({r.restricted_up_plays} face-up, {r.restricted_down_action_plays} face-down by action)"
            )
    return problems


# -- terminal ---------------------------------------------------------------------------------------


def _points(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 100:+.1f}"


def _rate(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def _held(v: Any) -> bool | None:
    """A restriction_held cell: True, False, or None when unchecked (no events)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v)


def _plays(*counts: Any) -> str:
    return "-" if any(pd.isna(c) for c in counts) else "/".join(f"{int(c):,}" for c in counts)


def _check_text(held: Any) -> str:
    return {None: "unchecked", True: "held", False: "[red]VIOLATED[/red]"}[_held(held)]


def _games_played(table: pd.DataFrame) -> str:
    """The caption's count of the run's games (card_value's attrs), or nothing when unknown."""
    games, base = table.attrs.get("games"), table.attrs.get("games_baseline")
    if not games:
        return ""
    return (
        f" Games played: {games:,} (baseline {base:,} over every tested protocol's matchups; each card's "
        "arms only its own protocol's)."
    )


def print_card_value(table: pd.DataFrame, console, title: str | None = None) -> None:
    """The card-value table as a rich table: value in win-rate points with its 95% interval."""
    from rich.table import Table

    strategy = table.attrs.get("strategy", "")
    t = Table(
        title=title
        or f"Card value under {strategy} (restricted play; value = unrestricted minus restricted "
        "win rate of the side holding the card)",
        title_justify="left",
        caption_justify="left",
        caption="Paired on shared seeds and trios, one seat-swapped pair per matchup; draws count half. "
        f"adj. p: {table.attrs.get('correction', 'holm')} across all rows. Baseline plays: the "
        "holder's face-up/face-down plays of the card; restricted: the restricted seat's face-up / "
        "face-down by action / face-down by a card's effect (forced, e.g. the top card of the deck)."
        + _games_played(table),
    )
    for i, c in enumerate(
        [
            "card",
            "restriction",
            "value, points",
            "95% CI",
            "adj. p",
            "WR unrestricted",
            "WR restricted",
            "games",
            "baseline plays",
            "restricted plays",
            "check",
        ]
    ):
        t.add_column(c, justify="left" if i in (0, 1, 10) else "right")
    for r in table.itertuples():
        t.add_row(
            r.card,
            RESTRICTIONS.get(r.restriction, r.restriction),
            _points(r.value),
            f"{_points(r.value_low)} to {_points(r.value_high)}",
            "-" if pd.isna(r.p_adjusted) else f"{r.p_adjusted:.2g}",
            _rate(r.win_rate_unrestricted),
            _rate(r.win_rate_restricted),
            f"{int(r.games):,}",
            _plays(r.baseline_up_plays, r.baseline_down_plays),
            _plays(r.restricted_up_plays, r.restricted_down_action_plays, r.restricted_down_effect_plays),
            _check_text(r.restriction_held),
        )
    console.print(t)
