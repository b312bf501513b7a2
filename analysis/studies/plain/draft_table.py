"""Fit a draft table (strategies/draft.py, docs/strategies.md "Drafts") from a run's games.

    python -m analysis.studies.plain.draft_table RUN [RUN...] --out datasets/drafts/NAME.toml [--shrink K]

Every decided game gives two seat-games (trio T against trio U, won or lost). In win-rate points:

- a protocol's strength: the mean of (won - 0.5) over the seat-games whose trio holds it;
- a trio's strength: the mean of (won - 0.5 + additive(U)) over its seat-games, where additive is
  the sum of the protocol strengths (the opponent's strength is added back);
- counter[a][b]: the mean, over seat-games with a in T and b in U, of what the additive model leaves
  unexplained, (won - 0.5) - (additive(T) - additive(U)); only positive ones are written (b against
  a is the same number negated).

Each mean is shrunk towards its prior (0, the additive trio, 0) as if K more seat-games had shown
exactly the prior: small samples say little. Best from random drafts (every trio against every trio)."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from analysis.runs.open import RunError, Runs, open_runs
from analysis.studies.balance.queries import trio_table

DEFAULT_SHRINK = 250.0


def seat_games(runs: Runs) -> list[tuple[tuple[str, ...], tuple[str, ...], float, int]]:
    """(trio, opponent trio, won - 0.5, games) for both seats of every decided game, grouped."""
    t = trio_table(runs)
    df = runs.sql(f"select protos0, protos1, winner, sum(n)::bigint as n from {t} where winner >= 0 group by all")
    out = []
    for p0, p1, winner, n in df.itertuples(index=False):
        a, b = tuple(sorted(p0)), tuple(sorted(p1))
        out.append((a, b, 0.5 if winner == 0 else -0.5, int(n)))
        out.append((b, a, 0.5 if winner == 1 else -0.5, int(n)))
    return out


def fit(rows: list[tuple[tuple[str, ...], tuple[str, ...], float, int]], shrink: float) -> dict[str, dict]:
    """The table as {"protocols": {name: v}, "trios": {"A, B, C": v}, "counters": {a: {b: v}}}."""
    tot: dict[str, float] = defaultdict(float)
    cnt: dict[str, int] = defaultdict(int)
    for t, _, r, n in rows:
        for x in t:
            tot[x] += r * n
            cnt[x] += n
    strength = {x: tot[x] / (cnt[x] + shrink) for x in sorted(cnt)}

    def additive(trio: tuple[str, ...]) -> float:
        return sum(strength[x] for x in trio)

    ttot: dict[tuple[str, ...], float] = defaultdict(float)
    tcnt: dict[tuple[str, ...], int] = defaultdict(int)
    ctot: dict[tuple[str, str], float] = defaultdict(float)
    ccnt: dict[tuple[str, str], int] = defaultdict(int)
    for t, u, r, n in rows:
        ttot[t] += (r + additive(u)) * n
        tcnt[t] += n
        resid = r - (additive(t) - additive(u))
        for a in t:
            for b in u:
                ctot[a, b] += resid * n
                ccnt[a, b] += n
    trios = {", ".join(t): (ttot[t] + shrink * additive(t)) / (tcnt[t] + shrink) for t in sorted(tcnt)}
    counters: dict[str, dict[str, float]] = defaultdict(dict)
    for (a, b), n in sorted(ccnt.items()):
        v = ctot[a, b] / (n + shrink)
        if v > 0:
            counters[a][b] = v
    return {"protocols": strength, "trios": trios, "counters": dict(counters)}


def _key(name: str) -> str:
    return name if name.replace("_", "").replace("-", "").isalnum() else f'"{name}"'


def to_toml(table: dict[str, dict], about: dict[str, str | int]) -> str:
    """The table as readable TOML: values in win-rate points, strongest first."""
    lines = [
        '# A fitted draft table (docs/strategies.md, "Drafts"); values are win-rate points, 0.01 = one point.',
        "[about]",
    ]
    lines += [f"{k} = {v!r}" if isinstance(v, int) else f'{k} = "{v}"' for k, v in about.items()]
    lines += ["", "# a protocol's strength", "[protocols]"]
    lines += [f"{_key(k)} = {v:.4f}" for k, v in sorted(table["protocols"].items(), key=lambda kv: -kv[1])]
    lines += ["", "# a whole trio's strength (a trio not listed is the sum of its protocols)", "[trios]"]
    lines += [f'"{k}" = {v:.4f}' for k, v in sorted(table["trios"].items(), key=lambda kv: -kv[1])]
    lines += ["", "# [counters.A] B = x: holding A against an opponent holding B is worth x (B against A: -x)"]
    for a, row in sorted(table["counters"].items()):
        lines += ["", f"[counters.{_key(a)}]"]
        lines += [f"{_key(b)} = {v:.4f}" for b, v in sorted(row.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m analysis.studies.plain.draft_table", description=__doc__.splitlines()[0]
    )
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--out", required=True, metavar="FILE", help="the table to write (TOML)")
    p.add_argument(
        "--shrink",
        type=float,
        default=DEFAULT_SHRINK,
        metavar="K",
        help=f"pseudo seat-games behind every prior (default {DEFAULT_SHRINK:g})",
    )
    args = p.parse_args(argv)
    if not 0 <= args.shrink <= 1e9:
        print(f"draft_table: error: --shrink: expected a number 0..1e9, got {args.shrink}", file=sys.stderr)
        return 2
    try:
        runs = open_runs(args.runs)
    except RunError as e:
        print(f"draft_table: error: {e}", file=sys.stderr)
        return 2
    rows = seat_games(runs)
    games = sum(n for *_, n in rows) // 2
    if not games:
        print(f"draft_table: error: {runs.label}: no decided games to fit", file=sys.stderr)
        return 2
    about: dict[str, str | int] = {
        "runs": runs.label,
        "decided_games": games,
        "shrink": str(args.shrink),
        "command": "python -m analysis.studies.plain.draft_table " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_toml(fit(rows, args.shrink), about), encoding="utf-8")
    print(f"wrote {out}: {games:,} decided games of {runs.label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
