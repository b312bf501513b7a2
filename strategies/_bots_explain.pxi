# Why each move (included by _bots.pyx): what greedy and search weighed at an action decision.

# -- why each move (replays only: strategies/_explain.pyx) ---------------------------------------

cdef int said(const Weighing* w, Explanation* out, int measure, int count) noexcept nogil:
    """w's candidates into out (a lone candidate, never weighed: score 0, count 0)."""
    cdef int i
    out.n = w.n
    out.chosen = w.cand[w.best]
    out.measure = measure
    out.nplan = 0
    for i in range(w.n):
        out.alt[i].option = w.cand[i]
        out.alt[i].score = w.score[i] if w.n > 1 else 0
        out.alt[i].first = out.alt[i].score
        out.alt[i].count = count if w.n > 1 else 0
        out.alt[i].allowed = w.allowed[i]
    return out.chosen


cdef int greedy_explain(const void* ctx, State* g, int p, Explanation* out) noexcept nogil:
    """A greedy seat's action decision as greedy_decide weighs it: each candidate's one-ply
    evaluation."""
    cdef Weighing w
    greedy_weigh(g, p, <const Products*>ctx, &w)
    return said(&w, out, M_EVALUATION, 1)


cdef int search_explain(const void* ctx, State* g, int p, Explanation* out) noexcept nogil:
    """A search seat's action decision as search_decide weighs it: each candidate's mean
    evaluation over its determinizations."""
    cdef const SearchSettings* sp = <const SearchSettings*>ctx
    cdef Weighing w
    cdef int i, rounds
    search_weigh(g, p, sp, &w)
    rounds = search_rounds(sp, w.n)
    for i in range(w.n):
        w.score[i] = w.score[i] / rounds
    return said(&w, out, M_MEAN_EVALUATION, rounds)


register_explainer(greedy_decide, greedy_explain)
register_explainer(search_decide, search_explain)
