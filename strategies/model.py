"""A learned player's model file: a small MLP over the engine's features (strategies/_features.pyx)
giving one logit, "the seat whose view it is wins" (a draw counts half), and optionally a second
one, the policy logit of the line that ends at the position (trained on a search's visit shares,
softmax within a decision; the player orders the candidates it looks at more closely by it).

    {"format": "protolab-model", "version": 1,
     "features": [...names...], "feature_digest": "...",
     "layers": [{"weights": [[...in...] x out], "bias": [...out...], "activation": "relu|tanh|linear"}, ...],
     "outputs": ["value", "policy"],        # only in a model with the policy output (its last layer: 2 rows)
     "meta": {...}}                         # the trainer's: spec, pool hash, generations, ladder, versions, time

Parsing is strict (every key known and present, every shape right, every weight finite, the
feature list the engine's own): a model the engine cannot use fails with one line naming the
file, the key and what was expected (ModelError, a user error: exit 2 through the CLI). The file
is written with sorted keys and float32 weights, so the same weights give the same bytes; the
hash names the function (features and layers), not the meta, so retraining that records another
training time keeps the hash of the same weights."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sim.inputs import InputFileError, read_input_text
from strategies.declared import FEATURE_DIGEST, FEATURES, MAX_LAYERS, MAX_UNITS, MODEL_OUTPUTS
from strategies.errors import StrategyError

FORMAT = "protolab-model"
VERSION = 1
KEYS = ("format", "version", "features", "feature_digest", "layers", "meta")
OPTIONAL_KEYS = ("outputs",)  # absent: one output, the value (every model before the policy output)
VALUE_ONLY = MODEL_OUTPUTS[:1]
LAYER_KEYS = ("weights", "bias", "activation")
ACTIVATIONS = ("relu", "tanh", "linear")
NFEAT = len(FEATURES)
SHIPPED = "protolab_datasets.models"
MAX_MODEL_BYTES = 8 * 1024 * 1024  # 20 times the largest network's file (4 layers of 64 units: 0.39 MB)
DEFAULT_MODEL = "learned"


class ModelError(StrategyError):
    """A model file that cannot be used; the message names the file, the key and what was expected."""


@dataclass(frozen=True)
class Layer:
    """One dense layer of a value network, as the fit gives it (protolab/experiment/train/fit.py, float64) and
    a model file holds it (float32)."""

    weights: np.ndarray  # [out][in]
    bias: np.ndarray  # [out]
    activation: str  # relu | tanh | linear


@dataclass
class Model:
    layers: list[Layer]
    meta: dict[str, Any] = field(default_factory=dict)
    source: str = "<memory>"
    outputs: tuple[str, ...] = VALUE_ONLY  # the last layer's rows: value, and policy if trained with it

    @property
    def has_policy(self) -> bool:
        return len(self.outputs) > 1

    def function(self) -> dict[str, Any]:
        """The part of the file that decides play: format, features, layers and, with a policy output,
        the outputs (what the hash names; a value-only model's hash is the one it always had)."""
        named = {"outputs": list(self.outputs)} if self.has_policy else {}
        return {
            **named,
            "format": FORMAT,
            "version": VERSION,
            "features": list(FEATURES),
            "feature_digest": FEATURE_DIGEST,
            "layers": stored_layers(self.layers),
        }

    def to_bytes(self) -> bytes:
        body = {**self.function(), "meta": self.meta}
        return (json.dumps(body, sort_keys=True, indent=1, allow_nan=False) + "\n").encode()

    @property
    def full_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.function(), sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    @property
    def hash(self) -> str:
        """Short form for display and provenance."""
        return self.full_hash[:12]

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_bytes())

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Win probabilities for rows of features (numpy; the C player computes the same in float32)."""
        return 1.0 / (1.0 + np.exp(-self._last(x)[..., 0].astype(np.float64)))

    def policy_logits(self, x: np.ndarray) -> np.ndarray:
        """The policy logits for rows of features (a model with the policy output)."""
        if not self.has_policy:
            raise ValueError(f"model {self.source} has no policy output")
        return self._last(x)[..., 1].astype(np.float64)

    def _last(self, x: np.ndarray) -> np.ndarray:
        return forward(self.layers, x)

    @classmethod
    def from_arrays(
        cls,
        layers: list[tuple[np.ndarray, np.ndarray, str]],
        meta: dict | None = None,
        outputs: tuple[str, ...] = VALUE_ONLY,
    ) -> Model:
        """A model from (weights [out][in], bias, activation) triples, checked like a file."""
        named = {"outputs": list(outputs)} if len(outputs) > 1 else {}
        raw = {
            **named,
            "format": FORMAT,
            "version": VERSION,
            "features": list(FEATURES),
            "feature_digest": FEATURE_DIGEST,
            "layers": layer_records(layers),
            "meta": meta or {},
        }
        return parse(raw, "<memory>")

    @classmethod
    def load(cls, path: str | Path) -> Model:
        raw = read_model_json(
            path,
            missing="expected a model file (JSON) or the name of a shipped model "
            f"({', '.join(shipped_models()) or 'none'})",
            invalid="expected a model file (docs/strategies.md, 'The learned player')",
            large=f" (the largest network the player takes, {MAX_LAYERS} layers of {MAX_UNITS} units, is a file "
            "of about 0.4 MB)",
        )
        return parse(raw, str(path))


def forward(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    """The reference computation of a network (numpy, float32 layer by layer): its last layer's
    outputs for rows of inputs, for every kind of model."""
    h = np.asarray(x, np.float32)
    for lay in layers:
        h = h @ lay.weights.T + lay.bias
        h = np.maximum(h, 0) if lay.activation == "relu" else np.tanh(h) if lay.activation == "tanh" else h
    return h


def layer_records(layers: list[tuple[np.ndarray, np.ndarray, str]], dtype: Any = None) -> list[dict[str, Any]]:
    """(weights [out][in], bias, activation) triples as a model file writes its layers (the arrays
    as lists, of `dtype` when given), for `from_arrays` of every kind of model."""
    return [
        {"weights": np.asarray(w, dtype).tolist(), "bias": np.asarray(b, dtype).tolist(), "activation": a}
        for w, b, a in layers
    ]


def read_model_json(path: str | Path, missing: str, invalid: str, large: str = "") -> Any:
    """A model file's parsed JSON, its size checked before reading it; ModelError names the file and says
    `missing` (no such file), `invalid` (not JSON) or, for a file too large, adds `large`."""
    source = str(path)
    try:
        text = read_input_text(path, MAX_MODEL_BYTES)
    except InputFileError as e:
        if not Path(path).exists():
            raise ModelError(f"model {source}: no such file; {missing}") from None
        why = str(e).removeprefix(f"{source}: ")
        raise ModelError(f"model {source}: {why}{large if 'larger than' in why else ''}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(
            f"model {source}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); {invalid}"
        ) from None


def stored_layers(layers: list[Layer]) -> list[dict[str, Any]]:
    """The layers as a model file stores them (and its hash names them), for every kind of model."""
    return [
        {
            "weights": [[float(x) for x in row] for row in lay.weights],
            "bias": [float(x) for x in lay.bias],
            "activation": lay.activation,
        }
        for lay in layers
    ]


def model_error(source: str, key: str, expected: str, got: Any) -> ModelError:
    shown = repr(got)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ModelError(f"model {source}: key '{key}': expected {expected}, got {shown}")


def _matrix(raw: Any, rows: int, cols: int, source: str, key: str) -> np.ndarray:
    if not isinstance(raw, list) or len(raw) != rows:
        raise model_error(
            source, key, f"a list of {rows} rows", raw if not isinstance(raw, list) else f"{len(raw)} rows"
        )
    for i, row in enumerate(raw):
        if not isinstance(row, list) or len(row) != cols:
            got = row if not isinstance(row, list) else f"{len(row)} numbers"
            raise model_error(source, f"{key}[{i}]", f"a row of {cols} numbers", got)
        _numbers(row, source, f"{key}[{i}]")
    return np.array(raw, dtype=np.float32).reshape(rows, cols)


def _numbers(row: list, source: str, key: str) -> None:
    for j, x in enumerate(row):
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise model_error(source, f"{key}[{j}]", "a finite number", x)
        if abs(x) > 3.0e38:
            raise model_error(source, f"{key}[{j}]", "a number within float32's range", x)


def parse_layer(raw: Any, i: int, fan_in: int, last: int, source: str) -> Layer:
    """Layer i; `last`: the number of outputs if it is the last layer (its rows), else 0."""
    key = f"layers[{i}]"
    if not isinstance(raw, dict):
        raise model_error(source, key, "a table with weights, bias, activation", raw)
    for k in raw:
        if k not in LAYER_KEYS:
            raise model_error(source, f"{key}.{k}", f"no such key (a layer has {', '.join(LAYER_KEYS)})", k)
    for k in LAYER_KEYS:
        if k not in raw:
            raise ModelError(f"model {source}: key '{key}.{k}': missing; a layer has {', '.join(LAYER_KEYS)}")
    act = raw["activation"]
    if act not in ACTIVATIONS:
        raise model_error(source, f"{key}.activation", f"one of {', '.join(ACTIVATIONS)}", act)
    w = raw["weights"]
    out = len(w) if isinstance(w, list) else -1
    if last == 1 and out != 1:
        raise model_error(
            source,
            f"{key}.weights",
            f"1 row (the last layer gives one logit; a model whose 'outputs' are {list(MODEL_OUTPUTS)} has "
            f"{len(MODEL_OUTPUTS)})",
            f"{out} rows",
        )
    if last > 1 and out != last:
        raise model_error(source, f"{key}.weights", f"{last} rows (one per output: 'outputs' says so)", f"{out} rows")
    if not 1 <= out <= MAX_UNITS:
        raise model_error(source, f"{key}.weights", f"1..{MAX_UNITS} rows (units)", w if out < 0 else f"{out} rows")
    weights = _matrix(w, out, fan_in, source, f"{key}.weights")
    bias = raw["bias"]
    if not isinstance(bias, list) or len(bias) != out:
        raise model_error(
            source,
            f"{key}.bias",
            f"a list of {out} numbers",
            bias if not isinstance(bias, list) else f"{len(bias)} numbers",
        )
    _numbers(bias, source, f"{key}.bias")
    return Layer(weights, np.array(bias, dtype=np.float32), act)


def parse(raw: Any, source: str) -> Model:
    """A Model from a file's parsed JSON, checked key by key (ModelError names the first problem)."""
    if not isinstance(raw, dict):
        raise model_error(source, "(top)", "a JSON object with " + ", ".join(KEYS), raw)
    if "kind" in raw:  # strategies/qmodel.py's action-value models carry a kind; a value model has none
        raise model_error(
            source, "kind", "no kind: a value model (an action-value model is played by qlearned)", raw["kind"]
        )
    for k in raw:
        if k not in KEYS and k not in OPTIONAL_KEYS:
            raise model_error(source, k, f"no such key (a model file has {', '.join(KEYS)}, and may have outputs)", k)
    for k in KEYS:
        if k not in raw:
            raise ModelError(f"model {source}: key '{k}': missing; a model file has {', '.join(KEYS)}")
    if raw["format"] != FORMAT:
        raise model_error(source, "format", repr(FORMAT), raw["format"])
    if raw["version"] != VERSION:
        raise model_error(source, "version", str(VERSION), raw["version"])
    if raw["features"] != list(FEATURES):
        raise names_mismatch(raw["features"], FEATURES, source, "features", "feature names")
    if raw["feature_digest"] != FEATURE_DIGEST:
        raise model_error(source, "feature_digest", f"{FEATURE_DIGEST} (this engine's features)", raw["feature_digest"])
    layers = raw["layers"]
    if not isinstance(layers, list) or not 1 <= len(layers) <= MAX_LAYERS:
        raise model_error(source, "layers", f"a list of 1..{MAX_LAYERS} layers", layers)
    if not isinstance(raw["meta"], dict):
        raise model_error(source, "meta", "a table", raw["meta"])
    outputs = tuple(raw.get("outputs", VALUE_ONLY))
    if "outputs" in raw and raw["outputs"] != list(MODEL_OUTPUTS):
        raise model_error(
            source, "outputs", f"{list(MODEL_OUTPUTS)} (or no outputs key: the value alone)", raw["outputs"]
        )
    out, fan_in = [], NFEAT
    for i, lay in enumerate(layers):
        layer = parse_layer(lay, i, fan_in, len(outputs) if i == len(layers) - 1 else 0, source)
        out.append(layer)
        fan_in = layer.weights.shape[0]
    return Model(out, dict(raw["meta"]), source, outputs)


def names_mismatch(got: Any, expected: tuple[str, ...], source: str, key: str, noun: str = "names") -> ModelError:
    """What is wrong with a model's list of input names under key (got is not the engine's list)."""
    if not isinstance(got, list):
        return model_error(source, key, f"the engine's {len(expected)} {noun}", got)
    for i, (a, b) in enumerate(zip(got, expected, strict=False)):
        if a != b:
            return model_error(source, f"{key}[{i}]", f"{b!r} (this engine's features: retrain the model)", a)
    return model_error(
        source, key, f"{len(expected)} names (this engine's features: retrain the model)", f"{len(got)} names"
    )


def shipped_models() -> list[str]:
    """Names of the models shipped in datasets/models/."""
    try:
        return sorted(p.name[:-5] for p in resources.files(SHIPPED).iterdir() if p.name.endswith(".json"))
    except (ModuleNotFoundError, FileNotFoundError):
        return []


def resolve(name: str) -> str:
    """A shipped model's file for NAME, else NAME itself as a path."""
    if name in shipped_models():
        return str(resources.files(SHIPPED).joinpath(f"{name}.json"))
    return name


def load_model(name: str = DEFAULT_MODEL) -> Model:
    """`learned:model=NAME`: a shipped model by name, or a model file by path."""
    return Model.load(resolve(name))
