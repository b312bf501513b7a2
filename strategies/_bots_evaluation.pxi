# The greedy bots' evaluation of a position (included by _bots.pyx): the weights, their products
# worked out once per seat, the exact whole-unit sums and the documented score.

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
