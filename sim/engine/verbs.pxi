# The verbs of the card language (docs/cards.md), declared in sim/cards/vocabulary/verbs.py. Each verb
# NAME has `verb_NAME` (resolve the step; 1 if it changed the game) and `possible_NAME` (could it,
# 6.2); a field verb has `act_NAME` (act on one chosen card) and shares verb_field/possible_field.
# The engine dispatches to them by the tables _vocab_impl.pxi binds by these names.

cdef int verb_none(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return 0

cdef bint possible_always(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """Verbs that can always be tried (the engine has no cheap test for them)."""
    return True

cdef int act_none(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return 0

cdef inline int step_amount(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    if st.per >= 0 or st.count_kind == CK_COUNTED:
        return step_n(g, fr, st)
    return amount(g, fr, st.count_kind, st.n, dec)

cdef int verb_draw(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
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

cdef bint possible_draw(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t scratch[MAXCARDS]
    if draw_blocked(g, dec):
        return False
    if st.source == S_OPP_DECK:
        return g.ndeck[1 - dec] + g.ntrash[1 - dec] > 0
    if st.source == S_DECK:
        return deck_matches(g, fr, st, dec, scratch) > 0
    return g.ndeck[dec] + g.ntrash[dec] > 0

cdef int draw_searched(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Draw chosen cards out of a revealed deck (Clarity 2/3: one; Unity 4: all that match).
    A draw, so Ice 6 stops it and after-draw triggers see it; it never reshuffles."""
    cdef int32_t cand[MAXCARDS]
    cdef int n, c, got = 0, most = step_n(g, fr, st)
    if draw_blocked(g, p):
        return 0
    while not stopped(g):
        if st.count_kind != CK_ALL and got >= most:
            break
        n = deck_matches(g, fr, st, p, cand)
        if n == 0:
            break
        c = cand[0] if st.count_kind == CK_ALL else choose(g, p, D_DECK, cand, n)
        if c < 0:
            break
        list_remove(g.deck[p], &g.ndeck[p], c)
        put_hand(g, p, c)
        ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DRAW
        log_add(g, LG_DRAW, p, -1, -1, got, LN_DRAW_REVEALED)
    return got

cdef int verb_discard(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int k, c, q, n
    cdef int ck = st.count_kind
    if denied(g, DN_DISCARD, dec, -1, -1, -1):
        return 0
    if st.source == S_DECK_TOP or st.source == S_OPP_DECK:
        # the top card(s) of a deck go to that deck owner's trash; no reshuffle
        q = dec if st.source == S_DECK_TOP else 1 - dec
        n = g.ndeck[q] if ck == CK_ALL else step_amount(g, fr, st, dec)
        k = 0
        while k < n and g.ndeck[q] > 0:
            g.ndeck[q] -= 1
            c = g.deck[q][g.ndeck[q]]
            put_trash(g, c)
            log_add(g, LG_DISCARD, dec, -1, c, LN_DISCARD_OPP_DECK if q != dec else LN_DISCARD_DECK_TOP, 0)
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

cdef bint possible_discard(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    if denied(g, DN_DISCARD, dec, -1, -1, -1):
        return False
    if st.source == S_DECK_TOP:
        return g.ndeck[dec] > 0
    if st.source == S_OPP_DECK:
        return g.ndeck[1 - dec] > 0
    return g.nhand[dec] > 0

cdef inline int act_on(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    """Apply a field verb to one chosen card, which becomes "that card"."""
    fr.that = c
    return VERB_ACT[st.verb](g, fr, st, c, dec)

cdef int act_flip(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return flip_card_ex(g, c, dec, not st.no_middle)

cdef int act_take_field(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return take_from_field(g, c, dec)

cdef int act_delete(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return delete_card(g, c, dec)

cdef int act_return(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return return_card(g, c, dec)

cdef int act_reveal(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    log_add(g, LG_REVEAL, dec, fr.src, c, LN_REVEAL_FIELD, 0)
    return 1

cdef int act_shift(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    cdef int32_t lines[3]
    cdef int n = shift_dests(g, fr, st, c, lines), l
    if n == 0:
        return 0
    l = choose(g, dec, D_LINE, lines, n)
    if l < 0:
        return 0
    return shift_card(g, c, l, dec)

cdef int act_gain_control(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    return control_card(g, c, dec)

cdef bint possible_field(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t scratch[MAXCARDS]
    cdef int v = st.verb, c
    if st.count_kind == CK_THIS or st.count_kind == CK_THAT:
        c = fr.src if st.count_kind == CK_THIS else fr.that      # this card, or "that card"
        return (c >= 0 and on_field(g, c) and (v != V_SHIFT or shift_dests(g, fr, st, c, scratch) > 0)
                and (v != V_GAIN_CONTROL or g.side[c] != dec)
                and not (g.has_deny and field_denied(g, v, dec, c, g.line[c])))
    return collect(g, fr, st, -1, scratch) > 0

cdef inline int drop_acted(int32_t* cand, int n, uint64_t acted) noexcept nogil:
    """Keep the candidates this step has not acted on yet ("any number of" picks different cards)."""
    cdef int i, k = 0
    for i in range(n):
        if not ((acted >> cand[i]) & 1):
            cand[k] = cand[i]
            k += 1
    return k

cdef int verb_field(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t cand[MAXCARDS]
    cdef int32_t lines[3]
    cdef int n, i, c, k, done = 0, nl, l, tl, most
    cdef int ck = st.count_kind
    cdef uint64_t acted = 0
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
    # "any number of" is "up to" every match, one different card at a time
    most = MAXCARDS if ck == CK_ANY_NUMBER else step_n(g, fr, st)
    for k in range(most):
        if stopped(g):
            break
        n = collect(g, fr, st, -1, cand)
        if ck == CK_ANY_NUMBER:
            n = drop_acted(cand, n, acted)
        if n == 0:
            break
        if (st.up_to or ck == CK_ANY_NUMBER) and ask_may(g, dec) != 1:
            break                      # "up to n": the decider stops here
        c = choose(g, dec, D_TARGET, cand, n)
        if c < 0:
            break
        acted |= (<uint64_t>1) << c
        done |= act_on(g, fr, st, c, dec)
    return done

cdef int verb_all(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """"All": every matching card at once, with no triggers in between (6.4); the cards that
    become uncovered resolve their middle text afterwards, in the active player's order."""
    cdef int32_t cand[MAXCARDS]
    cdef int32_t lines[3]
    cdef int32_t tops_before[6]
    cdef int n, i, c, l, nl = 0, chosen = -1, s, dest = -1, epoch
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
        for i in range(n):              # a restriction keeps a card out of that line: it stays
            if denied(g, DN_SHIFT_TO, dec, g.side[cand[i]], cand[i], dest):
                cand[i] = -1
    for s in range(2):
        for l in range(3):
            tops_before[s * 3 + l] = top_card(g, s, l)
    for i in range(n):
        c = cand[i]
        if st.verb == V_DELETE:
            stack_remove(g, c)
            bump(g, c)
            put_trash(g, c)
            log_add(g, LG_DELETE, dec, fr.src, c, LN_DELETE_BY_TEXT, 0)
            ev_rec(g, EK_DELETE, g.owner[c], g.def_id[c], g.line[c], 0)
            g.ev[dec] |= EV_DELETE
        elif st.verb == V_RETURN:
            stack_remove(g, c)
            bump(g, c)
            put_returned(g, c)
            log_add(g, LG_RETURN, dec, fr.src, c, LN_RETURN_TO_HAND, 0)
        elif st.verb == V_FLIP:
            if g.face_up[c] and has_trigger(g, c, TR_COVERED_OR_FLIPPED) >= 0:
                continue            # handled below: its "First, ..." text before its flip
            if unflippable(g, c):
                continue
            turn_over(g, c)
            bump(g, c)
            log_add(g, LG_FLIP, dec, fr.src, c, g.face_up[c], 0)
        elif st.verb == V_SHIFT or st.verb == V_GAIN_CONTROL:
            if c >= 0:
                stack_remove(g, c)
    if st.verb == V_GAIN_CONTROL:       # each joins the decider's side of its line, in collected order
        for i in range(n):
            c = cand[i]
            stack_put(g, c, dec, g.line[c], -1)
            log_add(g, LG_GAIN_CONTROL, dec, fr.src, c, g.line[c], 0)
    if st.verb == V_SHIFT:
        for i in range(n):
            c = cand[i]
            if c >= 0:
                stack_put(g, c, g.side[c], dest, -1)
            log_add(g, LG_SHIFT, dec, fr.src, c, dest, 0)
    if st.verb == V_FLIP:
        for i in range(n):
            c = cand[i]
            if g.face_up[c] and on_field(g, c) and has_trigger(g, c, TR_COVERED_OR_FLIPPED) >= 0:
                epoch = g.epoch[c]
                run_box(g, c, has_trigger(g, c, TR_COVERED_OR_FLIPPED))
                if g.epoch[c] == epoch and on_field(g, c) and not unflippable(g, c):   # not Metal 6: flipped after
                    turn_over(g, c)
                    bump(g, c)
                    log_add(g, LG_FLIP, dec, fr.src, c, g.face_up[c], 0)
    resolve_new_tops(g, tops_before)
    return 1

cdef void resolve_new_tops(State* g, int32_t* tops_before) noexcept nogil:
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
                note[nn] = noted_option(t, BOX_MIDDLE)
                nn += 1
    while nn > 0 and not stopped(g):
        t = ask_order(g, note, nn)
        if t < 0:
            return
        nn = drop_line(note, nn, t)
        if is_uncovered(g, noted_card(t)):
            resolve_middle(g, noted_card(t))

cdef int verb_refresh(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return do_refresh(g, dec)

cdef bint possible_refresh(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return can_refresh(g, dec)

cdef int verb_rearrange(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """Mode 0: the decider's own protocols; 1: the opponent's."""
    return rearrange(g, dec, dec if st.mode == 0 else 1 - dec)

cdef int verb_swap(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return swap_protocols(g, dec)

cdef int verb_reveal_hand(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    log_add(g, LG_REVEAL, dec, -1, -1, LN_REVEAL_HAND, g.nhand[dec])
    return g.nhand[dec] > 0

cdef int verb_deny_compile(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    g.no_compile_turn[1 - dec] = g.turn + (2 if g.active == 1 - dec else 1)
    log_add(g, LG_DENY, dec, fr.src, -1, 0, g.no_compile_turn[1 - dec])
    return 1

cdef bint possible_hand(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return g.nhand[dec] > 0

cdef int verb_reveal_from_hand(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    cdef int c
    if g.nhand[p] == 0:
        return 0
    c = choose_hand(g, p)
    if c < 0:
        return 0
    log_add(g, LG_REVEAL, p, -1, c, LN_REVEAL_FROM_HAND, 0)
    return 1

cdef int choose_hand(State* g, int p) noexcept nogil:
    cdef int i
    for i in range(g.nhand[p]):
        g.opts[i] = g.hand[p][i]
    g.nopts = g.nhand[p]
    return ask(g, p, D_HAND)

cdef bint possible_reveal_from_hand(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return possible_hand(g, fr, st, dec)

cdef int verb_give(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    cdef int i, c, done = 0, n = step_n(g, fr, st)
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

cdef bint possible_give(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return possible_hand(g, fr, st, dec)

cdef int verb_take(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    cdef int i, c, o = 1 - p, done = 0, n = step_n(g, fr, st)
    for i in range(n):
        if g.nhand[o] == 0:
            break
        c = g.hand[o][rng_below(g, STREAM_GAME, g.nhand[o])]
        list_remove(g.hand[o], &g.nhand[o], c)
        g.owner[c] = p
        put_hand(g, p, c)
        log_add(g, LG_TAKE, p, -1, c, LN_TAKE_RANDOM, 0)
        done = 1
    return done

cdef bint possible_take(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return g.nhand[1 - dec] > 0

cdef int verb_take_trash(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Put N cards of p's trash, each chosen by p, into p's hand (not a draw: no after_draw, and
    what stops draws does not stop it); the last becomes "that card"."""
    cdef int32_t cand[MAXCARDS]
    cdef int i, k, c, done = 0, n = step_n(g, fr, st)
    for i in range(n):
        if g.ntrash[p] == 0:
            break
        for k in range(g.ntrash[p]):
            cand[k] = g.trash[p][k]
        c = choose(g, p, D_TRASH, cand, g.ntrash[p])
        if c < 0:
            break
        list_remove(g.trash[p], &g.ntrash[p], c)
        put_hand(g, p, c)
        fr.that = c
        log_add(g, LG_TAKE, p, fr.src, c, LN_TAKE_TRASH, 0)
        done = 1
    return done

cdef bint possible_take_trash(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return g.ntrash[dec] > 0

cdef bint possible_either(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return branch_possible(g, fr, st.alt_a, st.alt_a_len) or branch_possible(g, fr, st.alt_b, st.alt_b_len)

cdef int verb_either(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
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

cdef int verb_state(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    """State a number (0-6, mode 0) or a protocol (mode 1: any in the pool, even one not in this
    game)."""
    cdef int i, k, n = 0
    if st.mode == 0:
        for i in range(7):
            g.opts[n] = i
            n += 1
    else:
        for i in range(g.nprotocols):
            if g.proto_cards[i * 6] >= 0:
                g.opts[n] = i
                n += 1
    g.nopts = n
    k = ask(g, dec, D_STATE_NUMBER if st.mode == 0 else D_STATE_PROTOCOL)
    if k < 0:
        return 0
    fr.stated = k
    log_add(g, LG_STATE, dec, fr.src, -1, st.mode, k)
    return 1

cdef int verb_shuffle(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Shuffle p's deck (mode 0), or first put the trash into it (mode 1: Clarity 4, Time 0/2)."""
    if st.mode == 1:
        if g.ndeck[p] + g.ntrash[p] == 0:
            return 0
        reshuffle_trash(g, p)
        return 1
    if g.ndeck[p] == 0:
        return 0
    shuffle_deck(g, p)
    log_add(g, LG_SHUFFLE, p, -1, -1, LN_SHUFFLE_DECK, 0)
    if g.ndeck[p] < 2:
        return 0                       # shuffling 1 card changes nothing (Time 2 ruling)
    g.ev[p] |= EV_SHUFFLE
    return 1

cdef bint possible_shuffle(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    return g.ntrash[dec] > 0 if st.mode == 1 else g.ndeck[dec] > 1

cdef bint possible_swap_stacks(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    return (g.nstack[p][0] > 0) + (g.nstack[p][1] > 0) + (g.nstack[p][2] > 0) >= 2

cdef int verb_swap_stacks(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
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

cdef int act_copy_middle(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil:
    """Mirror 1 (rule 10): resolve card c's middle text as a new text of this card, controlled
    by this text's controller, with new targets; c itself is not involved any further."""
    if not on_field(g, fr.src):
        return 0
    log_add(g, LG_COPY, fr.ctrl, fr.src, c, 0, 0)
    if middle_ignored(g, fr.src):
        log_add(g, LG_SKIP, fr.ctrl, fr.src, -1, LN_SKIP_MIDDLE_IGNORED, 0)
        return 1
    run_text(g, fr.src, fr.ctrl, g.def_id[c], BOX_MIDDLE)
    return 1

cdef int verb_compile_protocol(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Diversity 0 / Unity 1: turn this text's protocol on p's side to Compiled. Not a compile:
    no control, no deletions, no "after compile"; three Compiled protocols still win (4.3)."""
    cdef int l = protocol_line(g, fr)
    if l < 0 or g.compiled[p][l]:
        return 0
    g.compiled[p][l] = 1
    log_add(g, LG_COMPILE, p, fr.src, -1, l, LN_COMPILE_BY_TEXT)
    ev_rec(g, EK_COMPILE, p, g.proto[p][l], l, 1)
    record_compile(g, p, l, 0)
    check_win(g, p)
    return 1

cdef int reveal_candidates(State* g, Frame* fr, const Step* st, int p, int32_t* out) noexcept nogil:
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

cdef bint possible_reveal_zone(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    cdef int32_t scratch[MAXCARDS]
    return reveal_candidates(g, fr, st, p, scratch) > 0

cdef int verb_reveal_zone(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
    """Reveal (6.8) the deck's top card, the whole deck, or 1 chosen card of the trash or of the
    cards just drawn; a chosen card becomes "that card"."""
    cdef int32_t cand[MAXCARDS]
    cdef int n, c
    if st.source == S_DECK_TOP:
        if g.ndeck[p] == 0:
            return 0
        c = g.deck[p][g.ndeck[p] - 1]
        log_add(g, LG_REVEAL, p, fr.src, c, LN_REVEAL_DECK_TOP, 0)
        return 1
    if st.source == S_DECK:
        if g.ndeck[p] == 0:
            return 0
        log_add(g, LG_REVEAL, p, fr.src, -1, LN_REVEAL_DECK, g.ndeck[p])
        return 1
    n = reveal_candidates(g, fr, st, p, cand)
    if n == 0:
        return 0
    c = choose(g, p, D_TRASH if st.source == S_TRASH else D_HAND, cand, n)
    if c < 0:
        return 0
    fr.that = c
    log_add(g, LG_REVEAL, p, fr.src, c, LN_REVEAL_TRASH_OR_DRAWN, 0)
    return 1
