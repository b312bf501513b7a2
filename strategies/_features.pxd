# cython: language_level=3
"""The learned player's inputs (strategies/_features.pyx): one feature vector of a position from
one seat's view, built only from what that seat may see. Shared by the player (_learned.pyx) and
the trainer's example generator (strategies/learned.py)."""

from sim.engine._core cimport State

cdef enum:
    NFEAT = 78             # len(FEATURES); a test checks that they agree

cdef void features(State* g, int p, float* out) noexcept nogil
