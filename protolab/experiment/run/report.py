"""What `protolab run` says of the run itself (games, shape, time) and where its files are; the
figures are the analysis report's (analysis/studies/balance/report.py), printed after this, never a second copy."""

from __future__ import annotations

from analysis.studies.ab.stopped import describe, stop_record


def print_run(result, console) -> None:
    """One line: the run, its shape and its speed; then where the files are and how to query them."""
    m = result.manifest
    shape = (
        "random drafts"
        if m.spec.draft is not None and m.spec.draft.mode == "random"
        else f"{m.matchups:,} matchups x {m.games_per_matchup:,} games"
    )
    if len(m.spec.arms) > 1:
        shape += f" x {len(m.spec.arms)} arms"
        every = (m.matchups or 0) * (m.games_per_matchup or 0) * len(m.spec.arms)
        if m.spec.draft is not None and m.spec.draft.mode == "holding" and m.games < every:
            shape += ", some playing one protocol's block of matchups (arms' holds)"
    line = f"\n[bold]{m.run_id}[/bold]: {result.games:,} games ({shape})"
    if result.games_computed:
        rate = result.games_computed / result.seconds if result.seconds else 0
        line += (
            f"; played {result.games_computed:,} in {result.seconds:.1f} s ({rate:,.0f} games/s, Ray start-up included)"
        )
    console.print(line)
    stop = stop_record(m)
    if stop is not None:
        console.print(f"[bold]Sequential A/B[/bold]: {describe(stop)}", highlight=False, soft_wrap=True)
    console.print(
        f"Run folder: {result.run_dir}/ (games/, events/, cards/, run.json; docs/data.md). In Python:\n"
        f"  duckdb.sql(\"select winner, count(*) from '{result.run_dir}/games/*.parquet' group by 1\")",
        highlight=False,
        soft_wrap=True,
    )
