# cython: language_level=3
"""What other bot extensions (strategies/_ismcts.pyx) share from _bots.pyx: the honest
determinization, the bot random stream and the documented rule policy for choices inside
effects."""

from sim.engine._core cimport Game

cdef void determinize(Game* src, Game* dst, int p, int stream) noexcept nogil
cdef void prepare_copy(Game* g, Game* base, int p, int stream) noexcept nogil
cdef int heuristic(Game* g, int p, int kind) noexcept nogil
cdef int _below(Game* g, int stream, int n) noexcept nogil
