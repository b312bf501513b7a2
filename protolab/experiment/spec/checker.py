"""The one way a spec's problems are reported: a SpecError whose message names the file, the key and
what was expected ('FILE: key K: expected X, got Y'), so a designer can fix a typo without reading code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sim.schema import Problem, integer_expected, is_whole, problem

M = TypeVar("M", bound=BaseModel)


class SpecError(ValueError):
    """An experiment spec that cannot be run; the message says where and what was expected."""


def _unknown_key(p: Problem) -> str:
    return f"unknown key; expected one of: {', '.join(sorted(p.allowed))}"


class Checker:
    """Errors phrased 'FILE: key K: expected X, got Y': a table checked by its model (`model`), and the
    few single values checked where their bounds depend on other keys (`integer`, `string`, ...)."""

    def __init__(self, source: str, within: str = ""):
        self.source = source
        self.within = within  # the key the spec sits under in its file (run.json: "spec")

    def error(self, key: str, msg: str) -> SpecError:
        full = f"{self.within}.{key}" if self.within and key else key or self.within
        return SpecError(f"{self.source}: key '{full}': {msg}")

    def model(self, raw: Any, key: str, model: type[M], unknown: Callable[[Problem], str] | None = None) -> M:
        """`raw` checked by `model` (sim/schema.py): the first problem found, as one line naming its key;
        `unknown` phrases an unknown key (default: the keys the table takes)."""
        try:
            return model.model_validate(raw)
        except ValidationError as e:
            p = problem(e, model, unknown or _unknown_key)
            raise self.error(f"{key}.{p.key}" if key and p.key else key or p.key, p.message) from None

    def integer(self, raw: Any, key: str, lo: int, hi: int, what: str) -> int:
        if is_whole(raw) and lo <= raw <= hi:
            return raw
        raise self.error(key, f"{integer_expected(lo, hi, what)}; got {raw!r}")

    def string(self, raw: Any, key: str, what: str) -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise self.error(key, f"expected {what}, got {raw!r}")
        return raw.strip()

    def strings(self, raw: Any, key: str, what: str) -> list[str]:
        if not isinstance(raw, list):
            raise self.error(key, f"expected a list of {what}, got {raw!r}")
        return [self.string(x, f"{key}[{i}]", what) for i, x in enumerate(raw)]
