"""Which learned models a set of strategies plays (`learned`, `learned:model=NAME`), for the
provenance of everything that used them: each model's name, file, hash and the pool it was trained
on, and whether that is the pool it is played on here (a variant or another set is named as such)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strategies.errors import StrategyError
from strategies.model import DEFAULT_MODEL, ModelError, load_model, resolve
from strategies.spec import parse

LEARNED = "learned"


def model_names(strategies: Iterable[str]) -> list[str]:
    """The model names the strategies play, in first-seen order (none for other players)."""
    names: list[str] = []
    for text in strategies:
        try:
            s = parse(text)
        except StrategyError:
            continue
        if s.base == LEARNED:
            name = str(s.params.get("model", DEFAULT_MODEL))
            if name not in names:
                names.append(name)
    return names


def models_used(strategies: Iterable[str], pool_hash: str) -> list[dict[str, Any]]:
    """One entry per model the strategies play: what run.json and every page built on it name."""
    out = []
    for name in model_names(strategies):
        try:
            m = load_model(name)
        except ModelError as e:
            out.append({"model": name, "file": resolve(name), "hash": None, "error": str(e)})
            continue
        trained = m.meta.get("pool_hash")
        out.append(
            {
                "model": name,
                "file": resolve(name),
                "hash": m.hash,
                "trained_pool_hash": trained,
                "same_pool": trained == pool_hash if trained else None,
            }
        )
    return out


def describe_models(models: list[dict[str, Any]] | None) -> str:
    """One clause for a provenance line: each model's hash, and whether it plays the pool it learned on."""
    parts = []
    for m in models or []:
        if m.get("hash") is None:
            parts.append(f"model {m['model']} unreadable")
        elif m.get("same_pool") is False:
            parts.append(
                f"model {m['model']} {m['hash']} (trained on pool {m['trained_pool_hash']}, not this pool: "
                "a variant or another set)"
            )
        elif m.get("same_pool") is None:
            parts.append(f"model {m['model']} {m['hash']} (its training pool is not recorded)")
        else:
            parts.append(f"model {m['model']} {m['hash']} (trained on this pool)")
    return "; ".join(parts)
