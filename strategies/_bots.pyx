# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Built-in scripted strategies at C level: greedy one-ply (and its styles) and determinized
search. They plug into the engine as a decision function and its context per seat
(SeatConfig.set_decider; sim/engine/decisions.pxi calls it): greedy's context is its evaluation,
search's its settings (SearchSettings). The engine holds no weight or budget of theirs.

Honesty: a bot never reads the opponent's hand, the identities of the opponent's face-down cards
or any deck order. Lookahead runs on a *determinized* copy: every card the bot cannot see is
re-dealt at random (from the bot's own random stream) among the slots it cannot see, after
sorting those cards into a canonical order, so any permutation of hidden information gives the
very same copy and the very same choice. The re-deal is the engine's (`determinize`, declared in
sim/engine/_core.pxd, sim/engine/hidden.pxi), as are the random streams and the option encoding
(sim/engine/rng.pxd, options.pxd).
"""

from libc.math cimport fabs, floor, ldexp
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from sim.engine._core cimport (
    State, MAXCARDS, MAXPROTO, RecentActions, NRECENT, SeatConfig, decide_fn_t, game_run, line_value, line_values,
    copy_for_lookahead, card_value,
    random_option, determinize, bot_below, seat_stream, MAXOPT, ST_EXTERNAL, HALT_NONE,
    Z_FIELD, Z_HAND, Z_DECK,
    D_ACTION, D_MAY, D_TARGET, D_EACH_CARD, D_LINE, D_DISCARD, D_DISCARD_MORE, D_HAND, D_ORDER,
    D_EACH_LINE, D_EITHER, D_CONTROL_REARRANGE, D_REARRANGE, D_COMPILE_LINE, D_PLAY, D_DRAFT,
    D_STATE_NUMBER, D_STATE_PROTOCOL,
    bot_target, BT_REMOVE, BT_FLIP, BT_RANDOM,
)
from sim.engine._core import constants
from sim.engine.options cimport (
    OPT_DONE, OPT_REFRESH, OPT_SKIP, PLAY_CARD_MASK, PLAY_LINE_SHIFT, play_card_of, play_face_up,
    play_line_of, rearrange_perm, rearrange_side,
)

# -- weights -------------------------------------------------------------------------------------
cdef enum:
    NWEIGHTS = 12        # room for weights (those past the named ones are 0)
    W_COMPILED = 0       # per compiled protocol
    W_VALUE = 1          # per point of value in a line not yet compiled (capped at 10)
    W_MARGIN = 2         # per point of lead over the opponent in a line (capped at +-10)
    W_READY = 3          # a line that can compile next turn (10+ and ahead)
    W_CONTROL = 4        # holding the control component
    W_HAND = 5           # per card in hand (up to 6)
    W_NEAR = 6           # value of the line nearest to compiling (rush)
    W_OPPONENT = 7       # how much the opponent's position counts against ours (disrupt > 1)
    W_DECK = 8           # per card left in deck (tempo of refreshing)

WEIGHT_NAMES = ("w_compiled", "w_value", "w_margin", "w_ready", "w_control", "w_hand", "w_near",
                "w_opponent", "w_deck")

cdef double WIN = 1.0e6


# -- the evaluation ------------------------------------------------------------------------------
# Every term of the evaluation is a float weight times a small integer. The products of a seat's
# weights are worked out once, when the seat is configured (Evaluation), exactly as the expressions
# below would compute them (float products, widened to double), so that the evaluation only looks
# them up and adds them in the same order: every score stays bit-identical.

cdef enum:
    CAP = 10             # the caps on a line's value and on its lead
    MAX_SHIFT = 30       # the finest unit tried for exact sums: 2 ** -MAX_SHIFT
    EXACT_BOUND = 1 << 20    # |a product| and |w_opponent| in units: every float sum stays exact
    INT_BOUND = 1 << 26      # |a scaled entry| in units: the integer sum fits in 32 bits
    NLINE = 32           # line values -CAP .. NLINE - CAP - 1 have whole-line entries (a power of 2)

cdef struct Units:
    # The parts of the exact evaluation (exact_units()) that are not per line, in whole units:
    # p's terms scaled by 2 ** f, the opponent's by -w_opponent * 2 ** f.
    int32_t base                        # both sides' compiled_near for no compiled line
    int32_t control[2][2]               # [0: p, 1: opponent][holding it]
    int32_t hand[2][7]                  # [side][cards in hand, capped at 6]
    int32_t deck[2][MAXCARDS + 1]       # [side][cards in deck]

cdef struct Products:
    float w[NWEIGHTS]                  # the weights
    double value[2 * CAP + 1]          # w_value * reach, reach from -CAP to CAP (index reach + CAP)
    double ready                       # w_ready
    double margin[2 * CAP + 1]         # w_margin * lead, lead from -CAP to CAP (index lead + CAP)
    double compiled_near[4][CAP + 1]   # w_compiled * compiled lines + w_near * nearest reach (a float sum)
    double control[2]                  # w_control * holding it
    double hand[7]                     # w_hand * cards in hand (capped at 6)
    double deck[MAXCARDS + 1]          # w_deck * cards in deck
    const int32_t* lines               # the exact evaluation's line entries (exact_units()), or NULL
    double unit                        # the value of one unit
    Units units

cdef void fill_products(Products* k, const float* w) noexcept nogil:
    """The products of weights w, each from the same float expression the evaluation used to
    compute per term."""
    cdef int i, n, near
    cdef float f
    memcpy(k.w, w, sizeof(k.w))
    for i in range(2 * CAP + 1):
        f = i - CAP
        k.value[i] = w[W_VALUE] * f
        k.margin[i] = w[W_MARGIN] * f
    k.ready = w[W_READY]
    for n in range(4):
        for near in range(CAP + 1):
            k.compiled_near[n][near] = w[W_COMPILED] * n + w[W_NEAR] * near
    for i in range(2):
        k.control[i] = w[W_CONTROL] * i
    for i in range(7):
        f = i
        k.hand[i] = w[W_HAND] * f
    for i in range(MAXCARDS + 1):
        k.deck[i] = w[W_DECK] * i
    k.lines = NULL                     # until exact_units() finds the sums exact


# -- exact evaluation in whole units --------------------------------------------------------------
# When every product above is a whole multiple of 2 ** -shift (and small), every float sum of the
# evaluation is exact, so its order does not matter: the score is the exact sum of the products,
# which integers compute with far fewer operations (one entry per line holds all of both sides'
# terms for that line) and give back to the last bit.

cdef bint in_units(const double* xs, int n, double scale) noexcept nogil:
    """Whether each of xs times scale is a whole number of magnitude at most EXACT_BOUND."""
    cdef int i
    cdef double y
    for i in range(n):
        y = xs[i] * scale
        if not (y == floor(y) and fabs(y) <= EXACT_BOUND):
            return False
    return True


cdef bint products_in_units(const Products* k, double scale) noexcept nogil:
    """in_units() for every product of k."""
    return (in_units(k.value, 2 * CAP + 1, scale) and in_units(&k.ready, 1, scale)
            and in_units(k.margin, 2 * CAP + 1, scale) and in_units(&k.compiled_near[0][0], 4 * (CAP + 1), scale)
            and in_units(k.control, 2, scale) and in_units(k.hand, 7, scale)
            and in_units(k.deck, MAXCARDS + 1, scale))


cdef int products_shift(const Products* k) noexcept nogil:
    """The smallest shift making every product of k whole in units of 2 ** -shift; -1 if none
    up to MAX_SHIFT."""
    cdef int e
    for e in range(MAX_SHIFT + 1):
        if products_in_units(k, ldexp(1.0, e)):
            return e
    return -1


cdef int weight_shift(double w) noexcept nogil:
    """The smallest shift making w whole in units of 2 ** -shift; -1 if none up to MAX_SHIFT."""
    cdef int e
    for e in range(MAX_SHIFT + 1):
        if in_units(&w, 1, ldexp(1.0, e)):
            return e
    return -1


cdef bint set_units(int32_t* out, int64_t units) noexcept nogil:
    """out = units, if it is within INT_BOUND (whether it is)."""
    out[0] = <int32_t>units
    return -INT_BOUND <= units <= INT_BOUND


cdef bint near_free(const Products* k, double s) noexcept nogil:
    """Whether compiled_near grows by the same step per compiled line whatever the nearest reach
    (w_near 0): the compiled term then splits over the lines."""
    cdef int n, near
    cdef int64_t first = <int64_t>(k.compiled_near[0][0] * s)
    cdef int64_t step = <int64_t>(k.compiled_near[1][0] * s) - first
    for n in range(4):
        for near in range(CAP + 1):
            if <int64_t>(k.compiled_near[n][near] * s) != first + n * step:
                return False
    return True


cdef int64_t side_line_units(const Products* k, double s, int open_line, int v, int ov) noexcept nogil:
    """One side's terms for a line (value v, the other side's ov) in whole units: value, ready,
    margin, and its step of compiled_near if the line is compiled."""
    cdef int capped = v if v < CAP else CAP
    cdef int lead = v - ov
    cdef int64_t units
    lead = CAP if lead > CAP else lead
    lead = -CAP if lead < -CAP else lead
    units = <int64_t>(k.value[capped * open_line + CAP] * s) + <int64_t>(k.margin[lead + CAP] * s)
    if open_line and v >= CAP and v > ov:
        units += <int64_t>(k.ready * s)
    if not open_line:
        units += <int64_t>(k.compiled_near[1][0] * s) - <int64_t>(k.compiled_near[0][0] * s)
    return units


cdef bint exact_units(Products* k, int32_t lines[4][NLINE][NLINE]) noexcept nogil:
    """Fill lines, k.units and k.unit and point k.lines at lines if the weights make the
    evaluation's float sums exact and its compiled term splits over the lines (near_free): the
    score is then the sum of one entry per line (both sides' terms) and a few per side. p's terms
    are scaled by 2 ** f, the opponent's by -w_opponent * 2 ** f, f the shift that makes
    w_opponent whole."""
    cdef int e = products_shift(k), f = weight_shift(k.w[W_OPPONENT]), opens, v, ov, i, t
    cdef int64_t scale[2]
    cdef double s
    cdef bint ok = True
    k.lines = NULL
    if e < 0 or f < 0:
        return False
    s = ldexp(1.0, e)
    if not near_free(k, s):
        return False
    scale[0] = <int64_t>1 << f
    scale[1] = -<int64_t>(k.w[W_OPPONENT] * ldexp(1.0, f))
    k.unit = ldexp(1.0, -(e + f))
    for opens in range(4):              # p's line open: bit 1; the opponent's: bit 0
        for v in range(-CAP, NLINE - CAP):
            for ov in range(-CAP, NLINE - CAP):
                ok &= set_units(&lines[opens][v + CAP][ov + CAP],
                                side_line_units(k, s, opens >> 1, v, ov) * scale[0]
                                + side_line_units(k, s, opens & 1, ov, v) * scale[1])
    ok &= set_units(&k.units.base, <int64_t>(k.compiled_near[0][0] * s) * (scale[0] + scale[1]))
    for t in range(2):
        for i in range(2):
            ok &= set_units(&k.units.control[t][i], <int64_t>(k.control[i] * s) * scale[t])
        for i in range(7):
            ok &= set_units(&k.units.hand[t][i], <int64_t>(k.hand[i] * s) * scale[t])
        for i in range(MAXCARDS + 1):
            ok &= set_units(&k.units.deck[t][i], <int64_t>(k.deck[i] * s) * scale[t])
    if ok:
        k.lines = &lines[0][0][0]
    return ok


cdef inline bint lines_in_units(int lv[2][3]) noexcept nogil:
    """Whether every line value has a whole-line entry (-CAP .. NLINE - CAP - 1): one test."""
    return <unsigned int>((lv[0][0] + CAP) | (lv[0][1] + CAP) | (lv[0][2] + CAP)
                      | (lv[1][0] + CAP) | (lv[1][1] + CAP) | (lv[1][2] + CAP)) < NLINE


cdef inline double exact_score(State* g, int lv[2][3], int p, const Products* k) noexcept nogil:
    """evaluate_with() for weights with exact sums (k.lines) and line values with entries
    (lines_in_units): the same score to the last bit, as a sum of whole units, one entry per
    line for both sides."""
    cdef int o = 1 - p, l, opens
    cdef int32_t total = k.units.base
    cdef const Units* u = &k.units
    for l in range(3):
        opens = (g.compiled[p][l] == 0) * 2 + (g.compiled[o][l] == 0)
        total += k.lines[(opens * NLINE + lv[p][l] + CAP) * NLINE + lv[o][l] + CAP]
    total += u.control[0][g.control == p] + u.control[1][g.control == o]
    total += u.hand[0][g.nhand[p] if g.nhand[p] < 6 else 6] + u.hand[1][g.nhand[o] if g.nhand[o] < 6 else 6]
    total += u.deck[0][g.ndeck[p]] + u.deck[1][g.ndeck[o]]
    return <double>total * k.unit


cdef class Evaluation:
    """A weight set's evaluation, worked out once: its products and, when its float sums are exact,
    the whole-unit line entries. A greedy seat's context is its products (SeatConfig.set_decider
    keeps the object alive); a search seat's settings point at them."""
    cdef Products products
    cdef int32_t lines[4][NLINE][NLINE]

    def __cinit__(self, weights: tuple | list):
        cdef float w[NWEIGHTS]
        cdef int i
        for i in range(NWEIGHTS):
            w[i] = weights[i] if i < len(weights) else 0.0      # weights past the named ones: 0
        fill_products(&self.products, w)
        exact_units(&self.products, self.lines)


cdef inline double side_score(State* g, int lv[2][3], int p, const int8_t* marks,
                              const Products* k) noexcept nogil:
    """One side's part of the evaluation, from the six line values and the side's Compiled marks
    (line l: marks[l]; g.compiled[p] but for a rearrangement being weighed). Whether a line is
    compiled and the caps are data the branch predictor cannot guess, so they select operands
    instead of branching: a compiled line adds the product for 0, which leaves the sum exactly as
    it was (the sum starts at +0 and is never -0), so every score is bit-identical to skipping
    the term."""
    cdef int o = 1 - p, l, v, ov, n = 0, near = 0, open_line, capped, reach, lead
    cdef double s = 0
    for l in range(3):
        v = lv[p][l]
        ov = lv[o][l]
        open_line = marks[l] == 0
        n += 1 - open_line
        capped = v if v < CAP else CAP
        reach = capped * open_line
        s += k.w[W_VALUE] * <float>reach            # a line value has no lower bound: no table
        if open_line & (v >= CAP) & (v > ov):
            s += k.ready
        near = reach if reach > near else near
        lead = v - ov
        lead = CAP if lead > CAP else lead
        lead = -CAP if lead < -CAP else lead
        s += k.margin[lead + CAP]
    s += k.compiled_near[n][near]
    s += k.control[g.control == p]
    s += k.hand[g.nhand[p] if g.nhand[p] < 6 else 6]
    s += k.deck[g.ndeck[p]]
    return s


cdef double float_score(State* g, int lv[2][3], int p, const Products* k) noexcept nogil:
    """evaluate_with() from the float products, in the documented order (weights whose sums are
    not exact, or line values outside the whole-line entries): out of line, so that the exact
    evaluation is compiled on its own in the candidate loop."""
    return (side_score(g, lv, p, g.compiled[p], k)
            - k.w[W_OPPONENT] * side_score(g, lv, 1 - p, g.compiled[1 - p], k))


cdef inline double evaluate_with(State* g, int lv[2][3], int p, const Products* k) noexcept nogil:
    """evaluate() with the line values already fetched (they are the same for every order of
    the protocols: rearranging moves no card)."""
    if g.winner == p:
        return WIN
    if g.winner == 1 - p:
        return -WIN
    if k.lines != NULL and lines_in_units(lv):
        return exact_score(g, lv, p, k)
    return float_score(g, lv, p, k)


cdef inline double evaluate(State* g, int p, const Products* k) noexcept nogil:
    """The documented evaluation of a position for player p (docs/strategies.md)."""
    cdef int lv[2][3]
    if g.winner == p:
        return WIN
    if g.winner == 1 - p:
        return -WIN
    line_values(g, lv)
    return evaluate_with(g, lv, p, k)


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
        style = bot_target(g.cur_verb)         # per verb in sim/cards/vocabulary.py
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
        return greedy_action(g, p, <const Products*>ctx, NULL)
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


cdef int greedy_action(State* g, int p, const Products* k, const uint8_t* allowed) noexcept nogil:
    """The candidate action with the best one-ply evaluation, ties broken at random from p's
    stream; with `allowed` (one flag per candidate, candidate_actions' order) only among the
    allowed ones: the random draws stay the same whatever is allowed (loop avoidance)."""
    cdef State base
    cdef int32_t cand[MAXOPT]
    cdef uint8_t every[MAXOPT]
    cdef int n, i, best = 0, ties = 0
    cdef bint better, tie
    cdef double sc, bs = -1e18
    n = candidate_actions(g, cand)
    if n == 1:
        return cand[0]
    if allowed == NULL:
        for i in range(n):
            every[i] = 1
        allowed = every
    prepare_copy(g, &base, p, seat_stream(p))
    decide_all(&base, quick_decide, DEFAULT)
    for i in range(n):
        if i < n - 1:
            sc = one_ply(&base, p, cand[i], k)
        else:
            sc = play_out(&base, p, cand[i], k)     # the last one may use up the base itself
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
    return cand[best]


# -- loop avoidance ----------------------------------------------------------------------------
# Two bots can answer each other's move with the same move forever (Water 3 face-up, Psychic 4
# returns and flips it) until the turn cap. A seat remembers what it saw at its last few action
# decisions (State.recent: a hash of its own view) and the action it took; back at a view it has
# seen, it prefers an action it has not taken there yet, if any is left; and when the field has
# not changed for a few of its turns, it varies its answers to optional steps (STALL). The view
# is only what the seat may see: its own hand and face-down cards, the face-up cards, the
# trashes, the sizes of hands and decks; never the opponent's hand or face-down identities.

cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """A 64-bit finalizer (splitmix64's): every input bit reaches every output bit."""
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t step(uint64_t h, uint64_t x) noexcept nogil:
    """One item more into a running hash (a multiply per item; mix64 finishes the hash)."""
    return (h ^ x) * <uint64_t>0x9E3779B97F4A7C15ULL


# PILE_KEY[d]: a random 64-bit key per card definition (MAXPROTO protocols x 6), filled at import:
# a pile (a hand, a trash) hashes as the sum of its cards' keys, one load and one add a card.
cdef uint64_t PILE_KEY[MAXPROTO * 6]


def _fill_pile_keys():
    cdef int d
    for d in range(MAXPROTO * 6):
        PILE_KEY[d] = mix64(<uint64_t>d + 0x5EED)


cdef inline uint64_t card_seen(State* g, int p, int c) noexcept nogil:
    """What p sees of a field card: its definition and face if p may know it, else only that a
    face-down card lies there."""
    cdef bint known = g.face_up[c] | (g.owner[c] == p)
    return (<uint64_t>(g.def_id[c] + 1) * known) << 2 | (1 + (g.face_up[c] == 0))


cdef uint64_t field_hash(State* g, int p) noexcept nogil:
    """A hash of p's view of the field: protocols, Compiled marks, every stack in order."""
    cdef uint64_t h = <uint64_t>p + 1
    cdef int t, l, i
    for t in range(2):
        for l in range(3):
            h = step(h, <uint64_t>(g.proto[t][l] + 1) << 8 | <uint64_t>g.compiled[t][l] << 4 | 0xF)
            for i in range(g.nstack[t][l]):
                h = step(h, card_seen(g, p, g.stack[t][l][i]))
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


cdef const uint8_t* allowed_actions(State* g, const RecentActions* r, uint64_t seen,
                                    uint8_t* allowed) noexcept nogil:
    """Flag each candidate action (candidate_actions' order) that p has not taken at this view
    within its memory, in `allowed`, and return it; NULL (every candidate) if p has not been at
    this view or has taken every candidate there."""
    cdef int32_t cand[MAXOPT]
    cdef int n, i, j, left = 0
    cdef bint been = False
    for j in range(NRECENT):
        been |= r.seen[j] == seen
    if not been:
        return NULL
    n = candidate_actions(g, cand)
    for i in range(n):
        allowed[i] = 1
        for j in range(NRECENT):
            if r.seen[j] == seen and r.action[j] == cand[i]:
                allowed[i] = 0
        left += allowed[i]
    return allowed if left > 0 else NULL


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


cdef int greedy_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A greedy seat's decisions; ctx: its evaluation (Evaluation.products). Its actions avoid
    repeating themselves at a view seen before (loop avoidance)."""
    cdef const Products* k = <const Products*>ctx
    cdef uint8_t allowed[MAXOPT]
    cdef uint64_t seen, field
    cdef int action
    if kind == D_ACTION:
        field = field_hash(g, p)
        note_turn(g, p, field)
        seen = seen_hash(g, p, field)
        action = greedy_action(g, p, k, allowed_actions(g, &g.recent[p], seen, allowed))
        remember(&g.recent[p], seen, action)
        return action
    if g.turn != g.recent[p].turn:
        note_turn(g, p, field_hash(g, p))
    if kind == D_CONTROL_REARRANGE or kind == D_REARRANGE:
        return rearrange_choice(g, p, k)
    if (kind == D_MAY or kind == D_EITHER) and g.recent[p].still >= STALL:
        return g.opts[g.recent[p].still % g.nopts]
    return heuristic(g, p, kind)


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
    cdef State base, sim
    cdef int32_t cand[MAXOPT]
    cdef double total[MAXOPT]
    cdef uint8_t allowed[MAXOPT]
    cdef const uint8_t* allowed_ok
    cdef uint64_t seen, field
    cdef int n, i, k, best = 0, rounds
    cdef double bs = -1e18
    cdef const SearchSettings* sp = <const SearchSettings*>ctx
    cdef const Products* products = sp.evaluation
    if kind != D_ACTION:
        return greedy_decide(products, g, p, kind)
    n = candidate_actions(g, cand)
    field = field_hash(g, p)
    note_turn(g, p, field)
    seen = seen_hash(g, p, field)
    allowed_ok = allowed_actions(g, &g.recent[p], seen, allowed)
    if n == 1:
        remember(&g.recent[p], seen, cand[0])
        return cand[0]
    rounds = sp.sims // n
    if rounds < 1:
        rounds = 1
    for i in range(n):
        total[i] = 0
    for k in range(rounds):
        prepare_copy(g, &base, p, seat_stream(p))
        for i in range(n):
            copy_for_lookahead(&sim, &base)
            sim.forced = cand[i]
            sim.horizon_turn = base.turn + sp.depth
            decide_all(&sim, rollout_decide, DEFAULT)
            game_run(&sim)
            total[i] += evaluate(&sim, p, products)
    for i in range(n):
        if total[i] > bs and (allowed_ok == NULL or allowed_ok[i]):
            bs = total[i]
            best = i
    remember(&g.recent[p], seen, cand[best])
    return cand[best]


# -- Python-facing configuration ----------------------------------------------------------------

STYLE_WEIGHTS = {
    # w_compiled, w_value, w_margin, w_ready, w_control, w_hand, w_near, w_opponent, w_deck
    "greedy":  (60.0, 1.0, 0.5, 12.0, 4.0, 1.5, 0.0, 1.0, 0.0),
    "rush":    (60.0, 1.5, 0.2, 20.0, 1.0, 1.0, 2.0, 0.6, 0.0),
    "disrupt": (60.0, 0.8, 0.8, 10.0, 3.0, 1.5, 0.0, 1.6, 0.0),
    "control": (60.0, 1.0, 0.6, 12.0, 14.0, 2.0, 0.0, 1.0, 0.0),
    "search":  (60.0, 1.0, 0.5, 12.0, 4.0, 1.5, 0.0, 1.0, 0.0),
}

cdef Evaluation _default_evaluation = Evaluation(STYLE_WEIGHTS["greedy"])
DEFAULT = &_default_evaluation.products

_fill_pattern_after(constants()["perms"])
_fill_down_line_bit()
_fill_pile_keys()


cdef class Search:
    """A search seat's settings (its context), holding its Evaluation alive."""
    cdef SearchSettings settings
    cdef Evaluation evaluation

    def __cinit__(self, Evaluation evaluation, int sims, int depth):
        self.evaluation = evaluation
        self.settings.evaluation = &evaluation.products
        self.settings.sims = sims
        self.settings.depth = depth


def configure(SeatConfig seat, str bot, dict weights, int sims=50, int depth=2):
    """Make `seat` play with a built-in bot: 'greedy', a style ('rush', 'disrupt', 'control')
    or 'search'; weights override the style's defaults by name (w_control=...)."""
    cdef Evaluation evaluation
    cdef Search search
    if bot not in STYLE_WEIGHTS:
        raise ValueError(f"unknown bot {bot!r}")
    base = list(STYLE_WEIGHTS[bot])
    for k, v in weights.items():
        base[WEIGHT_NAMES.index(k)] = float(v)
    evaluation = Evaluation(base)
    if bot == "search":
        search = Search(evaluation, sims, depth)
        seat.set_decider(search_decide, &search.settings, search)
    else:
        seat.set_decider(greedy_decide, &evaluation.products, evaluation)


# -- shared with other bot extensions (strategies/_bots.pxd) ---------------------------------------

cdef int default_decide(State* g, int p, int kind) noexcept nogil:
    """The rollout policy with the default weights (greedy's): for other extensions' lookahead."""
    return rollout_decide(DEFAULT, g, p, kind)


cdef int default_choice(State* g, int p, int kind) noexcept nogil:
    """A greedy seat's answer to a decision that is not an action (the documented rule, the
    rearrangements weighed by the default evaluation, the stalled seat's variation)."""
    return greedy_decide(DEFAULT, g, p, kind)


cdef void note_turn_of(State* g, int p, uint64_t field) noexcept nogil:
    note_turn(g, p, field)


cdef void remember_action(RecentActions* r, uint64_t seen, int32_t action) noexcept nogil:
    remember(r, seen, action)
