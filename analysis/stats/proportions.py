"""The statistics behind every number a designer sees: Wilson intervals, tests against a band,
multiple-comparison corrections (Holm, Benjamini-Hochberg), differences of two proportions
(Newcombe) and Bradley-Terry ratings. Vectorised over numpy arrays: one call per table, not per row."""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np
import pandas as pd

from sim.stats import Z95, wilson, wilson_interval  # noqa: F401  (one formula; re-exported for analysis)

ELO_SCALE = 400 / math.log(10)  # Elo points per unit of log-odds


def z_for(level: float) -> float:
    """Two-sided normal quantile for a confidence level (0.95 -> 1.96)."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def norm_sf(z: np.ndarray | float) -> np.ndarray:
    """Upper tail of the standard normal, vectorised (scipy is not a dependency)."""
    z = np.asarray(z, dtype=float)
    return 0.5 * np.vectorize(math.erfc)(z / math.sqrt(2)) if z.size else z


def add_rate(df: pd.DataFrame, wins: str = "wins", games: str = "games", prefix: str = "win_rate") -> pd.DataFrame:
    """Add `<prefix>`, `<prefix>_low`, `<prefix>_high` (95% Wilson) from a wins and a games column."""
    w = df[wins].to_numpy(dtype=float)
    n = df[games].to_numpy(dtype=float)
    lo, hi = wilson_interval(w, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        df[prefix] = np.where(n > 0, w / np.where(n > 0, n, 1), np.nan)
    df[f"{prefix}_low"] = np.where(n > 0, lo, np.nan)
    df[f"{prefix}_high"] = np.where(n > 0, hi, np.nan)
    return df


def band_pvalue(wins: np.ndarray, n: np.ndarray, band: float, centre: float = 0.5) -> np.ndarray:
    """Two-sided p-value of the score test that the true rate lies inside [centre-band, centre+band],
    against the nearer edge. It inverts the Wilson interval: p < 0.05 exactly when the 95% Wilson
    interval lies wholly outside the band, so a corrected p-value says the same of a wider interval."""
    wins = np.asarray(wins, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, wins / np.where(n > 0, n, 1), centre)
        edge = np.where(p >= centre, min(1.0, centre + band), max(0.0, centre - band))
        se = np.sqrt(edge * (1 - edge) / np.where(n > 0, n, 1))
        z = np.where(se > 0, np.abs(p - edge) / se, 0.0)
    outside = np.abs(p - centre) > band
    pv = np.where(outside & (n > 0), np.minimum(1.0, 2 * norm_sf(z)), 1.0)
    return pv


def _step_adjusted(p: np.ndarray, rule: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """p-values adjusted by a step rule: `rule` maps the sorted p-values (smallest first) to their
    adjusted values; these come back in the given order, capped at 1."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.minimum(1.0, rule(p[order]))
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (controls the family-wise error rate)."""
    return _step_adjusted(p, lambda s: np.maximum.accumulate((len(s) - np.arange(len(s))) * s))


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values; controls the false discovery rate)."""
    return _step_adjusted(p, lambda s: np.minimum.accumulate((s * len(s) / np.arange(1, len(s) + 1))[::-1])[::-1])


CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg}
CORRECTION_NAMES = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini-Hochberg (false discovery rate)"}


def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values by `method` ("holm" or "bh")."""
    try:
        return CORRECTIONS[method](p)
    except KeyError:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}") from None


def two_proportion_p(w1: np.ndarray, n1: np.ndarray, w2: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Two-sided pooled z-test p-value that two rates are equal; 1 where either side has no games."""
    w1, n1, w2, n2 = (np.asarray(x, dtype=float) for x in (w1, n1, w2, n2))
    ok = (n1 > 0) & (n2 > 0)
    s1, s2 = np.where(ok, n1, 1), np.where(ok, n2, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = (w1 + w2) / (s1 + s2)
        se = np.sqrt(pooled * (1 - pooled) * (1 / s1 + 1 / s2))
        z = np.where(se > 0, (w2 / s2 - w1 / s1) / se, 0.0)
    return np.where(ok, np.minimum(1.0, 2 * norm_sf(np.abs(z))), 1.0)


def newcombe_diff(
    w1: np.ndarray, n1: np.ndarray, w2: np.ndarray, n2: np.ndarray, z: float = Z95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Difference of rates (second minus first) with Newcombe's hybrid score interval (method 10):
    built from the two Wilson intervals, so it behaves at small counts and near 0 or 1."""
    w1, n1, w2, n2 = (np.asarray(x, dtype=float) for x in (w1, n1, w2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p1 = np.where(n1 > 0, w1 / np.where(n1 > 0, n1, 1), np.nan)
        p2 = np.where(n2 > 0, w2 / np.where(n2 > 0, n2, 1), np.nan)
    l1, u1 = wilson_interval(w1, n1, z)
    l2, u2 = wilson_interval(w2, n2, z)
    d = p2 - p1
    lo = d - np.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    hi = d + np.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return d, lo, hi


def _newton_logit(x: np.ndarray, n: np.ndarray, y: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """Binomial logistic regression (y wins of n, design x) by Newton's method, ridge-stabilised:
    (coefficients, their covariance from the observed information)."""
    k = x.shape[1]
    beta = np.zeros(k)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ beta)))
        grad = x.T @ (y - n * p) - ridge * beta
        hess = (x * (n * p * (1 - p))[:, None]).T @ x + ridge * np.eye(k)
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = 1 / (1 + np.exp(-(x @ beta)))
    return beta, np.linalg.pinv((x * (n * p * (1 - p))[:, None]).T @ x + ridge * np.eye(k))


def bradley_terry(pairs: pd.DataFrame, z: float = Z95, ridge: float = 1e-6) -> tuple[pd.DataFrame, dict]:
    """Bradley-Terry ratings with a first-player term, fitted by Newton's method.

    `pairs` has columns strategy_0, strategy_1, first_player, games (decided) and wins0 (seat 0
    wins). Model: logit P(seat 0 wins) = r[strategy_0] - r[strategy_1] + h * (+1 if seat 0 moved
    first else -1). Ratings are centred (mean 0) and given on the Elo scale (400 per factor-10 odds,
    1500 = average), with Wald intervals from the observed information. Returns (ratings, extra)
    where extra holds the first-player term."""
    names = sorted(set(pairs["strategy_0"]) | set(pairs["strategy_1"]))
    k = len(names)
    idx = {s: i for i, s in enumerate(names)}
    a = pairs["strategy_0"].map(idx).to_numpy()
    b = pairs["strategy_1"].map(idx).to_numpy()
    n = pairs["games"].to_numpy(dtype=float)
    y = pairs["wins0"].to_numpy(dtype=float)
    sgn = np.where(pairs["first_player"].to_numpy() == 0, 1.0, -1.0)
    # Design: columns r_1..r_{k-1} (r_0 = 0 as reference), then h.
    x = np.zeros((len(pairs), k))
    for row, (i, j) in enumerate(zip(a, b, strict=True)):
        if i != j:
            if i > 0:
                x[row, i - 1] += 1
            if j > 0:
                x[row, j - 1] -= 1
    x[:, k - 1] = sgn
    beta, cov = _newton_logit(x, n, y, ridge)
    # Full ratings r = A beta_r (r_0 = 0), then centred: C r with C = I - 1/k.
    amap = np.zeros((k, k - 1))
    amap[1:, :] = np.eye(k - 1)
    centre = np.eye(k) - 1.0 / k
    t = centre @ amap
    r = t @ beta[: k - 1]
    rcov = t @ cov[: k - 1, : k - 1] @ t.T
    se = np.sqrt(np.maximum(np.diag(rcov), 0))
    games = np.zeros(k)
    wins = np.zeros(k)
    for i, j, nn, yy in zip(a, b, n, y, strict=True):
        games[i] += nn
        wins[i] += yy
        games[j] += nn
        wins[j] += nn - yy
    out = pd.DataFrame({"strategy": names, "games": games.astype(np.int64), "wins": wins.astype(np.int64)})
    add_rate(out)
    out["rating"] = 1500 + ELO_SCALE * r
    out["rating_low"] = 1500 + ELO_SCALE * (r - z * se)
    out["rating_high"] = 1500 + ELO_SCALE * (r + z * se)
    h, hse = beta[k - 1], math.sqrt(max(cov[k - 1, k - 1], 0))
    extra = {
        "first_player_elo": ELO_SCALE * h,
        "first_player_elo_low": ELO_SCALE * (h - z * hse),
        "first_player_elo_high": ELO_SCALE * (h + z * hse),
    }
    return out.sort_values("rating", ascending=False).reset_index(drop=True), extra


# -- paired differences (arms or runs that share seeds) ---------------------------------------------


def paired_rate_diff(
    wins_a: np.ndarray,
    n_a: np.ndarray,
    wins_b: np.ndarray,
    n_b: np.ndarray,
    ss_paired: np.ndarray,
    ss_unpaired: np.ndarray,
    clusters: np.ndarray | int,
    z: float = Z95,
) -> dict[str, np.ndarray]:
    """Difference of two rates measured on the same seed clusters (common random numbers), B minus A.

    Each rate R = sum(w_i) / sum(n_i) is a ratio over the m seed clusters i (the games sharing one
    seed: one game, or a seat-swapped pair). With the residuals e_i = w_i - R n_i, the linearised
    (delta-method) variance of R_B - R_A over clusters is
        paired:   m / (m - 1) * sum_i (e_Bi / N_B - e_Ai / N_A)^2      (`ss_paired` is the sum)
        unpaired: m / (m - 1) * [sum_i (e_Ai / N_A)^2 + sum_i (e_Bi / N_B)^2]   (`ss_unpaired`)
    with N = sum(n_i). The two differ by the covariance the shared seeds create; their ratio is
    how much variance the pairing saves. When every n_i is 1 the paired variance is the textbook
    s_d^2 / m of the per-cluster differences d_i = w_Bi - w_Ai. Interval: d +- z se; test: z = d / se,
    two-sided normal (se = 0: p = 1 if d = 0, else 0)."""
    wa, na, wb, nb, ssp, ssu = (np.asarray(x, dtype=float) for x in (wins_a, n_a, wins_b, n_b, ss_paired, ss_unpaired))
    m = np.asarray(clusters, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (na > 0) & (nb > 0) & (m > 1)
        d = np.where(ok, wb / np.where(nb > 0, nb, 1) - wa / np.where(na > 0, na, 1), np.nan)
        k = np.where(m > 1, m / np.where(m > 1, m - 1, 1), np.nan)
        var_p = np.where(ok, k * ssp, np.nan)
        var_u = np.where(ok, k * ssu, np.nan)
        se = np.sqrt(var_p)
        zstat = np.where(se > 0, np.abs(d) / np.where(se > 0, se, 1), np.where(d == 0, 0.0, np.inf))
        ratio = np.where(var_p > 0, var_u / np.where(var_p > 0, var_p, 1), np.nan)
    p = np.where(ok, np.minimum(1.0, 2 * norm_sf(np.where(ok, zstat, 0.0))), np.nan)
    return {
        "change": d,
        "low": d - z * se,
        "high": d + z * se,
        "se": se,
        "se_unpaired": np.sqrt(var_u),
        "p_value": p,
        "variance_ratio": ratio,
    }


def paired_rate_diff_clusters(
    n_a: np.ndarray, w_a: np.ndarray, n_b: np.ndarray, w_b: np.ndarray, z: float = Z95
) -> dict[str, float]:
    """`paired_rate_diff` of one rate from its per-cluster counts (arrays over the m clusters, in the
    same order on both sides): the reference the DuckDB query is checked against."""
    na, wa, nb, wb = (np.asarray(x, dtype=float) for x in (n_a, w_a, n_b, w_b))
    ra, rb = wa.sum() / na.sum(), wb.sum() / nb.sum()
    ea, eb = (wa - ra * na) / na.sum(), (wb - rb * nb) / nb.sum()
    out = paired_rate_diff(
        wa.sum(), na.sum(), wb.sum(), nb.sum(), ((eb - ea) ** 2).sum(), (ea**2).sum() + (eb**2).sum(), len(na), z
    )
    return {k: float(v) for k, v in out.items()}
