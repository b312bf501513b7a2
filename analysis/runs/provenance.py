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

_NOT_RECORDED = "not recorded"


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
    where = str(path) if path is not None else None
    if manifest is None:
        return _in_memory(where)
    spec, arm = manifest.spec, opened_arm(manifest)
    shown = [a for a in spec.arms if arm is None or a.name == arm]
    first = shown[0] if shown else SpecArm(None)
    return {
        "run_id": manifest.run_id,
        "path": where,
        "arm": arm,
        **_design(manifest),
        "strategies": {str(a.name): list(a.strategies) for a in shown} or None,
        "sets": list(first.sets) or None,
        "card_files": [{"path": c.path, "sha256": c.sha256} for c in first.cards],
        "pool_hash": _pool_hash(manifest, arm),
        "seed": spec.seed,
        "games": sum(s.games for s in manifest.shards) if manifest.shards else manifest.games,
        "draft": spec.draft.mode if spec.draft is not None else None,
        "spec_hash": manifest.spec_hash,
        "protolab_version": manifest.protolab_version,
        "engine_version": manifest.engine_version,
        "models": _models(manifest, arm),
    }


def _in_memory(where: str | None) -> dict[str, Any]:
    """The block of games held in memory: no run.json, so nothing but the label is known."""
    return {
        "run_id": None,
        "path": where,
        "arm": None,
        "design": "single",
        **dict.fromkeys(("tiers", "strategies", "sets")),
        "card_files": [],
        **dict.fromkeys(
            ("pool_hash", "seed", "games", "draft", "spec_hash", "protolab_version", "engine_version", "models")
        ),
    }


def _design(manifest: Manifest) -> dict[str, Any]:
    """A tier study, an A/B run (several arms) or a single arm, and the tiers of a tier study."""
    tiers = tier_names(manifest)
    design = "tiers" if tiers else ("arms" if len(manifest.spec.arms) > 1 else "single")
    return {"design": design, "tiers": tiers or None}


def _pool_hash(manifest: Manifest, arm: str | None) -> str | None:
    """The pool of the arm opened (an arm's own pool when the run records one), else the run's."""
    if arm is None:
        return manifest.pool_hash
    return (manifest.pool_hashes or {}).get(arm, manifest.pool_hash)


def _models(manifest: Manifest, arm: str | None) -> list[dict[str, Any]] | None:
    """The learned models the run's bots loaded: those of the arm opened, and those of every arm."""
    shown = [m for m in manifest.models or [] if isinstance(m, dict) and (arm is None or m.get("arm") in (None, arm))]
    return shown or None


def of_runs(runs: Runs) -> list[dict[str, Any]]:
    """The provenance block of each opened run."""
    return [provenance(m, p) for m, p in zip(runs.manifests, runs.paths, strict=True)]


def _seats(strategies: list[str]) -> str:
    if len(strategies) == 2 and strategies[0] == strategies[1]:
        return f"{strategies[0]} on both seats"
    return ", ".join(f"seat {i} {s}" for i, s in enumerate(strategies)) or _NOT_RECORDED


def _label(p: dict[str, Any]) -> str:
    """The run, and `#arm` when it was opened as one arm or tier."""
    name = str(p.get("run_id") or p.get("path") or "run")
    return f"{name}#{p['arm']}" if p.get("arm") else name


def _kind(p: dict[str, Any]) -> str:
    return "tier" if p.get("design") == "tiers" else "arm"


def _variant_files(p: dict[str, Any]) -> str:
    return ", ".join(str(c["path"]) for c in p.get("card_files") or [])


def _facts(p: dict[str, Any]) -> dict[str, str]:
    """The facts `describe` and `fields` both state, 'not recorded' where run.json lacks them."""
    return {
        "sets": ", ".join(p.get("sets") or []) or _NOT_RECORDED,
        "pool": str(p.get("pool_hash") or _NOT_RECORDED),
        "master seed": str(p["seed"]) if p.get("seed") is not None else _NOT_RECORDED,
        "games": f"{p['games']:,}" if isinstance(p.get("games"), int) else _NOT_RECORDED,
        "protolab": str(p.get("protolab_version") or _NOT_RECORDED),
    }


def _bots(p: dict[str, Any]) -> str:
    """Who played each seat, per arm or tier when the block shows several."""
    strategies, kind = p.get("strategies") or {}, _kind(p)
    if not strategies:
        bots = "strategies not recorded in run.json"
    elif len(strategies) == 1:
        bots = "strategies: " + _seats(next(iter(strategies.values())))
    else:
        bots = "strategies per " + kind + ": " + "; ".join(f"{a} {_seats(s)}" for a, s in strategies.items())
    return f"{kind} {p['arm']}, {bots}" if p.get("arm") else bots


def describe(p: dict[str, Any]) -> str:
    """One line: the run (and arm or tier), its bots per seat, pool, seed, games and version."""
    facts, models = _facts(p), describe_models(p.get("models"))
    return (
        f"{_label(p)}: {_bots(p)}; sets {facts['sets']}; variant files {_variant_files(p) or 'none'}; "
        f"pool {facts['pool']}; master seed {facts['master seed']}; {facts['games']} games; "
        f"protolab {facts['protolab']}" + (f"; {models}" if models else "")
    )


def fields(p: dict[str, Any]) -> list[tuple[str, str]]:
    """The block as (label, value) pairs for a page's compact form (the same facts as `describe`)."""
    strategies, kind = p.get("strategies") or {}, _kind(p)
    bots = "; ".join(f"{kind} {a}: {_seats(s)}" if len(strategies) > 1 else _seats(s) for a, s in strategies.items())
    facts = _facts(p)
    return [
        ("run", _label(p)),
        ("strategies", bots or _NOT_RECORDED),
        ("sets", facts["sets"]),
        ("variant files", _variant_files(p) or "none (official cards)"),
        ("pool", facts["pool"]),
        ("master seed", facts["master seed"]),
        ("games", facts["games"]),
        ("protolab", facts["protolab"]),
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
