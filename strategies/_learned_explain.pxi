# Why each move (included by _learned.pyx): the learned player's weighing told to strategies/_explain.pyx.
# learned_action tells it through Settings.said, which is NULL in play (one test of a pointer per decision).

cdef void tell_weighing(Explanation* out, const Settings* s, const int32_t* cand, const double* total,
                        const uint8_t* allowed, const uint8_t* played, int n, bint final) noexcept nogil:
    """The candidates' model values into out: before the opponent's reply is weighed (final False:
    `first`, each candidate's value at the end of this turn) and when the choice is made (final:
    `score`, the value the choice compared: after the reply for the `reply` best, -1 for the rest).
    A candidate pruned (prune=K; not in `played`) was not played out: count 0, values -1."""
    cdef int i
    out.n = n
    out.measure = M_MODEL
    for i in range(n):
        out.alt[i].option = cand[i]
        out.alt[i].count = s.sims if played == NULL or played[i] else 0
        out.alt[i].allowed = 1 if allowed == NULL else allowed[i]
        if final:
            out.alt[i].score = total[i]
        else:
            out.alt[i].first = total[i]
            out.alt[i].score = total[i]


cdef double first_value(Settings* s, State* g, int p, int32_t action) noexcept nogil:
    """One action's model value as learned_action's first pass values each candidate (the same
    determinizations, drawn from g's streams as they stand): the mean over `sims` of the line to
    the end of the turn (and `depth` turns more), the default rule answering inside it."""
    cdef State base
    cdef Planner pl
    cdef double total = 0
    cdef int r
    pl.p = p
    pl.turn = g.turn
    for r in range(s.sims):
        planner_copy(g, &base, p)
        clear_force(&pl)
        total += play_line(s, &base, p, action, &pl) / s.sims
    return total


cdef int learned_explain(const void* ctx, State* g, int p, Explanation* out) noexcept nogil:
    """A learned seat's action decision as learned_decide makes it (it is learned_decide, on the
    caller's copy): each candidate's model value and the answers planned for the chosen one; and
    `out.also` valued the same way if it was not a candidate (count 0, score -1)."""
    cdef Settings* s = <Settings*>ctx
    cdef State* before = NULL
    cdef int k
    if out.also >= 0:
        before = <State*>malloc(sizeof(State))
        if before != NULL:
            memcpy(before, g, sizeof(State))
    out.n = 0
    out.nplan = 0
    out.measure = M_MODEL
    s.said = out
    out.chosen = learned_decide(ctx, g, p, D_ACTION)
    s.said = NULL
    if s.plan.turn == g.turn:
        out.nplan = s.plan.n
        for k in range(out.nplan):
            out.plan_kind[k] = s.plan.kind[k]
            out.plan_answer[k] = s.plan.answer[k]
    if before != NULL:
        for k in range(out.n):
            if out.alt[k].option == out.also:
                break
        else:
            if out.n < MAXOPT:
                out.alt[out.n].option = out.also
                out.alt[out.n].count = 0
                out.alt[out.n].allowed = 1
                out.alt[out.n].score = -1
                out.alt[out.n].first = first_value(s, before, p, out.also)
                out.n += 1
        free(before)
    return out.chosen


register_explainer(learned_decide, learned_explain)
