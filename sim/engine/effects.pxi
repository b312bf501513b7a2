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
    int src          # the card whose text this is
    int ctrl         # who controls the text: the card's owner (9.3)
    int box
    int home_line    # "this line" if the card is no longer on the field
    uint32_t epoch
    int that         # "that card": the last card a card-step of this text acted on
    int did          # did the previous step happen ("if you do")
    int discarded    # cards the controller discarded in this text

cdef inline int this_line(Game* g, Frame* fr) noexcept nogil:
    return g.line[fr.src] if g.zone[fr.src] == Z_FIELD else fr.home_line

cdef inline bint stopped(Game* g) noexcept nogil:
    return g.halt != 0 or g.winner >= 0

# -- event scopes: "after" windows --------------------------------------------------------------

cdef struct Scope:
    uint8_t ev0
    uint8_t ev1

cdef inline Scope scope_open(Game* g) noexcept nogil:
    cdef Scope s
    s.ev0 = g.ev[0]
    s.ev1 = g.ev[1]
    g.ev[0] = 0
    g.ev[1] = 0
    return s

cdef void scope_close(Game* g, Scope s) noexcept nogil:
    cdef uint8_t e0 = g.ev[0], e1 = g.ev[1]
    g.ev[0] = s.ev0
    g.ev[1] = s.ev1
    if (e0 or e1) and not stopped(g):
        fire_after(g, e0, e1)

cdef inline uint8_t event_of(int trig) noexcept nogil:
    if trig == TR_AFTER_DISCARD:
        return EV_DISCARD
    if trig == TR_AFTER_DRAW:
        return EV_DRAW
    if trig == TR_AFTER_DELETE:
        return EV_DELETE
    if trig == TR_AFTER_CLEAR_CACHE:
        return EV_CLEAR_CACHE
    return 0

cdef void fire_after(Game* g, uint8_t e0, uint8_t e1) noexcept nogil:
    """Note every active "After ...:" box matching these events, then resolve them one at a time
    in the active player's order (7.3, 7.4)."""
    cdef int32_t note[MAXNOTE]
    cdef int nn = 0, s, l, i, c, box, o
    cdef uint8_t ev, mine
    cdef const CardDef* d
    if not may_trigger(g, (1u << TR_AFTER_DISCARD) | (1u << TR_AFTER_DRAW) | (1u << TR_AFTER_DELETE)
                       | (1u << TR_AFTER_CLEAR_CACHE)):
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
                    if d.by_opp[box]:
                        mine = e1 if o == 0 else e0
                    else:
                        mine = e0 if o == 0 else e1
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
    cdef const CardDef* d = cdef_of(g, c)
    cdef Frame fr
    if d.step_len[box] == 0 or stopped(g):
        return
    if g.depth >= DEPTH_LIMIT:
        g.winner = 2
        g.end_reason = ER_LOOP_GUARD
        return
    fr.src = c
    fr.ctrl = g.owner[c]
    fr.box = box
    fr.home_line = g.line[c]
    fr.epoch = g.epoch[c]
    fr.that = -1
    fr.did = 1
    fr.discarded = 0
    cdef int saved_src = g.cur_src
    log_add(g, LG_TRIGGER, fr.ctrl, c, -1, box, 0)
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
    if middle_ignored(g, c):
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
        if st.cond == COND_DID and not fr.did:
            fr.did = 0
            continue
        if st.cond == COND_THIS_COVERED and (not on_field(g, fr.src) or is_uncovered(g, fr.src)):
            fr.did = 0
            continue
        if st.cond == COND_THIS_COVERING and (not on_field(g, fr.src) or stack_pos(g, fr.src) <= 0):
            fr.did = 0
            continue
        sc = scope_open(g)
        fr.did = do_step(g, fr, st)
        scope_close(g, sc)

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
    return 0

# -- what a step could do (6.2: mandatory choices must change the state) ------------------------

cdef bint step_possible(Game* g, Frame* fr, const Step* st) noexcept nogil:
    cdef int dec = decider(fr, st), v = st.verb
    cdef int32_t scratch[MAXCARDS]
    if v == V_DRAW:
        if st.source == S_OPP_DECK:
            return g.ndeck[1 - dec] + g.ntrash[1 - dec] > 0
        return g.ndeck[dec] + g.ntrash[dec] > 0
    if v == V_DISCARD or v == V_GIVE or v == V_REVEAL_FROM_HAND:
        return g.nhand[dec] > 0
    if v == V_TAKE:
        return g.nhand[1 - dec] > 0
    if v == V_REFRESH:
        return can_refresh(g, dec)
    if v == V_FLIP or v == V_DELETE or v == V_RETURN or v == V_SHIFT or v == V_REVEAL:
        if st.count_kind == CK_THIS:
            return on_field(g, fr.src) and (v != V_SHIFT or shift_dests(g, fr, st, fr.src, scratch) > 0)
        if st.count_kind == CK_THAT:
            return fr.that >= 0 and on_field(g, fr.that) and (v != V_SHIFT or shift_dests(g, fr, st, fr.that, scratch) > 0)
        return collect(g, fr, st, -1, scratch) > 0
    if v == V_PLAY:
        if st.source == S_HAND:
            return hand_play_options(g, fr, st, dec) > 0
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
    if st.verb == V_SHIFT and st.to == T_THIS_LINE and l == tl:
        return False
    return True

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
        out[n] = l
        n += 1
    return n

cdef int choose(Game* g, int player, int kind, int32_t* items, int n) noexcept nogil:
    """Offer these items (cards or lines) as the options of one decision."""
    cdef int i
    for i in range(n):
        g.opts[i] = items[i]
    g.nopts = n
    return ask(g, player, kind)

# -- verbs -------------------------------------------------------------------------------------

cdef int step_amount(Game* g, Frame* fr, const Step* st) noexcept nogil:
    if st.count_kind == CK_DISCARDED_PLUS1:
        return fr.discarded + 1
    if st.count_kind == CK_VALUE_OF_THAT:
        return card_value(g, fr.that) if fr.that >= 0 else 0
    if st.count_kind == CK_PER2_IN_LINE:
        return line_cards(g, this_line(g, fr)) // 2
    return st.n

cdef int verb_draw(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int n = step_amount(g, fr, st), i, got = 0
    if st.source == S_OPP_DECK:
        for i in range(n):
            got += draw_from_opponent(g, dec)
        return got > 0
    return draw_cards(g, dec, n) > 0

cdef int verb_discard(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int k
    if st.count_kind == CK_ONE_OR_MORE:
        k = discard_cards(g, dec, 99, True)
    else:
        k = discard_cards(g, dec, step_amount(g, fr, st), False)
    if dec == fr.ctrl:
        fr.discarded += k
    return k > 0

cdef int act_on(Game* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    """Apply a field verb to one chosen card."""
    cdef int32_t lines[3]
    cdef int n, l
    fr.that = c
    if st.verb == V_FLIP:
        return flip_card(g, c, dec)
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
    if st.each == E_OTHER_LINE:
        tl = this_line(g, fr)
        nl = 0
        for l in range(3):
            if l != tl:
                lines[nl] = l
                nl += 1
        while nl > 0 and not stopped(g):
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
            put_hand(g, g.owner[c], c)
            log_add(g, LG_RETURN, dec, fr.src, c, 0, 0)
        elif st.verb == V_FLIP:
            if g.face_up[c] and has_trigger(g, c, TR_COVERED_OR_FLIPPED) >= 0:
                continue            # handled below: it deletes itself instead
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
    """Every legal (card, line, face) play from p's hand into g.opts, encoded card | line << 8 |
    face-up << 10; the turn's action and "Play 1 card" effects share it."""
    cdef int n = 0, i, c, l, up
    for i in range(g.nhand[p]):
        c = g.hand[p][i]
        for l in range(3):
            if l == not_line or (only_line >= 0 and l != only_line):
                continue
            for up in range(1, -1, -1):
                if up and down_only:
                    continue
                if can_play_face(g, p, c, l, up):
                    g.opts[n] = c | (l << 8) | (up << 10)
                    n += 1
    return n

cdef int hand_play_options(Game* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Options for "Play 1 card" from hand, with the step's line and face restrictions."""
    cdef int tl = this_line(g, fr)
    return play_options(g, p, tl if st.to == T_THIS_LINE else -1, tl if st.to == T_OTHER_LINE else -1,
                        st.face_down)

cdef int verb_play(Game* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t lines[3]
    cdef int n, k, c, l, i, nl, done = 0, tl = this_line(g, fr)
    if st.source == S_HAND:
        for i in range(st.n):
            g.nopts = hand_play_options(g, fr, st, dec)
            k = ask(g, dec, D_PLAY)
            if k < 0:
                break
            c = k & 0xFF
            list_remove(g.hand[dec], &g.nhand[dec], c)
            g.zone[c] = Z_TRANSIT
            play_card(g, dec, c, dec, (k >> 8) & 3, (k >> 10) & 1, -1)
            done = 1
        return done
    # from the top of the deck, always face-down; no reshuffle (6.5)
    if st.each != E_NONE:
        nl = 0
        for l in range(3):
            if st.each == E_OTHER_LINE and l == tl:
                continue
            if st.each == E_LINE_WITH_YOUR_CARD and g.nstack[dec][l] == 0:
                continue
            lines[nl] = l
            nl += 1
        while nl > 0 and not stopped(g):
            l = choose(g, dec, D_EACH_LINE, lines, nl)
            if l < 0:
                return done
            nl = drop_line(lines, nl, l)
            done |= play_from_deck(g, dec, l, -1)
            if g.epoch[fr.src] != fr.epoch:
                break
        return done
    n = step_amount(g, fr, st)
    for i in range(n):
        if stopped(g):
            break
        if st.under_this:
            if not on_field(g, fr.src):
                break
            done |= play_from_deck(g, dec, g.line[fr.src], fr.src)
            continue
        nl = 0
        for l in range(3):
            if st.to == T_THIS_LINE and l != tl:
                continue
            if st.to == T_OTHER_LINE and l == tl:
                continue
            if can_play_down_into(g, dec, l):
                lines[nl] = l
                nl += 1
        if nl == 0 or g.ndeck[dec] == 0:
            break
        l = choose(g, fr.ctrl, D_LINE, lines, nl)
        if l < 0:
            break
        done |= play_from_deck(g, dec, l, -1)
    return done

cdef int play_from_deck(Game* g, int p, int l, int under) noexcept nogil:
    cdef int c
    if g.ndeck[p] == 0 or not can_play_down_into(g, p, l):
        return 0
    g.ndeck[p] -= 1
    c = g.deck[p][g.ndeck[p]]
    g.zone[c] = Z_TRANSIT
    play_card(g, p, c, p, l, 0, under)
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

cdef int discard_cards(Game* g, int p, int n, bint one_or_more) noexcept nogil:
    """Player p discards n cards of their choice (or 1 or more, stopping at "done")."""
    cdef int i, k, c, got = 0
    while got < n and g.nhand[p] > 0 and not stopped(g):
        for i in range(g.nhand[p]):
            g.opts[i] = g.hand[p][i]
        k = g.nhand[p]
        if one_or_more and got >= 1:
            g.opts[k] = OPT_DONE
            k += 1
        g.nopts = k
        c = ask(g, p, D_DISCARD_MORE if one_or_more else D_DISCARD)
        if c < 0 or c == OPT_DONE:
            break
        list_remove(g.hand[p], &g.nhand[p], c)
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, 0, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DISCARD
    return got

cdef int flip_card(Game* g, int c, int actor) noexcept nogil:
    cdef int box
    if not on_field(g, c):
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
    if g.face_up[c] and is_uncovered(g, c):
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
    put_hand(g, g.owner[c], c)
    log_add(g, LG_RETURN, actor, g.cur_src, c, 0, 0)
    if was_top:
        uncovered(g, s, l)
    return 1

cdef void before_cover(Game* g, int s, int l) noexcept nogil:
    """"When this card would be covered: First, ..." resolves completely before a card lands
    (5.3); if that removes the card, the next card down may have such text too."""
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
    before_cover(g, s, dest)
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
        before_cover(g, s, l)
        if stopped(g):
            return
        stack_put(g, c, s, l, -1)
    if up:
        g.plays_up[p] += 1
    else:
        g.plays_down[p] += 1
    log_add(g, LG_PLAY, p, g.cur_src, c, l, up | (s << 1) | ((under >= 0) << 2))
    ev_rec(g, EK_PLAY_UP if up else EK_PLAY_DOWN, p, g.def_id[c], l, g.cur_src >= 0)
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
