# What a player cannot see, and the honest re-deal of it (determinization). One implementation,
# declared in _core.pxd: the bots (strategies/_bots.pyx, _ismcts.pyx) look ahead on determinized
# copies, and the engine's honesty hook (CoreState.decide_with) re-deals a position the same way.
#
# Hidden from p: the opponent's hand and deck, face-down field cards p does not own, and the order
# of p's own deck. The identities in those slots are sorted into a canonical order before they are
# shuffled, so any arrangement of the hidden information gives the very same re-deal.

cdef int hidden_slots(State* g, int p, int8_t* slots) noexcept nogil:
    """The slots whose identities p cannot see, except p's own deck, in public order: the
    opponent's hand, the opponent's deck, the face-down field cards p does not own."""
    cdef int n = 0, i, c, s, l, o = 1 - p
    for i in range(g.nhand[o]):
        slots[n] = g.hand[o][i]; n += 1
    for i in range(g.ndeck[o]):
        slots[n] = g.deck[o][i]; n += 1
    for s in range(2):
        for l in range(3):
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                slots[n] = c                   # kept only if hidden (no branch on the card)
                n += (g.face_up[c] == 0) & (g.owner[c] != p)
    return n


cdef enum:
    RANK_SORT_FROM = 8         # below this many slots an insertion sort is quicker than ranking


cdef void sort_keys(int16_t* keys, int n) noexcept nogil:
    """Sort n <= MAXCARDS keys ascending. Long lists are placed by rank (how many keys sort
    before each one): no data-dependent branch, which is what an insertion sort of shuffled
    keys mostly pays for. Ties are ranked by position, and tied keys are equal, so every
    method gives the very same array."""
    cdef int32_t tagged[MAXCARDS + 4]
    cdef int i, j, r, m
    cdef int32_t t
    cdef int16_t k
    if n < RANK_SORT_FROM:
        for i in range(1, n):
            k = keys[i]
            j = i - 1
            while j >= 0 and keys[j] > k:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = k
        return
    for i in range(n):
        tagged[i] = <int32_t>keys[i] * 64 + i          # unique: the slot index (< 64) breaks ties
    m = (n + 3) & ~3
    for i in range(n, m):
        tagged[i] = 0x7FFFFFFF
    for i in range(n):
        t = tagged[i]
        r = 0
        for j in range(m):
            r += tagged[j] < t
        keys[r] = <int16_t>(t >> 6)


cdef void redeal_slots(State* src, State* dst, int8_t* slots, int n, uint64_t seed, uint64_t* counter,
                       uint64_t key) noexcept nogil:
    """Sort the card identities (definition, owner) of these slots, shuffle them with the stream
    (seed, key), and deal them back into dst (src may be dst: every read comes first)."""
    cdef int16_t defs[MAXCARDS]
    cdef int i, j
    cdef int16_t t
    for i in range(n):
        defs[i] = src.def_id[slots[i]] * 2 + src.owner[slots[i]]
    sort_keys(defs, n)
    i = n - 1
    while i > 0:
        j = word_below(next_word(seed, counter, key), i + 1)
        t = defs[i]; defs[i] = defs[j]; defs[j] = t
        i -= 1
    for i in range(n):
        dst.def_id[slots[i]] = defs[i] >> 1
        dst.owner[slots[i]] = defs[i] & 1


cdef void redeal_hidden(State* src, State* dst, int p, uint64_t seed, uint64_t* counter,
                        uint64_t key) noexcept nogil:
    """Re-deal into dst everything p cannot see in src, drawing from the stream (seed, key)."""
    cdef int8_t slots[MAXCARDS]
    cdef int n = hidden_slots(src, p, slots), i
    redeal_slots(src, dst, slots, n, seed, counter, key)
    n = 0
    for i in range(src.ndeck[p]):
        slots[n] = src.deck[p][i]; n += 1
    redeal_slots(src, dst, slots, n, seed, counter, key)


cdef void determinize(State* src, State* dst, int p, int stream) noexcept nogil:
    """Copy src into dst with everything p cannot see re-dealt from the bot's draws on `stream`.
    The copy leaves out the game's scratch tail (copy_for_lookahead): dst is for lookahead runs."""
    copy_for_lookahead(dst, src)
    redeal_hidden(src, dst, p, src.seed, &src.ctr[stream], KEY_BOT + stream)
    # the future is unknown too: the copy's own randomness comes from this bot's stream
    dst.seed = src.seed ^ (<uint64_t>0x5DEECE66D * <uint64_t>(1 + bot_below(src, stream, 1 << 30)))
    dst.ctr[STREAM_GAME] = 0
