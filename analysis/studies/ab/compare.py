"""`protolab compare BASE VARIANT`: what a change (a card variant, a new strategy, another pool)
did to win rates, with intervals, one corrected test across everything compared, and a summary a
designer can read without the table.

When the two sides played the same games (the arms of one A/B run, or two runs whose games match
seed for seed), protocol and first-player changes are paired: differences are taken seed by seed
in DuckDB (a join of the two sides' games on matchup and seed), which removes the noise the two
sides share. Unrelated runs are compared unpaired (Newcombe intervals). For the cards the variant
changed, how the bots used them (played face-up, face-down, never) is shown beside their win rate."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from analysis.pages.cells import pct, pts, table
from analysis.runs.manifest import SpecArm
from analysis.runs.open import Runs
from analysis.runs.provenance import of_runs, print_lines
from analysis.runs.runfolder import load_inputs
from analysis.runs.schema import PROTOCOL_COLUMNS
from analysis.runs.storage import Location, parquet_view
from analysis.stats.proportions import (
    CORRECTION_NAMES,
    adjust,
    newcombe_diff,
    paired_rate_diff,
    two_proportion_p,
    z_for,
)
from analysis.studies.ab.loops import loop_change
from analysis.studies.ab.samepool import really_changed, same_pool, same_pool_line
from analysis.studies.balance import queries
from analysis.studies.balance.flags import CARD_METRIC, protocol_items
from analysis.studies.balance.rule_note import note_lines, rule_notes
from sim.inputs import parse_toml

_SIDES = ("side_a", "side_b")
DETECT_POWER = 0.8  # the power at which a comparison states what it could have missed


@dataclass
class Design:
    """How the two sides relate: paired (same seeds, same matchups) or unpaired, and why."""

    paired: bool
    how: str
    clusters: int = 0  # seed clusters (games sharing one seed) matched on both sides
    games: int = 0  # games per side in them

    def as_dict(self) -> dict:
        return {
            "design": "paired" if self.paired else "unpaired",
            "how": self.how,
            "seed_clusters": self.clusters,
            "games_per_side": self.games,
        }


@dataclass
class Comparison:
    table: pd.DataFrame
    summary: list[str]
    meta: dict = field(default_factory=dict)
    cards: pd.DataFrame = field(default_factory=pd.DataFrame)  # the changed cards' use, both sides
    design: Design = field(default_factory=lambda: Design(False, ""))


# -- the rows compared -----------------------------------------------------------------------------


def _items(runs: Runs) -> pd.DataFrame:
    parts = [protocol_items(queries.protocol_win_rates(runs))]
    c = queries.card_impact(runs)
    if not c.empty:
        parts.append(
            pd.DataFrame(
                {"kind": "card", "name": c["card"], "metric": CARD_METRIC, "games": c["up"], "wins": c["up_wins"]}
            )
        )
    o = queries.overview(runs).iloc[0]
    parts.append(
        pd.DataFrame(
            {
                "kind": ["game"],
                "name": ["first player"],
                "metric": ["win rate"],
                "games": [o["decided"]],
                "wins": [o["first_wins"]],
            }
        )
    )
    return pd.concat(parts, ignore_index=True)


# -- the design: do the two sides share seeds? -----------------------------------------------------


def _files_sql(files: list[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def pair_connection(base: Runs, variant: Runs) -> Runs:
    """One DuckDB connection with both sides' games as views `side_a` (base) and `side_b`
    (variant), so the pairing is a join; read errors name the file as everywhere else."""
    row = base.con.execute("select current_setting('threads'), current_setting('temp_directory')").fetchone()
    assert row is not None  # a select of two settings has one row
    threads, spill = row
    con = duckdb.connect()
    con.execute(f"set threads = {int(threads)}")
    con.execute("set preserve_insertion_order = false")
    if spill:
        con.execute(f"set temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'")
    pc = Runs(
        con=con,
        paths=base.paths + variant.paths,
        manifests=base.manifests + variant.manifests,
        games_files=base.games_files + variant.games_files,
        events_files=[],
    )
    for view, side in zip(_SIDES, (base, variant), strict=True):
        parquet_view(con, view, side.games_files)  # analysis.runs.storage: local or object store
    return pc


def _clusters_sql(view: str) -> str:
    """Per seed cluster (matchup, seed): its games and an order-free fingerprint of their setups
    (trios in draft order and first player), which both sides must share to be paired."""
    setup = ", ".join(["first_player", *PROTOCOL_COLUMNS])
    return (
        f"select matchup, seed, count(*) as games, bit_xor(hash({setup})) as setup from {view} group by matchup, seed"
    )


def side_label(runs: Runs) -> str:
    """The side's run ids, with `#arm` when it is one arm of an A/B run."""
    entry = _arm_entry(runs)
    m = runs.manifests[0] if entry else None
    return f"{runs.label}#{entry[1].name}" if entry and m is not None and len(m.spec.arms) > 1 else runs.label


def _same_run(base: Runs, variant: Runs) -> bool:
    ids = [
        {m.run_id if m is not None else str(p) for m, p in zip(r.manifests, r.paths, strict=True)}
        for r in (base, variant)
    ]
    return len(ids[0]) == 1 and ids[0] == ids[1]


def detect_design(pc: Runs, base: Runs, variant: Runs) -> Design:
    """Paired when every seed cluster of each side is in the other with the same games (same
    count, trios and first players): then each game of one side has its twin in the other."""
    a, b = (_clusters_sql(v) for v in _SIDES)
    r = pc.sql(f"""
        select count(*) as clusters,
               count(*) filter (where a.seed is null) as only_b, count(*) filter (where b.seed is null) as only_a,
               count(*) filter (where a.games <> b.games or a.setup <> b.setup) as differ,
               coalesce(sum(a.games), 0)::bigint as games
        from ({a}) a full join ({b}) b on a.matchup = b.matchup and a.seed = b.seed""").iloc[0]
    n, only_a, only_b, differ = (int(r[k]) for k in ("clusters", "only_a", "only_b", "differ"))
    if only_a + only_b == n:
        return Design(False, "unpaired: the two sides share no seeds (unrelated runs)")
    if only_a or only_b or differ:
        why = []
        if only_a or only_b:
            why.append(f"{only_a + only_b:,} of {n:,} seeds are played on one side only")
        if differ:
            why.append(f"{differ:,} seeds have different games (trios, first player or game count)")
        return Design(False, f"unpaired: the sides share seeds but not every game ({'; '.join(why)})")
    what = (
        "the two arms of one A/B run share every seed"
        if _same_run(base, variant)
        else "the two runs' games match seed for seed (same matchups, trios and first players)"
    )
    return Design(True, f"paired: {what}", n, int(r["games"]))


# -- paired differences, seed by seed --------------------------------------------------------------


def _cells_sql(view: str) -> str:
    """Per (row, seed cluster): decided games (n) and wins (w) of the first player and of each
    protocol appearance; the same counts the unpaired rates sum."""
    protos = ", ".join(PROTOCOL_COLUMNS)
    return f"""
        select kind, name, matchup, seed, sum(n)::bigint as n, sum(w)::bigint as w from (
            select 'game' as kind, 'first player' as name, matchup, seed,
                   (winner >= 0)::int as n, (winner >= 0 and winner = first_player)::int as w
            from {view}
            union all
            select 'protocol', protocol, matchup, seed, (winner >= 0)::int, (winner >= 0 and winner = seat)::int
            from (select matchup, seed, winner, unnest([{protos}])::varchar as protocol,
                         unnest([0, 0, 0, 1, 1, 1]) as seat from {view}))
        group by all"""


def paired_sums(pc: Runs) -> pd.DataFrame:
    """Per protocol and for the first player: both sides' totals and the sums of squared
    linearised residuals over seed clusters that `stats.paired_rate_diff` turns into variances
    (docs/analysis.md). Clusters where a row has no games on either side add nothing."""
    a, b = (_cells_sql(v) for v in _SIDES)
    pc.execute(f"""
        create or replace temp table pair_cells as
        select coalesce(a.kind, b.kind) as kind, coalesce(a.name, b.name) as name,
               coalesce(a.n, 0)::double as n_a, coalesce(a.w, 0)::double as w_a,
               coalesce(b.n, 0)::double as n_b, coalesce(b.w, 0)::double as w_b
        from ({a}) a full join ({b}) b
          on a.kind = b.kind and a.name = b.name and a.matchup = b.matchup and a.seed = b.seed""")
    return pc.sql("""
        with t as (select kind, name, sum(n_a) as na, sum(w_a) as wa, sum(n_b) as nb, sum(w_b) as wb
                   from pair_cells group by kind, name),
        e as (select c.kind, c.name, (c.w_a - c.n_a * t.wa / nullif(t.na, 0)) / nullif(t.na, 0) as ea,
                     (c.w_b - c.n_b * t.wb / nullif(t.nb, 0)) / nullif(t.nb, 0) as eb
              from pair_cells c join t on c.kind = t.kind and c.name = t.name)
        select t.kind, t.name, t.na::bigint as games_base, t.wa::bigint as wins_base,
               t.nb::bigint as games_variant, t.wb::bigint as wins_variant,
               sum((eb - ea) * (eb - ea)) as ss_paired, sum(ea * ea + eb * eb) as ss_unpaired
        from e join t on e.kind = t.kind and e.name = t.name
        group by all order by t.kind, t.name""")


def _apply_paired(df: pd.DataFrame, sums: pd.DataFrame, design: Design) -> pd.DataFrame:
    """Replace the unpaired interval and test by the paired ones on the rows the pairing covers."""
    key = ["kind", "name"]
    s = df[key].merge(sums, on=key, how="left")
    r = paired_rate_diff(
        s["wins_base"],
        s["games_base"],
        s["wins_variant"],
        s["games_variant"],
        s["ss_paired"],
        s["ss_unpaired"],
        design.clusters,
    )
    use = s["ss_paired"].notna().to_numpy() & ~np.isnan(r["change"])
    df["design"] = np.where(use, "paired", "unpaired")
    for col, val in (("change_low", r["low"]), ("change_high", r["high"]), ("p_value", r["p_value"])):
        df[col] = np.where(use, val, df[col])
    for col in ("se", "se_unpaired", "variance_ratio"):
        df[col] = np.where(use, r[col], np.nan)
    return df


# -- the cards the variant changed, and how the bots used them --------------------------------------


def _arm_entry(runs: Runs) -> tuple[Path | Location, SpecArm] | None:
    """(run folder, spec arm) of a side that is one arm of one run; None for pooled sides."""
    m = runs.manifests[0] if len(runs.paths) == 1 else None
    if m is None:
        return None
    arms = m.spec.arms
    played = {s.get("arm") for s in m.shards if isinstance(s, dict)}
    if len(arms) == 1:
        return runs.paths[0], arms[0]
    named = [a for a in arms if a.name in played]
    return (runs.paths[0], named[0]) if len(played) == 1 and len(named) == 1 else None


def _cards_in_file(text: str) -> list[str]:
    """The card names a protocol or variant file (docs/cards.md) defines or replaces."""
    raw = parse_toml(text)
    names = []
    for c in raw.get("cards") or []:
        if not isinstance(c, dict):
            continue
        if "variant" in raw:
            names += [str(c[k]) for k in ("replaces", "name") if k in c]
        elif "protocol" in raw:
            names.append(str(c.get("name", f"{raw['protocol']} {c.get('value')}")))
    return names


def changed_cards(base: Runs, variant: Runs) -> tuple[list[str], list[str]]:
    """Cards whose definition differs between the sides: those of the card files one side's arm
    uses and the other's does not (read from each run's inputs/ copies). Returns (cards, notes)."""

    base_side, variant_side = _arm_entry(base), _arm_entry(variant)
    if base_side is None or variant_side is None:
        return [], ["changed cards unknown: a side is not one arm of one run"]
    sides = [base_side, variant_side]
    files = [{(c.path, c.sha256) for c in arm.cards} for _, arm in sides]
    notes = []
    if sorted(sides[0][1].sets) != sorted(sides[1][1].sets):
        notes.append("the sides use different sets; only cards changed by card files are listed")
    names: list[str] = []
    for (run, _), own, other in ((sides[0], files[0], files[1]), (sides[1], files[1], files[0])):
        inputs = load_inputs(run)
        for path, sha in sorted(own - other, key=str):
            text = inputs.get(path)
            if text is None or (sha and hashlib.sha256(text.encode()).hexdigest() != sha):
                notes.append(f"{run}: no copy of card file {path} in inputs/; its cards are not listed")
                continue
            try:
                names += [n for n in _cards_in_file(text) if n.lower() not in {x.lower() for x in names}]
            except tomllib.TOMLDecodeError as e:
                notes.append(f"{run}: inputs copy of {path} is not TOML ({e}); its cards are not listed")
    return names, notes


def _use(c: pd.DataFrame) -> pd.DataFrame:
    d = c.set_index("card")
    n = d["deck_games"].where(d["deck_games"] > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = pd.DataFrame(
            {
                "deck_games": d["deck_games"],
                "up": d["up"],
                "down": d["down"],
                "never": d["never"],
                "up_rate": d["up_rate"],
                "down_rate": d["down_rate"],
                "never_rate": d["never"] / n,
                "up_wins": d["up_wins"],
                "up_wr": d["up_wr"],
                "up_wr_low": d["up_wr_low"],
                "up_wr_high": d["up_wr_high"],
                "down_wr": d["down_wr"],
                "played_wr": d["played_wins"] / d["played"].where(d["played"] > 0),
                "never_wr": d["never_wr"],
            }
        )
    return out


def card_use(base: Runs, variant: Runs, names: list[str]) -> pd.DataFrame:
    """For each changed card on both sides: the share of its deck's seat-games (decided) in which
    it was played face-up, face-down (each at least once; a seat-game can be both) and never, and
    its win rates when played; the face-up play-rate and face-up win-rate changes with Newcombe
    intervals. Empty without card data (no events)."""
    ca, cb = queries.card_impact(base), queries.card_impact(variant)
    if ca.empty or cb.empty or not names:
        return pd.DataFrame()
    known = {c.lower(): c for c in pd.concat([ca["card"], cb["card"]])}
    cards = [known[n.lower()] for n in names if n.lower() in known]
    if not cards:
        return pd.DataFrame()
    ua, ub = _use(ca).reindex(cards), _use(cb).reindex(cards)
    df = ua.add_suffix("_base").join(ub.add_suffix("_variant")).rename_axis("card").reset_index()
    counts = [f"{c}_{side}" for c in ("deck_games", "up", "down", "never", "up_wins") for side in ("base", "variant")]
    df[counts] = df[counts].fillna(0).astype(np.int64)
    for what, wins, n in (("up_rate", "up", "deck_games"), ("up_wr", "up_wins", "up")):
        d, lo, hi = newcombe_diff(df[f"{wins}_base"], df[f"{n}_base"], df[f"{wins}_variant"], df[f"{n}_variant"])
        df[f"{what}_change"], df[f"{what}_change_low"], df[f"{what}_change_high"] = d, lo, hi
    for what in ("down_rate", "never_rate"):
        df[f"{what}_change"] = df[f"{what}_variant"] - df[f"{what}_base"]
    return df


# -- the comparison --------------------------------------------------------------------------------


def focus_protocols(cards: list[str], protocols: list[str]) -> list[str]:
    """The protocols whose cards the variant changes ("Metal 3" -> Metal), in the order of `cards`:
    the comparison's focus, tested as a family of their own."""
    by_lower = {p.lower(): p for p in protocols}
    out: list[str] = []
    for card in cards:
        proto = by_lower.get(card.rsplit(" ", 1)[0].lower()) if " " in card else None
        if proto is not None and proto not in out:
            out.append(proto)
    return out


def shown_rows(c: Comparison) -> pd.DataFrame:
    """The rows a table shows: every protocol and the first player; of the cards only those the
    variant changed or that moved significantly (an unchanged card that did not move is noise)."""
    t = c.table
    changed = {n.lower() for n in c.meta.get("changed_cards", [])}
    keep = (t["kind"] != "card") | t["name"].str.lower().isin(changed) | t["significant"].fillna(False).astype(bool)
    return t[keep]


def _unpaired_rows(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The rows of both sides side by side, each with its rates, its unpaired change (Newcombe interval)
    and pooled z-test p-value; a row one side lacks has no games there."""
    df = a.merge(b, on=["kind", "name", "metric"], how="outer", suffixes=("_base", "_variant"))
    for c in ("games_base", "wins_base", "games_variant", "wins_variant"):
        df[c] = df[c].fillna(0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["rate_base"] = df["wins_base"] / df["games_base"].where(df["games_base"] > 0)
        df["rate_variant"] = df["wins_variant"] / df["games_variant"].where(df["games_variant"] > 0)
    d, lo, hi = newcombe_diff(df["wins_base"], df["games_base"], df["wins_variant"], df["games_variant"])
    df["change"], df["change_low"], df["change_high"] = d, lo, hi
    df["p_value"] = two_proportion_p(df["wins_base"], df["games_base"], df["wins_variant"], df["games_variant"])
    return df


def _tested_by_family(df: pd.DataFrame, tested: pd.Series, method: str, alpha: float) -> pd.DataFrame:
    """The p-values corrected within each family (the changed protocols are one, the rest another), what is
    significant, and the change each row could have detected."""
    df["p_adjusted"] = np.nan
    for family in ("focus", "rest"):
        rows = tested & (df["family"] == family)
        if rows.any():
            df.loc[rows, "p_adjusted"] = adjust(df.loc[rows, "p_value"].to_numpy(), method)
    df["significant"] = df["p_adjusted"] < alpha
    df["significant_by"] = f"adjusted p < {alpha:g}"  # not the 95% CI shown, which is not corrected
    df["detectable"] = detectable_change(df, int(tested.sum()), alpha)
    return df


def _ordered(df: pd.DataFrame) -> pd.DataFrame:
    """The focus family first, then what is significant, the game before protocols before cards, the
    largest change first."""
    order = {"game": 0, "protocol": 1, "card": 2}
    df = df.assign(_f=df["family"] != "focus", _o=df["kind"].map(order), _a=-df["change"].abs()).sort_values(
        ["_f", "significant", "_o", "_a"], ascending=[True, False, True, True]
    )
    return df.drop(columns=["_f", "_o", "_a"]).reset_index(drop=True)


def compare_runs(base: Runs, variant: Runs, method: str = "holm", alpha: float = 0.05) -> Comparison:
    """Per protocol, per card and for the first player: base and variant rates, the change with a
    95% interval, a test, and the p-value corrected across all rows. Protocol and first-player rows
    are paired (seed by seed) when the sides share their games, else unpaired (Newcombe interval,
    pooled z-test); card rows are always unpaired (the face-up win rate counts different
    seat-games on each side: the variant changes which games a card is played in)."""
    df = _unpaired_rows(_items(base), _items(variant))
    tested = (df["games_base"] > 0) & (df["games_variant"] > 0)
    pc = pair_connection(base, variant)
    try:
        design = detect_design(pc, base, variant)
        df["design"] = "unpaired"
        df["unpaired_low"], df["unpaired_high"] = df["change_low"], df["change_high"]
        df["se"] = df["se_unpaired"] = df["variance_ratio"] = np.nan
        if design.paired:
            df = _apply_paired(df, paired_sums(pc), design)
        loops = loop_change(pc, design.paired, alpha)
    finally:
        pc.close()
    blocks = of_runs(base), of_runs(variant)
    names, notes = changed_cards(base, variant)
    names, restated = really_changed(names, *blocks)
    if restated:
        notes.append(f"the card files name {', '.join(restated)} as they already play: not changed, not listed")
    shared, identical = same_pool(*blocks), same_games(df, design)
    focus = focus_protocols(names, df.loc[df["kind"] == "protocol", "name"].tolist())
    df["family"] = np.where((df["kind"] == "protocol") & df["name"].isin(focus), "focus", "rest")
    df = _ordered(_tested_by_family(df, tested, method, alpha))
    cards = card_use(base, variant, names)
    meta = {
        "base": side_label(base),
        "variant": side_label(variant),
        "correction": method,
        "alpha": alpha,
        "tests": int(tested.sum()),
        "warnings": base.warnings + variant.warnings,
        **design.as_dict(),
        "changed_cards": names,
        "focus": focus,
        "notes": notes,
        "provenance": blocks[0] + blocks[1],
        "loops": loops,
        "same_pool": shared,
        "same_games": identical,
    }
    if design.paired:
        ratios = df.loc[df["design"] == "paired", "variance_ratio"].dropna()
        meta["median_variance_ratio"] = float(ratios.median()) if len(ratios) else None
    rule = rule_notes(meta["provenance"])
    if rule is not None:  # a side made with card files: the choices they change
        meta["rule_notes"] = rule
    summary = framed(summarize(df, base, variant, method, alpha, int(tested.sum()), design, cards), meta)
    return Comparison(df, summary, meta, cards, design)


def framed(summary: list[str], meta: dict) -> list[str]:
    """The summary with what frames every figure in it: one pool on both sides said first (no figure
    can then be a card's doing, and none is weighed against chance), loop draws first when they rose."""
    shared, identical, loops = meta["same_pool"], meta["same_games"], meta["loops"]
    if shared is not None:
        summary.insert(0, same_pool_line(shared, identical))
    if loops["significant"] or loops["loops_base"] or loops["loops_variant"]:
        summary.insert(0 if loops["significant"] else len(summary), loops["statement"])
    return summary


def same_games(df: pd.DataFrame, design: Design) -> bool:
    """Whether the sides played the same games to the same ends: paired, and every paired row's change
    is 0 in every seed cluster (its paired standard error is 0)."""
    rows = df.loc[df["design"] == "paired", ["se", "change"]]
    return design.paired and not rows.empty and bool((rows.fillna(1).to_numpy() == 0).all())


def detectable_change(df: pd.DataFrame, tests: int, alpha: float, power: float = DETECT_POWER) -> np.ndarray:
    """Per row, the smallest change this comparison would flag with `power` (a Bonferroni bound on
    the correction, so conservative): what a row that is not flagged could still hide. From the
    paired standard error where the row is paired, else from the two binomial variances."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pa, pb = df["rate_base"].to_numpy(float), df["rate_variant"].to_numpy(float)
        na, nb = df["games_base"].to_numpy(float), df["games_variant"].to_numpy(float)
        unpaired = np.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    se = np.where(df["design"].to_numpy() == "paired", df["se"].to_numpy(float), unpaired)
    z = z_for(1 - alpha / max(1, tests)) + z_for(2 * power - 1)
    return z * se


# -- words -----------------------------------------------------------------------------------------


def _use_phrase(u: pd.Series) -> str:
    """How the bots' use of a changed card moved, for sentences."""
    return (
        f"played face-up in {u['up_rate_base']:.1%} -> {u['up_rate_variant']:.1%} of its deck's seat-games "
        f"({pts(u['up_rate_change'])} points), face-down {u['down_rate_base']:.1%} -> "
        f"{u['down_rate_variant']:.1%}, never {u['never_rate_base']:.1%} -> {u['never_rate_variant']:.1%}"
    )


def _line(r: pd.Series, cards: pd.DataFrame | None = None) -> str:
    what = r["name"] if r["kind"] != "card" else f"{r['name']} ({CARD_METRIC})"
    if r["kind"] == "game":
        what = "The first player's win rate"
    verb = "rose" if r["change"] > 0 else "fell"
    paired = ", paired by seed" if r.get("design") == "paired" else ""
    text = (
        f"{what} {verb} from {r['rate_base']:.1%} to {r['rate_variant']:.1%} "
        f"({pts(r['change'])} points, 95% CI {pts(r['change_low'])} to {pts(r['change_high'])}{paired}; "
        f"adjusted p = {r['p_adjusted']:.2g}; {int(r['games_base']):,} vs {int(r['games_variant']):,} games)."
    )
    if r["kind"] == "card" and cards is not None and not cards.empty and r["name"] in set(cards["card"]):
        u = cards.set_index("card").loc[r["name"]]
        text += f" A changed card: {_use_phrase(u)}."
    return text


def _design_line(design: Design, df: pd.DataFrame) -> str:
    if not design.paired:
        return f"Design: {design.how}; intervals are Newcombe's, tests pooled z-tests."
    ratios = df.loc[df["design"] == "paired", "variance_ratio"].dropna()
    saved = (
        f", which cut their variance by a median factor of {ratios.median():.1f} (unpaired / paired variance)"
        if len(ratios)
        else ""
    )
    return (
        f"Design: {design.how} ({design.clusters:,} seed clusters, {design.games:,} games a side). "
        f"Protocol and first-player changes are paired seed by seed{saved}; card rows stay unpaired."
    )


def _missed(df: pd.DataFrame) -> list[str]:
    """What the comparison could not have seen: 'nothing flagged' is not 'nothing changed'."""
    quiet = df[(df["kind"] == "protocol") & ~df["significant"].fillna(False).astype(bool)]["detectable"].dropna()
    quiet = quiet[quiet > 0]  # a change of 0 in every seed cluster hides nothing
    if quiet.empty:
        return []
    lo, hi = quiet.min(), quiet.max()
    span = f"{100 * lo:.1f}" if round(100 * lo, 1) == round(100 * hi, 1) else f"{100 * lo:.1f} to {100 * hi:.1f}"
    return [
        f"Underpowered below {span} points: a protocol change smaller than that (by protocol) would not be "
        f"flagged here with {DETECT_POWER:.0%} power; {len(quiet)} protocol(s) not flagged could still hide "
        "one (`detectable` column; `protolab power` says how many games would see it)."
    ]


def _moved_lines(df: pd.DataFrame, sig: pd.DataFrame, after_focus: bool, cards: pd.DataFrame | None) -> list[str]:
    """What moved significantly (`sig`, of the rows `df` not in the focus family), else the largest change."""
    if sig.empty:
        rest = df[df["p_adjusted"].notna()]
        if rest.empty:
            return ["Nothing could be compared (no rate has games in both runs)."]
        r = rest.loc[rest["change"].abs().idxmax()]
        return [
            f"{'Of the rest, n' if after_focus else 'N'}othing moved significantly. "
            f"The largest change was {r['name']} "
            f"({pts(r['change'])} points, 95% CI {pts(r['change_low'])} to {pts(r['change_high'])}, "
            f"adjusted p = {r['p_adjusted']:.2g}): within what chance explains at these game counts."
        ]
    n_p = int((sig["kind"] == "protocol").sum())
    n_c = int((sig["kind"] == "card").sum())
    other = " other" if after_focus else ""
    return [f"{n_p}{other} protocol(s) and {n_c} card(s) moved significantly:"] + [
        "- " + _line(r, cards) for _, r in sig.iterrows()
    ]


def summarize(
    df: pd.DataFrame,
    base: Runs,
    variant: Runs,
    method: str,
    alpha: float,
    tests: int,
    design: Design | None = None,
    cards: pd.DataFrame | None = None,
) -> list[str]:
    """Plain sentences: the design, what moved significantly (else the largest change), how the
    changed cards' use moved, game length and draws."""
    ob, ov = queries.overview(base).iloc[0], queries.overview(variant).iloc[0]
    out = [
        f"Base {side_label(base)}: {int(ob['games']):,} games; variant {side_label(variant)}: "
        f"{int(ov['games']):,} games. "
        f"{tests} rates compared, {CORRECTION_NAMES[method]} correction at alpha = {alpha:g}."
    ]
    if design is not None:
        out.append(_design_line(design, df))
    focus = df[df.get("family", pd.Series("rest", index=df.index)) == "focus"]
    if not focus.empty:
        names = ", ".join(focus["name"])
        out.append(
            f"Focus: {names}, whose cards the variant changes, tested first as a family of its own "
            f"({CORRECTION_NAMES[method]} over {len(focus)}; the other rates corrected separately):"
        )
        out += ["- " + _line(r) for _, r in focus.iterrows()]
        df = df[df["family"] != "focus"]
    sig = df[df["significant"].fillna(False).astype(bool)]
    out += _moved_lines(df, sig, not focus.empty, cards)
    out += _missed(df)
    if cards is not None and not cards.empty:
        shown = set(sig.loc[sig["kind"] == "card", "name"])
        for _, u in cards[~cards["card"].isin(shown)].iterrows():
            out.append(
                f"Changed card {u['card']}: {_use_phrase(u)}; {CARD_METRIC} {u['up_wr_base']:.1%} -> "
                f"{u['up_wr_variant']:.1%}."
            )
    dt = ov["mean_turns"] - ob["mean_turns"]
    out.append(
        f"Games last {ov['mean_turns']:.1f} turns on average in the variant vs {ob['mean_turns']:.1f} "
        f"in the base ({dt:+.1f}); draws {int(ob['draws']):,} -> {int(ov['draws']):,}."
    )
    return out


# -- terminal --------------------------------------------------------------------------------------


def _ratio(x: float) -> str:
    return "" if x is None or np.isnan(x) else f"{x:.1f}x"


def _change(d: float, lo: float, hi: float) -> str:
    return "-" if np.isnan(d) else f"{pts(d)} ({pts(lo)}, {pts(hi)})"


def cards_rows(cards: pd.DataFrame) -> list[list[str]]:
    """The changed-card table's rows: each play rate and win rate base -> variant with its change."""

    def arrow(u: pd.Series, c: str) -> str:
        return f"{pct(u[c + '_base'])} -> {pct(u[c + '_variant'])}"

    return [
        [
            u["card"],
            arrow(u, "up_rate"),
            _change(u["up_rate_change"], u["up_rate_change_low"], u["up_rate_change_high"]),
            arrow(u, "down_rate"),
            arrow(u, "never_rate"),
            arrow(u, "up_wr"),
            _change(u["up_wr_change"], u["up_wr_change_low"], u["up_wr_change_high"]),
            f"{int(u['up_base']):,} / {int(u['up_variant']):,}",
            arrow(u, "played_wr"),
            arrow(u, "never_wr"),
        ]
        for _, u in cards.iterrows()
    ]


CARDS_COLUMNS = [
    "card",
    "face-up",
    "change, points (95% CI)",
    "face-down",
    "never played",
    "WR face-up",
    "change, points (95% CI)",
    "n face-up",
    "WR played",
    "WR never played",
]


def _change_row(r: pd.Series) -> list[str]:
    """One row of the terminal table of changes."""
    return [
        r["name"],
        r["kind"],
        pct(r["rate_base"]),
        f"{int(r['games_base']):,}",
        pct(r["rate_variant"]),
        f"{int(r['games_variant']):,}",
        f"{pts(r['change'])} ({pts(r['change_low'])}, {pts(r['change_high'])})",
        r["design"],
        _ratio(r.get("variance_ratio", np.nan)),
        "-" if np.isnan(r["p_adjusted"]) else f"{r['p_adjusted']:.2g}",
        ("yes" if r["significant"] else "") + (" (focus)" if r.get("family") == "focus" else ""),
    ]


def print_comparison(c: Comparison, console, limit: int = 25) -> None:
    print_lines(c.meta.get("provenance") or [], console)
    for w in c.meta.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {w}")
    for n in c.meta.get("notes", []):
        console.print(f"note: {n}")
    t = shown_rows(c)
    rows = [_change_row(r) for _, r in t.head(limit).iterrows()]
    console.print(
        table(
            f"Changes in win rate (points, 95% CI); {limit if len(t) > limit else len(t)} of {len(t)} "
            "rows: the changed protocols first, then the most significant and largest; cards only "
            "when changed or moved significantly",
            [
                "name",
                "kind",
                "base",
                "games",
                "variant",
                "games",
                "change",
                "design",
                "var. saved",
                "adj. p",
                "significant",
            ],
            rows,
            caption=(
                "var. saved: unpaired / paired variance of the change (paired rows); significant: "
                + " or ".join(sorted(set(t["significant_by"].dropna())))
                + " (the 95% CI is not corrected)"
            ),
        )
    )
    if not c.cards.empty:
        console.print(
            table(
                "Changed cards: how the bots used them (share of the decided seat-games whose deck "
                "holds the card) and their win rates, base -> variant",
                CARDS_COLUMNS,
                cards_rows(c.cards),
                caption="a seat-game can count as both face-up and face-down; WR: win rate",
            )
        )
    for line in c.summary:
        console.print(line)
    for line in note_lines(c.meta.get("rule_notes")):  # beside the verdict (analysis/studies/balance/rule_note.py)
        console.print(line, markup=False, highlight=False, soft_wrap=True)
