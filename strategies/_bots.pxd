# cython: language_level=3
"""What other bot extensions (strategies/_ismcts.pyx) share from _bots.pyx: the lookahead copy
and the documented rule policy for choices inside effects. The determinization itself, the random
streams and the option encoding are the engine's (sim/engine/_core.pxd, rng.pxd, options.pxd)."""

from sim.engine._core cimport State

cdef void prepare_copy(State* g, State* base, int p, int stream) noexcept nogil
cdef int heuristic(State* g, int p, int kind) noexcept nogil
