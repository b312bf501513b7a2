# Which cards and lines a step may act on (rule 6.3): selectors, destinations, "each" lines.

cdef bint matches(State* g, Frame* fr, const Step* st, int c, int top, int l) noexcept nogil:
    cdef int tl = this_line(g, fr)
    if st.covered == C_UNCOVERED and not top:
        return False
    if st.covered == C_COVERED and top:
        return False
    if st.face == F_UP and not g.face_up[c]:
        return False
    if st.face == F_DOWN and g.face_up[c]:
        return False
    if st.other and c == fr.src:
        return False
    if st.line == L_THIS and l != tl:
        return False
    if st.line == L_OTHER and l == tl:
        return False
    if (st.value_mask or st.value_op != 0xFF) and not value_allowed(g, fr, st, card_value(g, c)):
        return False                   # (most steps have no value selector: no value to work out)
    if st.line == L_THIS_STACK and (l != tl or g.side[c] != g.side[fr.src] or not on_field(g, fr.src)):
        return False
    if st.line == L_THAT and (fr.that < 0 or not on_field(g, fr.that) or l != g.line[fr.that]):
        return False
    if st.line == L_OPP_AHEAD and line_value(g, 1 - fr.ctrl, l) <= line_value(g, fr.ctrl, l):
        return False
    if st.line == L_PROTOCOL and l != protocol_line(g, fr):
        return False
    if st.verb == V_SHIFT and st.to == T_THIS_LINE and l == tl:
        return False
    if st.proto_filter and not protocol_fits(g, fr, st, c):
        return False
    if st.verb == V_GAIN_CONTROL and g.side[c] == decider(fr, st):
        return False                   # already on the decider's side: nothing to gain (6.2)
    if st.verb == V_FLIP and unflippable(g, c):
        return False                   # flipping it would change nothing (6.2)
    if st.verb == V_COPY_MIDDLE:       # only face-up text that is there to copy (10.2, 10.3)
        if not g.face_up[c] or cdef_of(g, c).step_len[BOX_MIDDLE] == 0:
            return False
        if middle_ignored(g, c) or middle_suppressed(g, c):
            return False
    if g.has_deny and denied_target(g, fr, st, c, l):
        return False
    return True

cdef inline bint protocol_fits(State* g, Frame* fr, const Step* st, int c) noexcept nogil:
    """The protocol selector on a field card: this text's protocol (1), another (2) or the named
    one (3); face-up cards only, as a face-down card has no protocol."""
    cdef int pr
    if not g.face_up[c]:
        return False
    pr = cdef_of(g, c).protocol
    if st.proto_filter == 3:
        return pr == st.protocol_id
    return (pr == g.cdefs[fr.defn].protocol) == (st.proto_filter == 1)

cdef bint denied_target(State* g, Frame* fr, const Step* st, int c, int l) noexcept nogil:
    """A restriction forbids the step's decider to act on card c, or (shift) leaves it no line to
    go to: not a legal target (6.2)."""
    cdef int32_t dests[3]
    if field_denied(g, st.verb, decider(fr, st), c, l):
        return True
    return st.verb == V_SHIFT and shift_dests(g, fr, st, c, dests) == 0

cdef int protocol_line(State* g, Frame* fr) noexcept nogil:
    """The line of the controller's protocol of this text's protocol (Unity 1), or -1."""
    cdef int l
    for l in range(3):
        if g.proto[fr.ctrl][l] == g.cdefs[fr.defn].protocol:
            return l
    return -1

cdef int collect(State* g, Frame* fr, const Step* st, int only_line, int32_t* out) noexcept nogil:
    """Cards on the field matching the step's selectors, by side, line and position (public
    order, so the option list never depends on hidden identities)."""
    cdef int n = 0, s, l, i, c, ns, v, best, k
    for s in range(2):
        if st.whose == W_YOU and s != fr.ctrl:
            continue
        if st.whose == W_OPP and s == fr.ctrl:
            continue
        for l in range(3):
            if only_line >= 0 and l != only_line:
                continue
            ns = g.nstack[s][l]
            # most selectors want uncovered cards: only the top of each stack can match
            for i in range(ns - 1 if st.covered == C_UNCOVERED and ns > 0 else 0, ns):
                c = g.stack[s][l][i]
                if matches(g, fr, st, c, i == ns - 1, l):
                    out[n] = c
                    n += 1
    if st.pick != P_NONE and n > 1:
        best = card_value(g, out[0])
        for i in range(1, n):
            v = card_value(g, out[i])
            if (st.pick == P_HIGHEST and v > best) or (st.pick == P_LOWEST and v < best):
                best = v
        k = 0
        for i in range(n):
            if card_value(g, out[i]) == best:
                out[k] = out[i]
                k += 1
        n = k
    return n

cdef int shift_dests(State* g, Frame* fr, const Step* st, int c, int32_t* out) noexcept nogil:
    """Lines card c may be shifted to (always another line of its own side, 6.6)."""
    cdef int n = 0, l, cl = g.line[c], tl = this_line(g, fr)
    for l in range(3):
        if l == cl:
            continue
        if st.to == T_THIS_LINE and l != tl:
            continue
        if st.to == T_OTHER_LINE and l == tl:
            continue
        if st.to == T_TO_OR_FROM and cl != tl and l != tl:
            continue
        if st.to == T_OPP_HIGHEST and not opp_highest(g, fr, l):
            continue
        if denied(g, DN_SHIFT_TO, decider(fr, st), g.side[c], c, l):
            continue
        out[n] = l
        n += 1
    return n

cdef bint opp_highest(State* g, Frame* fr, int l) noexcept nogil:
    """Is l a line where the controller's opponent has their highest total (ties: any)?"""
    cdef int k, o = 1 - fr.ctrl, v = line_value(g, o, l)
    for k in range(3):
        if line_value(g, o, k) > v:
            return False
    return True

cdef int choose(State* g, int player, int kind, int32_t* items, int n) noexcept nogil:
    """Offer these items (cards or lines) as the options of one decision."""
    cdef int i
    for i in range(n):
        g.opts[i] = items[i]
    g.nopts = n
    return ask(g, player, kind)

cdef int deck_matches(State* g, Frame* fr, const Step* st, int p, int32_t* out) noexcept nogil:
    """Cards of p's (revealed) deck a "draw 1 card with ..." step may take, in deck order."""
    cdef int i, c, n = 0
    for i in range(g.ndeck[p] - 1, -1, -1):
        c = g.deck[p][i]
        if card_fits(g, fr, st, c):
            out[n] = c
            n += 1
    return n

cdef bint value_allowed(State* g, Frame* fr, const Step* st, int v) noexcept nogil:
    """The step's value selectors: a list of values, or a comparison with an amount."""
    if st.value_mask and not ((st.value_mask >> v) & 1):
        return False
    return st.value_op == 0xFF or compare(v, st.value_op, amount_of(g, fr, st, st.value_expr, 0, fr.ctrl))

cdef bint card_fits(State* g, Frame* fr, const Step* st, int c) noexcept nogil:
    """Value and protocol filters for a card off the field (its printed value and protocol)."""
    if not value_allowed(g, fr, st, cdef_of(g, c).value):
        return False
    if st.proto_filter == 1 and cdef_of(g, c).protocol != g.cdefs[fr.defn].protocol:
        return False
    if st.proto_filter == 2 and cdef_of(g, c).protocol == g.cdefs[fr.defn].protocol:
        return False
    if st.proto_filter == 3 and cdef_of(g, c).protocol != st.protocol_id:
        return False
    return True

cdef int each_lines(State* g, Frame* fr, const Step* st, int32_t* lines) noexcept nogil:
    """The lines an "in each line" step notes before it starts (6.4)."""
    cdef int nl = 0, l, tl = this_line(g, fr)
    for l in range(3):
        if st.each == E_OTHER_LINE and l == tl:
            continue
        if st.each == E_LINE_WITH_YOUR_CARD and g.nstack[fr.ctrl][l] == 0:
            continue
        if st.each == E_LINE_WITH_FACEDOWN and not line_has_facedown(g, l):
            continue
        lines[nl] = l
        nl += 1
    return nl

cdef int lines_with_targets(State* g, Frame* fr, const Step* st, int32_t* lines, int n) noexcept nogil:
    """Keep the noted lines that still hold a card the step could act on."""
    cdef int32_t cand[MAXCARDS]
    cdef int i, k = 0
    for i in range(n):
        if collect(g, fr, st, lines[i], cand) > 0:
            lines[k] = lines[i]
            k += 1
    return k

cdef inline int drop_line(int32_t* lines, int n, int l) noexcept nogil:
    cdef int i, k = 0
    for i in range(n):
        if lines[i] != l:
            lines[k] = lines[i]
            k += 1
    return k

cdef int quantity(State* g, Frame* fr, const Step* q) noexcept nogil:
    """What a quantity record counts (docs/cards.md, Quantities), worked out when the step
    resolves: field cards by the field verbs' own selectors and matcher, the cards of a hand,
    trash or deck, lines, or protocols. Sides are the text's player's (`whose`)."""
    cdef int32_t scratch[MAXCARDS]
    cdef int s, l, n = 0, tl
    if q.of == Q_CARDS:
        return collect(g, fr, q, -1, scratch)     # the protocol selector too (matches)
    if q.of == Q_LINES:
        tl = this_line(g, fr)
        for l in range(3):
            if not ((q.line == L_THIS and l != tl) or (q.line == L_OTHER and l == tl)):
                n += 1
        return n
    for s in range(2):
        if (q.whose == W_YOU and s != fr.ctrl) or (q.whose == W_OPP and s == fr.ctrl):
            continue
        if q.of == Q_HAND:
            n += g.nhand[s]
        elif q.of == Q_TRASH:
            n += g.ntrash[s]
        elif q.of == Q_DECK:
            n += g.ndeck[s]
        elif q.of == Q_PROTOCOLS:
            n += 3
        else:
            for l in range(3):
                n += g.compiled[s][l] != 0
    return n

cdef inline int step_n(State* g, Frame* fr, const Step* st) noexcept nogil:
    """A counted step's number: `n`, `n` for each thing its quantity counts (`per`), or as many
    as its `count` quantity counts (the amount `count`: "cards equal to the number of ...")."""
    if st.per >= 0:
        return st.n * quantity(g, fr, &g.steps[st.per])
    if st.count_kind == CK_COUNTED:
        return quantity(g, fr, &g.steps[st.count])
    return st.n

cdef inline int amount_of(State* g, Frame* fr, const Step* st, int kind, int n, int who) noexcept nogil:
    """An amount a step compares (`if`, `value_gt`/`value_lt`): its `count` quantity or amount()."""
    if kind == CK_COUNTED:
        return quantity(g, fr, &g.steps[st.count])
    return amount(g, fr, kind, n, who)
