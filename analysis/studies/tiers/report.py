"""Tier studies (spec key `tiers`, docs/experiments.md): one pool, one set of seeds and drafts, played
by several strategy tiers (greedy, search, ismcts, ...). A balance finding is only as true as the
players behind it, so the tier report puts each finding's value under every tier side by side, says
how far the tiers agree on the rankings (Kendall tau-b and Spearman rho with bootstrap intervals),
and marks each balance flag "holds under every tier" or "only under <tiers>".

The bootstrap resamples seed clusters (the games sharing one seed: a game or a seat-swapped pair),
the same clusters in every tier, since every tier played the same seeds: the interval covers the
noise of the games, the pairing kept. It is seeded, so a report is reproducible."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.pages.cells import pct, table
from analysis.pages.shell import fig_html, interval_bars, layout, plain_table, render_page, warnings_html
from analysis.runs.open import Runs, arm_of, open_runs, peek_manifest, split_arm
from analysis.runs.provenance import as_html, csv_header, of_runs, print_lines, tier_names
from analysis.runs.runfolder import write_atomic
from analysis.runs.schema import PROTOCOL_COLUMNS
from analysis.stats.cluster_draws import BOOTSTRAP_SEED, RESAMPLES, cluster_draws
from analysis.stats.proportions import z_for
from analysis.studies.balance import queries
from analysis.studies.balance.flags import balance_flags
from analysis.studies.balance.report import records
from analysis.studies.tiers import gaps as tier_gaps
from analysis.studies.tiers import steps as tier_steps
from analysis.studies.tiers import strength
from analysis.studies.tiers.duels import strength_games

FINDINGS = {"protocol": "protocol win rate", "card": "card face-up win rate minus its protocol's other cards"}
TABLE_NAMES = ("agreement", "flags", "protocols", "cards", "strength", "gaps", "steps")
OpenFn = Callable[[str], Runs]


# -- rank agreement ---------------------------------------------------------------------------------


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given the mean of the ranks they span."""
    x = np.asarray(x, dtype=float)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (first + (counts + 1) / 2)[inverse]


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (ties in either ranking allowed); NaN with fewer than two items or a constant side."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 2:
        return math.nan
    iu = np.triu_indices(n, 1)
    dx = np.sign(x[:, None] - x[None, :])[iu]
    dy = np.sign(y[:, None] - y[None, :])[iu]
    pairs = len(dx)
    denom = math.sqrt(float(pairs - np.sum(dx == 0)) * float(pairs - np.sum(dy == 0)))
    return float(np.sum(dx * dy) / denom) if denom > 0 else math.nan


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: the Pearson correlation of the average ranks; NaN when undefined."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return math.nan
    rx, ry = average_ranks(x) - (len(x) + 1) / 2, average_ranks(y) - (len(y) + 1) / 2
    denom = math.sqrt(float(np.sum(rx * rx) * np.sum(ry * ry)))
    return float(np.sum(rx * ry) / denom) if denom > 0 else math.nan


def _both(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def bootstrap_agreement(
    stat_a: Callable[[np.ndarray], np.ndarray],
    stat_b: Callable[[np.ndarray], np.ndarray],
    clusters: int,
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
    estimate: tuple[float, float] | None = None,
) -> dict[str, float]:
    """Kendall tau-b and Spearman rho between two tiers' values (`estimate`, else read from the
    whole of both stats), each with its bootstrap interval:
    the estimate +- z bootstrap standard errors, clipped to [-1, 1]. `stat_a(weights)` and
    `stat_b(weights)` give each tier's item values from cluster weights (how many times each of the
    `clusters` seed clusters is drawn); both tiers get the same draw. Not the percentile interval:
    resampling adds noise, which lowers rank agreement, so the resampled values sit below the
    estimate and their percentiles can leave it outside its own interval."""
    if estimate is None:
        x, y = _both(stat_a(np.ones(clusters)), stat_b(np.ones(clusters)))
        estimate = kendall_tau(x, y), spearman_rho(x, y)
    tau, rho = estimate
    taus, rhos = [], []
    for draws in cluster_draws(clusters, resamples, seed):
        for w in draws:
            x, y = _both(stat_a(w), stat_b(w))
            taus.append(kendall_tau(x, y))
            rhos.append(spearman_rho(x, y))
    z = z_for(level)

    def interval(est: float, v: list[float]) -> tuple[float, float]:
        a = np.asarray(v, dtype=float)
        a = a[np.isfinite(a)]
        if len(a) < 2 or math.isnan(est):
            return math.nan, math.nan
        half = z * float(a.std(ddof=1))
        return max(-1.0, est - half), min(1.0, est + half)

    (tl, th), (rl, rh) = interval(tau, taus), interval(rho, rhos)
    return {
        "kendall_tau": tau,
        "tau_low": tl,
        "tau_high": th,
        "spearman_rho": rho,
        "rho_low": rl,
        "rho_high": rh,
        "resamples": resamples,
    }


# -- per-cluster counts -----------------------------------------------------------------------------


def protocol_clusters(runs: Runs) -> pd.DataFrame:
    """Per (matchup, seed, protocol): decided appearances `n` and wins `w` (the cells of the
    protocol win rate, one per seed cluster)."""
    return runs.sql(f"""
        select matchup, seed, protocol::varchar as item, count(*) filter (where winner >= 0) as n,
               count(*) filter (where winner = seat) as w
        from (select matchup, seed, winner, unnest([{", ".join(PROTOCOL_COLUMNS)}]) as protocol,
                     unnest([0, 0, 0, 1, 1, 1]) as seat from games)
        group by all""")


def card_clusters(runs: Runs) -> pd.DataFrame:
    """Per (matchup, seed, card): decided seat-games of the card's own deck in which it was played
    face-up (`n`) and won (`w`); empty without events."""
    if not runs.has_events:
        return pd.DataFrame(columns=["matchup", "seed", "item", "protocol", "n", "w"])
    own = " or ".join(
        f"(f.seat = {s} and f.protocol in (g.seat{s}_protocol_left, g.seat{s}_protocol_middle, "
        f"g.seat{s}_protocol_right))"
        for s in (0, 1)
    )
    return runs.sql(f"""
        with f as (select distinct game_index, seat, card, protocol from events
                   where kind = 'play_face_up' and card is not null)
        select g.matchup, g.seed, f.card::varchar as item, any_value(f.protocol::varchar) as protocol,
               count(*) as n, count(*) filter (where g.winner = f.seat) as w
        from f join games g on f.game_index = g.game_index
        where g.winner >= 0 and ({own})
        group by all""")


@dataclass
class Cells:
    """Counts per seed cluster (rows, shared by every tier) and item (columns), per tier."""

    items: list[str]
    clusters: int
    n: dict[str, np.ndarray]
    w: dict[str, np.ndarray]
    protocol: list[str] = field(default_factory=list)  # cards: each item's protocol


def cells(frames: dict[str, pd.DataFrame]) -> Cells:
    """Stack each tier's per-cluster counts on one cluster index (the union of their seeds), the
    clusters sorted by (matchup, seed): the bootstrap draws clusters by number, so their numbering
    must not follow the order DuckDB's threads happened to return rows in."""
    all_rows = pd.concat(list(frames.values()), ignore_index=True)
    keys = (
        all_rows[["matchup", "seed"]]
        .drop_duplicates()
        .sort_values(["matchup", "seed"], kind="stable")
        .reset_index(drop=True)
    )
    keys["row"] = np.arange(len(keys))
    items = sorted(all_rows["item"].dropna().unique().tolist())
    col = {it: i for i, it in enumerate(items)}
    n, w = {}, {}
    for tier, df in frames.items():
        d = df.merge(keys, on=["matchup", "seed"])
        nn = np.zeros((len(keys), len(items)))
        ww = np.zeros((len(keys), len(items)))
        c = d["item"].map(col).to_numpy()
        np.add.at(nn, (d["row"].to_numpy(), c), d["n"].to_numpy(dtype=float))
        np.add.at(ww, (d["row"].to_numpy(), c), d["w"].to_numpy(dtype=float))
        n[tier], w[tier] = nn, ww
    protocol = []
    if "protocol" in all_rows:
        of = all_rows.dropna(subset=["item"]).groupby("item")["protocol"].first()
        protocol = [str(of.get(it, "")) for it in items]
    return Cells(items, len(keys), n, w, protocol)


def protocol_rates(c: Cells, tier: str) -> Callable[[np.ndarray], np.ndarray]:
    """Weights -> each protocol's win rate in the resample."""

    def f(weights: np.ndarray) -> np.ndarray:
        n, w = weights @ c.n[tier], weights @ c.w[tier]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, w / np.where(n > 0, n, 1), np.nan)

    return f


def card_differences(c: Cells, tier: str) -> Callable[[np.ndarray], np.ndarray]:
    """Weights -> each card's face-up win rate minus the pooled face-up win rate of its protocol's
    other cards, in the resample."""
    protos = np.asarray(c.protocol)
    groups = [np.flatnonzero(protos == p) for p in sorted(set(c.protocol))]

    def f(weights: np.ndarray) -> np.ndarray:
        n, w = weights @ c.n[tier], weights @ c.w[tier]
        sn, sw = np.zeros_like(n), np.zeros_like(w)
        for g in groups:
            sn[g], sw[g] = n[g].sum() - n[g], w[g].sum() - w[g]
        with np.errstate(invalid="ignore", divide="ignore"):
            own = np.where(n > 0, w / np.where(n > 0, n, 1), np.nan)
            rest = np.where(sn > 0, sw / np.where(sn > 0, sn, 1), np.nan)
        return own - rest

    return f


# -- the study --------------------------------------------------------------------------------------


@dataclass
class TierStudy:
    run: str
    run_id: str
    tiers: list[str]
    tables: dict[str, pd.DataFrame]
    meta: dict[str, Any]


def is_tier_run(path: str | Path) -> bool:
    """A whole tier-study run (not `RUN#tier`, which is one tier's ordinary report)."""
    _, arm = split_arm(path)
    m = peek_manifest(path)
    return arm is None and m is not None and len(tier_names(m)) > 1


def tier_paths(path: str | Path) -> list[str]:
    """`RUN#tier` for each tier that has finished shards, in spec order."""
    m = peek_manifest(path)
    played = m.arms_played if m is not None else set()
    return [f"{path}#{t}" for t in tier_names(m) if t in played]


def _protocol_table(per: dict[str, Runs]) -> pd.DataFrame:
    parts = []
    for tier, runs in per.items():
        p = queries.protocol_win_rates(runs)[["protocol", "games", "wins", "win_rate", "win_rate_low", "win_rate_high"]]
        parts.append(p.assign(tier=tier, rank=p["win_rate"].rank(ascending=False, method="average")))
    out = pd.concat(parts, ignore_index=True)
    return out[["tier", *[c for c in out.columns if c != "tier"]]]


def _card_table(flags: dict[str, pd.DataFrame]) -> pd.DataFrame:
    parts = []
    for tier, f in flags.items():
        c = f[f["kind"] == "card"]
        if c.empty:
            continue
        parts.append(
            pd.DataFrame(
                {
                    "tier": tier,
                    "card": c["name"],
                    "protocol": c["protocol"],
                    "face_up_games": c["games"],
                    "face_up_wins": c["wins"],
                    "face_up_wr": c["win_rate"],
                    "siblings_wr": c["baseline_rate"],
                    "difference": c["difference"],
                    "difference_low": c["difference_low"],
                    "difference_high": c["difference_high"],
                    "p_adjusted": c["p_adjusted"],
                    "flagged": c["flagged"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def verdict(status: dict[str, str | None]) -> str:
    """status: tier -> direction if flagged there, else None."""
    flagged = {t: d for t, d in status.items() if d}
    if len(flagged) == len(status) and len(set(flagged.values())) == 1:
        return "holds under every tier"
    if len(flagged) == len(status):
        return "flagged under every tier, in different directions: " + ", ".join(f"{t} {d}" for t, d in flagged.items())
    mixed = len(set(flagged.values())) > 1
    return "only under " + ", ".join(f"{t} ({d})" if mixed else t for t, d in flagged.items())


def flag_verdicts(flags: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every row flagged under at least one tier, with its status per tier and the verdict."""
    keyed = {t: f.set_index(["kind", "name"]) for t, f in flags.items()}
    names = sorted({k for f in keyed.values() for k in f.index[f["flagged"].to_numpy(dtype=bool)]})
    rows = [_verdict_row(kind, name, keyed) for kind, name in names]
    cols = ["kind", "name", "verdict", "holds_under_every_tier"]
    return (
        pd.DataFrame(rows)[cols + [c for c in (rows[0] if rows else {}) if c not in cols]]
        if rows
        else pd.DataFrame(columns=cols)
    )


def _verdict_row(kind: str, name: str, keyed: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """One flagged row: its win rate, adjusted p and flag under each tier (tiers in order), and the verdict."""
    status: dict[str, str | None] = {}
    row: dict[str, Any] = {"kind": kind, "name": name}
    for t, f in keyed.items():
        r = f.loc[(kind, name)] if (kind, name) in f.index else None
        status[t] = r["direction"] if r is not None and bool(r["flagged"]) else None
        row[f"{t}_win_rate"] = float(r["win_rate"]) if r is not None else math.nan
        row[f"{t}_p_adjusted"] = float(r["p_adjusted"]) if r is not None else math.nan
        row[f"{t}_flag"] = status[t] or ""
    row["verdict"] = verdict(status)
    row["holds_under_every_tier"] = row["verdict"] == "holds under every tier"
    return row


def _values(table: pd.DataFrame, key: str, value: str, tier: str, items: list[str]) -> np.ndarray:
    d = table[table["tier"] == tier].set_index(key)[value]
    return np.array([float(d.get(it, math.nan)) for it in items])


def agreement_table(
    per_cluster: dict[str, Cells],
    protocols: pd.DataFrame,
    cards: pd.DataFrame,
    tiers: list[str],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Kendall tau-b and Spearman rho between every pair of tiers, for the protocol ranking and the
    card-vs-siblings ranking, with bootstrap intervals over seed clusters centred on them."""
    rows = []
    sources = {
        "protocol": (protocols, "protocol", "win_rate", protocol_rates),
        "card": (cards, "card", "difference", card_differences),
    }
    for kind, (frame, key, value, stat) in sources.items():
        c = per_cluster.get(kind)
        if frame is None or frame.empty or c is None or not c.items:
            continue
        for i, a in enumerate(tiers):
            for b in tiers[i + 1 :]:
                x, y = _both(_values(frame, key, value, a, c.items), _values(frame, key, value, b, c.items))
                point = kendall_tau(x, y), spearman_rho(x, y)
                boot = bootstrap_agreement(stat(c, a), stat(c, b), c.clusters, resamples, seed, estimate=point)
                rows.append(
                    {
                        "finding": FINDINGS[kind],
                        "kind": kind,
                        "tier_a": a,
                        "tier_b": b,
                        "items": len(x),
                        **{k: boot[k] for k in ("kendall_tau", "tau_low", "tau_high")},
                        **{k: boot[k] for k in ("spearman_rho", "rho_low", "rho_high")},
                        "clusters": c.clusters,
                        "resamples": resamples,
                    }
                )
    return pd.DataFrame(rows)


def _tier_comparisons(
    per: dict[str, Runs], protocols: pd.DataFrame, cards: pd.DataFrame, resamples: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tiers against each other on the same seed clusters: rank agreement, each tier's protocol gaps
    to the strongest tier, and the steps between adjacent tiers."""
    tiers = list(per)
    per_cluster = {"protocol": cells({t: protocol_clusters(r) for t, r in per.items()})}
    if all(r.has_events for r in per.values()):
        per_cluster["card"] = cells({t: card_clusters(r) for t, r in per.items()})
    agreement = agreement_table(per_cluster, protocols, cards, tiers, resamples, seed)
    pc = per_cluster["protocol"]
    gaps = tier_gaps.gap_table(pc.items, pc.n, pc.w, tiers, resamples, seed)
    steps = tier_steps.step_table(pc.items, pc.n, pc.w, tiers, resamples, seed)
    return agreement, gaps, steps


def _bootstrap_meta(resamples: int, seed: int) -> dict[str, Any]:
    return {
        "unit": "seed cluster (the games sharing one seed), the same draw for every tier",
        "resamples": resamples,
        "seed": seed,
        "interval": "95%: the estimate +- 1.96 bootstrap standard errors (rank agreement); percentile (gaps)",
    }


def tier_study(
    path: str | Path,
    band: float = 0.05,
    method: str = "holm",
    alpha: float = 0.05,
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    open_fn: OpenFn | None = None,
    tolerance: float = tier_gaps.TOLERANCE,
    interval: float = tier_gaps.INTERVAL,
) -> TierStudy:
    """Open each tier of a tier-study run and build the side-by-side tables, agreement, verdicts and
    each tier's paired protocol gaps against the last (strongest) tier, judged against `tolerance`
    and `interval` (tier_gaps.summary)."""
    opener = open_fn or (lambda p: open_runs([p]))
    paths = tier_paths(path)
    per = {arm_of(p): opener(p) for p in paths}
    tiers = list(per)
    try:
        flags = {t: balance_flags(r, band, method, alpha) for t, r in per.items()}
        protocols, cards = _protocol_table(per), _card_table(flags)
        agreement, gaps, steps = _tier_comparisons(per, protocols, cards, resamples, seed)
        blocks = [b for r in per.values() for b in of_runs(r)]
        warnings = list(dict.fromkeys(w for r in per.values() for w in r.warnings))
        run_id = next(iter(per.values())).run_ids[0] if per else str(path)
    finally:
        for r in per.values():
            r.close()
    measured = strength.strength_table(path, opener)  # [strength]'s duels, never pooled with the tiers
    strong = strength.meta(measured, tiers, strength_games(peek_manifest(path)))
    if strong["order_warning"]:
        warnings.append(strong["order_warning"])
    statement = next(iter(flags.values())).attrs.get("statement", "") if flags else ""
    meta = {
        "run": str(path),
        "run_id": run_id,
        "tiers": tiers,
        "provenance": blocks,
        "warnings": warnings,
        "band": band,
        "correction": method,
        "alpha": alpha,
        "flags_statement": statement,
        "strength": strong,
        "bootstrap": _bootstrap_meta(resamples, seed),
        "gaps": tier_gaps.meta(gaps, resamples, seed, tolerance, interval),
        "steps": {"statement": tier_steps.statement(resamples, seed), "last": tier_steps.last_step(steps)},
    }
    tables = {
        "agreement": agreement,
        "flags": flag_verdicts(flags),
        "protocols": protocols,
        "cards": cards,
        "strength": measured,
        "gaps": gaps,
        "steps": steps,
    }
    return TierStudy(str(path), run_id, tiers, tables, meta)


# -- output -----------------------------------------------------------------------------------------


def to_json(study: TierStudy) -> str:
    return json.dumps(
        {"meta": study.meta, "tables": {k: records(v) for k, v in study.tables.items()}}, indent=1, default=str
    )


def table_csv(study: TierStudy, name: str) -> str:
    return csv_header(study.meta["provenance"]) + study.tables[name].to_csv(index=False)


def write_csv(study: TierStudy, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in study.tables:
        f = out / f"{name}.csv"
        write_atomic(f, table_csv(study, name).encode("utf-8"))
        written.append(f)
    return written


def _flag(v: Any) -> bool:
    """A pivoted `flagged` cell: True only for a real True (NaN where a tier lacks the card)."""
    return isinstance(v, bool | np.bool_) and bool(v)


def _num(x: float, fmt: str = "{:+.2f}") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def _agreement_rows(a: pd.DataFrame) -> list[list[str]]:
    return [
        [
            r["finding"],
            f"{r['tier_a']} vs {r['tier_b']}",
            f"{int(r['items'])}",
            f"{_num(r['kendall_tau'])} ({_num(r['tau_low'])} to {_num(r['tau_high'])})",
            f"{_num(r['spearman_rho'])} ({_num(r['rho_low'])} to {_num(r['rho_high'])})",
        ]
        for _, r in a.iterrows()
    ]


def wide_protocols(study: TierStudy) -> pd.DataFrame:
    p = study.tables["protocols"]
    out = p.pivot(index="protocol", columns="tier", values="win_rate")
    return out.reindex(columns=study.tiers).sort_values(study.tiers[0], ascending=False)


def wide_cards(study: TierStudy) -> pd.DataFrame:
    c = study.tables["cards"]
    if c.empty:
        return pd.DataFrame()
    d = c.pivot(index="card", columns="tier", values="difference").reindex(columns=study.tiers)
    f = c.pivot(index="card", columns="tier", values="flagged").reindex(columns=study.tiers)
    d.columns = [f"{t}_difference" for t in study.tiers]
    f.columns = [f"{t}_flagged" for t in study.tiers]
    n = c.pivot(index="card", columns="tier", values="face_up_games").reindex(columns=study.tiers)
    n.columns = [f"{t}_face_up_games" for t in study.tiers]
    out = d.join(f).join(n)
    out["flagged_somewhere"] = f.map(_flag).any(axis=1)
    out["spread"] = d.abs().max(axis=1)
    out["evidence"] = card_evidence(c).reindex(out.index)
    return out.sort_values(["flagged_somewhere", "evidence", "spread"], ascending=[False, False, False])


def card_evidence(cards: pd.DataFrame) -> pd.Series:
    """Per card, how surely its difference is away from 0 under its best-supported tier: the bound
    of its 95% interval nearest to 0, negative when the interval spans 0. A card seen face-up in
    one game has the largest difference and an interval spanning 0, so it ranks low, not first."""
    near = cards["difference_low"].where(cards["difference"] >= 0, -cards["difference_high"])
    return near.groupby(cards["card"]).max()


def _games(n: float) -> str:
    """A cell's face-up game count, so that a difference from a handful of games reads as such."""
    return "" if pd.isna(n) else f" (n={int(n):,})"


def tier_labels(study: TierStudy) -> list[str]:
    """Each tier's heading: its name with its measured strength ([strength]: `search (88% vs greedy)`)."""
    named = study.meta.get("strength", {}).get("labels", {})
    return [named.get(t, t) for t in study.tiers]


def _strength_caption(study: TierStudy) -> str:
    return f"{study.meta['strength']['statement'][:1].upper()}{study.meta['strength']['statement'][1:]}."


def print_tiers(study: TierStudy, console, top: int = 15) -> None:
    for w in study.meta["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}", soft_wrap=True)  # a path or a shard name stays whole
    print_lines(study.meta["provenance"], console)
    heads = tier_labels(study)
    console.print(
        f"[bold]Tier study {study.run_id}[/bold]: {len(study.tiers)} tiers ({', '.join(heads)}) on the "
        "same seeds, pool and drafts. One tier's full report: protolab report "
        f"{study.run}#{study.tiers[0]}"
    )
    s = study.tables["strength"]
    if not s.empty:
        console.print(
            table(
                "Measured strength: adjacent tiers head to head",
                strength.HEADERS,
                strength.rows(s),
                caption=_strength_caption(study),
            )
        )
    a = study.tables["agreement"]
    b = study.meta["bootstrap"]
    console.print(
        table(
            "Rank agreement between tiers (95% bootstrap interval)",
            ["finding", "tiers", "items", "Kendall tau-b", "Spearman rho"],
            _agreement_rows(a),
            caption=f"Bootstrap: {b['resamples']} resamples of {b['unit']}; seed {b['seed']}. "
            "1 = same order, 0 = unrelated, -1 = reversed.",
        )
    )
    print_gaps(study, console)
    print_steps(study, console)
    _print_flags(study, console, heads)
    w = wide_protocols(study)
    rows = [[idx, *[pct(v) for v in r]] for idx, r in w.iterrows()]
    console.print(table("Protocol win rate under each tier (decided games)", ["protocol", *heads], rows))
    _print_cards(study, console, heads, top)


def _print_flags(study: TierStudy, console, heads: list[str]) -> None:
    f = study.tables["flags"]
    rows = [
        [r["name"], r["kind"], *[(r[f"{t}_flag"] or "-") for t in study.tiers], r["verdict"]] for _, r in f.iterrows()
    ]
    console.print(
        table(
            "Balance flags under each tier",
            ["name", "kind", *heads, "verdict"],
            rows,
            caption=study.meta["flags_statement"] + ("" if rows else ": nothing flagged under any tier"),
        )
    )


def _print_cards(study: TierStudy, console, heads: list[str], top: int) -> None:
    wc = wide_cards(study)
    if not wc.empty:
        shown = wc.head(top)
        rows = [
            [
                idx,
                *[
                    _num(r[f"{t}_difference"] * 100, "{:+.1f}")
                    + (" *" if _flag(r[f"{t}_flagged"]) else "")
                    + _games(r[f"{t}_face_up_games"])
                    for t in study.tiers
                ],
            ]
            for idx, r in shown.iterrows()
        ]
        console.print(
            table(
                f"Card vs its protocol's other cards: face-up win rate difference, points ({len(shown)} "
                f"of {len(wc)}: flagged first, then by evidence: the 95% interval's bound nearest 0)",
                ["card", *heads],
                rows,
                caption=f"* flagged. All: protolab report {study.run} --format csv --table cards",
            )
        )


def print_gaps(study: TierStudy, console) -> None:
    """The paired gaps against the top tier, then one line per tier: the designer's yes or no."""
    g, m = study.tables["gaps"], study.meta["gaps"]
    if g.empty:
        return
    console.print(table(tier_gaps.TITLE, tier_gaps.HEADERS, tier_gaps.rows(g), caption=f"{m['statement']}."))
    for s in m["summary"]:
        console.print(s["line"], soft_wrap=True)


def print_steps(study: TierStudy, console) -> None:
    """The strength ladder of verdicts: per protocol each tier's rate and each step's change, then the
    line about the last step (the convergence measure)."""
    st, m = study.tables.get("steps"), study.meta.get("steps")
    if st is None or m is None or st.empty or len(study.tiers) < 3:
        return
    console.print(
        table(
            tier_steps.TITLE,
            tier_steps.headers(study.tiers),
            tier_steps.rows(st, study.tiers),
            caption=f"{m['statement']}.",
        )
    )
    console.print(m["last"]["line"], soft_wrap=True)


def steps_html(study: TierStudy) -> str:
    st, m = study.tables.get("steps"), study.meta.get("steps")
    if st is None or m is None or st.empty or len(study.tiers) < 3:
        return ""
    cells = pd.DataFrame(tier_steps.rows(st, study.tiers), columns=tier_steps.headers(study.tiers))
    return (
        f"<section><h2>{html.escape(tier_steps.TITLE)}</h2><p>{html.escape(m['last']['line'])}</p>"
        f'{plain_table(cells, "tier-steps")}<p class="muted">{html.escape(m["statement"])}.</p></section>'
    )


def gaps_html(study: TierStudy) -> str:
    g, m = study.tables["gaps"], study.meta["gaps"]
    if g.empty:
        return ""
    lines = "".join(f"<p>{html.escape(s['line'])}</p>" for s in m["summary"])
    cells = pd.DataFrame(tier_gaps.rows(g), columns=tier_gaps.HEADERS)
    return (
        f"<section><h2>{html.escape(tier_gaps.TITLE)}</h2>{lines}{plain_table(cells, 'tier-gaps')}"
        f'<p class="muted">{html.escape(m["statement"])}.</p></section>'
    )


def fig_protocols(study: TierStudy) -> go.Figure:
    """Each protocol's win rate under every tier, with its interval."""
    p = study.tables["protocols"]
    order = wide_protocols(study).index.tolist()[::-1]
    fig = go.Figure()
    for tier, head in zip(study.tiers, tier_labels(study), strict=True):
        d = p[p["tier"] == tier].set_index("protocol").reindex(order)
        fig.add_trace(
            go.Scatter(
                x=d["win_rate"],
                y=order,
                mode="markers",
                name=head,
                marker={"size": 9},
                error_x=interval_bars(d["win_rate"], d["win_rate_low"], d["win_rate_high"]),
            )
        )
    fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"})
    return layout(
        fig,
        "Protocol win rate under each tier (95% Wilson intervals)",
        height=max(360, 28 * len(order) + 120),
        xaxis={"tickformat": ".0%", "title": "win rate"},
    )


def render_tiers(study: TierStudy) -> str:
    """The tier page as one HTML string (plotly.js inline: it works offline)."""
    a = pd.DataFrame(
        _agreement_rows(study.tables["agreement"]),
        columns=["finding", "tiers", "items", "Kendall tau-b (95% CI)", "Spearman rho (95% CI)"],
    )
    f = study.tables["flags"]
    heads = tier_labels(study)
    flags = pd.DataFrame(
        [
            [r["name"], r["kind"], *[(r[f"{t}_flag"] or "-") for t in study.tiers], r["verdict"]]
            for _, r in f.iterrows()
        ],
        columns=["name", "kind", *heads, "verdict"],
    )
    wp = wide_protocols(study).map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
    wp = wp.set_axis(heads, axis=1).reset_index()
    wc = wide_cards(study)
    cards = (
        (
            wc[[f"{t}_difference" for t in study.tiers]]
            .map(lambda v: "" if pd.isna(v) else f"{v * 100:+.1f}")
            .join(wc[[f"{t}_flagged" for t in study.tiers]].map(lambda v: "flagged" if _flag(v) else ""))
            .reset_index()
        )
        if not wc.empty
        else pd.DataFrame()
    )
    b = study.meta["bootstrap"]
    cards_html = (
        f'<div class="scroll">{plain_table(cards, "tier-cards")}</div>'
        if not cards.empty
        else "<p class='muted'>No events: card findings need the events table.</p>"
    )
    header = f"""
<p>Tiers {html.escape(", ".join(heads))} on the same seeds, pool and drafts. One tier's full dashboard: protolab
dashboard {html.escape(study.run)}#TIER</p>{as_html(study.meta["provenance"])}"""
    s = study.tables["strength"]
    measured = (
        f"""<section><h2>Measured strength</h2>{
            plain_table(pd.DataFrame(strength.rows(s), columns=strength.HEADERS), "tier-strength")
        }<p class="muted">{html.escape(_strength_caption(study))}</p></section>"""
        if not s.empty
        else ""
    )
    body = f"""{warnings_html(study.meta["warnings"])}{measured}
<section><h2>Rank agreement between tiers</h2>{plain_table(a, "agreement")}
<p class="muted">95% bootstrap intervals (the estimate +- 1.96 standard errors of its resamples) over
{html.escape(b["unit"])}, {b["resamples"]} resamples, seed {b["seed"]}.
1 = the same order, 0 = unrelated, -1 = reversed.</p></section>{gaps_html(study)}{steps_html(study)}
<section><h2>Balance flags under each tier</h2>{
        plain_table(flags, "tier-flags") if not flags.empty else "<p class='ok'>Nothing flagged under any tier.</p>"
    }
<p class="muted">{html.escape(study.meta["flags_statement"])}.</p></section>
<section>{fig_html(fig_protocols(study), "chart-tier-protocols")}</section>
<section><h2>Protocol win rate under each tier</h2>{plain_table(wp, "tier-protocols")}</section>
<section><h2>Card vs its protocol's other cards: face-up win rate difference, points</h2>{cards_html}</section>"""
    title = f"{study.run_id}: tier study, {len(study.tiers)} tiers"
    return render_page(" tiers", "protolab tier study", title, header, body)
