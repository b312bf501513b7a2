# The default policy (included by _bots.pyx): the cheap rule for choices inside effects, the
# rearrangements weighed by the evaluation, and the policies of lookahead copies.

# -- the default policy for choices inside effects ---------------------------------------------

cdef inline int true_value(State* g, int p, int c) noexcept nogil:
    """The value p can know for card c: its own face-down cards are known to p."""
    if g.zone[c] == Z_FIELD and not g.face_up[c] and g.owner[c] == p:
        return g.cdefs[g.def_id[c]].value
    return card_value(g, c)


cdef int heuristic(State* g, int p, int kind) noexcept nogil:
    """Sensible, cheap choices for decisions inside effects (and any decision in a rollout)."""
    cdef int i, best = 0, c, v, mine, style
    cdef int lv[2][3]
    cdef double sc, bs = -1e18
    cdef int n = g.nopts
    if kind == D_MAY:
        return 1
    if kind == D_DRAFT:
        return random_option(g, p)
    if kind == D_EITHER or kind == D_ORDER or kind == D_EACH_LINE:
        return g.opts[0]
    if kind == D_TARGET or kind == D_EACH_CARD:
        style = bot_target(g.cur_verb)         # per verb in sim/cards/vocabulary/verbs.py
        if style == BT_RANDOM:
            return random_option(g, p)
        for i in range(n):
            c = g.opts[i]
            mine = g.side[c] == p
            v = true_value(g, p, c)
            if style == BT_REMOVE:
                sc = -v if mine else v
            elif style == BT_FLIP:
                if g.face_up[c]:
                    sc = -(v - 2) - 1 if mine else v - 2
                else:
                    sc = (g.cdefs[g.def_id[c]].value - 2) if mine else -1
            else:
                sc = 0
            if sc > bs:
                bs = sc
                best = i
        return g.opts[best]
    if kind == D_DISCARD or kind == D_HAND or kind == D_DISCARD_MORE:
        for i in range(n):
            c = g.opts[i]
            if c == OPT_DONE:
                continue
            sc = -g.cdefs[g.def_id[c]].value
            if sc > bs:
                bs = sc
                best = i
        if kind == D_DISCARD_MORE and bs < -1:
            for i in range(n):
                if g.opts[i] == OPT_DONE:
                    return OPT_DONE
        return g.opts[best]
    if kind == D_STATE_NUMBER:
        return likely_value(g, p)
    if kind == D_STATE_PROTOCOL:
        return likely_protocol(g, p)
    if kind == D_COMPILE_LINE:
        for i in range(n):
            sc = line_value(g, 1 - p, g.opts[i])
            if sc > bs:
                bs = sc
                best = i
        return g.opts[best]
    if kind == D_PLAY:
        line_values(g, lv)              # the three lines' values once, not once per option
        for i in range(n):
            c = play_card_of(g.opts[i])
            sc = (g.cdefs[g.def_id[c]].value if play_face_up(g.opts[i]) else 2) * 10
            v = lv[p][play_line_of(g.opts[i])]
            sc -= v if v >= 10 else 0
            if sc > bs:
                bs = sc
                best = i
        return g.opts[best]
    return random_option(g, p)


cdef int likely_value(State* g, int p) noexcept nogil:
    """Luck 0: the value most common among p's own cards not in sight (deck and hand: p knows
    which cards its deck holds, not their order)."""
    cdef int count[7]
    cdef int i, c, v, best = 0
    for v in range(7):
        count[v] = 0
    for i in range(g.ndeck[p]):
        c = g.deck[p][i]
        v = g.cdefs[g.def_id[c]].value
        if 0 <= v <= 6:
            count[v] += 1
    for v in range(7):
        if count[v] > count[best]:
            best = v
    return best


cdef int likely_protocol(State* g, int p) noexcept nogil:
    """Luck 3: the opponent's protocol with the fewest cards in public view (field face-up,
    trash), i.e. the most cards that may still be in their deck."""
    cdef int o = 1 - p, k, l, i, c, s, seen, best = g.proto[o][0], best_seen = 99
    for k in range(3):
        seen = 0
        for i in range(g.ntrash[o]):
            if g.cdefs[g.def_id[g.trash[o][i]]].protocol == g.proto[o][k]:
                seen += 1
        for s in range(2):
            for l in range(3):
                for i in range(g.nstack[s][l]):
                    c = g.stack[s][l][i]
                    if g.face_up[c] and g.cdefs[g.def_id[c]].protocol == g.proto[o][k]:
                        seen += 1
        if seen < best_seen:
            best_seen = seen
            best = g.proto[o][k]
    return best


cdef const Products* DEFAULT         # the default weights' evaluation (rollouts, rest of a turn), set at import


cdef inline int compiled_pattern(State* g, int t) noexcept nogil:
    """Side t's Compiled marks as three bits (line l: bit l), all the evaluation reads of them."""
    return (g.compiled[t][0] != 0) | ((g.compiled[t][1] != 0) << 1) | ((g.compiled[t][2] != 0) << 2)


# PATTERN_AFTER[k][m]: the pattern of Compiled marks m after the engine's permutation k (apply_perm:
# line i takes what was in line PERMS[k][i]), filled at import from the engine's own table.
cdef int8_t PATTERN_AFTER[8][8]


def _fill_pattern_after(perms):
    """PATTERN_AFTER from the engine's permutations (constants()["perms"])."""
    cdef int k, m, i
    for k in range(8):
        for m in range(8):
            PATTERN_AFTER[k][m] = m
    for k, perm in enumerate(perms):
        for m in range(8):
            PATTERN_AFTER[k][m] = sum(((m >> perm[i]) & 1) << i for i in range(3))


cdef int rearrange_choice(State* g, int p, const Products* k) noexcept nogil:
    """Rearrangements are instantaneous: evaluate each with the static evaluation. A rearrangement
    only reorders one side's protocols (and their Compiled marks) over unmoved stacks, so the
    line values and the other side's score do not change, and the side's own score depends only
    on where its Compiled marks land: one side score per distinct pattern of marks (none while
    the side has compiled nothing or everything), worked out from the pattern alone (g is not
    touched)."""
    cdef int lv[2][3]
    cdef int8_t marks[3]
    cdef double base[2]
    cdef double side[2]
    cdef double memo[2][8]
    cdef int pattern[2]
    cdef int known[2]
    cdef int i, best = 0, opt, t, q, l
    cdef double sc, bs = -1e18
    line_values(g, lv)
    for t in range(2):
        base[t] = side_score(g, lv, t, g.compiled[t], k)
        pattern[t] = compiled_pattern(g, t)
        memo[t][pattern[t]] = base[t]
        known[t] = 1 << pattern[t]
    for i in range(g.nopts):
        opt = g.opts[i]
        side[0] = base[0]
        side[1] = base[1]
        if opt != OPT_SKIP:
            t = rearrange_side(opt)
            if pattern[t] != 0 and pattern[t] != 7:      # otherwise every order scores the same
                q = PATTERN_AFTER[rearrange_perm(opt)][pattern[t]]
                if not (known[t] >> q) & 1:
                    for l in range(3):
                        marks[l] = (q >> l) & 1
                    memo[t][q] = side_score(g, lv, t, marks, k)
                    known[t] |= 1 << q
                side[t] = memo[t][q]
        if g.winner == p:
            sc = WIN
        elif g.winner == 1 - p:
            sc = -WIN
        else:
            sc = side[p] - k.w[W_OPPONENT] * side[1 - p]     # as evaluate_with()
        if sc > bs:
            bs = sc
            best = i
    return g.opts[best]


cdef int rollout_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Policy inside lookahead copies (ctx: the evaluation, DEFAULT): the cheap heuristic
    everywhere, greedy one-ply for a future turn's action (search rollouts)."""
    if kind == D_ACTION:
        return greedy_action(g, p, <const Products*>ctx)
    if kind == D_CONTROL_REARRANGE or kind == D_REARRANGE:
        return rearrange_choice(g, p, <const Products*>ctx)
    return heuristic(g, p, kind)


cdef int quick_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Policy for the rest of the turn after a one-ply action (no further lookahead; ctx: the
    evaluation, DEFAULT)."""
    if kind == D_CONTROL_REARRANGE or kind == D_REARRANGE:
        return rearrange_choice(g, p, <const Products*>ctx)
    if kind == D_ACTION:
        return random_option(g, p)
    return heuristic(g, p, kind)
