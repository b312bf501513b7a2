# Greedy one-ply (included by _bots.pyx): the candidate actions, each played out on a determinized
# copy and evaluated, and a greedy seat's decisions.

# -- greedy one-ply ---------------------------------------------------------------------------

# DOWN_LINE_BIT[(opt >> PLAY_LINE_SHIFT) & 31]: bit l for a face-down play into line l; 0 for a face-up
# play or the refresh (OPT_REFRESH is bit 4 of the index); filled at import.
cdef uint8_t DOWN_LINE_BIT[32]


def _fill_down_line_bit():
    """DOWN_LINE_BIT from the option helpers: one entry per line, face, side and refresh bit."""
    cdef int i
    cdef int32_t opt
    assert OPT_REFRESH >> PLAY_LINE_SHIFT < 32 and OPT_REFRESH & PLAY_CARD_MASK == 0
    for i in range(32):
        opt = i << PLAY_LINE_SHIFT
        DOWN_LINE_BIT[i] = ((opt != OPT_REFRESH) & (play_face_up(opt) == 0)) << play_line_of(opt)


cdef int candidate_actions(State* g, int32_t* out) noexcept nogil:
    """Action options worth evaluating: face-down plays into one line are all alike for the
    evaluation, so one stands for each line."""
    cdef int i, n = 0, seen_down = 0, opt, line_bit
    for i in range(g.nopts):
        opt = g.opts[i]
        # face-up and face-down options interleave: select, do not branch
        line_bit = DOWN_LINE_BIT[(opt >> PLAY_LINE_SHIFT) & 31]
        out[n] = opt
        n += (seen_down & line_bit) == 0
        seen_down |= line_bit
    return n


cdef inline void decide_all(State* sim, decide_fn_t decide, const void* ctx) noexcept nogil:
    """Both seats of a lookahead copy decided by one policy."""
    sim.decide[0] = decide
    sim.decide[1] = decide
    sim.seat_ctx[0] = ctx
    sim.seat_ctx[1] = ctx


cdef double play_out(State* sim, int p, int32_t opt, const Products* k) noexcept nogil:
    """Play action opt in sim (a copy of a base that finishes turns with the quick policy: see
    greedy_action), finish the turn, evaluate."""
    sim.forced = opt
    sim.horizon_turn = sim.turn
    game_run(sim)
    return evaluate(sim, p, k)


cdef double one_ply(State* base, int p, int32_t opt, const Products* k) noexcept nogil:
    """Play action opt on a copy of base, finish the turn with the quick policy, evaluate."""
    cdef State sim
    copy_for_lookahead(&sim, base)
    return play_out(&sim, p, opt, k)


cdef void prepare_copy(State* g, State* base, int p, int stream) noexcept nogil:
    """A determinized copy of g for p's lookahead, every seat decided by the bots' callbacks."""
    determinize(g, base, p, stream)
    base.strat[0] = ST_EXTERNAL
    base.strat[1] = ST_EXTERNAL
    base.logging = 0
    base.log = NULL
    base.evbuf = NULL
    base.checking = 0
    base.halt = HALT_NONE
    base.script = NULL


# ALL_ALLOWED[i]: 1 for every candidate (a decision without loop avoidance), filled at import.
cdef uint8_t ALL_ALLOWED[MAXOPT]


def _fill_all_allowed():
    """ALL_ALLOWED: every flag 1."""
    cdef int i
    for i in range(MAXOPT):
        ALL_ALLOWED[i] = 1


cdef int weigh_actions(State* g, int p, const Products* k, const int32_t* cand, int n,
                       const uint8_t* allowed, double* score) noexcept nogil:
    """The index of the candidate with the best one-ply evaluation (each one's in score), ties
    broken at random from p's stream, among the allowed ones (one flag per candidate): the
    random draws stay the same whatever is allowed (loop avoidance). n >= 2."""
    cdef State base
    cdef int i, best = 0, ties = 0
    cdef bint better, tie
    cdef double sc, bs = -1e18
    prepare_copy(g, &base, p, seat_stream(p))
    decide_all(&base, quick_decide, DEFAULT)
    for i in range(n):
        if i < n - 1:
            sc = one_ply(&base, p, cand[i], k)
        else:
            sc = play_out(&base, p, cand[i], k)     # the last one may use up the base itself
        score[i] = sc
        # whether a candidate is the new best is data no predictor can guess, and a wrong
        # guess is found out only at the end of the evaluation: select, do not branch
        better = (sc > bs + 1e-9) & allowed[i]
        tie = (sc > bs - 1e-9) & (not better) & allowed[i]
        bs = sc if better else bs
        best = i if better else best
        ties = 1 if better else ties
        if tie:
            ties += 1
            if bot_below(g, seat_stream(p), ties) == 0:
                best = i
    return best


cdef int greedy_action(State* g, int p, const Products* k) noexcept nogil:
    """The candidate action with the best one-ply evaluation (weigh_actions), every candidate
    allowed: a future turn's action in a search rollout."""
    cdef int32_t cand[MAXOPT]
    cdef double score[MAXOPT]
    cdef int n = candidate_actions(g, cand)
    if n == 1:
        return cand[0]
    return cand[weigh_actions(g, p, k, cand, n, ALL_ALLOWED, score)]


cdef struct Weighing:
    # One action decision as a bot weighed it (greedy_weigh, search_weigh): its candidates
    # (candidate_actions), which of them it allows (loop avoidance), their scores and the choice.
    int32_t n
    int32_t best                       # the index of the candidate taken
    const uint8_t* allowed             # one flag per candidate: ALL_ALLOWED or flag
    int32_t cand[MAXOPT]
    uint8_t flag[MAXOPT]
    double score[MAXOPT]               # greedy: its one-ply evaluation; search: its summed evaluations


cdef inline uint64_t view_at_action(State* g, int p) noexcept nogil:
    """p's view at an action decision (seen_hash), having noted the turn (note_turn)."""
    cdef uint64_t field = field_hash(g, p)
    note_turn(g, p, field)
    return seen_hash(g, p, field)


cdef int greedy_weigh(State* g, int p, const Products* k, Weighing* w) noexcept nogil:
    """A greedy seat's action decision, weighed into w: the candidate with the best one-ply
    evaluation among those not yet taken at this view (loop avoidance), remembered there."""
    cdef uint64_t seen = view_at_action(g, p)
    w.n = candidate_actions(g, w.cand)
    w.allowed = allowed_actions(&g.recent[p], seen, w.cand, w.n, w.flag)
    w.best = 0 if w.n == 1 else weigh_actions(g, p, k, w.cand, w.n, w.allowed, w.score)
    remember(&g.recent[p], seen, w.cand[w.best])
    return w.cand[w.best]


cdef int greedy_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A greedy seat's decisions; ctx: its evaluation (Evaluation.products). Its actions avoid
    repeating themselves at a view seen before (loop avoidance)."""
    cdef const Products* k = <const Products*>ctx
    cdef Weighing w
    if kind == D_ACTION:
        return greedy_weigh(g, p, k, &w)
    if g.turn != g.recent[p].turn:
        note_turn(g, p, field_hash(g, p))
    if kind == D_CONTROL_REARRANGE or kind == D_REARRANGE:
        return rearrange_choice(g, p, k)
    if (kind == D_MAY or kind == D_EITHER) and g.recent[p].still >= STALL:
        return g.opts[g.recent[p].still % g.nopts]
    return heuristic(g, p, kind)
