# Effect resolution: the interpreter of compiled card steps (rules 6 and 7).
#
# Resolution is depth-first (LIFO, 7.1): a primitive that uncovers or flips up a card resolves
# that card's middle text before returning; "after" windows open when a whole step, with all its
# consequences, is done (7.3). A text stops when its card's epoch changes (covered, flipped or
# removed: 7.2); a shift does not change it.

cdef enum:
    GUARD_LIMIT = 200000
    DEPTH_LIMIT = 100          # nested texts: beyond this the players are looping forever
    OPT_DONE = 255
    OPT_SKIP = 99

cdef struct Frame:
    int src          # the card whose text this is ("this card"; for a copy, the copying card)
    int ctrl         # who controls the text: the card's owner, or the copier (9.3, 10.1)
    int box
    int defn         # the card definition the text comes from (a copy's original)
    int home_line    # "this line" if the card is no longer on the field
    uint32_t epoch
    int that         # "that card": the last card a card-step of this text acted on
    int did          # did the previous step happen ("if you do")
    int cond_ok      # did the previous step's condition hold (if = "same")
    int stated       # the number or protocol id stated by this text (-1: none)
    int discarded    # cards discarded so far in this text (by either player)
    uint64_t drawn   # cards drawn by this text (bit per card instance)

cdef inline int this_line(Game* g, Frame* fr) noexcept nogil:
    return g.line[fr.src] if g.zone[fr.src] == Z_FIELD else fr.home_line

cdef inline bint stopped(Game* g) noexcept nogil:
    return g.halt != 0 or g.winner >= 0

# -- event scopes: "after" windows --------------------------------------------------------------

cdef struct Scope:
    uint8_t ev0
    uint8_t ev1
    uint8_t evl0
    uint8_t evl1

cdef inline Scope scope_open(Game* g) noexcept nogil:
    cdef Scope s
    s.ev0 = g.ev[0]
    s.ev1 = g.ev[1]
    s.evl0 = g.evl[0]
    s.evl1 = g.evl[1]
    g.ev[0] = 0
    g.ev[1] = 0
    g.evl[0] = 0
    g.evl[1] = 0
    return s

cdef void scope_close(Game* g, Scope s) noexcept nogil:
    cdef uint8_t e0 = g.ev[0], e1 = g.ev[1], l0 = g.evl[0], l1 = g.evl[1]
    g.ev[0] = s.ev0
    g.ev[1] = s.ev1
    g.evl[0] = s.evl0
    g.evl[1] = s.evl1
    if (e0 or e1) and not stopped(g):
        fire_after(g, e0, e1, l0, l1)

cdef inline uint8_t event_of(int trig) noexcept nogil:
    if trig == TR_AFTER_DISCARD:
        return EV_DISCARD
    if trig == TR_AFTER_DRAW:
        return EV_DRAW
    if trig == TR_AFTER_DELETE:
        return EV_DELETE
    if trig == TR_AFTER_CLEAR_CACHE:
        return EV_CLEAR_CACHE
    if trig == TR_AFTER_PLAY:
        return EV_PLAY
    if trig == TR_AFTER_REFRESH:
        return EV_REFRESH
    if trig == TR_AFTER_COMPILE:
        return EV_COMPILE
    if trig == TR_AFTER_SHUFFLE:
        return EV_SHUFFLE
    return 0

cdef enum:
    AFTER_MASK = ((1 << TR_AFTER_DISCARD) | (1 << TR_AFTER_DRAW) | (1 << TR_AFTER_DELETE)
                  | (1 << TR_AFTER_CLEAR_CACHE) | (1 << TR_AFTER_PLAY) | (1 << TR_AFTER_REFRESH)
                  | (1 << TR_AFTER_COMPILE) | (1 << TR_AFTER_SHUFFLE))

cdef void fire_after(Game* g, uint8_t e0, uint8_t e1, uint8_t l0, uint8_t l1) noexcept nogil:
    """Note every active "After ...:" box matching these events, then resolve them one at a time
    in the active player's order (7.3, 7.4). `by` picks whose events count, `during` whose turn
    it must be, `here` (after_play) that the play went into the card's line."""
    cdef int32_t note[MAXNOTE]
    cdef int nn = 0, s, l, i, c, box, o
    cdef uint8_t ev, mine, lines
    cdef const CardDef* d
    if not may_trigger(g, AFTER_MASK):
        return
    for s in range(2):
        for l in range(3):
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                if not g.face_up[c]:
                    continue
                d = cdef_of(g, c)
                for box in range(3):
                    ev = event_of(d.trig[box])
                    if ev == 0 or not box_active(g, c, box):
                        continue
                    o = g.owner[c]
                    if d.by_opp[box] == 2:
                        mine = e0 | e1
                        lines = l0 | l1
                    elif d.by_opp[box]:
                        mine = e1 if o == 0 else e0
                        lines = l1 if o == 0 else l0
                    else:
                        mine = e0 if o == 0 else e1
                        lines = l0 if o == 0 else l1
                    if d.during[box] and (g.active == o) != (d.during[box] == 1):
                        continue
                    if d.here[box] and not ((lines >> g.line[c]) & 1):
                        continue
                    if (mine & ev) and nn < MAXNOTE:
                        note[nn] = c * 4 + box
                        nn += 1
    resolve_noted(g, note, nn)

cdef void resolve_noted(Game* g, int32_t* note, int nn) noexcept nogil:
    """Resolve noted trigger boxes one at a time in the active player's order, skipping those no
    longer active (3.1)."""
    cdef int i, k, pick, c, box
    while nn > 0 and not stopped(g):
        for i in range(nn):
            g.opts[i] = note[i]
        g.nopts = nn
        pick = ask(g, g.active, D_ORDER)
        if pick < 0:
            return
        k = 0
        for i in range(nn):
            if note[i] == pick:
                k = i
                break
        note[k] = note[nn - 1]
        nn -= 1
        c = pick >> 2
        box = pick & 3
        if box_active(g, c, box):
            run_box(g, c, box)

# -- running text ---------------------------------------------------------------------------------

cdef void run_box(Game* g, int c, int box) noexcept nogil:
    run_text(g, c, g.owner[c], g.def_id[c], box)

cdef void run_text(Game* g, int c, int ctrl, int defn, int box) noexcept nogil:
    """Resolve one box of definition `defn` as text of card c controlled by ctrl: a card's own
    text, or a copy of another card's text (10.1: "this card" is c, the copier controls it)."""
    cdef const CardDef* d = &g.cdefs[defn]
    cdef Frame fr
    if d.step_len[box] == 0 or stopped(g):
        return
    if g.depth >= DEPTH_LIMIT:
        g.winner = 2
        g.end_reason = ER_LOOP_GUARD
        return
    fr.src = c
    fr.ctrl = ctrl
    fr.box = box
    fr.defn = defn
    fr.home_line = g.line[c]
    fr.epoch = g.epoch[c]
    fr.that = -1
    fr.did = 1
    fr.cond_ok = 1
    fr.stated = -1
    fr.discarded = 0
    fr.drawn = 0
    cdef int saved_src = g.cur_src
    log_add(g, LG_TRIGGER, fr.ctrl, c, -1, box, 0 if defn == g.def_id[c] else 1 + defn)
    g.depth += 1
    g.cur_src = c
    run_steps(g, &fr, d.step_start[box], d.step_len[box])
    g.cur_src = saved_src
    g.depth -= 1

cdef void resolve_middle(Game* g, int c) noexcept nogil:
    """Middle text of a card played face-up, flipped face-up while uncovered, or uncovered (2.3)."""
    if stopped(g) or not on_field(g, c) or not g.face_up[c]:
        return
    if cdef_of(g, c).step_len[BOX_MIDDLE] == 0:
        return
    if middle_ignored(g, c) or middle_suppressed(g, c):
        log_add(g, LG_SKIP, g.owner[c], c, -1, 0, 0)
        return
    run_box(g, c, BOX_MIDDLE)

cdef void run_steps(Game* g, Frame* fr, int start, int n) noexcept nogil:
    cdef int k
    cdef const Step* st
    cdef Scope sc
    for k in range(n):
        if stopped(g):
            return
        if g.epoch[fr.src] != fr.epoch:
            log_add(g, LG_CANCEL, fr.ctrl, fr.src, -1, 0, 0)
            return
        g.guard += 1
        if g.guard > GUARD_LIMIT:
            g.winner = 2
            g.end_reason = ER_LOOP_GUARD
            return
        st = &g.steps[start + k]
        if st.cond != COND_NONE:
            if st.cond != COND_SAME:
                fr.cond_ok = condition_holds(g, fr, st)
            if not fr.cond_ok:
                fr.did = 0
                continue
        sc = scope_open(g)
        fr.did = do_step(g, fr, st)
        scope_close(g, sc)

cdef bint condition_holds(Game* g, Frame* fr, const Step* st) noexcept nogil:
    """The step's `if` (checked when the step is reached, not when the text began)."""
    cdef int a, b
    if st.cond == COND_DID:
        return fr.did != 0
    if st.cond == COND_THIS_COVERED:
        return on_field(g, fr.src) and not is_uncovered(g, fr.src)
    if st.cond == COND_THIS_COVERING:
        return on_field(g, fr.src) and stack_pos(g, fr.src) > 0
    if st.cond == COND_THAT_STATED:
        return fr.that >= 0 and fr.stated >= 0 and g.face_up[fr.that] and cdef_of(g, fr.that).protocol == fr.stated
    if st.cond == COND_CMP:
        a = amount(g, fr, st.cond_a, 0, fr.ctrl)
        b = amount(g, fr, st.cond_b, st.cond_n, fr.ctrl)
        return compare(a, st.cond_op, b)
    return True

cdef inline bint compare(int a, int op, int b) noexcept nogil:
    if op == OP_EQ:
        return a == b
    if op == OP_NE:
        return a != b
    if op == OP_LT:
        return a < b
    if op == OP_LE:
        return a <= b
    if op == OP_GT:
        return a > b
    return a >= b

cdef int distinct_protocols(Game* g, int only_line) noexcept nogil:
    """Different protocols among face-up cards on the field (face-down cards have none)."""
    cdef uint64_t seen = 0
    cdef int s, l, i, c, n = 0, pr
    for s in range(2):
        for l in range(3):
            if only_line >= 0 and l != only_line:
                continue
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                if g.face_up[c]:
                    pr = cdef_of(g, c).protocol
                    if not ((seen >> (pr & 63)) & 1):
                        seen |= (<uint64_t>1) << (pr & 63)
                        n += 1
    return n

cdef int protocol_cards(Game* g, int pr, int skip) noexcept nogil:
    """Face-up cards of protocol pr on the field, not counting card `skip`."""
    cdef int s, l, i, c, n = 0
    for s in range(2):
        for l in range(3):
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                if c != skip and g.face_up[c] and cdef_of(g, c).protocol == pr:
                    n += 1
    return n

cdef int amount(Game* g, Frame* fr, int kind, int n, int who) noexcept nogil:
    """A number a text refers to: a count, a value or a tally of the game (docs/cards.md)."""
    cdef int tl = this_line(g, fr)
    if kind == CK_DISCARDED_PLUS1:
        return fr.discarded + 1
    if kind == CK_DISCARDED:
        return fr.discarded
    if kind == CK_DISCARDED_MINUS1:
        return fr.discarded - 1 if fr.discarded > 0 else 0
    if kind == CK_VALUE_OF_THAT:
        return card_value(g, fr.that) if fr.that >= 0 else 0
    if kind == CK_PER2_IN_LINE:
        return line_cards(g, tl) // 2
    if kind == CK_HAND:
        return g.nhand[who]
    if kind == CK_DECK:
        return g.ndeck[who]
    if kind == CK_TRASH:
        return g.ntrash[who]
    if kind == CK_STATED:
        return fr.stated
    if kind == CK_PROTOCOLS_IN_FIELD:
        return distinct_protocols(g, -1)
    if kind == CK_PROTOCOLS_IN_LINE:
        return distinct_protocols(g, tl)
    if kind == CK_PROTO_CARDS_IN_FIELD:
        return protocol_cards(g, g.cdefs[fr.defn].protocol, -1)
    if kind == CK_OTHER_PROTO_CARDS_IN_FIELD:
        return protocol_cards(g, g.cdefs[fr.defn].protocol, fr.src)
    if kind == CK_YOUR_VALUE_HERE:
        return line_value(g, fr.ctrl, tl)
    if kind == CK_OPP_VALUE_HERE:
        return line_value(g, 1 - fr.ctrl, tl)
    return n

cdef inline int decider(Frame* fr, const Step* st) noexcept nogil:
    return 1 - fr.ctrl if st.who_opp else fr.ctrl

cdef int ask_may(Game* g, int player) noexcept nogil:
    g.opts[0] = 1
    g.opts[1] = 0
    g.nopts = 2
    return ask(g, player, D_MAY)

cdef int do_step(Game* g, Frame* fr, const Step* st) noexcept nogil:
    """Resolve one step; returns 1 if it happened (changed the game), else 0."""
    cdef int verb = g.cur_verb, src = g.cur_dec_src, r
    g.cur_verb = st.verb
    g.cur_dec_src = fr.src
    r = do_step_body(g, fr, st)
    g.cur_verb = verb
    g.cur_dec_src = src
    return r

cdef int do_step_body(Game* g, Frame* fr, const Step* st) noexcept nogil:
    cdef int dec = decider(fr, st)
    if st.may:
        if not step_possible(g, fr, st):
            return 0
        if ask_may(g, dec) != 1:
            return 0
    if st.verb == V_DRAW:
        return verb_draw(g, fr, st, dec)
    if st.verb == V_DISCARD:
        return verb_discard(g, fr, st, dec)
    if st.verb == V_REVEAL and st.source != S_FIELD and st.source != S_HAND:
        return verb_reveal_zone(g, fr, st, dec)
    if st.verb == V_TAKE and st.source == S_FIELD:
        return verb_field(g, fr, st, dec)
    if st.verb == V_FLIP or st.verb == V_DELETE or st.verb == V_RETURN or st.verb == V_SHIFT or st.verb == V_REVEAL:
        return verb_field(g, fr, st, dec)
    if st.verb == V_PLAY:
        return verb_play(g, fr, st, dec)
    if st.verb == V_REFRESH:
        return do_refresh(g, dec)
    if st.verb == V_REARRANGE:
        return rearrange(g, dec, dec if st.n == 0 else 1 - dec)
    if st.verb == V_SWAP:
        return swap_protocols(g, dec)
    if st.verb == V_REVEAL_HAND:
        log_add(g, LG_REVEAL, dec, -1, -1, 1, g.nhand[dec])
        return g.nhand[dec] > 0
    if st.verb == V_REVEAL_FROM_HAND:
        return verb_reveal_from_hand(g, dec)
    if st.verb == V_GIVE:
        return verb_give(g, dec, st.n)
    if st.verb == V_TAKE:
        return verb_take(g, dec, st.n)
    if st.verb == V_DENY_COMPILE:
        g.no_compile_turn[1 - dec] = g.turn + (2 if g.active == 1 - dec else 1)
        log_add(g, LG_DENY, dec, fr.src, -1, 0, g.no_compile_turn[1 - dec])
        return 1
    if st.verb == V_EITHER:
        return verb_either(g, fr, st, dec)
    if st.verb == V_STATE:
        return verb_state(g, fr, st, dec)
    if st.verb == V_SHUFFLE:
        return verb_shuffle(g, dec, st.n)
    if st.verb == V_SWAP_STACKS:
        return verb_swap_stacks(g, fr, dec)
    if st.verb == V_COPY_MIDDLE:
        return verb_field(g, fr, st, dec)
    if st.verb == V_COMPILE_PROTOCOL:
        return verb_compile_protocol(g, fr, dec)
    return 0

# -- what a step could do (6.2: mandatory choices must change the state) ------------------------

cdef bint step_possible(Game* g, Frame* fr, const Step* st) noexcept nogil:
    cdef int dec = decider(fr, st), v = st.verb
    cdef int32_t scratch[MAXCARDS]
    if v == V_DRAW:
        if draw_blocked(g, dec):
            return False
        if st.source == S_OPP_DECK:
            return g.ndeck[1 - dec] + g.ntrash[1 - dec] > 0
        if st.source == S_DECK:
            return deck_matches(g, fr, st, dec, scratch) > 0
        return g.ndeck[dec] + g.ntrash[dec] > 0
    if v == V_DISCARD:
        if st.source == S_DECK_TOP:
            return g.ndeck[dec] > 0
        if st.source == S_OPP_DECK:
            return g.ndeck[1 - dec] > 0
        return g.nhand[dec] > 0
    if v == V_REVEAL and st.source != S_FIELD and st.source != S_HAND:
        return reveal_candidates(g, fr, st, dec, scratch) > 0
    if v == V_GIVE or v == V_REVEAL_FROM_HAND:
        return g.nhand[dec] > 0
    if v == V_TAKE and st.source == S_FIELD:
        return collect(g, fr, st, -1, scratch) > 0
    if v == V_TAKE:
        return g.nhand[1 - dec] > 0
    if v == V_SHUFFLE:
        return g.ntrash[dec] > 0 if st.n == 1 else g.ndeck[dec] > 1
    if v == V_SWAP_STACKS:
        return (g.nstack[dec][0] > 0) + (g.nstack[dec][1] > 0) + (g.nstack[dec][2] > 0) >= 2
    if v == V_COPY_MIDDLE:
        return collect(g, fr, st, -1, scratch) > 0
    if v == V_REFRESH:
        return can_refresh(g, dec)
    if v == V_FLIP or v == V_DELETE or v == V_RETURN or v == V_SHIFT or v == V_REVEAL:
        if st.count_kind == CK_THIS:
            return on_field(g, fr.src) and (v != V_SHIFT or shift_dests(g, fr, st, fr.src, scratch) > 0)
        if st.count_kind == CK_THAT:
            return fr.that >= 0 and on_field(g, fr.that) and (v != V_SHIFT or shift_dests(g, fr, st, fr.that, scratch) > 0)
        return collect(g, fr, st, -1, scratch) > 0
    if v == V_PLAY:
        if st.source == S_HAND or st.source == S_TRASH or st.count_kind == CK_THAT:
            return effect_play_options(g, fr, st, dec) > 0
        if st.source == S_OPP_DECK:
            return g.ndeck[1 - dec] > 0
        return g.ndeck[dec] > 0
    if v == V_EITHER:
        return branch_possible(g, fr, st.alt_a, st.alt_a_len) or branch_possible(g, fr, st.alt_b, st.alt_b_len)
    return True

cdef bint branch_possible(Game* g, Frame* fr, int start, int n) noexcept nogil:
    if n <= 0:
        return False
    return step_possible(g, fr, &g.steps[start])

# -- card selection (6.3) ----------------------------------------------------------------------

cdef bint matches(Game* g, Frame* fr, const Step* st, int c, int top, int l) noexcept nogil:
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
    if st.value_mask and not ((st.value_mask >> card_value(g, c)) & 1):
        return False
    if st.value_op != 0xFF and not compare(card_value(g, c), st.value_op, amount(g, fr, st.value_expr, 0, fr.ctrl)):
        return False
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
    if st.verb == V_FLIP and unflippable(g, c):
        return False                   # flipping it would change nothing (6.2)
    if st.verb == V_COPY_MIDDLE:       # only face-up text that is there to copy (10.2, 10.3)
        if not g.face_up[c] or cdef_of(g, c).step_len[BOX_MIDDLE] == 0:
            return False
        if middle_ignored(g, c) or middle_suppressed(g, c):
            return False
    return True

cdef int protocol_line(Game* g, Frame* fr) noexcept nogil:
    """The line of the controller's protocol of this text's protocol (Unity 1), or -1."""
    cdef int l
    for l in range(3):
        if g.proto[fr.ctrl][l] == g.cdefs[fr.defn].protocol:
            return l
    return -1

cdef int collect(Game* g, Frame* fr, const Step* st, int only_line, int32_t* out) noexcept nogil:
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
            for i in range(ns):
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

cdef int shift_dests(Game* g, Frame* fr, const Step* st, int c, int32_t* out) noexcept nogil:
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
        out[n] = l
        n += 1
    return n

cdef bint opp_highest(Game* g, Frame* fr, int l) noexcept nogil:
    """Is l a line where the controller's opponent has their highest total (ties: any)?"""
    cdef int k, o = 1 - fr.ctrl, v = line_value(g, o, l)
    for k in range(3):
        if line_value(g, o, k) > v:
            return False
    return True

cdef int choose(Game* g, int player, int kind, int32_t* items, int n) noexcept nogil:
    """Offer these items (cards or lines) as the options of one decision."""
    cdef int i
    for i in range(n):
        g.opts[i] = items[i]
    g.nopts = n
    return ask(g, player, kind)

# -- verbs -------------------------------------------------------------------------------------

cdef inline int step_amount(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return amount(g, fr, st.count_kind, st.n, dec)

cdef int verb_draw(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int n = step_amount(g, fr, st, dec), i, got = 0, before = g.nhand[dec]
    if st.source == S_OPP_DECK:
        if draw_blocked(g, dec):
            return 0
        for i in range(n):
            got += draw_from_opponent(g, dec)
    elif st.source == S_DECK:
        got = draw_searched(g, fr, st, dec)
    else:
        got = draw_cards(g, dec, n)
    for i in range(before, g.nhand[dec]):
        fr.drawn |= (<uint64_t>1) << g.hand[dec][i]
    return got > 0

cdef int deck_matches(Game* g, Frame* fr, const Step* st, int p, int32_t* out) noexcept nogil:
    """Cards of p's (revealed) deck a "draw 1 card with ..." step may take, in deck order."""
    cdef int i, c, n = 0
    for i in range(g.ndeck[p] - 1, -1, -1):
        c = g.deck[p][i]
        if card_fits(g, fr, st, c):
            out[n] = c
            n += 1
    return n

cdef bint card_fits(Game* g, Frame* fr, const Step* st, int c) noexcept nogil:
    """Value and protocol filters for a card off the field (its printed value and protocol)."""
    cdef int v = cdef_of(g, c).value
    if st.value_mask and not ((st.value_mask >> v) & 1):
        return False
    if st.value_op != 0xFF and not compare(v, st.value_op, amount(g, fr, st.value_expr, 0, fr.ctrl)):
        return False
    if st.proto_filter == 1 and cdef_of(g, c).protocol != g.cdefs[fr.defn].protocol:
        return False
    if st.proto_filter == 2 and cdef_of(g, c).protocol == g.cdefs[fr.defn].protocol:
        return False
    return True

cdef int draw_searched(Game* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Draw chosen cards out of a revealed deck (Clarity 2/3: one; Unity 4: all that match).
    A draw, so Ice 6 stops it and after-draw triggers see it; it never reshuffles."""
    cdef int32_t cand[MAXCARDS]
    cdef int n, c, got = 0, k
    if draw_blocked(g, p):
        return 0
    while not stopped(g):
        if st.count_kind != CK_ALL and got >= st.n:
            break
        n = deck_matches(g, fr, st, p, cand)
        if n == 0:
            break
        c = cand[0] if st.count_kind == CK_ALL else choose(g, p, D_DECK, cand, n)
        if c < 0:
            break
        for k in range(g.ndeck[p]):
            if g.deck[p][k] == c:
                list_remove(g.deck[p], &g.ndeck[p], c)
                break
        put_hand(g, p, c)
        ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DRAW
        log_add(g, LG_DRAW, p, -1, -1, got, 1)
    return got

cdef int verb_discard(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int k, c, q, n
    cdef int ck = st.count_kind
    if st.source == S_DECK_TOP or st.source == S_OPP_DECK:
        # the top card(s) of a deck go to that deck owner's trash; no reshuffle
        q = dec if st.source == S_DECK_TOP else 1 - dec
        n = g.ndeck[q] if ck == CK_ALL else step_amount(g, fr, st, dec)
        k = 0
        while k < n and g.ndeck[q] > 0:
            g.ndeck[q] -= 1
            c = g.deck[q][g.ndeck[q]]
            put_trash(g, c)
            log_add(g, LG_DISCARD, dec, -1, c, 1 + (q != dec), 0)
            fr.that = c
            k += 1
        if k:
            g.ev[dec] |= EV_DISCARD
    elif ck == CK_HAND:
        k = discard_whole_hand(g, dec)
    elif st.random:
        k = discard_random(g, dec, step_amount(g, fr, st, dec))
    elif ck == CK_ONE_OR_MORE or ck == CK_ANY_NUMBER:
        k = discard_cards(g, dec, 99, ck == CK_ONE_OR_MORE, ck == CK_ANY_NUMBER, st.into_opp)
    else:
        k = discard_cards(g, dec, step_amount(g, fr, st, dec), False, False, st.into_opp)
    fr.discarded += k
    return k > 0

cdef int discard_whole_hand(Game* g, int p) noexcept nogil:
    """Discard every card in hand at once (Chaos 4, Fear 1, Peace 1)."""
    cdef int k = g.nhand[p], i, c
    for i in range(k):
        c = g.hand[p][i]
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, 0, 0)
    g.nhand[p] = 0
    if k:
        g.ev[p] |= EV_DISCARD
    return k

cdef int discard_random(Game* g, int p, int n) noexcept nogil:
    """Fear 4: cards leave the hand at random (the game's stream, never a player's choice)."""
    cdef int k = 0, c
    while k < n and g.nhand[p] > 0:
        c = g.hand[p][rng_below(g, 0, g.nhand[p])]
        list_remove(g.hand[p], &g.nhand[p], c)
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, 3, 0)
        k += 1
    if k:
        g.ev[p] |= EV_DISCARD
    return k

cdef int act_on(Game* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    """Apply a field verb to one chosen card."""
    cdef int32_t lines[3]
    cdef int n, l
    fr.that = c
    if st.verb == V_FLIP:
        return flip_card_ex(g, c, dec, not st.no_middle)
    if st.verb == V_TAKE:
        return take_from_field(g, c, dec)
    if st.verb == V_COPY_MIDDLE:
        return copy_middle(g, fr, c)
    if st.verb == V_DELETE:
        return delete_card(g, c, dec)
    if st.verb == V_RETURN:
        return return_card(g, c, dec)
    if st.verb == V_REVEAL:
        log_add(g, LG_REVEAL, dec, fr.src, c, 0, 0)
        return 1
    if st.verb == V_SHIFT:
        n = shift_dests(g, fr, st, c, lines)
        if n == 0:
            return 0
        l = choose(g, dec, D_LINE, lines, n)
        if l < 0:
            return 0
        return shift_card(g, c, l, dec)
    return 0

cdef int verb_field(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t cand[MAXCARDS]
    cdef int32_t lines[3]
    cdef int n, i, c, k, done = 0, nl, l, tl
    cdef int ck = st.count_kind
    if ck == CK_THIS or ck == CK_THAT:
        c = fr.src if ck == CK_THIS else fr.that
        if c < 0 or not on_field(g, c):
            return 0
        return act_on(g, fr, st, c, dec)
    if ck == CK_ALL:
        return verb_all(g, fr, st, dec)
    if ck == CK_EACH:
        n = collect(g, fr, st, -1, cand)
        while n > 0 and not stopped(g):
            c = choose(g, dec, D_EACH_CARD, cand, n)
            if c < 0:
                return done
            k = 0
            for i in range(n):
                if cand[i] == c:
                    k = i
                    break
            cand[k] = cand[n - 1]
            n -= 1
            if on_field(g, c) and (st.face != F_UP or g.face_up[c]) and (st.face != F_DOWN or not g.face_up[c]):
                done |= act_on(g, fr, st, c, dec)
            if g.epoch[fr.src] != fr.epoch:
                break
        return done
    if st.each != E_NONE:
        nl = each_lines(g, fr, st, lines)
        while nl > 0 and not stopped(g):
            nl = lines_with_targets(g, fr, st, lines, nl)     # only lines that need acting in (6.2)
            if nl == 0:
                break
            l = choose(g, dec, D_EACH_LINE, lines, nl)
            if l < 0:
                return done
            nl = drop_line(lines, nl, l)
            n = collect(g, fr, st, l, cand)
            if n > 0:
                c = choose(g, dec, D_TARGET, cand, n)
                if c < 0:
                    return done
                done |= act_on(g, fr, st, c, dec)
            if g.epoch[fr.src] != fr.epoch:
                break
        return done
    for k in range(st.n):
        if stopped(g):
            break
        n = collect(g, fr, st, -1, cand)
        if n == 0:
            break
        c = choose(g, dec, D_TARGET, cand, n)
        if c < 0:
            break
        done |= act_on(g, fr, st, c, dec)
    return done

cdef int each_lines(Game* g, Frame* fr, const Step* st, int32_t* lines) noexcept nogil:
    """The lines an "in each line" step notes before it starts (6.4)."""
    cdef int nl = 0, l, tl = this_line(g, fr), s, i, down
    for l in range(3):
        if st.each == E_OTHER_LINE and l == tl:
            continue
        if st.each == E_LINE_WITH_YOUR_CARD and g.nstack[fr.ctrl][l] == 0:
            continue
        if st.each == E_LINE_WITH_FACEDOWN:
            down = 0
            for s in range(2):
                for i in range(g.nstack[s][l]):
                    if not g.face_up[g.stack[s][l][i]]:
                        down = 1
            if not down:
                continue
        lines[nl] = l
        nl += 1
    return nl

cdef int lines_with_targets(Game* g, Frame* fr, const Step* st, int32_t* lines, int n) noexcept nogil:
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

cdef int verb_all(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """"All": every matching card at once, with no triggers in between (6.4); the cards that
    become uncovered resolve their middle text afterwards, in the active player's order."""
    cdef int32_t cand[MAXCARDS]
    cdef int32_t lines[3]
    cdef int32_t tops_before[6]
    cdef int n, i, c, l, nl = 0, chosen = -1, s, dest = -1
    cdef int tl = this_line(g, fr)
    if st.line == L_CHOSEN or st.line == L_CHOSEN_OTHER:
        for l in range(3):
            if st.line == L_CHOSEN_OTHER and l == tl:
                continue
            if line_cards(g, l) < st.min_cards:
                continue
            if collect(g, fr, st, l, cand) > 0:
                lines[nl] = l
                nl += 1
        if nl == 0:
            return 0
        chosen = choose(g, dec, D_LINE, lines, nl)
        if chosen < 0:
            return 0
    n = collect(g, fr, st, chosen, cand)
    if n == 0:
        return 0
    if st.verb == V_SHIFT:
        nl = 0
        for l in range(3):
            if l == tl:
                continue
            if st.to == T_OTHER_LINE or st.to == T_ANY:
                lines[nl] = l
                nl += 1
        dest = choose(g, dec, D_LINE, lines, nl)
        if dest < 0:
            return 0
    for s in range(2):
        for l in range(3):
            tops_before[s * 3 + l] = top_card(g, s, l)
    for i in range(n):
        c = cand[i]
        if st.verb == V_DELETE:
            stack_remove(g, c)
            bump(g, c)
            put_trash(g, c)
            log_add(g, LG_DELETE, dec, fr.src, c, 0, 0)
            ev_rec(g, EK_DELETE, g.owner[c], g.def_id[c], g.line[c], 0)
            g.ev[dec] |= EV_DELETE
        elif st.verb == V_RETURN:
            stack_remove(g, c)
            bump(g, c)
            put_returned(g, c)
            log_add(g, LG_RETURN, dec, fr.src, c, 0, 0)
        elif st.verb == V_FLIP:
            if g.face_up[c] and has_trigger(g, c, TR_COVERED_OR_FLIPPED) >= 0:
                continue            # handled below: it deletes itself instead
            if unflippable(g, c):
                continue
            g.face_up[c] = 1 - g.face_up[c]
            touch(g)
            bump(g, c)
            log_add(g, LG_FLIP, dec, fr.src, c, g.face_up[c], 0)
        elif st.verb == V_SHIFT:
            stack_remove(g, c)
    if st.verb == V_SHIFT:
        for i in range(n):
            c = cand[i]
            stack_put(g, c, g.side[c], dest, -1)
            log_add(g, LG_SHIFT, dec, fr.src, c, dest, 0)
    if st.verb == V_FLIP:
        for i in range(n):
            c = cand[i]
            if g.face_up[c] and on_field(g, c) and has_trigger(g, c, TR_COVERED_OR_FLIPPED) >= 0:
                run_box(g, c, has_trigger(g, c, TR_COVERED_OR_FLIPPED))
    resolve_new_tops(g, tops_before)
    return 1

cdef void resolve_new_tops(Game* g, int32_t* tops_before) noexcept nogil:
    """After a simultaneous change, face-up cards that became uncovered resolve their middle text
    one at a time, in the active player's order."""
    cdef int32_t note[6]
    cdef int nn = 0, s, l, t, i, was
    for s in range(2):
        for l in range(3):
            t = top_card(g, s, l)
            if t < 0 or t == tops_before[s * 3 + l] or not g.face_up[t]:
                continue
            was = 0
            for i in range(6):
                if tops_before[i] == t:
                    was = 1
            if not was:
                note[nn] = t * 4 + BOX_MIDDLE
                nn += 1
    while nn > 0 and not stopped(g):
        for i in range(nn):
            g.opts[i] = note[i]
        g.nopts = nn
        t = ask(g, g.active, D_ORDER)
        if t < 0:
            return
        nn = drop_line(note, nn, t)
        if is_uncovered(g, t >> 2):
            resolve_middle(g, t >> 2)

cdef int play_options(Game* g, int p, int only_line, int not_line, bint down_only) noexcept nogil:
    """Every legal (card, line, face) play from p's hand into g.opts (the turn's action)."""
    return card_play_options(g, p, g.hand[p], g.nhand[p], only_line, not_line, down_only, 0, NULL, NULL)

cdef int card_play_options(Game* g, int p, const int8_t* cards, int ncards, int only_line,
                           int not_line, bint down_only, int line_rule, Frame* fr,
                           const Step* st) noexcept nogil:
    """Legal plays of these cards into g.opts, encoded card | line << 8 | face-up << 10 |
    opponent's side << 11. The action and every "play" effect share it; `line_rule` is a Dest
    (T_LINE_WITH_FACEDOWN), `st` adds the step's value and protocol filters. The rules are those
    of can_play_face (zones.pxi), with the per-line facts looked up once per call: this runs
    for every action of every game."""
    cdef int n = 0, i, c, l, side, nsides, pr, o = 1 - p, t, s
    cdef uint32_t opp_all, mine_all
    cdef bint line_ok[3]
    cdef bint down_ok[3]
    cdef int welcome[3][2]
    cdef bint up_anywhere
    cdef const CardDef* d
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    opp_all = g.pas[o][0] | g.pas[o][1] | g.pas[o][2]
    mine_all = g.pas[p][0] | g.pas[p][1] | g.pas[p][2]
    for l in range(3):
        line_ok[l] = not (l == not_line or (only_line >= 0 and l != only_line)
                          or (g.pas[o][l] & PA_DENY_ANY_LINE)
                          or (line_rule == T_LINE_WITH_FACEDOWN and not line_has_facedown(g, l)))
        down_ok[l] = not (g.pas[o][l] & PA_DENY_FACEDOWN_LINE)
        for s in range(2):
            welcome[l][s] = -1
            if g.pas[s][l] & PA_PROTO_FACEUP_HERE:
                t = top_card(g, s, l)
                if t >= 0 and g.face_up[t] and (cdef_of(g, t).passive[BOX_BOTTOM] & PA_PROTO_FACEUP_HERE):
                    welcome[l][s] = cdef_of(g, t).protocol
    up_anywhere = (mine_all & PA_FACEUP_ANYWHERE) != 0
    for i in range(ncards):
        c = cards[i]
        if st != NULL and not card_fits(g, fr, st, c):
            continue
        d = cdef_of(g, c)
        pr = d.protocol
        nsides = 2 if (d.self_play & (SP_EITHER_SIDE | SP_EITHER_SIDE_DOWN)) else 1
        for side in range(nsides):
            for l in range(3):
                if not line_ok[l]:
                    continue
                if not down_only and not (opp_all & PA_DENY_FACEUP) and (
                        up_anywhere or pr == g.proto[p][l] or pr == g.proto[o][l]
                        or (d.self_play & SP_ANYWHERE) or pr == welcome[l][0] or pr == welcome[l][1]):
                    g.opts[n] = c | (l << 8) | (1 << 10) | (side << 11)
                    n += 1
                if down_ok[l] and (side == 0 or (d.self_play & SP_EITHER_SIDE_DOWN)):
                    g.opts[n] = c | (l << 8) | (side << 11)   # face-down it has no text to cross sides
                    n += 1
    return n

cdef bint line_has_facedown(Game* g, int l) noexcept nogil:
    cdef int s, i
    for s in range(2):
        for i in range(g.nstack[s][l]):
            if not g.face_up[g.stack[s][l][i]]:
                return True
    return False

cdef int effect_play_options(Game* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Options for "Play 1 card" from hand, from the trash or "that card", with the step's line,
    face, value and protocol restrictions."""
    cdef int tl = this_line(g, fr)
    cdef int8_t one[1]
    cdef int only = tl if st.to == T_THIS_LINE else -1
    cdef int nope = tl if st.to == T_OTHER_LINE else -1
    if st.count_kind == CK_THAT:
        if fr.that < 0 or not ((g.zone[fr.that] == Z_HAND and g.side[fr.that] == p)
                               or (g.zone[fr.that] == Z_TRASH and g.owner[fr.that] == p)):
            return 0
        one[0] = fr.that
        return card_play_options(g, p, one, 1, only, nope, st.face_down, st.to, fr, st)
    if st.source == S_TRASH:
        return card_play_options(g, p, g.trash[p], g.ntrash[p], only, nope, st.face_down, st.to, fr, st)
    return card_play_options(g, p, g.hand[p], g.nhand[p], only, nope, st.face_down, st.to, fr, st)

cdef void commit_play(Game* g, int p, int k) noexcept nogil:
    """Take the chosen card out of hand or trash (5.3: committed) and play it."""
    cdef int c = k & 0xFF
    if g.zone[c] == Z_HAND:
        list_remove(g.hand[g.side[c]], &g.nhand[g.side[c]], c)
    elif g.zone[c] == Z_TRASH:
        list_remove(g.trash[g.owner[c]], &g.ntrash[g.owner[c]], c)
    g.zone[c] = Z_TRANSIT
    play_card(g, p, c, p ^ ((k >> 11) & 1), (k >> 8) & 3, (k >> 10) & 1, -1)

cdef int verb_play(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t lines[3]
    cdef int n, k, c, l, i, nl, done = 0, tl = this_line(g, fr), q, side
    if st.source == S_HAND or st.source == S_TRASH or st.count_kind == CK_THAT:
        n = 1 if st.count_kind == CK_THAT else st.n
        for i in range(n):
            g.nopts = effect_play_options(g, fr, st, dec)
            k = ask(g, dec, D_PLAY)
            if k < 0:
                break
            fr.that = k & 0xFF
            commit_play(g, dec, k)
            done = 1
        return done
    # from the top of a deck, always face-down; no reshuffle (6.5)
    q = 1 - dec if st.source == S_OPP_DECK else dec
    side = 1 - dec if st.side_opp else dec
    if st.each != E_NONE:
        nl = each_lines(g, fr, st, lines)
        while nl > 0 and not stopped(g) and g.ndeck[q] > 0:     # an empty deck plays nothing more
            l = choose(g, dec, D_EACH_LINE, lines, nl)
            if l < 0:
                return done
            nl = drop_line(lines, nl, l)
            done |= play_from_deck(g, fr, dec, q, side, l, -1)
            if g.epoch[fr.src] != fr.epoch:
                break
        return done
    n = step_amount(g, fr, st, dec)
    for i in range(n):
        if stopped(g):
            break
        if st.under_this:
            if not on_field(g, fr.src):
                break
            done |= play_from_deck(g, fr, dec, q, g.side[fr.src], g.line[fr.src], fr.src)
            continue
        if st.to == T_THIS_STACK:
            if not on_field(g, fr.src):
                break
            done |= play_from_deck(g, fr, dec, q, g.side[fr.src], g.line[fr.src], -1)
            continue
        nl = 0
        for l in range(3):
            if st.to == T_THIS_LINE and l != tl:
                continue
            if st.to == T_OTHER_LINE and l == tl:
                continue
            if st.to == T_LINE_WITH_FACEDOWN and not line_has_facedown(g, l):
                continue
            if can_play_down_into(g, dec, l):
                lines[nl] = l
                nl += 1
        if nl == 0 or g.ndeck[q] == 0:
            break
        l = choose(g, fr.ctrl, D_LINE, lines, nl)
        if l < 0:
            break
        done |= play_from_deck(g, fr, dec, q, side, l, -1)
    return done

cdef int play_from_deck(Game* g, Frame* fr, int p, int q, int s, int l, int under) noexcept nogil:
    """p plays the top card of q's deck face-down into side s, line l (its owner is unchanged)."""
    cdef int c
    if g.ndeck[q] == 0 or not can_play_down_into(g, p, l):
        return 0
    g.ndeck[q] -= 1
    c = g.deck[q][g.ndeck[q]]
    g.zone[c] = Z_TRANSIT
    fr.that = c
    play_card(g, p, c, s, l, 0, under)
    return 1

cdef int verb_reveal_from_hand(Game* g, int p) noexcept nogil:
    cdef int c
    if g.nhand[p] == 0:
        return 0
    c = choose_hand(g, p)
    if c < 0:
        return 0
    log_add(g, LG_REVEAL, p, -1, c, 2, 0)
    return 1

cdef int choose_hand(Game* g, int p) noexcept nogil:
    cdef int i
    for i in range(g.nhand[p]):
        g.opts[i] = g.hand[p][i]
    g.nopts = g.nhand[p]
    return ask(g, p, D_HAND)

cdef int verb_give(Game* g, int p, int n) noexcept nogil:
    cdef int i, c, done = 0
    for i in range(n):
        if g.nhand[p] == 0:
            break
        c = choose_hand(g, p)
        if c < 0:
            break
        list_remove(g.hand[p], &g.nhand[p], c)
        g.owner[c] = 1 - p
        put_hand(g, 1 - p, c)
        log_add(g, LG_GIVE, p, -1, c, 0, 0)
        done = 1
    return done

cdef int verb_take(Game* g, int p, int n) noexcept nogil:
    cdef int i, c, o = 1 - p, done = 0
    for i in range(n):
        if g.nhand[o] == 0:
            break
        c = g.hand[o][rng_below(g, 0, g.nhand[o])]
        list_remove(g.hand[o], &g.nhand[o], c)
        g.owner[c] = p
        put_hand(g, p, c)
        log_add(g, LG_TAKE, p, -1, c, 0, 0)
        done = 1
    return done

cdef int verb_either(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef bint a = branch_possible(g, fr, st.alt_a, st.alt_a_len)
    cdef bint b = branch_possible(g, fr, st.alt_b, st.alt_b_len)
    cdef int n = 0, k
    if a:
        g.opts[n] = 0
        n += 1
    if b:
        g.opts[n] = 1
        n += 1
    if n == 0:
        return 0
    g.nopts = n
    k = ask(g, dec, D_EITHER)
    if k < 0:
        return 0
    fr.did = 1
    if k == 0:
        run_steps(g, fr, st.alt_a, st.alt_a_len)
    else:
        run_steps(g, fr, st.alt_b, st.alt_b_len)
    return fr.did

# -- primitives ---------------------------------------------------------------------------------

cdef int has_trigger(Game* g, int c, int trig) noexcept nogil:
    """The box of card c with this trigger if that box is active now, else -1."""
    cdef const CardDef* d = cdef_of(g, c)
    cdef int box
    for box in range(3):
        if d.trig[box] == trig and box_active(g, c, box):
            return box
    return -1

cdef void uncovered(Game* g, int s, int l) noexcept nogil:
    """The card now at the end of this stack was just uncovered: its middle text resolves."""
    cdef int t = top_card(g, s, l)
    if l == g.compiling_line:
        return
    if t >= 0 and g.face_up[t]:
        resolve_middle(g, t)

cdef int draw_cards(Game* g, int p, int n) noexcept nogil:
    cdef int i, c, got = 0
    if n > 0 and draw_blocked(g, p):
        return 0
    for i in range(n):
        if g.ndeck[p] == 0:
            if g.ntrash[p] == 0:
                break
            reshuffle_trash(g, p)
        g.ndeck[p] -= 1
        c = g.deck[p][g.ndeck[p]]
        put_hand(g, p, c)
        ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DRAW
        log_add(g, LG_DRAW, p, -1, -1, got, 0)
    return got

cdef void reshuffle_trash(Game* g, int p) noexcept nogil:
    cdef int i, c
    for i in range(g.ntrash[p]):
        c = g.trash[p][i]
        g.deck[p][g.ndeck[p]] = c
        g.ndeck[p] += 1
        g.zone[c] = Z_DECK
        g.face_up[c] = 0
    g.ntrash[p] = 0
    shuffle_deck(g, p)
    if g.ndeck[p] > 1:
        g.ev[p] |= EV_SHUFFLE          # shuffling 0 or 1 cards changes nothing (Time 2 ruling)
    log_add(g, LG_SHUFFLE, p, -1, -1, 0, 0)

cdef int draw_from_opponent(Game* g, int p) noexcept nogil:
    """Draw the top card of the opponent's deck: it becomes yours (9.1)."""
    cdef int o = 1 - p, c
    if g.ndeck[o] == 0:
        if g.ntrash[o] == 0:
            return 0
        reshuffle_trash(g, o)
    g.ndeck[o] -= 1
    c = g.deck[o][g.ndeck[o]]
    g.owner[c] = p
    put_hand(g, p, c)
    ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 1)
    g.ev[p] |= EV_DRAW
    log_add(g, LG_TAKE, p, -1, c, 1, 0)
    return 1

cdef int discard_cards(Game* g, int p, int n, bint one_or_more, bint any_number=False,
                       bint into_opp=False) noexcept nogil:
    """Player p discards n cards of their choice (or 1 or more / any number, stopping at
    "done"); `into_opp` puts them in the opponent's trash, who then owns them (Assimilation 1)."""
    cdef int i, k, c, got = 0
    while got < n and g.nhand[p] > 0 and not stopped(g):
        for i in range(g.nhand[p]):
            g.opts[i] = g.hand[p][i]
        k = g.nhand[p]
        if (one_or_more and got >= 1) or any_number:
            g.opts[k] = OPT_DONE
            k += 1
        g.nopts = k
        c = ask(g, p, D_DISCARD_MORE if (one_or_more or any_number) else D_DISCARD)
        if c < 0 or c == OPT_DONE:
            break
        list_remove(g.hand[p], &g.nhand[p], c)
        if into_opp:
            g.owner[c] = 1 - p
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, 4 if into_opp else 0, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DISCARD
    return got

cdef int flip_card(Game* g, int c, int actor) noexcept nogil:
    return flip_card_ex(g, c, actor, True)

cdef int flip_card_ex(Game* g, int c, int actor, bint with_middle) noexcept nogil:
    cdef int box
    if not on_field(g, c) or unflippable(g, c):
        return 0
    if g.face_up[c]:
        box = has_trigger(g, c, TR_COVERED_OR_FLIPPED)
        if box >= 0:
            run_box(g, c, box)         # Metal 6: deletes itself, the flip is used up
            return 1
    g.face_up[c] = 1 - g.face_up[c]
    touch(g)
    bump(g, c)
    log_add(g, LG_FLIP, actor, g.cur_src, c, g.face_up[c], 0)
    if with_middle and g.face_up[c] and is_uncovered(g, c):
        resolve_middle(g, c)
    return 1

cdef int delete_card(Game* g, int c, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    put_trash(g, c)
    log_add(g, LG_DELETE, actor, g.cur_src, c, 0, 0)
    ev_rec(g, EK_DELETE, g.owner[c], g.def_id[c], l, 0)
    g.ev[actor] |= EV_DELETE
    if was_top:
        uncovered(g, s, l)
    return 1

cdef int return_card(Game* g, int c, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    put_returned(g, c)
    log_add(g, LG_RETURN, actor, g.cur_src, c, 0, 0)
    if was_top:
        uncovered(g, s, l)
    return 1

cdef void put_returned(Game* g, int c) noexcept nogil:
    """A returned card goes to its owner's hand (6.7), or face-down on top of their deck when
    the other player has an active Corruption 1."""
    cdef int o = g.owner[c]
    if has_passive(g, 1 - o, PA_RETURN_TO_DECK, -1):
        g.deck[o][g.ndeck[o]] = c
        g.ndeck[o] += 1
        g.zone[c] = Z_DECK
        g.side[c] = o
        g.face_up[c] = 0
        log_add(g, LG_RETURN, 1 - o, -1, c, 1, 0)
        return
    put_hand(g, o, c)

cdef int take_from_field(Game* g, int c, int p) noexcept nogil:
    """Assimilation 0: put a card from the field into p's hand; p owns it from now on (9.1)."""
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    g.owner[c] = p
    put_hand(g, p, c)
    log_add(g, LG_TAKE, p, g.cur_src, c, 2, 0)
    if was_top:
        uncovered(g, s, l)
    return 1

cdef void before_cover(Game* g, int s, int l, int incoming) noexcept nogil:
    """"When this card would be covered: First, ..." resolves completely before a card lands
    (5.3); if that removes the card, the next card down may have such text too. "... covered by
    a Unity card" (cover_same) needs the incoming card to be face-up and of that protocol."""
    cdef int fired[8]
    cdef int nf = 0, t, box, i, seen
    while nf < 8 and not stopped(g):
        t = top_card(g, s, l)
        if t < 0:
            return
        seen = 0
        for i in range(nf):
            if fired[i] == t:
                seen = 1
        if seen:
            return
        box = has_trigger(g, t, TR_COVERED)
        if box >= 0 and cdef_of(g, t).cover_same[box] and not (
                g.face_up[incoming] and cdef_of(g, incoming).protocol == cdef_of(g, t).protocol):
            box = -1
        if box < 0:
            box = has_trigger(g, t, TR_COVERED_OR_FLIPPED)
        if box < 0:
            return
        fired[nf] = t
        nf += 1
        run_box(g, t, box)

cdef int shift_card(Game* g, int c, int dest, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c) or dest == l:
        return 0
    was_top = stack_remove(g, c)
    g.zone[c] = Z_TRANSIT
    before_cover(g, s, dest, c)
    stack_put(g, c, s, dest, -1)
    log_add(g, LG_SHIFT, actor, g.cur_src, c, dest, l)
    if was_top:
        uncovered(g, s, l)
    elif g.face_up[c] and is_uncovered(g, c):
        resolve_middle(g, c)       # a covered card shifted to become uncovered (2.3)
    return 1

cdef void play_card(Game* g, int p, int c, int s, int l, int up, int under) noexcept nogil:
    """Land a committed card (5.3): on-cover texts first, then it enters the stack, then its
    middle text if face-up."""
    g.face_up[c] = up
    if under >= 0 and on_field(g, under) and g.side[under] == s and g.line[under] == l:
        stack_put(g, c, s, l, stack_pos(g, under))
    else:
        before_cover(g, s, l, c)
        if stopped(g):
            return
        stack_put(g, c, s, l, -1)
    if up:
        g.plays_up[p] += 1
    else:
        g.plays_down[p] += 1
    log_add(g, LG_PLAY, p, g.cur_src, c, l, up | (s << 1) | ((under >= 0) << 2))
    ev_rec(g, EK_PLAY_UP if up else EK_PLAY_DOWN, p, g.def_id[c], l, g.cur_src >= 0)
    g.ev[p] |= EV_PLAY
    g.evl[p] |= 1 << l
    if up:
        resolve_middle(g, c)

cdef int apply_perm(Game* g, int p, int perm) noexcept nogil:
    cdef int16_t pr[3]
    cdef int8_t cp[3]
    cdef int i
    for i in range(3):
        pr[i] = g.proto[p][PERMS[perm][i]]
        cp[i] = g.compiled[p][PERMS[perm][i]]
    for i in range(3):
        g.proto[p][i] = pr[i]
        g.compiled[p][i] = cp[i]
    return 1

cdef int rearrange(Game* g, int dec, int target) noexcept nogil:
    """Rearrange one side's protocols into a different order (4.4)."""
    cdef int k, n = 0
    for k in range(1, 6):              # every non-identity order differs: a side's protocols are distinct
        g.opts[n] = target * 8 + k
        n += 1
    g.nopts = n
    k = ask(g, dec, D_REARRANGE)
    if k < 0:
        return 0
    apply_perm(g, target, k & 7)
    log_add(g, LG_REARRANGE, dec, -1, -1, target, k & 7)
    return 1

cdef int swap_protocols(Game* g, int dec) noexcept nogil:
    cdef int k
    g.opts[0] = dec * 8 + 1    # swap middle and right
    g.opts[1] = dec * 8 + 2    # swap left and middle
    g.opts[2] = dec * 8 + 5    # swap left and right
    g.nopts = 3
    k = ask(g, dec, D_REARRANGE)
    if k < 0:
        return 0
    apply_perm(g, dec, k & 7)
    log_add(g, LG_REARRANGE, dec, -1, -1, dec, k & 7)
    return 1

# -- Main 2 / Aux 2 verbs ---------------------------------------------------------------------------

cdef int verb_state(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """State a number (0-6) or a protocol (any in the pool, even one not in this game)."""
    cdef int i, k, n = 0
    if st.n == 0:
        for i in range(7):
            g.opts[n] = i
            n += 1
    else:
        for i in range(g.nprotocols):
            if g.proto_cards[i * 6] >= 0:
                g.opts[n] = i
                n += 1
    g.nopts = n
    k = ask(g, dec, D_STATE_NUMBER if st.n == 0 else D_STATE_PROTOCOL)
    if k < 0:
        return 0
    fr.stated = k
    log_add(g, LG_STATE, dec, fr.src, -1, st.n, k)
    return 1

cdef int verb_shuffle(Game* g, int p, int trash_too) noexcept nogil:
    """Shuffle p's deck, first putting the trash into it (Clarity 4, Time 0/2)."""
    cdef int i, c
    if g.ndeck[p] + (g.ntrash[p] if trash_too else 0) == 0:
        return 0
    if trash_too:
        for i in range(g.ntrash[p]):
            c = g.trash[p][i]
            g.deck[p][g.ndeck[p]] = c
            g.ndeck[p] += 1
            g.zone[c] = Z_DECK
            g.face_up[c] = 0
        g.ntrash[p] = 0
    shuffle_deck(g, p)
    log_add(g, LG_SHUFFLE, p, -1, -1, 1 + trash_too, 0)
    if g.ndeck[p] > 1:
        g.ev[p] |= EV_SHUFFLE
        return 1
    return trash_too

cdef int verb_swap_stacks(Game* g, Frame* fr, int p) noexcept nogil:
    """Mirror 2: two of p's non-empty stacks trade lines, keeping their order (no card is
    covered or uncovered by it)."""
    cdef int32_t lines[3]
    cdef int8_t tmp[MAXCARDS]
    cdef int nl = 0, l, a, b, i, na
    for l in range(3):
        if g.nstack[p][l] > 0:
            lines[nl] = l
            nl += 1
    if nl < 2:
        return 0
    a = choose(g, p, D_LINE, lines, nl)
    if a < 0:
        return 0
    nl = drop_line(lines, nl, a)
    b = choose(g, p, D_LINE, lines, nl)
    if b < 0:
        return 0
    na = g.nstack[p][a]
    for i in range(na):
        tmp[i] = g.stack[p][a][i]
    for i in range(g.nstack[p][b]):
        g.stack[p][a][i] = g.stack[p][b][i]
        g.line[g.stack[p][b][i]] = a
    g.nstack[p][a] = g.nstack[p][b]
    for i in range(na):
        g.stack[p][b][i] = tmp[i]
        g.line[tmp[i]] = b
    g.nstack[p][b] = na
    touch(g)
    log_add(g, LG_SWAP_STACKS, p, fr.src, -1, a, b)
    return 1

cdef int copy_middle(Game* g, Frame* fr, int c) noexcept nogil:
    """Mirror 1 (rule 10): resolve card c's middle text as a new text of this card, controlled
    by this text's controller, with new targets; c itself is not involved any further."""
    if not on_field(g, fr.src):
        return 0
    log_add(g, LG_COPY, fr.ctrl, fr.src, c, 0, 0)
    if middle_ignored(g, fr.src):
        log_add(g, LG_SKIP, fr.ctrl, fr.src, -1, 0, 0)
        return 1
    run_text(g, fr.src, fr.ctrl, g.def_id[c], BOX_MIDDLE)
    return 1

cdef int verb_compile_protocol(Game* g, Frame* fr, int p) noexcept nogil:
    """Diversity 0 / Unity 1: turn this text's protocol on p's side to Compiled. Not a compile:
    no control, no deletions, no "after compile"; three Compiled protocols still win (4.3)."""
    cdef int l = protocol_line(g, fr)
    if l < 0 or g.compiled[p][l]:
        return 0
    g.compiled[p][l] = 1
    log_add(g, LG_COMPILE, p, fr.src, -1, l, 2)
    ev_rec(g, EK_COMPILE, p, g.proto[p][l], l, 1)
    record_compile(g, p, l, 0)
    check_win(g, p)
    return 1

cdef int reveal_candidates(Game* g, Frame* fr, const Step* st, int p, int32_t* out) noexcept nogil:
    """Cards a "reveal 1 card from ..." step may choose: from the trash, or among the cards this
    text drew that are still in hand (Luck 0)."""
    cdef int i, c, n = 0
    if st.source == S_TRASH:
        for i in range(g.ntrash[p]):
            c = g.trash[p][i]
            if card_fits(g, fr, st, c):
                out[n] = c
                n += 1
        return n
    if st.source == S_DRAWN:
        for i in range(g.nhand[p]):
            c = g.hand[p][i]
            if ((fr.drawn >> c) & 1) and card_fits(g, fr, st, c):
                out[n] = c
                n += 1
        return n
    if st.source == S_DECK_TOP or st.source == S_DECK:
        return 1 if g.ndeck[p] > 0 else 0
    return 0

cdef int verb_reveal_zone(Game* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Reveal (6.8) the deck's top card, the whole deck, or 1 chosen card of the trash or of the
    cards just drawn; a chosen card becomes "that card"."""
    cdef int32_t cand[MAXCARDS]
    cdef int n, c
    if st.source == S_DECK_TOP:
        if g.ndeck[p] == 0:
            return 0
        c = g.deck[p][g.ndeck[p] - 1]
        log_add(g, LG_REVEAL, p, fr.src, c, 3, 0)
        return 1
    if st.source == S_DECK:
        if g.ndeck[p] == 0:
            return 0
        log_add(g, LG_REVEAL, p, fr.src, -1, 4, g.ndeck[p])
        return 1
    n = reveal_candidates(g, fr, st, p, cand)
    if n == 0:
        return 0
    c = choose(g, p, D_TRASH if st.source == S_TRASH else D_HAND, cand, n)
    if c < 0:
        return 0
    fr.that = c
    log_add(g, LG_REVEAL, p, fr.src, c, 5, 0)
    return 1
