# Determinized search (included by _bots.pyx): flat Monte Carlo over determinizations.

# -- determinized search ---------------------------------------------------------------------

cdef struct SearchSettings:
    const Products* evaluation         # the seat's weights, worked out (an Evaluation the Search keeps)
    int32_t sims                       # simulations per decision
    int32_t depth                      # turns simulated after the decision


cdef int search_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Flat Monte Carlo over determinizations: each candidate action is played on many sampled
    hidden states, followed by `depth` more turns (greedy replies), and scored by the mean
    evaluation; the best mean wins, among the actions not yet taken at this view (loop
    avoidance, as greedy's). ctx: the seat's SearchSettings."""
    cdef const SearchSettings* sp = <const SearchSettings*>ctx
    cdef Weighing w
    if kind != D_ACTION:
        return greedy_decide(sp.evaluation, g, p, kind)
    return search_weigh(g, p, sp, &w)


cdef int search_weigh(State* g, int p, const SearchSettings* sp, Weighing* w) noexcept nogil:
    """A search seat's action decision, weighed into w (score: each candidate's evaluations
    summed over search_rounds() determinizations)."""
    cdef State base, sim
    cdef int i, k, rounds
    cdef double bs = -1e18
    cdef uint64_t seen
    w.n = candidate_actions(g, w.cand)
    seen = view_at_action(g, p)
    w.allowed = allowed_actions(&g.recent[p], seen, w.cand, w.n, w.flag)
    w.best = 0
    if w.n == 1:
        remember(&g.recent[p], seen, w.cand[0])
        return w.cand[0]
    rounds = search_rounds(sp, w.n)
    for i in range(w.n):
        w.score[i] = 0
    for k in range(rounds):
        prepare_copy(g, &base, p, seat_stream(p))
        for i in range(w.n):
            copy_for_lookahead(&sim, &base)
            sim.forced = w.cand[i]
            sim.horizon_turn = base.turn + sp.depth
            decide_all(&sim, rollout_decide, DEFAULT)
            game_run(&sim)
            w.score[i] += evaluate(&sim, p, sp.evaluation)
    for i in range(w.n):
        if w.score[i] > bs and w.allowed[i]:
            bs = w.score[i]
            w.best = i
    remember(&g.recent[p], seen, w.cand[w.best])
    return w.cand[w.best]


cdef inline int search_rounds(const SearchSettings* sp, int n) noexcept nogil:
    """Determinizations per candidate: the budget shared among the n candidates, at least one."""
    return sp.sims // n if sp.sims // n >= 1 else 1
