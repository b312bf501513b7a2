# cython: language_level=3
"""The learned player's inputs (strategies/_features.pyx): one feature vector of a position from
one seat's view, built only from what that seat may see. Shared by the player (_learned.pyx) and
the trainer's example generator (strategies/learned.py)."""

from sim.engine._core cimport State
from strategies._declared cimport NFEAT     # len(FEATURES) (strategies/declared.py)

cdef void features(State* g, int p, float* out) noexcept nogil
