# cython: language_level=3
"""What other bot extensions (strategies/_ismcts.pyx, strategies/_learned.pyx) share from _bots.pyx:
the lookahead copy, the candidate actions, the documented rule policy for choices inside effects
and the loop avoidance's memory. The determinization itself, the random streams and the option
encoding are the engine's (sim/engine/_core.pxd, rng.pxd, options.pxd)."""

from libc.stdint cimport int32_t, uint8_t, uint64_t
from sim.engine._core cimport State, RecentActions, bot_below, seat_stream

cdef void prepare_copy(State* g, State* base, int p, int stream) noexcept nogil
cdef int heuristic(State* g, int p, int kind) noexcept nogil
cdef int candidate_actions(State* g, int32_t* out) noexcept nogil
cdef int default_decide(State* g, int p, int kind) noexcept nogil
cdef int default_choice(State* g, int p, int kind) noexcept nogil
cdef uint64_t field_hash(State* g, int p) noexcept nogil
cdef uint64_t seen_hash(State* g, int p, uint64_t field) noexcept nogil
cdef const uint8_t* allowed_actions(const RecentActions* r, uint64_t seen, const int32_t* cand, int n,
                                    uint8_t* flags) noexcept nogil
cdef void note_turn_of(State* g, int p, uint64_t field) noexcept nogil
cdef void remember_action(RecentActions* r, uint64_t seen, int32_t action) noexcept nogil


cdef inline bint takes_lead(State* g, int p, double score, double* best, int* ties) noexcept nogil:
    """One step of an argmax with fair ties: whether score takes the lead, above best (a new best) or
    equal to it and drawn from p's stream (each of k tied candidates kept with chance 1/k)."""
    if score > best[0]:
        best[0] = score
        ties[0] = 1
        return True
    if score == best[0]:
        ties[0] += 1
        return bot_below(g, seat_stream(p), ties[0]) == 0
    return False
