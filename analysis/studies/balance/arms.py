"""Which run folders are A/B runs, so that no study pools an A/B run's arms with each other: the A/B
study reads one section per arm, the card-value study its baseline arm, `protolab` refuses the rest."""

from __future__ import annotations

from pathlib import Path

from analysis.runs.open import RunError, peek_manifest, split_arm


def run_arms(path: str | Path) -> list[str]:
    """The arms of the run at `path` that have finished shards, in spec order, when `path` names a
    whole run (no `#arm`) with more than one; else []. A folder whose run.json cannot be read gives
    [] too: opening it then reports the problem."""
    run, arm = split_arm(path)
    if arm is not None:
        return []
    m = peek_manifest(run)
    if m is None:
        return []
    arms = m.spec.arm_names
    played = {s.get("arm") for s in m.shards if isinstance(s, dict)}
    return [a for a in arms if a is not None and a in played] if len(arms) > 1 else []  # A/B arms are named


def arm_paths(paths: list[str]) -> list[str] | None:
    """`RUN#arm` for every arm when `paths` is one A/B run; None when no path is one. Several
    paths with an A/B run among them are refused: the arms would be pooled with each other."""
    arms = [(p, run_arms(p)) for p in paths]
    ab = [(p, a) for p, a in arms if a]
    if not ab:
        return None
    if len(paths) > 1:
        p, a = ab[0]
        raise RunError(
            f"{p}: an A/B run (arms {', '.join(a)}) given with other runs would pool its arms; "
            f"give one arm ({p}#{a[0]}) or the A/B run alone"
        )
    p, a = ab[0]
    return [f"{p}#{arm}" for arm in a]
