"""An action-value model file (the `qlearned` player, strategies/_qlearned.pyx): an MLP over a
position's features (strategies/_features.pyx) followed by one action's features
(strategies/declared.py, ACTION_FEATURES), giving one logit: "the deciding seat wins after this action".

    {"format": "protolab-model", "kind": "action-value", "version": 1,
     "features": [...position names...], "action_features": [...action names...], "action_digest": "...",
     "layers": [{"weights": [[...in...] x out], "bias": [...out...], "activation": "relu|tanh|linear"}, ...],
     "meta": {...}}

The same file family as a value model (strategies/model.py), told apart by `kind`; parsing is as
strict (every key known and present, every shape right, every weight finite, both feature lists this
engine's own), failing with one line naming the file, the key and what was expected. Written with
sorted keys and float32 weights; the hash names the function (features and layers), not the meta."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from strategies.declared import ACTION_DIGEST, ACTION_FEATURES, FEATURES, MAX_LAYERS
from strategies.model import (
    FORMAT,
    Layer,
    ModelError,
    forward,
    layer_records,
    model_error,
    names_mismatch,
    parse_layer,
    read_model_json,
    resolve,
    stored_layers,
)

KIND = "action-value"
VERSION = 1
KEYS = ("format", "kind", "version", "features", "action_features", "action_digest", "layers", "meta")
NIN = len(FEATURES) + len(ACTION_FEATURES)


@dataclass
class QModel:
    layers: list[Layer]
    meta: dict[str, Any] = field(default_factory=dict)
    source: str = "<memory>"

    def function(self) -> dict[str, Any]:
        """What decides play (and what the hash names)."""
        return {
            "format": FORMAT,
            "kind": KIND,
            "version": VERSION,
            "features": list(FEATURES),
            "action_features": list(ACTION_FEATURES),
            "action_digest": ACTION_DIGEST,
            "layers": stored_layers(self.layers),
        }

    def to_bytes(self) -> bytes:
        return (json.dumps({**self.function(), "meta": self.meta}, sort_keys=True, allow_nan=False) + "\n").encode()

    @property
    def hash(self) -> str:
        body = json.dumps(self.function(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(body).hexdigest()[:12]

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_bytes())

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The reference computation (numpy, float32 layer by layer) for rows of joined inputs."""
        return forward(self.layers, x)[..., 0].astype(np.float64)

    @classmethod
    def from_arrays(cls, layers: list[tuple[np.ndarray, np.ndarray, str]], meta: dict | None = None) -> QModel:
        raw = {
            **{k: v for k, v in cls([]).function().items() if k != "layers"},
            "layers": layer_records(layers, np.float32),
            "meta": meta or {},
        }
        return parse(raw, "<memory>")

    @classmethod
    def load(cls, path: str | Path) -> QModel:
        raw = read_model_json(
            path, missing="expected an action-value model file (JSON)", invalid="expected an action-value model file"
        )
        return parse(raw, str(path))


def parse(raw: Any, source: str) -> QModel:
    """A QModel from a file's parsed JSON, checked key by key (ModelError names the first problem)."""
    if not isinstance(raw, dict):
        raise model_error(source, "(top)", "a JSON object with " + ", ".join(KEYS), raw)
    if "kind" not in raw:
        raise ModelError(f"model {source}: key 'kind': missing; expected {KIND!r} (a value model is played by learned)")
    for k in raw:
        if k not in KEYS:
            raise model_error(source, k, f"no such key (an action-value model file has {', '.join(KEYS)})", k)
    for k in KEYS:
        if k not in raw:
            raise ModelError(f"model {source}: key '{k}': missing; an action-value model file has {', '.join(KEYS)}")
    if raw["format"] != FORMAT:
        raise model_error(source, "format", repr(FORMAT), raw["format"])
    if raw["kind"] != KIND:
        raise model_error(source, "kind", repr(KIND), raw["kind"])
    if raw["version"] != VERSION:
        raise model_error(source, "version", str(VERSION), raw["version"])
    for key, names in (("features", FEATURES), ("action_features", ACTION_FEATURES)):
        if raw[key] != list(names):
            raise names_mismatch(raw[key], names, source, key)
    if raw["action_digest"] != ACTION_DIGEST:
        raise model_error(source, "action_digest", f"{ACTION_DIGEST} (this engine's features)", raw["action_digest"])
    layers = raw["layers"]
    if not isinstance(layers, list) or not 1 <= len(layers) <= MAX_LAYERS:
        raise model_error(source, "layers", f"a list of 1..{MAX_LAYERS} layers", layers)
    if not isinstance(raw["meta"], dict):
        raise model_error(source, "meta", "a table", raw["meta"])
    out, fan_in = [], NIN
    for i, lay in enumerate(layers):
        layer = parse_layer(lay, i, fan_in, 1 if i == len(layers) - 1 else 0, source)
        out.append(layer)
        fan_in = layer.weights.shape[0]
    return QModel(out, dict(raw["meta"]), source)


def load_qmodel(name: str) -> QModel:
    """`qlearned:model=NAME`: a shipped model by name, or a model file by path."""
    return QModel.load(resolve(name))
