# Loop avoidance (included by _bots.pyx): a seat's hash of its own view and its memory of the
# actions it took there. The hash's mixer is the engine's splitmix64 (sim/engine/rng.pxd).

# -- loop avoidance ----------------------------------------------------------------------------
# Two bots can answer each other's move with the same move forever (Water 3 face-up, Psychic 4
# returns and flips it) until the turn cap. A seat remembers what it saw at its last few action
# decisions (State.recent: a hash of its own view) and the action it took; back at a view it has
# seen, it prefers an action it has not taken there yet, if any is left; and when the field has
# not changed for a few of its turns, it varies its answers to optional steps (STALL). The view
# is only what the seat may see: its own hand and face-down cards, the face-up cards, the
# trashes, the sizes of hands and decks; never the opponent's hand or face-down identities.

cdef inline uint64_t step(uint64_t h, uint64_t x) noexcept nogil:
    """One item more into a running hash: a multiply per item by splitmix64's increment (mix64
    finishes the hash)."""
    return times_gamma(h ^ x)


# PILE_KEY[d]: a random 64-bit key per card definition (MAXPROTO protocols x 6), filled at import:
# a pile (a hand, a trash) hashes as the sum of its cards' keys, one load and one add a card.
cdef uint64_t PILE_KEY[MAXPROTO * 6]


def _fill_pile_keys():
    cdef int d
    for d in range(MAXPROTO * 6):
        PILE_KEY[d] = mix64(<uint64_t>d + 0x5EED)


cdef uint64_t field_hash(State* g, int p) noexcept nogil:
    """A hash of p's view of the field: the protocols, Compiled marks and stack heights (three
    words), then every stack's cards in order, each as its definition and face if p may know it,
    else only that a face-down card lies there."""
    cdef uint64_t head[3]
    cdef uint64_t h = <uint64_t>p + 1, known
    cdef const int8_t* stack = &g.stack[0][0][0]
    cdef const int8_t* height = &g.nstack[0][0]
    cdef int k, i, c
    memcpy(head, g.proto, 12)
    memcpy(<char*>head + 12, g.compiled, 6)
    memcpy(<char*>head + 18, g.nstack, 6)
    h = step(step(step(h, head[0]), head[1]), head[2])
    for k in range(6):                  # the six stacks, side by side in State
        for i in range(height[k]):
            c = stack[k * MAXCARDS + i]
            known = g.face_up[c] | (g.owner[c] == p)
            h = step(h, (<uint64_t>(g.def_id[c] + 1) * known) << 1 | <uint64_t>g.face_up[c])
    return mix64(h)


cdef uint64_t seen_hash(State* g, int p, uint64_t field) noexcept nogil:
    """A hash of p's view of the position, from its view of the field (never 0: 0 marks an empty
    slot of the ring). Piles whose order p cannot rely on (its hand, the trashes) are summed, so
    their order is ignored."""
    cdef uint64_t h = step(field, <uint64_t>(g.control + 2)), pile
    cdef int t, i
    for t in range(2):
        h = step(h, <uint64_t>g.nhand[t] << 8 | <uint64_t>g.ndeck[t] << 16 | <uint64_t>g.ntrash[t] << 24)
        pile = 0
        for i in range(g.ntrash[t]):
            pile += PILE_KEY[g.def_id[g.trash[t][i]]]
        h = step(h, pile)
    pile = 0
    for i in range(g.nhand[p]):
        pile += PILE_KEY[g.def_id[g.hand[p][i]]]
    return mix64(step(h, pile)) | 1


cdef inline void note_turn(State* g, int p, uint64_t field) noexcept nogil:
    """At p's first decision of a turn, count how long p has found the field (its hash: field)
    as it was at its previous turn (RecentActions.still)."""
    cdef RecentActions* r = &g.recent[p]
    if g.turn == r.turn:
        return
    r.turn = g.turn
    r.still = r.still + 1 if field == r.field else 0
    r.field = field


cdef const uint8_t* allowed_actions(const RecentActions* r, uint64_t seen, const int32_t* cand, int n,
                                    uint8_t* flags) noexcept nogil:
    """Flag each candidate action that p has not taken at this view within its memory, in
    `flags`, and return them; ALL_ALLOWED if p has not been at this view or has taken every
    candidate there."""
    cdef int i, j, left = 0
    cdef bint been = False
    for j in range(NRECENT):
        been |= r.seen[j] == seen
    if not been:
        return ALL_ALLOWED
    for i in range(n):
        flags[i] = 1
        for j in range(NRECENT):
            if r.seen[j] == seen and r.action[j] == cand[i]:
                flags[i] = 0
        left += flags[i]
    return flags if left > 0 else ALL_ALLOWED


# A seat that has found the field unchanged at this many of its turns in a row is stalled:
# its fixed answers to optional steps and alternatives (yes; the first) take turns instead, since
# answering them the same way is what keeps a field such as Mirror 1 copying Peace 1 (both hands
# discarded every turn) standing still.
cdef enum:
    STALL = 3


cdef inline void remember(RecentActions* r, uint64_t seen, int32_t action) noexcept nogil:
    """Keep the view and the action taken there, over the oldest memory."""
    r.seen[r.next] = seen
    r.action[r.next] = action
    r.next = (r.next + 1) % NRECENT
