"""What produced a figure: every report, comparison, A/B page, tier page and dashboard states it in
its header, built here from the run's manifest (run.json) and nowhere else.

A balance number is only as true as the players and the pool behind it, so a reader must see, next to
the number, which bots played each seat (per arm or tier), which sets and variant files made the pool,
the pool hash, the master seed, how many games, and which protolab version wrote the run."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from rich.console import Console

from analysis.runs.manifest import Manifest, SpecArm
from analysis.runs.models import describe_models
from analysis.runs.open import Runs
from analysis.runs.storage import Location


def opened_arm(manifest: Manifest) -> str | None:
    """The arm a manifest was opened as (`RUN#arm`: every listed shard is of that arm), or None for a
    whole run or a run with a single arm."""
    names = manifest.spec.arm_names
    played = manifest.arms_played
    if len(names) > 1 and len(played) == 1:
        name = next(iter(played))
        return name if name in names else None
    return None


def tier_names(manifest: Manifest | None) -> list[str]:
    """The tiers of a tier study (spec key `tiers`), in spec order; [] for any other run."""
    return list(manifest.spec.tiers) if manifest is not None else []


def provenance(manifest: Manifest | None, path: str | Path | Location | None = None) -> dict[str, Any]:
    """The provenance block of one opened run (its manifest, restricted to an arm when opened as
    `RUN#arm`; None for games held in memory): JSON-ready. What a run.json lacks (hand-made or old
    runs) is None."""
    if manifest is None:
        return {
            "run_id": None,
            "path": str(path) if path is not None else None,
            "arm": None,
            "design": "single",
            **dict.fromkeys(("tiers", "strategies", "sets")),
            "card_files": [],
            **dict.fromkeys(
                ("pool_hash", "seed", "games", "draft", "spec_hash", "protolab_version", "engine_version", "models")
            ),
        }
    spec, arm = manifest.spec, opened_arm(manifest)
    shown = [a for a in spec.arms if arm is None or a.name == arm]
    tiers = tier_names(manifest)
    first = shown[0] if shown else SpecArm(None)
    return {
        "run_id": manifest.run_id,
        "path": str(path) if path is not None else None,
        "arm": arm,
        "design": "tiers" if tiers else ("arms" if len(spec.arms) > 1 else "single"),
        "tiers": tiers or None,
        "strategies": {str(a.name): list(a.strategies) for a in shown} or None,
        "sets": list(first.sets) or None,
        "card_files": [{"path": c.path, "sha256": c.sha256} for c in first.cards],
        "pool_hash": (manifest.pool_hashes or {}).get(arm, manifest.pool_hash)
        if arm is not None
        else manifest.pool_hash,
        "seed": spec.seed,
        "games": sum(s.games for s in manifest.shards) if manifest.shards else manifest.games,
        "draft": spec.draft.mode if spec.draft is not None else None,
        "spec_hash": manifest.spec_hash,
        "protolab_version": manifest.protolab_version,
        "engine_version": manifest.engine_version,
        "models": [
            m for m in manifest.models or [] if isinstance(m, dict) and (arm is None or m.get("arm") in (None, arm))
        ]
        or None,
    }


def of_runs(runs: Runs) -> list[dict[str, Any]]:
    """The provenance block of each opened run."""
    return [provenance(m, p) for m, p in zip(runs.manifests, runs.paths, strict=True)]


def _seats(strategies: list[str]) -> str:
    if len(strategies) == 2 and strategies[0] == strategies[1]:
        return f"{strategies[0]} on both seats"
    return ", ".join(f"seat {i} {s}" for i, s in enumerate(strategies)) or "not recorded"


def describe(p: dict[str, Any]) -> str:
    """One line: the run (and arm or tier), its bots per seat, pool, seed, games and version."""
    name = str(p.get("run_id") or p.get("path") or "run")
    kind = "tier" if p.get("design") == "tiers" else "arm"
    label = f"{name}#{p['arm']}" if p.get("arm") else name
    strategies = p.get("strategies") or {}
    if not strategies:
        bots = "strategies not recorded in run.json"
    elif len(strategies) == 1:
        bots = "strategies: " + _seats(next(iter(strategies.values())))
    else:
        bots = "strategies per " + kind + ": " + "; ".join(f"{a} {_seats(s)}" for a, s in strategies.items())
    if p.get("arm"):
        bots = f"{kind} {p['arm']}, {bots}"
    cards = ", ".join(str(c["path"]) for c in p.get("card_files") or []) or "none"
    sets = ", ".join(p.get("sets") or []) or "not recorded"
    pool = str(p.get("pool_hash") or "not recorded")
    games = f"{p['games']:,}" if isinstance(p.get("games"), int) else "not recorded"
    seed = p.get("seed") if p.get("seed") is not None else "not recorded"
    version = p.get("protolab_version") or "not recorded"
    models = describe_models(p.get("models"))
    return (
        f"{label}: {bots}; sets {sets}; variant files {cards}; pool {pool}; master seed {seed}; "
        f"{games} games; protolab {version}" + (f"; {models}" if models else "")
    )


def fields(p: dict[str, Any]) -> list[tuple[str, str]]:
    """The block as (label, value) pairs for a page's compact form (the same facts as `describe`)."""
    strategies = p.get("strategies") or {}
    kind = "tier" if p.get("design") == "tiers" else "arm"
    bots = (
        "; ".join(f"{kind} {a}: {_seats(s)}" if len(strategies) > 1 else _seats(s) for a, s in strategies.items())
        or "not recorded"
    )
    cards = ", ".join(str(c["path"]) for c in p.get("card_files") or []) or "none (official cards)"
    games = f"{p['games']:,}" if isinstance(p.get("games"), int) else "not recorded"
    name = str(p.get("run_id") or p.get("path") or "run") + (f"#{p['arm']}" if p.get("arm") else "")
    return [
        ("run", name),
        ("strategies", bots),
        ("sets", ", ".join(p.get("sets") or []) or "not recorded"),
        ("variant files", cards),
        ("pool", str(p.get("pool_hash") or "not recorded")),
        ("master seed", str(p["seed"]) if p.get("seed") is not None else "not recorded"),
        ("games", games),
        ("protolab", str(p.get("protolab_version") or "not recorded")),
    ] + ([("models", describe_models(p.get("models")))] if p.get("models") else [])


def lines(blocks: list[dict[str, Any]]) -> list[str]:
    """One 'Produced by' line per run."""
    return [f"Produced by {describe(p)}" for p in blocks]


def csv_header(blocks: list[dict[str, Any]]) -> str:
    """Comment lines (`# ...`) put before a CSV table; readers skip them (`comment="#"`)."""
    return "".join(f"# {line}\n" for line in lines(blocks))


def as_html(blocks: list[dict[str, Any]]) -> str:
    """The header paragraph of a page."""
    return "".join(f'<p class="prov">{html.escape(line)}</p>' for line in lines(blocks))


def print_lines(blocks: list[dict[str, Any]], console: Console) -> None:
    for line in lines(blocks):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
