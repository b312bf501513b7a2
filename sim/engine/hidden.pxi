# What a player cannot see, and the honest re-deal of it (determinization). One implementation,
# declared in _core.pxd: the bots (strategies/_bots.pyx, _ismcts.pyx) look ahead on determinized
# copies, and the engine's honesty hook (CoreState.decide_with) re-deals a position the same way.
#
# Hidden from p: the opponent's hand and deck, face-down field cards p does not own, and the order
# of p's own deck. The identities in those slots are sorted into a canonical order before they are
# shuffled, so any arrangement of the hidden information gives the very same re-deal.

cdef inline int16_t identity_key(State* g, int c) noexcept nogil:
    """A card's identity as one sortable number: its definition, then its owner."""
    return g.def_id[c] * 2 + g.owner[c]


cdef int hidden_slots(State* g, int p, int8_t* slots, int16_t* keys) noexcept nogil:
    """The slots whose identities p cannot see, except p's own deck, in public order, with the
    identity each holds: the opponent's hand, the opponent's deck, the face-down field cards p
    does not own."""
    cdef int n = 0, i, c, s, l, o = 1 - p
    for i in range(g.nhand[o]):
        c = g.hand[o][i]
        slots[n] = c; keys[n] = identity_key(g, c); n += 1
    for i in range(g.ndeck[o]):
        c = g.deck[o][i]
        slots[n] = c; keys[n] = identity_key(g, c); n += 1
    for s in range(2):
        for l in range(3):
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                slots[n] = c                   # kept only if hidden (no branch on the card)
                keys[n] = identity_key(g, c)
                n += (g.face_up[c] == 0) & (g.owner[c] != p)
    return n


cdef void deck_keys(State* g, int p, int16_t* keys) noexcept nogil:
    """The identities in p's own deck (p knows what is in it, not in which order); its slots are
    the deck itself."""
    cdef int i
    for i in range(g.ndeck[p]):
        keys[i] = identity_key(g, g.deck[p][i])


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


cdef void redeal_slots(State* dst, const int8_t* slots, int16_t* keys, int n, uint64_t seed, uint64_t* counter,
                       uint64_t key) noexcept nogil:
    """Sort the identities (identity_key) of these slots, shuffle them with the stream (seed, key)
    and deal them back into dst's slots. Fisher-Yates from the top: a slot is dealt as soon as
    the shuffle settles it. The stream's counter is kept in a local while dealing (the stores
    into dst could otherwise alias it) and written back once."""
    cdef int i, j, c
    cdef int16_t t
    cdef uint64_t word_no = counter[0]
    sort_keys(keys, n)
    i = n - 1
    while i > 0:
        j = word_below(stream_word(seed, key, word_no), i + 1)
        word_no += 1
        t = keys[j]; keys[j] = keys[i]
        c = slots[i]
        dst.def_id[c] = t >> 1
        dst.owner[c] = t & 1
        i -= 1
    counter[0] = word_no
    if n > 0:
        c = slots[0]
        dst.def_id[c] = keys[0] >> 1
        dst.owner[c] = keys[0] & 1


cdef void redeal_hidden(State* src, State* dst, int p, uint64_t seed, uint64_t* counter,
                        uint64_t key) noexcept nogil:
    """Re-deal into dst everything p cannot see in src, drawing from the stream (seed, key).
    Both sets of identities are read before any is dealt (dealing writes identities, never the
    zones that list the slots), so src may be dst."""
    cdef int8_t slots[MAXCARDS]
    cdef int16_t keys[MAXCARDS]
    cdef int16_t own_keys[MAXCARDS]
    cdef int n = hidden_slots(src, p, slots, keys)
    deck_keys(src, p, own_keys)
    redeal_slots(dst, slots, keys, n, seed, counter, key)
    redeal_slots(dst, src.deck[p], own_keys, src.ndeck[p], seed, counter, key)


cdef void determinize(State* src, State* dst, int p, int stream) noexcept nogil:
    """Copy src into dst with everything p cannot see re-dealt from the bot's draws on `stream`.
    The copy leaves out the game's scratch tail (copy_for_lookahead): dst is for lookahead runs."""
    copy_for_lookahead(dst, src)
    redeal_hidden(src, dst, p, src.seed, &src.ctr[stream], KEY_BOT + stream)
    # the future is unknown too: the copy's own randomness comes from this bot's stream
    dst.seed = src.seed ^ (<uint64_t>0x5DEECE66D * <uint64_t>(1 + bot_below(src, stream, 1 << 30)))
    dst.ctr[STREAM_GAME] = 0
