# A card's verbs by family, for the players' inputs (included by _features.pyx and _qlearned.pyx, each
# with its own copy of the table): the families are declared once (strategies/declared.py
# VERB_FAMILIES, in the inputs' order) and name the engine's verbs (sim's VERB_CODES); every verb
# they do not name counts as the last family, "other".

from sim.engine._core cimport NVERBS, V_NONE
from sim.engine._core import VERB_CODES
from strategies.declared import VERB_FAMILIES

cdef int8_t FAMILY_OF[NVERBS]      # verb code -> family index; -1: no verb


def _fill_families():
    cdef int v, other = len(VERB_FAMILIES) - 1
    assert VERB_FAMILIES[other] == "other", VERB_FAMILIES
    for v in range(NVERBS):
        FAMILY_OF[v] = other
    FAMILY_OF[<int>V_NONE] = -1
    for v in range(other):
        FAMILY_OF[<int>VERB_CODES[VERB_FAMILIES[v]]] = v


_fill_families()


cdef inline float clip(float x, float lo, float hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline int card_verbs(State* g, int d, float* fam) noexcept nogil:
    """Add card definition d's steps (all three boxes) to fam per verb family; the number of its
    optional ("may") steps."""
    cdef int b, s, f, may = 0
    for b in range(3):
        for s in range(g.cdefs[d].step_start[b], g.cdefs[d].step_start[b] + g.cdefs[d].step_len[b]):
            f = FAMILY_OF[g.steps[s].verb]
            if f >= 0:
                fam[f] += 1
            may += g.steps[s].may != 0
    return may
