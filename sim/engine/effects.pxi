# Effect resolution: the interpreter of compiled card steps (rules 6 and 7).
#
# Resolution is depth-first (LIFO, 7.1): a primitive that uncovers or flips up a card resolves
# that card's middle text before returning; "after" windows open when a whole step, with all its
# consequences, is done (7.3). A text stops when its card's epoch changes (covered, flipped or
# removed: 7.2); a shift does not change it.

cdef enum:
    GUARD_LIMIT = 200000
    DEPTH_LIMIT = 100          # nested texts: beyond this the players are looping forever

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

cdef inline int this_line(State* g, Frame* fr) noexcept nogil:
    return g.line[fr.src] if g.zone[fr.src] == Z_FIELD else fr.home_line

cdef inline bint stopped(State* g) noexcept nogil:
    return g.halt != HALT_NONE or g.winner >= 0

cdef struct Scope:
    uint8_t ev0
    uint8_t ev1
    uint8_t evl0
    uint8_t evl1

cdef inline Scope scope_open(State* g) noexcept nogil:
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

cdef inline void scope_close(State* g, Scope s) noexcept nogil:
    """Give the enclosing scope its events back, then open the "after" window of this one's
    events (7.3). Inline, with the cheap test first: most steps wake no face-up card, and then
    no call is made at all."""
    cdef uint8_t e0 = g.ev[0], e1 = g.ev[1], l0 = g.evl[0], l1 = g.evl[1]
    g.ev[0] = s.ev0
    g.ev[1] = s.ev1
    g.evl[0] = s.evl0
    g.evl[1] = s.evl1
    if (e0 | e1) and not stopped(g) and may_trigger(g, after_triggers(e0 | e1)):
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

cdef inline uint32_t after_triggers(uint8_t ev) noexcept nogil:
    """The "After ..." triggers these events can fire (the inverse of event_of); each bit is
    moved, not branched on: which events happened is data."""
    return ((<uint32_t>((ev & EV_DISCARD) != 0) << TR_AFTER_DISCARD)
            | (<uint32_t>((ev & EV_DRAW) != 0) << TR_AFTER_DRAW)
            | (<uint32_t>((ev & EV_DELETE) != 0) << TR_AFTER_DELETE)
            | (<uint32_t>((ev & EV_CLEAR_CACHE) != 0) << TR_AFTER_CLEAR_CACHE)
            | (<uint32_t>((ev & EV_PLAY) != 0) << TR_AFTER_PLAY)
            | (<uint32_t>((ev & EV_REFRESH) != 0) << TR_AFTER_REFRESH)
            | (<uint32_t>((ev & EV_COMPILE) != 0) << TR_AFTER_COMPILE)
            | (<uint32_t>((ev & EV_SHUFFLE) != 0) << TR_AFTER_SHUFFLE))


cdef void fire_after(State* g, uint8_t e0, uint8_t e1, uint8_t l0, uint8_t l1) noexcept nogil:
    """Note every active "After ...:" box matching these events, then resolve them one at a time
    in the active player's order (7.3, 7.4). `by` picks whose events count, `during` whose turn
    it must be, `here` (after_play) that the play went into the card's line. Called only when
    a face-up card may listen to these events (scope_close)."""
    cdef int32_t note[MAXNOTE]
    cdef int nn = 0, s, l, i, c, box, o
    cdef uint8_t ev, mine, lines
    cdef const CardDef* d
    cdef uint32_t wanted = after_triggers(e0 | e1)
    for s in range(2):
        for l in range(3):
            if not (g.trig_line[s][l] & wanted):
                continue
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
                        note[nn] = noted_option(c, box)
                        nn += 1
    resolve_noted(g, note, nn)

cdef int ask_order(State* g, const int32_t* note, int nn) noexcept nogil:
    """The active player picks which of the noted texts resolves next (3.1); negative when the
    game stopped."""
    cdef int i
    for i in range(nn):
        g.opts[i] = note[i]
    g.nopts = nn
    return ask(g, g.active, D_ORDER)

cdef void resolve_noted(State* g, int32_t* note, int nn) noexcept nogil:
    """Resolve noted trigger boxes one at a time in the active player's order, skipping those no
    longer active (3.1)."""
    cdef int i, k, pick, c, box
    while nn > 0 and not stopped(g):
        pick = ask_order(g, note, nn)
        if pick < 0:
            return
        k = 0
        for i in range(nn):
            if note[i] == pick:
                k = i
                break
        note[k] = note[nn - 1]
        nn -= 1
        c = noted_card(pick)
        box = noted_box(pick)
        if box_active(g, c, box):
            run_box(g, c, box)

cdef void end_in_loop(State* g, int defn) noexcept nogil:
    """A draw: texts triggered each other past the bound (a loop a player may choose, or none can
    leave); `defn`, the card whose text was resolving then, is the one that repeated."""
    g.winner = 2
    g.end_reason = ER_LOOP_GUARD
    g.loop_card = defn

cdef void run_box(State* g, int c, int box) noexcept nogil:
    run_text(g, c, g.owner[c], g.def_id[c], box)

cdef void run_text(State* g, int c, int ctrl, int defn, int box) noexcept nogil:
    """Resolve one box of definition `defn` as text of card c controlled by ctrl: a card's own
    text, or a copy of another card's text (10.1: "this card" is c, the copier controls it)."""
    cdef const CardDef* d = &g.cdefs[defn]
    cdef Frame fr
    if d.step_len[box] == 0 or stopped(g):
        return
    if g.depth >= DEPTH_LIMIT:
        end_in_loop(g, defn)
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

cdef void resolve_middle(State* g, int c) noexcept nogil:
    """Middle text of a card played face-up, flipped face-up while uncovered, or uncovered (2.3)."""
    if stopped(g) or not on_field(g, c) or not g.face_up[c]:
        return
    if cdef_of(g, c).step_len[BOX_MIDDLE] == 0:
        return
    if middle_ignored(g, c) or middle_suppressed(g, c):
        log_add(g, LG_SKIP, g.owner[c], c, -1, LN_SKIP_MIDDLE_IGNORED, 0)
        return
    run_box(g, c, BOX_MIDDLE)

cdef void run_steps(State* g, Frame* fr, int start, int n) noexcept nogil:
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
            end_in_loop(g, fr.defn)
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

cdef bint condition_holds(State* g, Frame* fr, const Step* st) noexcept nogil:
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
        a = amount_of(g, fr, st, st.cond_a, 0, fr.ctrl)
        b = amount_of(g, fr, st, st.cond_b, st.cond_n, fr.ctrl)
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

cdef int distinct_protocols(State* g, int only_line) noexcept nogil:
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

cdef int protocol_cards(State* g, int pr, int skip) noexcept nogil:
    """Face-up cards of protocol pr on the field, not counting card `skip`."""
    cdef int s, l, i, c, n = 0
    for s in range(2):
        for l in range(3):
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                if c != skip and g.face_up[c] and cdef_of(g, c).protocol == pr:
                    n += 1
    return n

cdef int amount(State* g, Frame* fr, int kind, int n, int who) noexcept nogil:
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

cdef int ask_may(State* g, int player) noexcept nogil:
    g.opts[0] = 1
    g.opts[1] = 0
    g.nopts = 2
    return ask(g, player, D_MAY)

cdef int do_step(State* g, Frame* fr, const Step* st) noexcept nogil:
    """Resolve one step; returns 1 if it happened (changed the game), else 0."""
    cdef int verb = g.cur_verb, src = g.cur_dec_src, box = g.cur_dec_box, r
    g.cur_verb = st.verb
    g.cur_dec_src = fr.src
    g.cur_dec_box = fr.box
    r = do_step_body(g, fr, st)
    g.cur_verb = verb
    g.cur_dec_src = src
    g.cur_dec_box = box
    return r

cdef int do_step_body(State* g, Frame* fr, const Step* st) noexcept nogil:
    """Ask an optional step's decider (only when it could change the game), then resolve it by
    its verb's implementation (the dispatch table bound in _vocab_impl.pxi)."""
    cdef int dec = decider(fr, st)
    if st.may:
        if not step_possible(g, fr, st):
            return 0
        if ask_may(g, dec) != 1:
            return 0
    return VERB_DO[st.verb](g, fr, st, dec)

cdef bint step_possible(State* g, Frame* fr, const Step* st) noexcept nogil:
    """Could the step change the game state (6.2)? Asked before an optional step and of each
    alternative of an `either`."""
    return VERB_POSSIBLE[st.verb](g, fr, st, decider(fr, st))

cdef bint branch_possible(State* g, Frame* fr, int start, int n) noexcept nogil:
    if n <= 0:
        return False
    return step_possible(g, fr, &g.steps[start])
