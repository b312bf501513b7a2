"""The engine's enums for the Python side, derived from the one table of the card language
(sim/cards/vocabulary/): the selectors, triggers, passives, zones, phases, end reasons, decision
kinds, restrictions and event kinds of `ENUMS`, the log kinds and the log's note numbers. The
build generates the same names and codes into the engine's C enums (sim/engine/vocab_gen.py), so
Python code reads `Zone.FIELD` or `words("decision")` instead of repeating a number; nothing here
needs the compiled engine.

Each enum of `ENUMS` is a module attribute under its C name (`Whose`, `Zone`, `DecisionKind`,
...), an IntFlag for flag enums, else an IntEnum, with the members' C names less the prefix
(`W_ANY` is `Whose.ANY`).
"""

from __future__ import annotations

from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any

from sim.cards import vocabulary as vocab


def _made(base: type[IntEnum] | type[IntFlag], name: str, members: list[tuple[str, int]]) -> Any:
    """An enum class by the functional API (which mypy reads for literal member lists only)."""
    make: Any = base
    return make(name, members, module=__name__)


def _python_enum(e: vocab.EngineEnum) -> type[IntEnum] | type[IntFlag]:
    return _made(IntFlag if e.flags else IntEnum, e.name, [(m.name, code) for m, code in e.codes()])


ENUMS: dict[str, type[IntEnum] | type[IntFlag]] = {e.name: _python_enum(e) for e in vocab.ENUMS}
globals().update(ENUMS)
if TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """For mypy: the enums of ENUMS, made above at import (a missing name fails at import)."""


LogKind = _made(IntEnum, "LogKind", [(k.upper(), i + 1) for i, k in enumerate(vocab.log_kinds())])
# LN_<KIND>_<NAME> of the engine, without the LN_: what a log entry's note number means
LOG_NOTES: dict[str, int] = {name.removeprefix("LN_"): code for f in vocab.LOG_FORMS for name, code in f.constants()}

__all__ = ["ENUMS", "LOG_NOTES", "LogKind", "names", "words", *ENUMS]


def words(key: str) -> dict[str | bool, int]:
    """Word -> code of one enum, named by its C name or its `constants()` key ("whose", "phase")."""
    return vocab.enum(key).words()


def names(key: str) -> dict[int, str | bool]:
    """Code -> word of one enum (members without a word left out), in code order."""
    return {code: word for word, code in words(key).items()}
