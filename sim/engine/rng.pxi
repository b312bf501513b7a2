# Shuffles on a game's counter-based streams. The words and the stream draws (rng_next,
# rng_below) are declared once, in rng.pxd and _core.pxd, and shared with the bots.

cdef void shuffle_slots(State* g, int stream, int8_t* slots, int n) noexcept nogil:
    """Fisher-Yates shuffle of n card slots with one of the game's streams."""
    cdef int i = n - 1, j
    cdef int8_t t
    while i > 0:
        j = rng_below(g, stream, i + 1)
        t = slots[i]
        slots[i] = slots[j]
        slots[j] = t
        i -= 1

cdef inline void shuffle_deck(State* g, int p) noexcept nogil:
    shuffle_slots(g, STREAM_GAME, g.deck[p], g.ndeck[p])
