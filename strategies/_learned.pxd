# cython: language_level=3
"""What other bot extensions (strategies/_ismcts.pyx: the guided search) share from _learned.pyx:
the model's network in C and its win probability at a position."""

from libc.stdint cimport int32_t
from sim.engine._core cimport State

cdef enum:
    MAXL = 4             # model.MAX_LAYERS
    MAXU = 64            # model.MAX_UNITS
    MAXIN = 80           # max(NFEAT, MAXU)

cdef struct Mlp:
    int32_t nl
    int32_t nin[MAXL]
    int32_t nout[MAXL]
    int32_t act[MAXL]
    float w[MAXL][MAXU * MAXIN]
    float b[MAXL][MAXU]

cdef double win_probability(const Mlp* m, State* g, int p) noexcept nogil
cdef int fill_mlp(Mlp* m, layers) except -1
