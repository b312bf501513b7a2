"""Strategy specs and names as a spec writes them: each strategy string is read by the one parser,
strategies.spec.parse, and code named in a spec (`pkg.mod:Class`) runs only when asked (--allow-code)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from protolab.experiment.spec.checker import SpecError
from sim.schema import before, fail
from sim.schema import text as nonblank
from strategies.errors import StrategyError
from strategies.spec import check_user_class, parse

NAME_CHARS = "A-Za-z0-9_.-"  # what a run, arm or tier name is made of
NAME_RE = re.compile(rf"^[A-Za-z0-9][{NAME_CHARS}]{{0,63}}$")
NOT_NAME = re.compile(rf"[^{NAME_CHARS}]+")  # what a name made from free text replaces


def check_strategy(text: Any) -> str:
    """Validate a strategy spec (strategies/spec.py: "greedy", "search:sims=50", "greedy+nodown",
    "pkg.mod:Class") and return it stripped. Raises ValueError with a readable reason; the spec
    loader adds file and key. Card names inside restrictions are checked against the pool later
    (protolab.experiment.run.plan), still before any game is played."""

    if not isinstance(text, str):
        raise ValueError(f"expected a strategy spec string, got {text!r}")
    try:
        return parse(text).text
    except StrategyError as e:
        raise ValueError(str(e)) from None


def refuse_code(text: str, allow_code: bool) -> None:
    """The one rule for code named in a spec, applied by every command that reads one (run, its
    --resume and metagame loop, replay of a run, tune, train, power, cardvalue --resume): a user
    strategy `pkg.mod:Class` is looked for in its module's source without running it, then refused
    unless `allow_code` (--allow-code): a spec that names code is a program. StrategyError otherwise."""
    spec = parse(text)
    if not spec.is_user:
        return
    check_user_class(spec.base)
    if not allow_code:
        raise StrategyError(
            f"{text!r} is Python code (a user strategy): running this spec runs module "
            f"{spec.module!r} in the driver and every worker; expected "
            "--allow-code if you trust it (docs/experiments.md)"
        )


def check_code(source: str, named: Iterable[tuple[str, str]], allow_code: bool) -> None:
    """refuse_code for each (key, strategy) a spec names, before anything is imported or played:
    SpecError naming the file and the key."""
    for key, text in named:
        try:
            refuse_code(text, allow_code)
        except StrategyError as e:
            raise SpecError(f"{source}: key '{key}': {e}") from None


def _strategy(text: Any) -> str:
    try:
        return check_strategy(text)
    except ValueError as e:
        fail(str(e))


def _named(name: str) -> str:
    if not NAME_RE.match(name):
        fail(f"expected letters, digits, '.', '_' or '-' (at most 64), got {name!r}")
    return name


Strategy = Annotated[Any, AfterValidator(_strategy)]  # a strategy spec, stripped
if TYPE_CHECKING:
    StrategyPair = list[str]  # what the validator below yields: two strategy specs
else:
    StrategyPair = before(
        lambda v: (
            v
            if isinstance(v, list) and len(v) == 2
            else fail(f'expected two strategies, one per seat, e.g. ["random", "random"], got {v!r}')
        ),
        list[Strategy],
    )


def seat_pair(strategies: StrategyPair) -> tuple[str, str]:
    """A checked StrategyPair as the (seat 0, seat 1) strategies."""
    first, second = strategies
    return first, second


def run_name(what: str = "a short name of letters, digits, '.', '_' or '-'") -> Any:
    """A name that can be a folder's: letters, digits, '.', '_' or '-' (at most 64)."""
    return Annotated[nonblank(what), AfterValidator(_named)]


RunName = run_name()
