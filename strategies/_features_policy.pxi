# The policy target (included by _features.pyx): the search's preference at the real game's root
# action decisions, one row per root action the search considered.
#
# With `policy` on, the recorder asks each seat's explain function (strategies/_explain.pyx) in place
# of its decision function at the real game's action decisions. ismcts_explain grows the very tree
# ismcts_decide grows (the same streams, the same plan for the turn's choices) and returns the same
# action, and it also tells each root action's visits (tests/strategies/test_policy_target.py checks
# that the games are the same with and without these rows). Each root action is then played to its
# turn's end on one determinized copy from the deciding seat's view (re-dealt from a scratch copy of
# the game, so the real game's counters do not move), the rest of the turn by the default rule, as
# the learned player plays a candidate's line; the row is the seat's features there, the action's
# share of the root's visits and the search's mean result after it for the deciding seat (its score,
# 0 to 1: the search's value of the line, a value target beside the game's outcome).

cdef struct PolicyRows:
    float* rows                 # n x NFEAT
    uint64_t* seed
    int16_t* turn
    int8_t* player
    int32_t* action
    int32_t* visits
    float* share
    float* score
    int32_t n
    int32_t cap


cdef bint resize(void** a, size_t nbytes) noexcept nogil:
    """Grow one buffer to `nbytes` (realloc); False, the buffer left as it was, when memory runs out."""
    cdef void* b = realloc(a[0], nbytes)
    if b == NULL:
        return False
    a[0] = b
    return True


cdef bint grow_policy(PolicyRows* r) noexcept nogil:
    cdef int32_t cap = r.cap * 2 if r.cap > 0 else 8192
    if not (resize(<void**>&r.rows, <size_t>cap * NFEAT * sizeof(float))
            and resize(<void**>&r.seed, <size_t>cap * sizeof(uint64_t))
            and resize(<void**>&r.turn, <size_t>cap * sizeof(int16_t))
            and resize(<void**>&r.player, <size_t>cap * sizeof(int8_t))
            and resize(<void**>&r.action, <size_t>cap * sizeof(int32_t))
            and resize(<void**>&r.visits, <size_t>cap * sizeof(int32_t))
            and resize(<void**>&r.share, <size_t>cap * sizeof(float))
            and resize(<void**>&r.score, <size_t>cap * sizeof(float))):
        return False
    r.cap = cap
    return True


cdef void free_policy(PolicyRows* r) noexcept:
    free(r.rows)
    free(r.seed)
    free(r.turn)
    free(r.player)
    free(r.action)
    free(r.visits)
    free(r.share)
    free(r.score)


cdef int default_line_decide(const void* ctx, State* g, int q, int kind) noexcept nogil:
    """Every decision of a policy row's copy: the default rule (the learned player's line, unforced)."""
    return default_decide(g, q, kind)


cdef bint record_lines(PolicyRows* r, State* g, int p, const Explanation* out, int32_t total) noexcept nogil:
    """One row per root action of `out`: p's features where that action's turn ends on one
    determinized copy of g (from a scratch copy, so g's streams do not move), and its visit share."""
    cdef State scratch
    cdef State base
    cdef State sim
    cdef int i
    copy_for_lookahead(&scratch, g)
    prepare_copy(&scratch, &base, p, seat_stream(p))
    base.decide[0] = default_line_decide
    base.decide[1] = default_line_decide
    base.seat_ctx[0] = NULL
    base.seat_ctx[1] = NULL
    for i in range(out.n):
        if r.n >= r.cap and not grow_policy(r):
            return False
        copy_for_lookahead(&sim, &base)
        sim.forced = out.alt[i].option
        sim.horizon_turn = g.turn
        game_run(&sim)
        features(&sim, p, &r.rows[<size_t>r.n * NFEAT])
        r.seed[r.n] = g.seed
        r.turn[r.n] = g.turn
        r.player[r.n] = p
        r.action[r.n] = out.alt[i].option
        r.visits[r.n] = out.alt[i].count
        r.share[r.n] = <float>(<double>out.alt[i].count / total)
        r.score[r.n] = <float>out.alt[i].score
        r.n += 1
    return True
