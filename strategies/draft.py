"""Fitted draft tables: a readable TOML file of trio strengths and counter terms (docs/strategies.md,
"Drafts"), checked and turned into the arrays the C drafter (strategies/_draft.pyx) reads.

    [about]                      # free text: where the table came from (command, run, games)
    [protocols]                  # a protocol's strength, in win-rate points (0.01 = one point)
    Fire = 0.012
    [trios]                      # a whole trio's strength; a trio not listed is the sum of its protocols
    "Death, Fire, Water" = 0.031
    [counters.Fire]              # holding Fire against an opponent holding Water: +0.021 (and Water
    Water = 0.021                # against Fire: -0.021)

Spec syntax: `fitted:FILE[,style=full|greedy|counter][,temp=T]`."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim.inputs import InputFileError, parse_toml, read_input_text
from strategies._draft import FittedDraft

TABLE_KEYS = ("about", "protocols", "trios", "counters")
STYLES = ("full", "greedy", "counter")
MAX_VALUE = 1.0  # a value is a win-rate difference: |v| <= 1


class DraftTableError(ValueError):
    """A fitted draft table or option that cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class FittedSpec:
    """`fitted:FILE,style=...,temp=...` as written."""

    path: str
    style: str = "full"
    temp: float = 0.0


def parse_fitted(arg: str) -> FittedSpec:
    """The part after `fitted:`: a path, then optional `style=` and `temp=` (comma-separated)."""
    parts = arg.split(",")
    path, opts = parts[0].strip(), parts[1:]
    if not path:
        raise DraftTableError("draft 'fitted:': expected fitted:FILE (a draft table, docs/strategies.md)")
    style, temp = "full", 0.0
    for o in opts:
        k, eq, v = (x.strip() for x in o.partition("="))
        if k == "style" and eq and v in STYLES:
            style = v
        elif k == "temp" and eq:
            try:
                temp = float(v)
            except ValueError:
                temp = -1.0
            if not 0 <= temp <= 1:
                raise DraftTableError(f"draft 'fitted:{arg}': temp must be a number 0..1, got {v!r}")
        else:
            raise DraftTableError(
                f"draft 'fitted:{arg}': unknown option {o.strip()!r}; expected style={'|'.join(STYLES)} or temp=T"
            )
    return FittedSpec(path, style, temp)


def read_table_text(path: str, read: Callable[[str], str] | None = None) -> str:
    """The table's text: from `read` (a run's saved copy) or the file itself."""
    if read is not None:
        return read(path)

    try:
        return read_input_text(Path(path))
    except InputFileError as e:
        raise DraftTableError(f"draft table {e}") from None


def table_arrays(text: str, source: str, protocols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(trio, net) for a pool's protocols (by id): trio[a, b, c] the strength of the trio (any
    order), net[a, b] what holding a is worth against an opponent holding b."""
    try:
        raw = parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise DraftTableError(f"{source}: not valid TOML ({e}); expected a draft table (docs/strategies.md)") from None
    extra = sorted(set(raw) - set(TABLE_KEYS))
    if extra:
        raise DraftTableError(f"{source}: key '{extra[0]}': unknown key; expected one of {', '.join(TABLE_KEYS)}")
    ids = {p.lower(): i for i, p in enumerate(protocols)}
    n = len(protocols)
    strength = np.zeros(n)
    for name, v in _table(raw, "protocols", source).items():
        strength[_protocol(ids, name, source, f"protocols.{name}", protocols)] = _value(v, source, f"protocols.{name}")
    trio = strength[:, None, None] + strength[None, :, None] + strength[None, None, :]
    for name, v in _table(raw, "trios", source).items():
        key = f'trios."{name}"'
        names = [x.strip() for x in name.split(",")]
        t = [_protocol(ids, x, source, key, protocols) for x in names]
        if len(t) != 3 or len(set(t)) != 3:
            raise DraftTableError(
                f"{source}: key '{key}': expected three different protocols, e.g. \"Death, Fire, Water\""
            )
        value = _value(v, source, key)
        for a, b, c in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
            trio[t[a], t[b], t[c]] = value
    net = np.zeros((n, n))
    for name in _table(raw, "counters", source):
        a = _protocol(ids, name, source, f"counters.{name}", protocols)
        for other, v in _table(raw["counters"], name, source, "counters.").items():
            key = f"counters.{name}.{other}"
            b = _protocol(ids, other, source, key, protocols)
            if a == b:
                raise DraftTableError(f"{source}: key '{key}': a protocol cannot counter itself")
            value = _value(v, source, key)
            net[a, b] += value
            net[b, a] -= value
    return trio.astype(np.float32), net.astype(np.float32)


def _table(raw: dict[str, Any], key: str, source: str, prefix: str = "") -> dict[str, Any]:
    sub = raw.get(key, {})
    if not isinstance(sub, dict):
        raise DraftTableError(f"{source}: key '{prefix}{key}': expected a table, got {sub!r}")
    return sub


def _protocol(ids: dict[str, int], name: str, source: str, key: str, protocols: list[str]) -> int:
    i = ids.get(name.strip().lower())
    if i is None:
        raise DraftTableError(
            f"{source}: key '{key}': unknown protocol {name.strip()!r}; expected one of "
            f"{', '.join(protocols)} (the pool)"
        )
    return i


def _value(v: Any, source: str, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or abs(v) > MAX_VALUE:
        raise DraftTableError(
            f"{source}: key '{key}': expected a number of win-rate points between "
            f"-{MAX_VALUE:g} and {MAX_VALUE:g} (0.01 = one point), got {v!r}"
        )
    return float(v)


def fitted_draft(arg: str, protocols: list[str], read: Callable[[str], str] | None = None):
    """A FittedDraft (strategies/_draft.pyx) for `fitted:ARG` and a pool's protocols."""

    spec = parse_fitted(arg)
    trio, net = table_arrays(read_table_text(spec.path, read), spec.path, protocols)
    return FittedDraft(trio, net, spec.style, spec.temp)
