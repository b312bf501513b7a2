"""Whether the two sides of a comparison play the same cards: the same pool (one pool hash, so every
card plays the same and the same seeds deal the same games), and which cards a card file really
changes. A variant file that restates cards as they are names them without changing them; what a
card plays, not which file it came from, says whether it changed."""

from __future__ import annotations

import json
from typing import Any

from analysis.runs.run_pool import run_pool
from sim.pool import Pool


def pool_hash(blocks: list[dict[str, Any]]) -> str | None:
    """The one pool hash of a side's runs (provenance blocks), None when they differ or one is unknown."""
    hashes = {b.get("pool_hash") for b in blocks}
    return next(iter(hashes)) if len(hashes) == 1 and None not in hashes else None


def same_pool(base: list[dict[str, Any]], variant: list[dict[str, Any]]) -> str | None:
    """The pool hash both sides play, or None when they play different (or unknown) pools."""
    a, b = pool_hash(base), pool_hash(variant)
    return a if a is not None and a == b else None


def _steps(pool: Pool, start: int, length: int) -> list[dict[str, Any]]:
    """The compiled steps of a range, alternatives resolved into their own steps (indices differ
    between pools; what they point at is what plays)."""
    out = []
    for rec in pool.step_records[start : start + length]:
        step: dict[str, Any] = dict(rec)
        for key in ("alt_a", "alt_b"):
            step[key] = _steps(pool, rec[key], rec[f"{key}_len"]) if rec[f"{key}_len"] else []
        out.append(step)
    return out


def plays(pool: Pool) -> dict[str, str]:
    """card name (lower case) -> what it plays: its compiled record and steps, protocol named."""
    out = {}
    for card, rec in zip(pool.cards, pool.card_records, strict=True):
        boxes = [_steps(pool, s, n) for s, n in zip(rec["step_start"], rec["step_len"], strict=True)]
        own = {k: v for k, v in rec.items() if k not in ("protocol", "step_start", "step_len")}
        out[card.name.lower()] = json.dumps([card.protocol, own, boxes], sort_keys=True)
    return out


def _side_pool(blocks: list[dict[str, Any]]) -> Pool | None:
    if len(blocks) != 1:
        return None
    rebuilt, _ = run_pool(blocks[0])
    return rebuilt.pool if rebuilt is not None else None


def really_changed(
    names: list[str], base: list[dict[str, Any]], variant: list[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """Of the cards the sides' card files name, those that play differently on the two sides, and
    the names that play the same (restated as they were). When a side's pool cannot be rebuilt the
    names are kept as they are."""
    if not names:
        return [], []
    if same_pool(base, variant) is not None:
        return [], list(names)
    pools = _side_pool(base), _side_pool(variant)
    if pools[0] is None or pools[1] is None:
        return list(names), []
    a, b = plays(pools[0]), plays(pools[1])
    differ = [n for n in names if a.get(n.lower()) != b.get(n.lower())]
    return differ, [n for n in names if n not in differ]


def same_pool_line(hash_: str, identical: bool) -> str:
    """The sentence a comparison of two sides on one pool starts with."""
    if identical:
        return (
            f"Same pool: both sides play pool {hash_}, so no card differs between them, and they played the "
            "same games: every game ended as its twin did, so every change is 0 by construction."
        )
    return (
        f"Same pool: both sides play pool {hash_}, so no card differs between them: what differs is the "
        "players, the seeds or the drafts."
    )
