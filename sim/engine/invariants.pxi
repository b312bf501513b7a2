# Invariants of a legal position, checked at every decision and turn boundary when g.checking is
# set (the invariant test runs them over tens of thousands of random games).

cdef enum Violation:
    INV_OK = 0
    INV_COUNT = 1           # a card is in no zone or in two zones
    INV_ZONE = 2            # a card's zone/side/line fields disagree with the zone lists
    INV_TRANSIT = 3         # a committed card was left in transit at a turn boundary
    INV_TRASH_FACE = 4      # a card in a trash is face-down
    INV_OWNER = 5
    INV_CONTROL = 6
    INV_COMPILED = 7        # three compiled protocols without a winner
    INV_VALUE = 8           # a line value disagrees with the sum of its cards and modifiers
    INV_CACHE = 9           # the per-line field cache disagrees with a recomputation of every line

cdef int check_invariants(State* g, bint boundary) noexcept nogil:
    cdef int seen[MAXCARDS]
    cdef int c, p, l, i, ntransit = 0, total = 0
    if g.phase == PH_DRAFT:
        return INV_OK
    for c in range(MAXCARDS):
        seen[c] = 0
    for p in range(2):
        for i in range(g.ndeck[p]):
            c = g.deck[p][i]
            seen[c] += 1
            if g.zone[c] != Z_DECK:
                return INV_ZONE
        for i in range(g.nhand[p]):
            c = g.hand[p][i]
            seen[c] += 1
            if g.zone[c] != Z_HAND or g.side[c] != p:
                return INV_ZONE
        for i in range(g.ntrash[p]):
            c = g.trash[p][i]
            seen[c] += 1
            if g.zone[c] != Z_TRASH or g.owner[c] != p:
                return INV_ZONE
            if not g.face_up[c]:
                return INV_TRASH_FACE
        for l in range(3):
            for i in range(g.nstack[p][l]):
                c = g.stack[p][l][i]
                seen[c] += 1
                if g.zone[c] != Z_FIELD or g.side[c] != p or g.line[c] != l:
                    return INV_ZONE
    for c in range(MAXCARDS):
        if g.zone[c] == Z_TRANSIT:
            ntransit += 1
            if seen[c] != 0:
                return INV_COUNT
            continue
        if g.zone[c] == Z_OUT:
            if seen[c] != 0:
                return INV_COUNT
            continue
        if seen[c] != 1:
            return INV_COUNT
        total += 1
        if g.owner[c] != 0 and g.owner[c] != 1:
            return INV_OWNER
    if total + ntransit != MAXCARDS:
        return INV_COUNT
    if boundary and ntransit:
        return INV_TRANSIT
    if g.control < -1 or g.control > 1:
        return INV_CONTROL
    for p in range(2):
        if g.compiled[p][0] and g.compiled[p][1] and g.compiled[p][2] and g.winner != p:
            return INV_COMPILED
        for l in range(3):
            if line_value(g, p, l) != recount_line(g, p, l):
                return INV_VALUE
    if not cache_agrees(g):
        return INV_CACHE
    return INV_OK

cdef bint cache_agrees(State* g) noexcept nogil:
    """Only the lines a change touched are recomputed (zones.pxi): the result must be what a
    recomputation of every line gives (passives, triggers, face-down values and line values)."""
    cdef State fresh
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    copy_for_lookahead(&fresh, g)
    touch(&fresh)
    refresh_cache(&fresh)
    return (memcmp(fresh.pas, g.pas, sizeof(g.pas)) == 0
            and memcmp(fresh.perhand, g.perhand, sizeof(g.perhand)) == 0
            and memcmp(fresh.fdv, g.fdv, sizeof(g.fdv)) == 0
            and memcmp(fresh.lval, g.lval, sizeof(g.lval)) == 0
            and memcmp(fresh.trig_line, g.trig_line, sizeof(g.trig_line)) == 0
            and memcmp(fresh.trig_mask, g.trig_mask, sizeof(g.trig_mask)) == 0)

cdef int recount_line(State* g, int p, int l) noexcept nogil:
    """Independent recount of a line value from the rules (2.2, 2.4) and the passives in play."""
    cdef int v = 0, i, c, s, ndown = 0, fd
    cdef const CardDef* d
    fd = 2
    for i in range(g.nstack[p][l]):
        c = g.stack[p][l][i]
        d = cdef_of(g, c)
        if g.face_up[c] and (d.passive[0] & PA_FACEDOWN_VALUE):
            fd = d.facedown_value
    for i in range(g.nstack[p][l]):
        c = g.stack[p][l][i]
        v += cdef_of(g, c).value if g.face_up[c] else fd
    for s in range(2):
        for i in range(g.nstack[s][l]):
            if not g.face_up[g.stack[s][l][i]]:
                ndown += 1
    for s in range(2):
        for i in range(g.nstack[s][l]):
            c = g.stack[s][l][i]
            d = cdef_of(g, c)
            if not g.face_up[c]:
                continue
            if d.passive[0] & PA_LINE_VALUE and (not d.line_value_cond or other_protocol_up_in_stack(g, s, l, c)):
                if (d.line_value_opp != 0) == (s != p):
                    v += d.line_value
            if (d.passive[0] & PA_PER_FACEDOWN) and s == p:
                v += d.per_facedown * ndown
            if (d.passive[0] & PA_PER_HAND) and s == p:
                v += d.per_hand * g.nhand[p]
            if (d.passive[0] & PA_PER_OPP_CARD) and s == p:
                v += d.per_opp_card * g.nstack[1 - p][l]
    return v
