"""Solvers for a symmetric two-player zero-sum game given by an antisymmetric payoff matrix M
(M[i, j] = what strategy i wins against strategy j, M[j, i] = -M[i, j]): a Nash equilibrium by
linear programming (with a double-oracle loop for large games), the maximum-entropy equilibrium,
Nash averaging and alpha-rank. Pure numpy and scipy; no knowledge of protocols or runs.

The game's value is 0 (each side can copy the other), so a mixture x is an equilibrium exactly when
no pure strategy gains against it: (M x)_j <= 0 for every j (docs/analysis.md, "Metagame")."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize

TOL = 1e-9
FULL_LP_LIMIT = 1500  # above this many strategies, the LP is solved on a growing subset (double oracle)


def antisymmetric(m: np.ndarray) -> np.ndarray:
    """(M - M^T) / 2: the zero-sum part of a square payoff matrix."""
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"expected a square payoff matrix, got shape {m.shape}")
    out = m - m.T
    out /= 2  # in place: the same bits as (m - m.T) / 2 without a second matrix
    return out


def _lp_equilibrium(m: np.ndarray) -> np.ndarray:
    """max v s.t. sum_i x_i M[i, j] >= v for every j, x in the simplex (scipy's HiGHS)."""
    n = len(m)
    c = np.zeros(n + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-m.T, np.ones((n, 1))])
    a_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    res = linprog(
        c, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * n + [(None, None)], method="highs"
    )
    if res.status != 0:
        raise RuntimeError(f"the equilibrium linear program failed: {res.message}")
    x = np.clip(res.x[:n], 0, None)
    return x / x.sum()


def nash_equilibrium(m: np.ndarray, start: np.ndarray | None = None, tol: float = TOL) -> np.ndarray:
    """A Nash equilibrium mixture of the symmetric zero-sum game M (antisymmetric).

    Small games: one linear program. Large games (more than FULL_LP_LIMIT strategies): double
    oracle, the LP on a subset (`start`, default the strategies best against a uniform field),
    adding each time the pure strategy that gains most against the subset's equilibrium, until none
    gains more than `tol`: the result is an equilibrium of the whole game."""
    m = np.asarray(m, dtype=float)
    n = len(m)
    if n == 0:
        raise ValueError("expected at least one strategy")
    if n <= FULL_LP_LIMIT:
        return _lp_equilibrium(m)
    subset = list(start) if start is not None else list(np.argsort(-m.mean(axis=1))[:200])
    while True:
        xs = _lp_equilibrium(m[np.ix_(subset, subset)])
        gain = m[:, subset] @ xs
        best = int(np.argmax(gain))
        if gain[best] <= tol or best in subset:
            x = np.zeros(n)
            x[subset] = xs
            return x
        subset.append(best)


def exploitability(m: np.ndarray, x: np.ndarray) -> float:
    """What the best pure strategy wins against the mixture x (0 exactly at an equilibrium)."""
    return float(np.max(np.asarray(m) @ np.asarray(x)))


def maxent_equilibrium(m: np.ndarray, x: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """The maximum-entropy Nash equilibrium (the one Nash averaging uses), given any equilibrium x.

    Only strategies that do exactly as well as the game's value against x can be in the support of
    any equilibrium (the set T); when T is the support of x and the restricted game has a unique
    equilibrium, x is it. Otherwise entropy is maximised over the equilibria on T (SLSQP)."""
    m = np.asarray(m, dtype=float)
    payoff = m @ x
    tight = np.flatnonzero(payoff >= -tol)
    if len(tight) == np.count_nonzero(x > tol):
        return x
    sub = m[:, tight]
    k = len(tight)

    def neg_entropy(y: np.ndarray) -> tuple[float, np.ndarray]:
        yc = np.clip(y, 1e-12, None)
        return float(np.sum(yc * np.log(yc))), np.log(yc) + 1

    cons = [
        {"type": "eq", "fun": lambda y: np.sum(y) - 1, "jac": lambda y: np.ones_like(y)},
        {"type": "ineq", "fun": lambda y: -(sub @ y), "jac": lambda y: -sub},
    ]
    res = minimize(
        neg_entropy,
        np.full(k, 1.0 / k),
        jac=True,
        constraints=cons,
        bounds=[(0, 1)] * k,
        method="SLSQP",
        options={"maxiter": 500, "ftol": 1e-12},
    )
    y = np.clip(res.x, 0, None)
    if not res.success or y.sum() <= 0 or exploitability(sub, y / y.sum()) > 1e-5:
        return x  # keep the LP's equilibrium rather than a worse point
    out = np.zeros_like(x)
    out[tight] = y / y.sum()
    return out


def nash_ratings(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Nash averaging: each strategy's payoff against the (maximum-entropy) equilibrium mixture.
    0 for the strategies it uses, negative for those it leaves out (how far from viable)."""
    return np.asarray(m, dtype=float) @ np.asarray(x, dtype=float)


def _log_expm1(u: np.ndarray) -> np.ndarray:
    """log(exp(u) - 1) for u > 0, without overflow."""
    u = np.asarray(u, dtype=float)
    return np.where(u > 30, u + np.log1p(-np.exp(-np.minimum(u, 700))), np.log(np.expm1(np.minimum(u, 30))))


def fixation_probability(d: np.ndarray, alpha: float, population: int) -> np.ndarray:
    """Probability that one mutant whose fitness exceeds the residents' by d takes over a population
    of `population` (a Moran process with logistic, "Fermi", selection of intensity alpha):
    (1 - e^(-alpha d)) / (1 - e^(-m alpha d)), and 1/m when d = 0."""
    d = np.asarray(d, dtype=float)
    a = alpha * d
    out = np.full(d.shape, 1.0 / population)
    pos, neg = a > 1e-12, a < -1e-12
    out[pos] = -np.expm1(-a[pos]) / -np.expm1(-population * a[pos])
    u = -a[neg]
    out[neg] = np.exp(_log_expm1(u) - _log_expm1(population * u))
    return out


def alpha_rank(m: np.ndarray, alpha: float = 100.0, population: int = 50) -> np.ndarray:
    """Alpha-rank's stationary distribution over the pure strategies of the symmetric game M.

    One population of `population` players. A single mutant r appears in a population of s (each
    other strategy with probability 1/(n-1)); a player's fitness is its mean payoff against the other
    m-1 players. With M antisymmetric the mutant's fitness exceeds a resident's by m/(m-1) M[r, s]
    whatever the number of mutants, so the mutant fixes with `fixation_probability`. The chain's
    stationary distribution ranks the strategies by how much time evolution spends on each."""
    m = np.asarray(m, dtype=float)
    n = len(m)
    if n == 1:
        return np.ones(1)
    d = m * (population / (population - 1))  # d[r, s]: mutant r among residents s
    rho = fixation_probability(d, alpha, population).T  # rho[s, r]
    c = rho / (n - 1)
    np.fill_diagonal(c, 0.0)
    np.fill_diagonal(c, 1.0 - c.sum(axis=1))
    # stationary pi: pi (C - I) = 0 with one equation replaced by sum(pi) = 1 (unique for an ergodic chain)
    a = c.T - np.eye(n)
    a[-1, :] = 1.0
    b = np.zeros(n)
    b[-1] = 1.0
    try:
        pi = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        pi = np.linalg.lstsq(a, b, rcond=None)[0]
    pi = np.clip(pi, 0, None)
    return pi / pi.sum()


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """Half the L1 distance between two distributions over the same outcomes."""
    return 0.5 * float(np.abs(np.asarray(p, dtype=float) - np.asarray(q, dtype=float)).sum())
