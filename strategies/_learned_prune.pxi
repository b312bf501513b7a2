# The learned player's pruning (`prune=K`, included by _learned.pyx): the action-value network
# (strategies/_qlearned.pyx) ranks the candidates at the decision with one pass each, the position's
# part of its first layer made once, and only the K best are played out and scored by the value model.

from strategies._declared cimport NACT, MAXU
from strategies._qlearned cimport action_features, first_layer_state, action_logit, fill_qnet


cdef const uint8_t* prune_candidates(const Settings* s, State* g, int p, const int32_t* cand, int n,
                                     const uint8_t* allowed, uint8_t* kept) noexcept nogil:
    """`allowed` narrowed to the `prune` candidates of the highest action-value logits (in kept; ties:
    the earlier candidate, so no draw from the seat's stream), or `allowed` itself when pruning is off
    or no more than `prune` candidates are allowed."""
    cdef float x[NFEAT]
    cdef float h0[MAXU]
    cdef float a[NACT]
    cdef double q[MAXOPT]
    cdef int i, k, order, m = 0
    if s.prune <= 0 or s.qnet == NULL:
        return allowed
    for i in range(n):
        if allowed == NULL or allowed[i]:
            m += 1
    if m <= s.prune:
        return allowed
    features(g, p, x)
    first_layer_state(s.qnet, x, h0)
    for i in range(n):
        kept[i] = 0
        q[i] = 0
        if allowed == NULL or allowed[i]:
            action_features(g, p, cand[i], a)
            q[i] = action_logit(s.qnet, h0, a)
    for order in range(s.prune):
        k = -1
        for i in range(n):
            if (allowed == NULL or allowed[i]) and not kept[i] and (k < 0 or q[i] > q[k]):
                k = i
        kept[k] = 1
    return kept


cdef void count_played(Settings* s, const uint8_t* allowed, int n) noexcept nogil:
    """The counts of candidates played out (Learned.playout_counts): this decision's added."""
    cdef int i, m = 0
    for i in range(n):
        if allowed == NULL or allowed[i]:
            m += 1
    s.weighed += 1
    s.played += m
    if m > s.widest:
        s.widest = m
