"""Generate the C players' includes from strategies/declared.py.

setup.py runs this before every build (next to sim/engine/vocab_gen.py), so the generated files
(git-ignored) always match the table:

- _declared.pxd  (cimported by _features, _learned and their .pxd) the whole-number constants as
                 an enum and the feature scales as C macros (literals, so the compiler folds them
                 exactly as it did the written-out numbers)
- _declared.pxi  (included by _features.pyx) DECLARED_IN_C: every constant as the compiled
                 module sees it, for the test that the Python and C sides agree

    python -m strategies.declared_gen          # write them (setup.py does)
"""

from __future__ import annotations

import sys
from pathlib import Path

from sim.engine.vocab_gen import write_changed
from strategies import declared as D

HERE = Path(__file__).resolve().parent
PXD = HERE / "_declared.pxd"
PXI = HERE / "_declared.pxi"
HEADER = "# Generated from strategies/declared.py by strategies/declared_gen.py on every build: do not edit.\n"


def _real(x: float) -> str:
    """A C double literal of x (repr keeps every bit; a whole number gets its `.0`)."""
    text = repr(float(x))
    return text if any(c in text for c in ".en") else text + ".0"


def pxd_text() -> str:
    """The declarations the C players cimport."""
    lines = [HEADER, "# cython: language_level=3", "", "cdef enum:"]
    lines += [f"    {name} = {value}" for name, value in D.c_integers().items()]
    lines += ["", "cdef extern from *:", '    """']
    lines += [f"    #define PROTOLAB_{name} {_real(value)}" for name, value in D.c_reals().items()]
    lines += ['    """']
    lines += [f'    const double {name} "PROTOLAB_{name}"' for name in D.c_reals()]
    return "\n".join(lines) + "\n"


def pxi_text() -> str:
    """The compiled module's view of every constant (a dict the agreement test compares)."""
    names = [*D.c_integers(), *D.c_reals()]
    body = "".join(f"\n    {name!r}: _declared_c.{name}," for name in names)
    return f"{HEADER}\ncimport strategies._declared as _declared_c\n\nDECLARED_IN_C = {{{body}\n}}\n"


def write_includes() -> list[Path]:
    """Write both files (the ones whose text changed: sim/engine/vocab_gen.py's write_changed)."""
    return write_changed(((PXD, pxd_text()), (PXI, pxi_text())))


if __name__ == "__main__":
    for p in write_includes():
        print(f"wrote {p}")
    sys.exit(0)
