# Counter-based random numbers: value = mix(seed, stream, counter). Nothing global, nothing
# platform-dependent: the same seed gives the same game on every machine and in every worker.

cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline uint64_t rng_next(Game* g, int stream) noexcept nogil:
    cdef uint64_t c = g.ctr[stream]
    g.ctr[stream] = c + 1
    return mix64(mix64(g.seed * <uint64_t>0x9E3779B97F4A7C15ULL + <uint64_t>(stream + 1)) ^ (c * <uint64_t>0xD6E8FEB86659FD93ULL))

cdef inline int rng_below(Game* g, int stream, int n) noexcept nogil:
    """Uniform integer in [0, n) (multiply-shift on the high 32 bits)."""
    return <int>(((rng_next(g, stream) >> 32) * <uint64_t>n) >> 32)

cdef void shuffle_slots(Game* g, int stream, int8_t* slots, int n) noexcept nogil:
    """Fisher-Yates shuffle of n card slots with one of the game's streams."""
    cdef int i = n - 1, j
    cdef int8_t t
    while i > 0:
        j = rng_below(g, stream, i + 1)
        t = slots[i]
        slots[i] = slots[j]
        slots[j] = t
        i -= 1

cdef inline void shuffle_deck(Game* g, int p) noexcept nogil:
    shuffle_slots(g, 0, g.deck[p], g.ndeck[p])
