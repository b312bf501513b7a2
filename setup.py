"""Build the Cython engine as part of `pip install .` (no manual cythonize step)."""

import os
import sys
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

# The engine's verb and step declarations are generated from the card vocabulary on every build
# (sim/cards/vocabulary.py -> sim/engine/_vocab_*.pxi), so they cannot drift from the loader's.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim.engine.vocab_gen import write_includes  # noqa: E402
from strategies.declared_gen import write_includes as write_player_includes  # noqa: E402

write_includes()
write_player_includes()     # the players' numbers: strategies/declared.py -> strategies/_declared.px[di]

# Python's own CFLAGS ask for debug info, which doubles the engine's compile time (a user's first
# install waits for it) and never changes the machine code; PROTOLAB_DEBUG_INFO=1 keeps it for
# profiling by source line.
FLAGS = ["-O3"] if os.environ.get("PROTOLAB_DEBUG_INFO") else ["-O3", "-g0"]
JOBS = os.cpu_count() or 1     # the modules translate and compile side by side

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
        "strategies._draft",
        ["strategies/_draft.pyx"],
        include_dirs=[numpy.get_include(), "."],
        extra_compile_args=FLAGS,
    ),
]

setup(
    packages=["sim", "sim.engine", "sim.cards", "strategies", "analysis", "protolab", "protolab.commands",
              "protolab.experiment", "protolab_datasets",
              "protolab_datasets.protocols", "protolab_datasets.experiments",
              "protolab_datasets.experiments.variants", "protolab_datasets.readings", "protolab_datasets.drafts",
              "protolab_datasets.models"],
    package_dir={"protolab_datasets": "datasets"},
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
        annotate=False,
        nthreads=JOBS,
    ),
    options={"build_ext": {"parallel": JOBS}},
)
