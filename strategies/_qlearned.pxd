# cython: language_level=3
"""What the learned player (strategies/_learned.pyx, `prune=K`) shares from _qlearned.pyx: the
action-value network in C and its score of one action, the position's part made once per decision."""

from libc.stdint cimport int32_t
from sim.engine._core cimport State
from strategies._declared cimport MAXL, MAXU, QMAXIN

cdef struct QNet:
    int32_t nl
    int32_t nin[MAXL]
    int32_t nout[MAXL]
    int32_t act[MAXL]
    float w[MAXL][MAXU * QMAXIN]    # by input: w[l][j * nout + i]
    float b[MAXL][MAXU]

cdef void action_features(State* g, int p, int32_t opt, float* out) noexcept nogil
cdef void first_layer_state(const QNet* m, const float* x, float* h) noexcept nogil
cdef double action_logit(const QNet* m, const float* h0, const float* a) noexcept nogil
cdef int fill_qnet(QNet* m, layers) except -1
