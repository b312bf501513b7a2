"""Build the Cython engine as part of `pip install .` (no manual cythonize step)."""

import os
import sys
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_namespace_packages, setup

# The engine's verb and step declarations are generated from the card vocabulary on every build
# (sim/cards/vocabulary/ -> sim/engine/_vocab_*.pxi), so they cannot drift from the loader's.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim.engine.vocab_gen import write_includes  # noqa: E402
from strategies.declared_gen import write_includes as write_player_includes  # noqa: E402

write_includes()
write_player_includes()  # the players' numbers: strategies/declared.py -> strategies/_declared.px[di]

# Python's own CFLAGS ask for debug info, which doubles the engine's compile time (a user's first
# install waits for it) and never changes the machine code; PROTOLAB_DEBUG_INFO=1 keeps it for
# profiling by source line. PROTOLAB_OPT=0 compiles without optimisation, about four times sooner and
# several times slower to play: for a build whose speed does not matter (the suite's clone install).
OPT = os.environ.get("PROTOLAB_OPT", "3")
if OPT not in ("0", "1", "2", "3"):
    sys.exit(f"setup.py: environment variable PROTOLAB_OPT: expected 0, 1, 2 or 3 (the -O level), got {OPT!r}")
FLAGS = [f"-O{OPT}"] if os.environ.get("PROTOLAB_DEBUG_INFO") else [f"-O{OPT}", "-g0"]
JOBS = os.cpu_count() or 1  # the modules translate and compile side by side

# The installed top-level names: the four layers, and the shipped data under its own name.
LAYERS = ("sim", "strategies", "analysis", "protolab")
DATA = "protolab_datasets"


def packages() -> list[str]:
    """Every package of the four layers and every folder of datasets/, found in the tree, not listed:
    a new subpackage (or a folder of data files) cannot be left out of the wheel a cluster node
    installs. Namespace discovery, so a folder that lacks an __init__.py is still shipped."""
    found = find_namespace_packages(
        include=[p for name in LAYERS for p in (name, f"{name}.*")], exclude=["*.__pycache__"]
    )
    data = find_namespace_packages(where="datasets", exclude=["__pycache__", "*.__pycache__"])
    return sorted(found) + [DATA, *(f"{DATA}.{p}" for p in sorted(data))]


extensions = [
    Extension(
        "sim.engine._core",
        ["sim/engine/_core.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._explain",
        ["strategies/_explain.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._bots",
        ["strategies/_bots.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._ismcts",
        ["strategies/_ismcts.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._features",
        ["strategies/_features.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._learned",
        ["strategies/_learned.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._qlearned",
        ["strategies/_qlearned.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
    Extension(
        "strategies._draft",
        ["strategies/_draft.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
]

setup(
    packages=packages(),
    package_dir={"protolab_datasets": "datasets"},
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
        annotate=False,
        nthreads=JOBS,
    ),
    options={"build_ext": {"parallel": JOBS}},
)
