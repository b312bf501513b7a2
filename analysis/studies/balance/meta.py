"""The metagame: which trios (and so which protocols) a player who can be countered should choose.

From the trio-vs-trio games of one or more runs (round robin, sampled, fixed, random drafts or a
PSRO loop), this module

1. counts every played pair of trios (`matchup_table`: one DuckDB query);
2. fits a payoff model that predicts every pair, played or not (`fit_payoff_model`): a logistic
   (Bradley-Terry-like) model with protocol effects, protocol-pair synergy in one trio, and
   protocol-vs-protocol counter effects, L2-regularised, with its held-out fit;
3. builds the trio-vs-trio payoff matrix (observed rates shrunk toward the model, the model where a
   pair was not played) and solves the symmetric zero-sum game "choose a trio": the Nash
   equilibrium, its maximum-entropy version, Nash-averaged ratings, alpha-rank, and a bootstrap over
   matchups for every figure (`meta_analysis`, `analyse_runs`).

`trio_scores(runs)` and `protocol_scores(runs)` are the small, stable public tables other parts of
protolab use (draft strategies): one row per trio / protocol with its observed and modelled
strength. docs/analysis.md ("Metagame") explains every number. This module never imports
protolab.experiment; the PSRO loop (protolab/experiment/meta/psro.py) imports it."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import minimize

from analysis.runs.open import Runs, open_runs
from analysis.stats.proportions import add_rate
from analysis.studies.balance import solvers as G
from analysis.studies.balance.queries import trio_table

SEP = ", "
PRIOR_GAMES = 10.0  # observed pair rates are shrunk toward the model by this many games
MAIN_L2 = 1.0  # prior precision of a protocol's effect (logit units)
PAIR_L2_GRID = (3.0, 10.0, 30.0, 100.0)  # candidates for the synergy and counter effects' precision (chosen by CV)
FOLDS = 5
ALPHA = 100.0  # alpha-rank selection intensity (payoffs are win rate - 0.5)
POPULATION = 50  # alpha-rank population size
BOOTSTRAP = 20
ALPHARANK_LIMIT = 2500  # alpha-rank solves an n x n linear system: skipped (NaN) above this many trios
USED = 1e-6  # equilibrium probability above which a strategy counts as used
LOOP_FILE = "meta.json"  # a PSRO loop folder's manifest, the one declaration (psro.py writes it)
SPARSE_SHARE = 0.05  # below this share of the possible trio pairs played, the model is warned about


# -- 1. the data ------------------------------------------------------------------------------------


def matchup_table(runs: Runs) -> pd.DataFrame:
    """Each unordered pair of trios played (trio_a < trio_b, labels as everywhere: sorted names
    joined by ", "): decided games, trio_a's wins, draws. One DuckDB roll-up of `trio_agg`."""
    t = trio_table(runs)
    return runs.sql(f"""
        select least(trio0, trio1) as trio_a, greatest(trio0, trio1) as trio_b,
               coalesce(sum(n) filter (where winner >= 0), 0)::bigint as games,
               coalesce(sum(n) filter (where winner = (trio0 > trio1)::int), 0)::bigint as wins,
               coalesce(sum(n) filter (where winner < 0), 0)::bigint as draws
        from {t} where trio0 <> trio1
        group by all order by trio_a, trio_b""")


# -- 2. the payoff model ----------------------------------------------------------------------------


@dataclass
class Universe:
    """The protocols and every trio of them, with index tables the model needs."""

    protocols: list[str]
    trios: list[str]  # labels, sorted
    members: np.ndarray  # (trios, 3) protocol indices
    pair_id: np.ndarray  # (K, K) index of the unordered protocol pair, -1 on the diagonal

    @classmethod
    def of(cls, protocols: list[str]) -> Universe:
        ps = sorted(set(protocols))
        combos = list(itertools.combinations(range(len(ps)), 3))
        pair_id = -np.ones((len(ps), len(ps)), dtype=np.int64)
        for k, (i, j) in enumerate(itertools.combinations(range(len(ps)), 2)):
            pair_id[i, j] = pair_id[j, i] = k
        return cls(
            ps, [SEP.join(ps[i] for i in c) for c in combos], np.array(combos, dtype=np.int64).reshape(-1, 3), pair_id
        )

    @property
    def n_pairs(self) -> int:
        k = len(self.protocols)
        return k * (k - 1) // 2

    def index(self, labels: pd.Series) -> np.ndarray:
        idx = pd.Index(self.trios).get_indexer(pd.Series(labels, dtype=object))
        if (idx < 0).any():
            raise ValueError(f"unknown trio {list(pd.Series(labels)[idx < 0])[0]!r}")
        return idx.astype(np.int64)


def universe_of(matchups: pd.DataFrame, protocols: list[str] | None = None) -> Universe:
    """Every trio of the protocols seen in `matchups` (or of `protocols`)."""
    if protocols is None:
        seen = set()
        for col in ("trio_a", "trio_b"):
            for t in matchups[col].unique():
                seen.update(t.split(SEP))
        protocols = sorted(seen)
    if len(protocols) < 6:
        raise ValueError(f"the metagame needs trio-vs-trio games over at least six protocols; got {len(protocols)}")
    return Universe.of(protocols)


def design_matrix(u: Universe, ia: np.ndarray, ib: np.ndarray) -> sparse.csr_matrix:
    """Features of "trio ia beats trio ib": +1/-1 for each side's protocols (main effects) and
    protocol pairs within a trio (synergy), and for each protocol of A facing one of B the counter
    effect of that ordered pair (+1 for (p, q) with p < q, -1 for (q, p))."""
    k, npairs = len(u.protocols), u.n_pairs
    ma, mb = u.members[ia], u.members[ib]
    rows_n = np.arange(len(ia))
    rows, cols, vals = [], [], []
    for side, sign in ((ma, 1.0), (mb, -1.0)):
        for c in range(3):
            rows.append(rows_n)
            cols.append(side[:, c])
            vals.append(np.full(len(ia), sign))
        for c1, c2 in ((0, 1), (0, 2), (1, 2)):
            rows.append(rows_n)
            cols.append(k + u.pair_id[side[:, c1], side[:, c2]])
            vals.append(np.full(len(ia), sign))
    for c1 in range(3):
        for c2 in range(3):
            p, q = ma[:, c1], mb[:, c2]
            keep = p != q
            rows.append(rows_n[keep])
            cols.append(k + npairs + u.pair_id[p[keep], q[keep]])
            vals.append(np.where(p[keep] < q[keep], 1.0, -1.0))
    return sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(len(ia), k + 2 * npairs)
    )


@dataclass
class PayoffModel:
    """A fitted model: logit P(A beats B) = s(A) - s(B) + c(A, B)."""

    universe: Universe
    coef: np.ndarray
    pair_l2: float
    main_only: bool = False

    @property
    def main(self) -> np.ndarray:
        return self.coef[: len(self.universe.protocols)]

    @property
    def synergy(self) -> np.ndarray:
        k = len(self.universe.protocols)
        return self.coef[k : k + self.universe.n_pairs]

    @property
    def counter(self) -> np.ndarray:
        """(K, K) antisymmetric: counter[p, q] is added to the logit of a trio holding p against one holding q."""
        u = self.universe
        k = len(u.protocols)
        flat = self.coef[k + u.n_pairs :]
        out = np.zeros((k, k))
        i, j = np.triu_indices(k, 1)
        out[i, j] = flat[u.pair_id[i, j]]
        out[j, i] = -out[i, j]
        return out

    def strength(self) -> np.ndarray:
        """s(T) per trio: its protocols' effects plus its pairs' synergy (logit units, centred)."""
        u = self.universe
        m = u.members
        s = self.main[m].sum(axis=1)
        syn = self.synergy
        s = s + syn[u.pair_id[m[:, 0], m[:, 1]]] + syn[u.pair_id[m[:, 0], m[:, 2]]] + syn[u.pair_id[m[:, 1], m[:, 2]]]
        return s - s.mean()

    def logits(self) -> np.ndarray:
        """(trios, trios): the model's logit of row beating column, every pair."""
        u = self.universe
        s = self.strength()
        ind = np.zeros((len(u.trios), len(u.protocols)))
        np.put_along_axis(ind, u.members, 1.0, axis=1)
        return s[:, None] - s[None, :] + ind @ self.counter @ ind.T

    def predict(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        return _sigmoid(design_matrix(self.universe, ia, ib) @ self.coef)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * z))


def _sigmoid_in_place(z: np.ndarray) -> np.ndarray:
    """_sigmoid's steps, bit for bit, written over z: a trio-by-trio matrix at 30 protocols is 16
    million entries, and three temporaries of it cost more than the arithmetic."""
    np.multiply(z, 0.5, out=z)
    np.tanh(z, out=z)
    np.add(z, 1, out=z)
    np.multiply(z, 0.5, out=z)
    return z


def _fit(
    x: sparse.csr_matrix, n: np.ndarray, w: np.ndarray, l2: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """Penalised binomial maximum likelihood: minimise sum n log(1 + e^z) - w z + l2 b^2 / 2 (z = X b),
    strictly convex, by L-BFGS (warm-started from `start` for refits: cross-validation, bootstrap)."""
    total = max(float(n.sum()), 1.0)
    xt = x.T.tocsr()

    def f(b: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ b
        loss = float(np.sum(n * np.logaddexp(0, z) - w * z) + 0.5 * np.sum(l2 * b * b))
        return loss / total, (xt @ (n * _sigmoid(z) - w) + l2 * b) / total

    b0 = np.zeros(x.shape[1]) if start is None else start
    return minimize(f, b0, jac=True, method="L-BFGS-B", options={"maxiter": 1000, "gtol": 1e-8}).x


def _fit_variant(
    x: sparse.csr_matrix,
    n: np.ndarray,
    w: np.ndarray,
    u: Universe,
    pair_l2: float,
    main_only: bool = False,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Coefficients of the full model, or of protocol effects only (the pair effects held at 0)."""
    k, npairs = len(u.protocols), u.n_pairs
    if main_only:
        out = np.zeros(k + 2 * npairs)
        out[:k] = _fit(x[:, :k], n, w, np.full(k, MAIN_L2), None if start is None else start[:k])
        return out
    return _fit(x, n, w, np.concatenate([np.full(k, MAIN_L2), np.full(2 * npairs, pair_l2)]), start)


def _data(u: Universe, matchups: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    played = matchups[matchups["games"] > 0]
    return (
        u.index(played["trio_a"]),
        u.index(played["trio_b"]),
        played["games"].to_numpy(float),
        played["wins"].to_numpy(float),
    )


def fit_payoff_model(
    matchups: pd.DataFrame,
    u: Universe | None = None,
    pair_l2: float = 10.0,
    main_only: bool = False,
    weights: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> PayoffModel:
    """Fit the model to decided games per played pair (`weights` rescale each pair: the bootstrap)."""
    u = u or universe_of(matchups)
    ia, ib, n, w = _data(u, matchups)
    if weights is not None:
        keep = (matchups["games"] > 0).to_numpy()
        n, w = n * weights[keep], w * weights[keep]
    coef = _fit_variant(design_matrix(u, ia, ib), n, w, u, pair_l2, main_only, start)
    return PayoffModel(u, coef, pair_l2, main_only)


def _scores(p: np.ndarray, n: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Per-game log-loss and Brier score of predictions p for w wins in n games."""
    p = np.clip(p, 1e-9, 1 - 1e-9)
    total = n.sum()
    ll = -(w * np.log(p) + (n - w) * np.log(1 - p)).sum() / total
    brier = (w * (1 - p) ** 2 + (n - w) * p**2).sum() / total
    return float(ll), float(brier)


def cross_validate(
    matchups: pd.DataFrame, u: Universe, seed: int = 1, grid: tuple[float, ...] = PAIR_L2_GRID
) -> tuple[pd.DataFrame, float]:
    """Held-out fit, FOLDS-fold over played pairs (seeded): per-game log-loss and Brier of a coin flip,
    of protocol effects only, and of the full model at each candidate regularisation; returns the
    table and the regularisation with the best held-out log-loss."""
    ia, ib, n, w = _data(u, matchups)
    folds = np.random.default_rng([seed, 0x3E7A]).permutation(len(ia)) % FOLDS
    x = design_matrix(u, ia, ib)
    variants = [("protocol effects only", 0.0, True)] + [(f"full, pair L2 {g:g}", g, False) for g in grid]
    preds = {name: np.full(len(ia), 0.5) for name, _, _ in variants}
    for name, g, main_only in variants:
        whole = _fit_variant(x, n, w, u, g, main_only)  # a warm start only: the optimum is unique
        for f in range(min(FOLDS, len(ia))):
            test, train = folds == f, folds != f
            if train.any() and test.any():
                preds[name][test] = _sigmoid(
                    x[test] @ _fit_variant(x[train], n[train], w[train], u, g, main_only, whole)
                )
    rows = [
        {
            "model": "coin flip (50%)",
            "pair_l2": None,
            **dict(zip(("log_loss", "brier"), _scores(np.full(len(ia), 0.5), n, w), strict=True)),
        }
    ]
    for name, g, main_only in variants:
        ll, br = _scores(preds[name], n, w)
        rows.append({"model": name, "pair_l2": None if main_only else g, "log_loss": ll, "brier": br})
    table = pd.DataFrame(rows)
    full = table[table["model"].str.startswith("full")]
    best = float(full.loc[full["log_loss"].idxmin(), "pair_l2"]) if len(full) else 10.0
    table["chosen"] = table["pair_l2"].eq(best) & table["model"].str.startswith("full")
    table.attrs.update({"folds": FOLDS, "games": int(n.sum()), "pairs": len(ia)})
    return table, best


# -- 3. the game --------------------------------------------------------------------------------------


def win_matrix(
    model: PayoffModel, matchups: pd.DataFrame, prior_games: float = PRIOR_GAMES, weights: np.ndarray | None = None
) -> np.ndarray:
    """P(row trio beats column trio) for every pair: where the pair was played, its observed rate
    shrunk toward the model by `prior_games` pseudo-games ((wins + k p) / (games + k)); elsewhere the
    model. Exactly P + P^T = 1 (the game is symmetric), 0.5 on the diagonal."""
    p = _sigmoid_in_place(model.logits())
    ia, ib, n, w = _data(model.universe, matchups)
    if weights is not None:
        keep = (matchups["games"] > 0).to_numpy()
        n, w = n * weights[keep], w * weights[keep]
    obs = (w + prior_games * p[ia, ib]) / np.maximum(n + prior_games, 1e-12)
    p[ia, ib] = np.where(n + prior_games > 0, obs, p[ia, ib])
    p[ib, ia] = 1 - p[ia, ib]
    np.fill_diagonal(p, 0.5)
    return p


@dataclass
class Solution:
    """One solve of the game: the equilibrium (maximum entropy), its ratings, alpha-rank."""

    nash: np.ndarray
    ratings: np.ndarray
    alpharank: np.ndarray
    uniform: np.ndarray  # win rate against a uniformly drawn trio sharing no protocol
    exploitability: float


def _uniform_field(p: np.ndarray, u: Universe) -> np.ndarray:
    ind = np.zeros((len(u.trios), len(u.protocols)))
    np.put_along_axis(ind, u.members, 1.0, axis=1)
    disjoint = (ind @ ind.T) == 0
    return (p * disjoint).sum(axis=1) / np.maximum(disjoint.sum(axis=1), 1)


def solve(
    p: np.ndarray, u: Universe, alpha: float = ALPHA, population: int = POPULATION, rank: bool = True
) -> Solution:
    """Equilibrium, Nash averaging and alpha-rank of the game with payoff P - 0.5."""
    m = G.antisymmetric(p - 0.5)
    x = G.nash_equilibrium(m)
    x = G.maxent_equilibrium(m, x)
    pi = G.alpha_rank(m, alpha, population) if rank and len(m) <= ALPHARANK_LIMIT else np.full(len(m), np.nan)
    return Solution(x, G.nash_ratings(m, x), pi, _uniform_field(p, u), G.exploitability(m, x))


def protocol_weight(u: Universe, trio_probs: np.ndarray) -> np.ndarray:
    """P(the chosen trio holds the protocol) per protocol: sums to 3 over protocols."""
    out = np.zeros(len(u.protocols))
    np.add.at(out, u.members.ravel(), np.repeat(trio_probs, 3))
    return out


def effective_protocols(weight: np.ndarray) -> float:
    """exp(entropy) of the protocols' shares (weight / 3): 1 when one protocol carries everything."""
    share = np.asarray(weight, dtype=float) / max(float(np.sum(weight)), 1e-12)
    share = share[share > 0]
    return float(math.exp(-(share * np.log(share)).sum()))


@dataclass
class MetaResult:
    """Tables for a designer (docs/analysis.md, "Metagame")."""

    trios: pd.DataFrame
    protocols: pd.DataFrame
    health: dict[str, Any]
    fit: pd.DataFrame
    meta: dict[str, Any]
    iterations: pd.DataFrame = field(default_factory=pd.DataFrame)
    model: PayoffModel | None = None
    picks: pd.DataFrame = field(default_factory=pd.DataFrame)  # the draft's pick metrics (studies/balance/picks.py)
    first_pick: pd.DataFrame = field(default_factory=pd.DataFrame)


def _interval(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(samples) == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    return np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)


def _add_interval(df: pd.DataFrame, column: str, samples: np.ndarray) -> None:
    """Columns `<column>_low` and `<column>_high`: the 95% bootstrap interval of each row."""
    df[f"{column}_low"], df[f"{column}_high"] = _interval(samples)


def _bootstrap(
    matchups: pd.DataFrame,
    u: Universe,
    pair_l2: float,
    prior_games: float,
    reps: int,
    seed: int,
    alpha: float,
    population: int,
    start: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Resample the played pairs of trios with replacement (a pair with its games is the unit: the
    games of one matchup share seeds), refit, re-solve; the figures of every replicate."""
    rng = np.random.default_rng([seed, 0xB007])
    played = int((matchups["games"] > 0).sum())
    probs = np.ones(played) / played
    out: dict[str, list[np.ndarray]] = {"nash": [], "ratings": [], "alpharank": [], "weight": [], "rank_weight": []}
    keep = (matchups["games"] > 0).to_numpy()
    ia, ib, _, _ = _data(u, matchups)
    seen = np.zeros((len(u.trios), len(u.trios)), dtype=bool)
    seen[ia, ib] = seen[ib, ia] = True
    for _ in range(reps):
        r = np.zeros(len(matchups))
        r[keep] = rng.multinomial(played, probs)
        model = fit_payoff_model(matchups, u, pair_l2, weights=r, start=start)
        p = _draw_unplayed(win_matrix(model, matchups, prior_games, weights=r), seen, prior_games, rng)
        sol = solve(p, u, alpha, population)
        out["nash"].append(sol.nash)
        out["ratings"].append(sol.ratings)
        out["alpharank"].append(sol.alpharank)
        out["weight"].append(protocol_weight(u, sol.nash))
        out["rank_weight"].append(protocol_weight(u, sol.alpharank))
    return {k: np.array(v).reshape(reps, -1) for k, v in out.items()}


def _draw_unplayed(p: np.ndarray, seen: np.ndarray, prior_games: float, rng: np.random.Generator) -> np.ndarray:
    """p with every pair no game was played in drawn around the model's rate, Beta(k p, k (1 - p))
    with k = prior_games: an unplayed pair is worth the evidence of the pseudo-games a played one is
    shrunk by, no more. Without it the bootstrap resamples only the played pairs and a model fitted
    on a handful of them gives the same equilibrium every time (intervals of 100-100%)."""
    if prior_games <= 0:
        return p
    tiny = 1e-9
    draw = np.triu(rng.beta(np.maximum(prior_games * p, tiny), np.maximum(prior_games * (1 - p), tiny)), 1)
    draw += np.tril(1 - draw.T, -1)
    np.fill_diagonal(draw, 0.5)
    return np.where(seen, p, draw)


def coverage_warnings(pairs_played: int, pairs_possible: int) -> list[str]:
    """A warning when the payoff model rests on few played pairs: its equilibrium is then mostly
    the model's extrapolation."""
    if pairs_possible <= 0 or pairs_played >= SPARSE_SHARE * pairs_possible:
        return []
    return [
        f"the payoff model rests on {pairs_played:,} played of {pairs_possible:,} possible trio pairs "
        f"({pairs_played / pairs_possible:.1%}, under {SPARSE_SHARE:.0%}): the equilibrium is mostly the "
        "model's extrapolation; its intervals draw every unplayed pair around the model's rate, and more "
        "played pairs (a sampled or full trio draft) would narrow them"
    ]


def _observed(u: Universe, matchups: pd.DataFrame) -> pd.DataFrame:
    """Per trio: decided games and wins over every pair it played."""
    a = matchups.groupby("trio_a")[["games", "wins"]].sum()
    b = matchups.assign(wins=matchups["games"] - matchups["wins"]).groupby("trio_b")[["games", "wins"]].sum()
    both = a.add(b, fill_value=0).reindex(u.trios).fillna(0).astype(np.int64)
    return add_rate(both.reset_index(names="trio"))


def meta_analysis(
    matchups: pd.DataFrame,
    bootstrap: int = BOOTSTRAP,
    seed: int = 1,
    prior_games: float = PRIOR_GAMES,
    alpha: float = ALPHA,
    population: int = POPULATION,
    protocols: list[str] | None = None,
    pair_l2: float | None = None,
    alpharank: bool = True,
) -> MetaResult:
    """The whole metagame analysis of a table of played trio pairs (`matchup_table`); `alpharank`
    False leaves alpha-rank out (NaN), as above ALPHARANK_LIMIT trios (the dashboard's summary)."""
    if bootstrap < 0:
        raise ValueError(f"--bootstrap: expected 0 or more replicates, got {bootstrap}")
    if not (matchups["games"] > 0).any():
        raise ValueError("no decided trio-vs-trio games: the metagame needs a run whose games have trios")
    u = universe_of(matchups, protocols)
    fit, chosen = cross_validate(matchups, u, seed) if pair_l2 is None else (pd.DataFrame(), pair_l2)
    model = fit_payoff_model(matchups, u, chosen)
    p = win_matrix(model, matchups, prior_games)
    sol = solve(p, u, alpha, population, rank=alpharank)
    boot = (
        _bootstrap(matchups, u, chosen, prior_games, bootstrap, seed, alpha, population, model.coef)
        if bootstrap
        else None
    )
    trios = _trio_table(u, matchups, model, sol, boot)
    protocols_t = _protocol_table(u, model, sol, boot, trios)
    health = _health(u, sol, boot, protocols_t)
    meta: dict[str, Any] = {
        "trios": len(u.trios),
        "protocols": len(u.protocols),
        "pairs_played": int((matchups["games"] > 0).sum()),
        "pairs_possible": _disjoint_pairs(len(u.protocols)),
        "games": int(matchups["games"].sum()),
        "draws": int(matchups["draws"].sum()) if "draws" in matchups else None,
        "prior_games": prior_games,
        "main_l2": MAIN_L2,
        "pair_l2": chosen,
        "alpha": alpha,
        "population": population,
        "bootstrap": bootstrap,
        "seed": seed,
        "exploitability": sol.exploitability,
    }
    meta["warnings"] = coverage_warnings(meta["pairs_played"], meta["pairs_possible"])
    return MetaResult(trios, protocols_t, health, fit, meta, model=model)


def _disjoint_pairs(k: int) -> int:
    return math.comb(k, 3) * math.comb(k - 3, 3) // 2


def _trio_table(
    u: Universe, matchups: pd.DataFrame, model: PayoffModel, sol: Solution, boot: dict[str, np.ndarray] | None
) -> pd.DataFrame:
    df = _observed(u, matchups)
    df["strength"] = model.strength()
    df["uniform_win_rate"] = sol.uniform
    df["nash_probability"] = sol.nash
    df["nash_rating"] = sol.ratings
    df["alpharank"] = sol.alpharank
    if boot is not None:
        _add_interval(df, "nash_probability", boot["nash"])
        df["in_support_share"] = (boot["nash"] > USED).mean(axis=0)
        _add_interval(df, "nash_rating", boot["ratings"])
        _add_interval(df, "alpharank", boot["alpharank"])
    return df.sort_values(
        ["nash_probability", "nash_rating", "alpharank", "trio"], ascending=[False, False, False, True]
    ).reset_index(drop=True)


def _protocol_table(
    u: Universe, model: PayoffModel, sol: Solution, boot: dict[str, np.ndarray] | None, trios: pd.DataFrame
) -> pd.DataFrame:
    t = trios.set_index("trio").reindex(u.trios)
    rows = []
    for i, name in enumerate(u.protocols):
        mine = (u.members == i).any(axis=1)
        rows.append(
            {
                "protocol": name,
                "effect": float(model.main[i]),
                "games": int(t["games"][mine].sum()),
                "wins": int(t["wins"][mine].sum()),
                "nash_weight": float(sol.nash[mine].sum()),
                "best_trio_rating": float(sol.ratings[mine].max()),
                "mean_trio_rating": float(sol.ratings[mine].mean()),
                "best_trio": u.trios[int(np.flatnonzero(mine)[np.argmax(sol.ratings[mine])])],
                "alpharank_weight": float(sol.alpharank[mine].sum()),
                "uniform_win_rate": float(sol.uniform[mine].mean()),
            }
        )
    df = add_rate(pd.DataFrame(rows))
    if boot is not None:
        _add_interval(df, "nash_weight", boot["weight"])
        df["used_share"] = (boot["weight"] > USED).mean(axis=0)
        _add_interval(df, "alpharank_weight", boot["rank_weight"])
    return df.sort_values(["nash_weight", "best_trio_rating", "protocol"], ascending=[False, False, True]).reset_index(
        drop=True
    )


def _health(u: Universe, sol: Solution, boot: dict[str, np.ndarray] | None, protocols: pd.DataFrame) -> dict[str, Any]:
    weight = protocol_weight(u, sol.nash)
    h: dict[str, Any] = {
        "support_size": int((sol.nash > USED).sum()),
        "effective_protocols": effective_protocols(weight),
        "protocols_used": int((weight > USED).sum()),
        "protocols": len(u.protocols),
        "unused_protocols": [p for p, wt in zip(u.protocols, weight, strict=True) if wt <= USED],
        "top_trio_probability": float(sol.nash.max()),
        "exploitability": sol.exploitability,
    }
    if boot is not None:
        sizes = (boot["nash"] > USED).sum(axis=1)
        eff = np.array([effective_protocols(wt) for wt in boot["weight"]])
        h["support_size_interval"] = [float(np.percentile(sizes, 2.5)), float(np.percentile(sizes, 97.5))]
        h["effective_protocols_interval"] = [float(np.percentile(eff, 2.5)), float(np.percentile(eff, 97.5))]
        ever = (boot["weight"] > USED).any(axis=0) | (weight > USED)
        h["never_used_protocols"] = [p for p, e in zip(u.protocols, ever, strict=True) if not e]
        always = (boot["weight"] > USED).all(axis=0) & (weight > USED)
        h["always_used_protocols"] = [p for p, a in zip(u.protocols, always, strict=True) if a]
    return h


# -- runs, loops and the small public tables ----------------------------------------------------------


def loop_runs(path: str | Path) -> tuple[list[str], dict[str, Any]] | None:
    """The iteration runs and manifest of a PSRO loop folder (it holds meta.json), else None."""
    run, _, _ = str(path).partition("#")
    f = Path(run) / LOOP_FILE
    if not f.is_file():
        return None
    try:
        m = json.loads(f.read_text(encoding="utf-8"))
        dirs = [str(Path(run) / it["run"]) for it in m["iterations"] if it.get("run")]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{f}: not a PSRO loop manifest as protolab writes it ({e})") from None
    return dirs, m


def iterations_table(manifest: dict[str, Any]) -> pd.DataFrame:
    """One row per PSRO iteration, as the loop recorded it."""
    rows = []
    for it in manifest.get("iterations", []):
        rows.append(
            {
                k: ("; ".join(v) if k in ("added", "support") and isinstance(v, list) else v)
                for k, v in it.items()
                if k != "support_probabilities"
            }
        )
    return pd.DataFrame(rows)


def analyse_runs(
    runs: Runs,
    bootstrap: int = BOOTSTRAP,
    seed: int = 1,
    prior_games: float = PRIOR_GAMES,
    alpha: float = ALPHA,
    population: int = POPULATION,
) -> MetaResult:
    """`meta_analysis` of opened runs, labelled with their ids."""
    res = meta_analysis(matchup_table(runs), bootstrap, seed, prior_games, alpha, population)
    res.meta["runs"] = runs.run_ids
    return res


def _point_solve(runs: Runs | str | Path | list, prior_games: float) -> MetaResult:
    """The model fit and equilibrium without bootstrap, opening (and closing) the runs if given paths."""
    opened = runs if isinstance(runs, Runs) else open_runs(runs)
    try:
        return meta_analysis(matchup_table(opened), bootstrap=0, prior_games=prior_games)
    finally:
        if not isinstance(runs, Runs):
            opened.close()


def trio_scores(runs: Runs | str | Path | list, prior_games: float = PRIOR_GAMES) -> pd.DataFrame:
    """One row per trio of the run's protocols (played or not): `trio` (sorted names joined by ", "),
    observed `games`, `wins`, `win_rate` (with 95% Wilson interval), the model's `strength` (logit,
    centred: protocol effects plus synergy), `uniform_win_rate` (modelled win rate against a uniformly
    drawn trio sharing no protocol), `nash_probability` and `nash_rating` (payoff against the
    maximum-entropy equilibrium; 0 in the support). No bootstrap: fast enough to call per run."""
    res = _point_solve(runs, prior_games)
    cols = [
        "trio",
        "games",
        "wins",
        "win_rate",
        "win_rate_low",
        "win_rate_high",
        "strength",
        "uniform_win_rate",
        "nash_probability",
        "nash_rating",
        "alpharank",
    ]
    return res.trios[cols].sort_values(["uniform_win_rate", "trio"], ascending=[False, True]).reset_index(drop=True)


def protocol_scores(runs: Runs | str | Path | list, prior_games: float = PRIOR_GAMES) -> pd.DataFrame:
    """One row per protocol: the model's `effect` (logit), observed games and win rate, its
    equilibrium `nash_weight` (P(the equilibrium trio holds it)), `best_trio_rating` and `best_trio`,
    `uniform_win_rate` (mean over its trios). Same model and solve as `trio_scores`."""
    return _point_solve(runs, prior_games).protocols


def compare_meta(base: MetaResult, variant: MetaResult) -> pd.DataFrame:
    """How the equilibrium moved, per protocol: weight and alpha-rank weight on each side and the change."""
    a = base.protocols.set_index("protocol")
    b = variant.protocols.set_index("protocol")
    names = sorted(set(a.index) | set(b.index))
    df = pd.DataFrame({"protocol": names})
    for col in ("nash_weight", "alpharank_weight", "best_trio_rating"):
        df[f"{col}_base"] = a[col].reindex(names).to_numpy()
        df[f"{col}_variant"] = b[col].reindex(names).to_numpy()
    df["nash_weight_change"] = df["nash_weight_variant"].fillna(0) - df["nash_weight_base"].fillna(0)
    df.attrs["protocol_tv"] = 0.5 * float(df["nash_weight_change"].abs().sum()) / 3
    return df.sort_values(["nash_weight_change", "protocol"], ascending=[False, True]).reset_index(drop=True)


@dataclass
class Step:
    """One PSRO step: the equilibrium of the game restricted to a population of trios, and what every
    trio of the universe would gain against it (from the model and the games so far)."""

    population: list[str]
    mixture: np.ndarray  # over `population`
    gains: pd.Series  # every trio of the universe: payoff against the mixture
    exploitability: float  # the largest gain (0: no trio beats the mixture)


def population_step(
    matchups: pd.DataFrame, protocols: list[str], population: list[str], prior_games: float = PRIOR_GAMES, seed: int = 1
) -> Step:
    """Fit the model on every game so far (regularisation chosen by cross-validation, as in
    `meta_analysis`), solve the game restricted to `population`, and score every trio of `protocols`
    against that equilibrium (the best responses are the top of `gains`)."""
    u = universe_of(matchups, protocols)
    model = fit_payoff_model(matchups, u, cross_validate(matchups, u, seed)[1])
    m = G.antisymmetric(win_matrix(model, matchups, prior_games) - 0.5)
    idx = u.index(pd.Series(population))
    x = G.maxent_equilibrium(m[np.ix_(idx, idx)], G.nash_equilibrium(m[np.ix_(idx, idx)]))
    gains = pd.Series(m[:, idx] @ x, index=u.trios)
    return Step(list(population), x, gains, float(gains.max()))
