# Playing cards (rule 5): the legal (card, line, face, side) options shared by the action and
# by "play" effects, and landing a committed card.

cdef int play_options(State* g, int p, int only_line, int not_line, bint down_only) noexcept nogil:
    """Every legal (card, line, face) play from p's hand into g.opts (the turn's action)."""
    return card_play_options(g, p, g.hand[p], g.nhand[p], only_line, not_line, down_only, 0, NULL, NULL)

cdef int card_play_options(State* g, int p, const int8_t* cards, int ncards, int only_line,
                           int not_line, bint down_only, int line_rule, Frame* fr,
                           const Step* st) noexcept nogil:
    """Legal plays of these cards into g.opts (play_option, options.pxd): the one statement of rule 5.1 and the play passives, shared by the
    action and every "play" effect. `line_rule` is a Dest (T_LINE_WITH_FACEDOWN), `st` adds the
    step's value and protocol filters. The per-line facts are looked up once per call: this runs
    for every action of every game."""
    cdef int n = 0, i, c, l, side, nsides, pr, o = 1 - p, up_ok, up, down, card_anywhere
    cdef int side_lo = 1 if (st != NULL and st.side_opp) else 0   # "on your opponent's side"
    cdef uint32_t opp_all, mine_all
    cdef bint line_ok[3]
    cdef bint down_ok[3]
    cdef int free_up[2][3]              # no restriction forbids p this face-up / face-down play
    cdef int free_down[2][3]            # (index: 0 p's own side, 1 the opponent's)
    cdef uint64_t up_protocols[3]
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
        up_protocols[l] = line_up_protocols(g, p, l)
        if mine_all & PA_FACEUP_ANYWHERE:
            up_protocols[l] = ~(<uint64_t>0)
    up_ok = (not down_only) and not (opp_all & PA_DENY_FACEUP)
    play_freedom(g, p, free_up, free_down)
    for i in range(ncards):
        c = cards[i]
        if st != NULL and not card_fits(g, fr, st, c):
            continue
        d = cdef_of(g, c)
        pr = d.protocol
        card_anywhere = (d.self_play & SP_ANYWHERE) != 0
        nsides = 2 if (side_lo or (d.self_play & (SP_EITHER_SIDE | SP_EITHER_SIDE_DOWN))) else 1
        for side in range(side_lo, nsides):
            for l in range(3):
                if not line_ok[l]:
                    continue
                # whether a card matches a line's protocols is data: each option is written, then
                # counted only if legal (the next option overwrites an uncounted one)
                up = up_ok & free_up[side][l] & (card_anywhere | <int>((up_protocols[l] >> pr) & 1))
                g.opts[n] = play_option(c, l, 1, side)
                n += up
                down = down_ok[l] & free_down[side][l] & ((side == 0) | side_lo
                                                          | ((d.self_play & SP_EITHER_SIDE_DOWN) != 0))
                g.opts[n] = play_option(c, l, 0, side)   # face-down it has no text to cross sides,
                n += down                                # unless a text plays it there
    return n

cdef inline void play_freedom(State* g, int p, int free_up[2][3], int free_down[2][3]) noexcept nogil:
    """Which faces and lines the restrictions leave p to play into, per side (0: p's own)."""
    cdef int k, l, s
    for k in range(2):
        s = p if k == 0 else 1 - p
        for l in range(3):
            free_up[k][l] = not denied(g, DN_PLAY_UP, p, s, -1, l)
            free_down[k][l] = not denied(g, DN_PLAY_DOWN, p, s, -1, l)

cdef inline uint64_t protocol_bit(int pr) noexcept nogil:
    """Protocol pr's bit in a set of protocol ids (ids are below MAXPROTO = 64); no bit for -1."""
    return (<uint64_t>(pr >= 0)) << (pr & 63)

cdef inline uint64_t line_up_protocols(State* g, int p, int l) noexcept nogil:
    """The protocols whose cards p may play face-up into line l (5.1): either player's protocol
    there, or one an active text in the line welcomes (Unity 1, looked for only when the line
    has that passive). As a set, so that each card's test is one bit instead of four
    comparisons. The line cache must be fresh."""
    cdef uint64_t bits = protocol_bit(g.proto[p][l]) | protocol_bit(g.proto[1 - p][l])
    if line_passives(g, l) & PA_PROTO_FACEUP_HERE:
        bits |= protocol_bit(welcome_protocol(g, 0, l)) | protocol_bit(welcome_protocol(g, 1, l))
    return bits

cdef int effect_play_options(State* g, Frame* fr, const Step* st, int p) noexcept nogil:
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

cdef void commit_play(State* g, int p, int k) noexcept nogil:
    """Take the chosen card out of hand or trash (5.3: committed) and play it."""
    cdef int c = play_card_of(k)
    if g.zone[c] == Z_HAND:
        list_remove(g.hand[g.side[c]], &g.nhand[g.side[c]], c)
    elif g.zone[c] == Z_TRASH:
        list_remove(g.trash[g.owner[c]], &g.ntrash[g.owner[c]], c)
    g.zone[c] = Z_TRANSIT
    play_card(g, p, c, p ^ play_opp_side(k), play_line_of(k), play_face_up(k), -1)

cdef bint possible_play(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    if st.source == S_HAND or st.source == S_TRASH or st.count_kind == CK_THAT:
        return effect_play_options(g, fr, st, dec) > 0
    if st.source == S_OPP_DECK:
        return g.ndeck[1 - dec] > 0
    return g.ndeck[dec] > 0

cdef int verb_play(State* g, Frame* fr, const Step* st, int dec) noexcept nogil:
    cdef int32_t lines[3]
    cdef int n, k, c, l, i, nl, done = 0, tl = this_line(g, fr), q, side
    if st.source == S_HAND or st.source == S_TRASH or st.count_kind == CK_THAT:
        n = 1 if st.count_kind == CK_THAT else step_n(g, fr, st)
        for i in range(n):
            g.nopts = effect_play_options(g, fr, st, dec)
            k = ask(g, dec, D_PLAY)
            if k < 0:
                break
            fr.that = play_card_of(k)
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
        if st.under_this or st.to == T_THIS_STACK:       # under / onto this card's stack
            if not on_field(g, fr.src):
                break
            done |= play_from_deck(g, fr, dec, q, g.side[fr.src], g.line[fr.src],
                                   fr.src if st.under_this else -1)
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

cdef int play_from_deck(State* g, Frame* fr, int p, int q, int s, int l, int under) noexcept nogil:
    """p plays the top card of q's deck face-down into side s, line l (its owner is unchanged)."""
    cdef int c
    if g.ndeck[q] == 0 or not can_play_down_into(g, p, l) or denied(g, DN_PLAY_DOWN, p, s, -1, l):
        return 0
    g.ndeck[q] -= 1
    c = g.deck[q][g.ndeck[q]]
    g.zone[c] = Z_TRANSIT
    fr.that = c
    play_card(g, p, c, s, l, 0, under)
    return 1

cdef inline bint has_cover_text(State* g, int t) noexcept nogil:
    """Could card t have an on-cover text (most cards have none: no box to look at)?"""
    return (cdef_of(g, t).trig_bits & ((1u << TR_COVERED) | (1u << TR_COVERED_OR_FLIPPED))) != 0

cdef inline void before_cover(State* g, int s, int l, int incoming) noexcept nogil:
    """"When this card would be covered: First, ..." resolves completely before a card lands
    (5.3). Inline, so that the usual landing (an empty stack, or a top card without such text)
    makes no call."""
    cdef int t = top_card(g, s, l)
    if t >= 0 and has_cover_text(g, t):
        resolve_cover_texts(g, s, l, incoming)

cdef void resolve_cover_texts(State* g, int s, int l, int incoming) noexcept nogil:
    """Resolve the on-cover text of the card about to be covered; if that removes the card,
    the next card down may have such text too. "... covered by a Unity card" (cover_same) needs
    the incoming card to be face-up and of that protocol."""
    cdef int fired[8]
    cdef int nf = 0, t, box, i, seen
    while nf < 8 and not stopped(g):
        t = top_card(g, s, l)
        if t < 0:
            return
        if not has_cover_text(g, t):
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

cdef void play_card(State* g, int p, int c, int s, int l, int up, int under) noexcept nogil:
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
    log_add(g, LG_PLAY, p, g.cur_src, c, l, up * LN_PLAY_FACE_UP | s * LN_PLAY_SIDE_B | (under >= 0) * LN_PLAY_UNDER)
    ev_rec(g, EK_PLAY_UP if up else EK_PLAY_DOWN, p, g.def_id[c], l, g.cur_src >= 0)
    g.ev[p] |= EV_PLAY
    g.evl[p] |= 1 << l
    if up:
        resolve_middle(g, c)
