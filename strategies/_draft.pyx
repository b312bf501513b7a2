# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The seats' own drafts at C level, installed as the engine's draft hook (SeatConfig.set_draft_hook)
with their tables as its context: the table draft (TableDraft: the available protocol with the
highest score) and the fitted draft (docs/strategies.md, "Drafts"): at each pick, the protocol that
maximises the value of the seat's final trio against the opponent's likely trio, from a table of
trio strengths and protocol-vs-protocol counter terms (strategies/draft.py reads it).

    value(T, U) = strength(T) - strength(U) + sum over a in T, b in U of net[a][b]

Honest: it reads only the picks so far (public) and the protocols still available. Deterministic:
ties go to the first available protocol; with a temperature it samples from the seat's own random
stream, so a seed still gives one draft.

Styles:
    full     every pick: the opponent's likely trio is the strongest it can still complete (its
             known picks plus the best of what is left after this pick); the seat's own trio is
             its best reply to that
    greedy   every pick: the strongest trio the seat can still complete (counters ignored)
    counter  greedy, except the seat's last pick, which is the best reply to the opponent's
             known (or likely) trio
"""

from libc.math cimport exp
from libc.stdint cimport uint64_t
from sim.engine._core cimport State, SeatConfig, MAXPROTO, rng_next, seat_stream
from sim.engine.rng cimport word_unit

import numpy as np

cdef enum:
    S_FULL = 0
    S_GREEDY = 1
    S_COUNTER = 2
    MAXP = 64

STYLES = {"full": S_FULL, "greedy": S_GREEDY, "counter": S_COUNTER}
cdef double NEG = -1e30


cdef struct Model:
    int n                  # protocols in the pool
    int style
    double temp            # 0: argmax; > 0: softmax over values (in win-rate points) with this temperature
    const float* trio      # n*n*n, strength of the trio a < b < c at a*n*n + b*n + c
    const float* net       # n*n, net[a*n + b]: what holding a is worth against an opponent holding b
    const uint64_t* masks  # every trio as a bit mask of protocol ids, strongest first (ties: by ids)
    const float* strengths # their strengths, in the same order
    int ntrios
    const float* alone     # n: a protocol's mean trio strength, the tie-break between equal values


cdef inline float trio_strength(const Model* m, int a, int b, int c) noexcept nogil:
    cdef int t
    if a > b:
        t = a; a = b; b = t
    if b > c:
        t = b; b = c; c = t
    if a > b:
        t = a; a = b; b = t
    return m.trio[(a * m.n + b) * m.n + c]


cdef inline double reply_score(const Model* m, const int* t, const double* w) noexcept nogil:
    """value(T, U) less the constant -strength(U): strength(T) plus w[x] = sum over b in U of net[x][b]."""
    return trio_strength(m, t[0], t[1], t[2]) + w[t[0]] + w[t[1]] + w[t[2]]


cdef double strongest_completion(const Model* m, int* trio, int have, const int* pool, int npool,
                                 int* best_out) noexcept nogil:
    """The strongest trio holding the first `have` entries of `trio`, the rest from `pool`: the first
    such trio of the strength-sorted list. Writes it to best_out (when not NULL); NEG when none."""
    cdef uint64_t hm = 0, allowed = 0, tm
    cdef int i, k, x
    for i in range(have):
        hm |= (<uint64_t>1) << trio[i]
    allowed = hm
    for i in range(npool):
        allowed |= (<uint64_t>1) << pool[i]
    for i in range(m.ntrios):
        tm = m.masks[i]
        if (tm & hm) == hm and (tm & ~allowed) == 0:
            if best_out != NULL:
                k = 0
                for x in range(have):
                    best_out[x] = trio[x]
                for x in range(m.n):
                    if (tm >> x) & 1 and not (hm >> x) & 1:
                        best_out[have + k] = x
                        k += 1
            return m.strengths[i]
    return NEG


cdef double best_completion(const Model* m, int* trio, int have, const int* pool, int npool,
                            const int* opp, int* best_out) noexcept nogil:
    """The best way to complete `trio` (its first `have` entries set) from `pool`: by strength alone
    when `opp` is NULL, else by value(T, opp) against that complete trio. Writes the trio to best_out
    (when not NULL) and returns its score; NEG when the pool is too small."""
    cdef int i, j, k, x
    cdef double base, best = NEG
    cdef int t[3]
    cdef double w[MAXP]
    if opp == NULL:
        return strongest_completion(m, trio, have, pool, npool, best_out)
    for x in range(m.n):
        w[x] = m.net[x * m.n + opp[0]] + m.net[x * m.n + opp[1]] + m.net[x * m.n + opp[2]]
    base = -trio_strength(m, opp[0], opp[1], opp[2])
    t[0] = trio[0]; t[1] = trio[1]; t[2] = trio[2]
    if have == 3:
        return keep_better(base + reply_score(m, t, w), NEG, t, best_out)
    for i in range(npool):
        t[have] = pool[i]
        if have == 2:
            best = keep_better(base + reply_score(m, t, w), best, t, best_out)
            continue
        for j in range(i + 1, npool):
            t[have + 1] = pool[j]
            if have == 1:
                best = keep_better(base + reply_score(m, t, w), best, t, best_out)
                continue
            for k in range(j + 1, npool):
                t[2] = pool[k]
                best = keep_better(base + reply_score(m, t, w), best, t, best_out)
    return best


cdef inline double keep_better(double s, double best, const int* t, int* best_out) noexcept nogil:
    """The higher of `s` and `best`; when `s` is strictly higher, trio `t` goes to best_out (if set)."""
    if s > best:
        if best_out != NULL:
            best_out[0] = t[0]; best_out[1] = t[1]; best_out[2] = t[2]
        return s
    return best


cdef double reply_value(const Model* m, int* mine, int nm, int* theirs, int no, const int* rest,
                        int nrest) noexcept nogil:
    """The seat's best final trio (from `rest`) against the opponent's likely trio: the strongest one
    the opponent can complete from `rest`; the seat then completes from what that leaves."""
    cdef int u[3]
    cdef int left[MAXP]
    cdef int i, j, nleft = 0, taken
    if best_completion(m, theirs, no, rest, nrest, NULL, u) <= NEG:
        return best_completion(m, mine, nm, rest, nrest, NULL, NULL)
    for i in range(nrest):
        taken = 0
        for j in range(no, 3):
            if u[j] == rest[i]:
                taken = 1
        if not taken:
            left[nleft] = rest[i]
            nleft += 1
    return best_completion(m, mine, nm, left, nleft, u, NULL)


cdef double seat_uniform(State* g, int player) noexcept nogil:
    """A uniform number in [0, 1) from the seat's own stream (the engine's rng_next, _core.pxd)."""
    return word_unit(rng_next(g, seat_stream(player)))


cdef int fitted_pick(const void* ctx, State* g, int player, int kind) noexcept nogil:
    """The engine's draft hook (decisions.pxi, ask): the chosen protocol id among g.opts; ctx: the
    seat's Model."""
    cdef const Model* m = <const Model*>ctx
    cdef int mine[3]
    cdef int theirs[3]
    cdef int rest[MAXP]
    cdef double score[MAXP]
    cdef int nm = 0, no = 0, i, j, nrest, picker, best = 0
    cdef int a = g.first_player
    cdef double total, u
    for i in range(g.ndrafted):
        picker = a if (i == 0 or i == 3 or i == 4) else 1 - a
        if picker == player:
            mine[nm] = g.drafted[i]
            nm += 1
        else:
            theirs[no] = g.drafted[i]
            no += 1
    for i in range(g.nopts):
        mine[nm] = g.opts[i]
        nrest = 0
        for j in range(g.nopts):
            if j != i:
                rest[nrest] = g.opts[j]
                nrest += 1
        if m.style == S_GREEDY or (m.style == S_COUNTER and nm < 2):
            score[i] = best_completion(m, mine, nm + 1, rest, nrest, NULL, NULL)
        else:
            score[i] = reply_value(m, mine, nm + 1, theirs, no, rest, nrest)
        if score[i] > score[best] + 1e-9 or (score[i] >= score[best] - 1e-9
                                             and m.alone[g.opts[i]] > m.alone[g.opts[best]]):
            best = i
    if m.temp <= 0 or g.nopts == 1:
        return g.opts[best]
    total = 0
    for i in range(g.nopts):
        score[i] = exp((score[i] - score[best]) / m.temp)
        total += score[i]
    u = seat_uniform(g, player) * total
    for i in range(g.nopts):
        u -= score[i]
        if u < 0:
            return g.opts[i]
    return g.opts[best]


cdef class FittedDraft:
    """A fitted draft table as C arrays, installed on seats (the seats keep it alive)."""
    cdef Model model
    cdef object trio_arr
    cdef object net_arr
    cdef object masks_arr
    cdef object strengths_arr
    cdef object alone_arr

    def __init__(self, trio, net, str style="full", double temp=0.0):
        n = int(net.shape[0])
        if not 6 <= n <= MAXP or net.shape != (n, n) or trio.shape != (n, n, n):
            raise ValueError(f"expected a table for 6 to {MAXP} protocols")
        if style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}")
        self.trio_arr = np.ascontiguousarray(trio, dtype=np.float32)
        self.net_arr = np.ascontiguousarray(net, dtype=np.float32)
        a, b, c = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij"))
        keep = (a < b) & (b < c)
        a, b, c = a[keep], b[keep], c[keep]
        strength = self.trio_arr[a, b, c]
        order = np.argsort(-strength, kind="stable")          # ties: by ids (the enumeration order)
        one = np.uint64(1)
        self.masks_arr = np.ascontiguousarray((one << a.astype(np.uint64)) | (one << b.astype(np.uint64))
                                              | (one << c.astype(np.uint64)))[order]
        self.strengths_arr = np.ascontiguousarray(strength[order], dtype=np.float32)
        cdef float[:, :, ::1] tv = self.trio_arr
        cdef float[:, ::1] nv = self.net_arr
        cdef uint64_t[::1] mv = self.masks_arr
        cdef float[::1] sv = self.strengths_arr
        self.model.masks = &mv[0]
        self.model.strengths = &sv[0]
        self.model.ntrios = len(order)
        total = np.zeros(n)
        for ids in (a, b, c):
            np.add.at(total, ids, strength)
        self.alone_arr = np.ascontiguousarray(total / max(1, (n - 1) * (n - 2) // 2), dtype=np.float32)
        cdef float[::1] av = self.alone_arr
        self.model.alone = &av[0]
        self.model.n = n
        self.model.style = STYLES[style]
        self.model.temp = temp
        self.model.trio = &tv[0, 0, 0]
        self.model.net = &nv[0, 0]

    def install(self, SeatConfig seat):
        """Draft for this seat with the table (its play stays the seat's strategy)."""
        seat.set_draft_hook(fitted_pick, &self.model, self)


cdef int table_pick(const void* ctx, State* g, int player, int kind) noexcept nogil:
    """Table draft (the engine's draft hook): the available protocol with the highest score, the
    first on ties; ctx: the seat's scores by protocol id."""
    cdef const float* score = <const float*>ctx
    cdef int i, best = 0
    for i in range(1, g.nopts):
        if score[g.opts[i]] > score[g.opts[best]]:
            best = i
    return g.opts[best]


cdef class TableDraft:
    """A draft by a table of scores per protocol id (e.g. win rates from an earlier run)."""
    cdef float score[MAXPROTO]

    def __init__(self, scores):
        cdef int k
        if len(scores) > MAXPROTO:
            raise ValueError(f"at most {MAXPROTO} protocols")
        for k in range(MAXPROTO):
            self.score[k] = scores[k] if k < len(scores) else 0.0

    def install(self, SeatConfig seat):
        """Draft for this seat with the table (its play stays the seat's strategy)."""
        seat.set_draft_hook(table_pick, self.score, self)
